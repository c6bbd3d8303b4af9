"""Every relative link in README.md and docs/*.md reaches an existing file (and heading, if it names one)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", flags=re.DOTALL | re.MULTILINE)
CODE = re.compile(r"`[^`\n]*`")


def links(text: str) -> list[str]:
    """The link targets of a Markdown text, leaving out code blocks and inline code."""
    return LINK.findall(CODE.sub("", FENCE.sub("", text)))


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a text's headings: lower case, punctuation dropped, spaces as
    hyphens, and ``-1``, ``-2``... after a repeated one."""
    made: set[str] = set()
    counts: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} +(.+?) *#* *$", FENCE.sub("", text), flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = counts[slug] = counts.get(slug, -1) + 1
        made.add(f"{slug}-{count}" if count else slug)
    return made


def test_anchors_follow_githubs_rules():
    text = "# Setup: two commands\n## The `gridemu` CLI\n## Setup: two commands\n```\n# not a heading\n```\n"
    assert anchors(text) == {"setup-two-commands", "the-gridemu-cli", "setup-two-commands-1"}
    assert links("[a](x.md#b) `[c](d.md)`\n```\n[e](f.md)\n```\n") == ["x.md#b"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc):
    broken = []
    for target in links(doc.read_text()):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (doc.parent / path).resolve() if path else doc
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text()):
            broken.append(f"{target}: no heading with that anchor")
    assert broken == [], f"{doc.relative_to(ROOT)}: {broken}"
