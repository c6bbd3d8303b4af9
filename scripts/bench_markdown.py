"""The benchmarks' ``--markdown [FILE]`` output: their tables as Markdown in a region of a doc.

Each script owns one region of ``docs/performance.md``, between ``<!-- NAME:begin -->`` and
``<!-- NAME:end -->`` lines (NAME: the script's file name), and replaces only what lies between
them, so the prose around the tables stays as written while the numbers come from the scripts
alone. Above its tables a region says when, where (cores, CPU model, RAM, load) and on which
commit they were measured, and the exact command that measured them.

    region = Region.of(args.markdown, "bench.py")  # checked before any benchmark runs
    header = measured_on("bench.py", argv)
    ...  # after each row:
    region.replace(header, table(titles, rows), bullets(not_reached(names_left)))
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "performance.md"
CODE = ("emulator", "actors", "workloads", "scripts", "pyproject.toml")
"""What a measurement depends on: changes there, not committed, are named in the region's header."""


def add_option(parser: argparse.ArgumentParser) -> None:
    """``--markdown [FILE]``: also write the tables into FILE's region (default docs/performance.md)."""
    parser.add_argument(
        "--markdown",
        nargs="?",
        const=DOC,
        type=Path,
        metavar="FILE",
        help=f"also write the tables into this script's region of FILE (default {DOC.relative_to(ROOT)})",
    )


@dataclass(frozen=True)
class Region:
    """The lines of ``path`` between ``<!-- name:begin -->`` and ``<!-- name:end -->``."""

    path: Path
    name: str

    @classmethod
    def of(cls, path: Path | None, name: str) -> Region | None:
        """The region, checked now (a long benchmark must not fail at its end), or None without a path."""
        if path is None:
            return None
        region = cls(path, name)
        region._split()
        return region

    @property
    def begin(self) -> str:
        return f"<!-- {self.name}:begin -->"

    @property
    def end(self) -> str:
        return f"<!-- {self.name}:end -->"

    def replace(self, *parts: str) -> None:
        """Put ``parts`` (Markdown blocks, separated by blank lines) between the markers; the rest of
        the file keeps its bytes. Written to a temporary file and renamed, so a reader never sees half."""
        head, _, tail = self._split()
        body = "\n\n".join(part.strip("\n") for part in parts if part)
        partial = self.path.with_name(self.path.name + ".part")
        with open(partial, "w", newline="") as out:
            out.write(f"{head}{body}\n{tail}")
        partial.replace(self.path)

    def body(self) -> str:
        """What lies between the markers now."""
        return self._split()[1]

    def _split(self) -> tuple[str, str, str]:
        """The text up to the begin marker's line (included), between the markers, and from the end
        marker's line on: as the file has them, line ends and all."""
        try:
            with open(self.path, newline="") as doc:
                text = doc.read()
        except OSError as error:
            sys.exit(f"{self.path}: cannot read it ({error.strerror}); --markdown needs an existing doc")
        lines = text.splitlines(keepends=True)
        starts = [i for i, line in enumerate(lines) if line.strip() == self.begin]
        ends = [i for i, line in enumerate(lines) if line.strip() == self.end]
        if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
            sys.exit(
                f"{self.path}: expected one line {self.begin} and, after it, one line {self.end} "
                f"(found {len(starts)} and {len(ends)}); add them where the tables go"
            )
        (start,), (end,) = starts, ends
        return "".join(lines[: start + 1]), "".join(lines[start + 1 : end]), "".join(lines[end:])


def table(titles: list[str], rows: list[list[str]]) -> str:
    """A Markdown table: the first column left-aligned (names), the others right-aligned (numbers)."""
    rule = ["---"] + ["--:"] * (len(titles) - 1)
    return "\n".join("| " + " | ".join(cells) + " |" for cells in [titles, rule, *rows])


def bullets(lines: list[str]) -> str:
    """Notes under a table (speed-ups, rows skipped) as a Markdown list."""
    return "\n".join(f"- {line}" for line in lines)


def not_reached(names: list[str]) -> list[str]:
    """The note on rows a run has not measured (yet): regions are rewritten after every row or
    table, so a run stopped midway leaves what it measured, saying what it left out."""
    return [f"not measured: {', '.join(names)} (the run had not reached them)"] if names else []


def measured_on(script: str, argv: list[str]) -> str:
    """When, where and on which commit the tables were measured, and the command that did it."""
    command = shlex.join(["python", f"scripts/{script}", *argv])
    load = f", load average {os.getloadavg()[0]:.1f} at the start" if hasattr(os, "getloadavg") else ""
    return (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine()}{load}; "
        f"commit {commit()}.\nCommand: `{command}`"
    )


def machine() -> str:
    """Cores, CPU model and RAM of this machine, e.g. ``2 cores (AMD EPYC), 23.4 GiB RAM, Linux``."""
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu_model()}), {ram:.1f} GiB RAM, {platform.system()}"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "CPU model unknown"


def commit() -> str:
    """The checked-out commit, and whether the code measured differs from it."""
    git = ["git", "-C", str(ROOT)]
    try:
        head = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        )
        status = [*git, "status", "--porcelain", "--untracked-files=no", "--", *CODE]
        changed = subprocess.run(status, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return head.stdout.strip() + (" with uncommitted changes" if changed.stdout.strip() else "")
