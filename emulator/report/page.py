"""The report page: one self-contained HTML file (figures as inline PNG, inline CSS, no network).

A Content-Security-Policy forbids every fetch, so a page that opens fine offline is
guaranteed not to depend on anything outside itself. The one script counts the
figures the browser could decode (``data-figures-decoded`` on ``<body>``) and marks
any that failed, so a broken figure shows as such instead of as a blank space; it
also counts the tables wider than the window (``data-tables-cut``: they scroll in
their box), which the browser tests hold at zero at common widths.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from html import escape

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; margin: 0; }
main { max-width: 1150px; margin: 0 auto; padding: 1.5em 2em 4em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ddd; }
.facts { color: #555; margin-top: 0; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 0.5em 0; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #e5e5e5; text-align: right; white-space: nowrap; }
thead th { white-space: normal; overflow-wrap: break-word; max-width: 7.5em; vertical-align: bottom; }
caption { text-align: left; font-weight: 600; padding: 0.6em 0 0.2em; }
th:first-child, td:first-child { text-align: left; } thead th { border-bottom: 2px solid #999; }
tr.total td { font-weight: 600; border-top: 2px solid #999; }
.scroll { overflow-x: auto; max-width: 100%; }
.tables { display: flex; flex-wrap: wrap; gap: 0 2.5em; align-items: flex-start; }
figure { margin: 1.2em 0 2em; } figure img { max-width: 100%; height: auto; display: block; }
.note { background: #fff6d6; border-left: 4px solid #e0b000; padding: 0.3em 0.7em; font-weight: normal; }
figure.broken::after { content: "this figure could not be decoded"; color: #b00; }
nav ul { columns: 3; padding-left: 1.2em; } nav li { break-inside: avoid; }
"""

SCRIPT = """
window.addEventListener("load", () => {
  const images = document.querySelectorAll("figure img");
  let decoded = 0;
  for (const image of images) {
    if (image.complete && image.naturalWidth > 0) decoded += 1;
    else image.closest("figure").classList.add("broken");
  }
  document.body.dataset.figuresDecoded = String(decoded);
  const boxes = [...document.querySelectorAll(".scroll")];
  document.body.dataset.tablesCut = String(boxes.filter((box) => box.scrollWidth > box.clientWidth).length);
});
"""


@dataclass(frozen=True)
class Rendered:
    """A drawn figure: its file stem (``gantt-alpha``), title, PNG bytes (for the page), what was
    simplified, and the figure in the report's file format (the same PNG bytes for PNG)."""

    name: str
    title: str
    png: bytes
    note: str = ""
    file: bytes = b""


@dataclass(frozen=True)
class Section:
    heading: str
    html: str = ""
    figures: tuple[Rendered, ...] = ()


def html_page(title: str, facts: list[str], sections: list[Section]) -> str:
    """The whole page: title, facts line, contents, then each section with its figures."""
    figures = [f for s in sections for f in s.figures]
    contents = "".join(f'<li><a href="#fig-{escape(f.name)}">{escape(f.title)}</a></li>' for f in figures)
    body = "".join(_section(s) for s in sections)
    return (
        "<!doctype html>\n"
        f'<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>\n"
        f'<body data-figures="{len(figures)}"><main>'
        f'<h1>{escape(title)}</h1><p class="facts">{" · ".join(escape(f) for f in facts)}</p>'
        f"<nav><ul>{contents}</ul></nav>{body}</main><script>{SCRIPT}</script></body></html>\n"
    )


def html_table(
    header: list[str | tuple[str, str]], rows: list[list[str]], total_last: bool = False, caption: str = ""
) -> str:
    """A table of already formatted cells (first column left-aligned, the rest right-aligned numbers).

    A header cell is its title, or (title, tooltip); headers wrap, cells do not, and a table
    wider than the page scrolls inside its own box rather than being cut off.
    """
    head = "".join(_header_cell(*([h, ""] if isinstance(h, str) else h)) for h in header)
    lines = []
    for i, row in enumerate(rows):
        total = ' class="total"' if total_last and i == len(rows) - 1 else ""
        lines.append(f"<tr{total}>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>")
    title = f"<caption>{escape(caption)}</caption>" if caption else ""
    table = f"<table>{title}<thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"
    return f'<div class="scroll">{table}</div>'


def _header_cell(title: str, tooltip: str) -> str:
    hover = f' title="{escape(tooltip)}"' if tooltip else ""
    return f"<th{hover}>{escape(title)}</th>"


def _section(section: Section) -> str:
    """A heading, the section's tables, its figures: a figure names what it shows (a Gantt chart its
    cluster) in its own title, so a caption would only say it again."""
    figures = "".join(_figure(f) for f in section.figures)
    return f"<section><h2>{escape(section.heading)}</h2>{section.html}{figures}</section>"


def _figure(f: Rendered) -> str:
    note = f'<figcaption class="note">{escape(f.note)}</figcaption>' if f.note else ""
    data = base64.b64encode(f.png).decode("ascii")
    return (
        f'<figure id="fig-{escape(f.name)}" data-figure="{escape(f.name)}">'
        f'{note}<img alt="{escape(f.title)}" src="data:image/png;base64,{data}"></figure>'
    )
