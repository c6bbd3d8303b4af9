"""A package folder of named TOML files (presets, sweep recipes): listing, lookup, one-line summaries."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


class NamedFiles:
    """The ``NAME.toml`` files beside package ``package``; ``kind``/``kinds`` word the errors."""

    def __init__(self, package: str, kind: str, kinds: str) -> None:
        self.package, self.kind, self.kinds = package, kind, kinds

    def names(self) -> list[str]:
        folder = resources.files(self.package)
        return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))

    def path(self, name: str) -> Path:
        """The file of ``name``; KeyError naming the known ones when there is none."""
        if name not in self.names():
            raise KeyError(f"no {self.kind} {name!r}; {self.kinds}: {', '.join(self.names())}")
        return Path(str(resources.files(self.package) / f"{name}.toml"))

    def summary(self, name: str) -> str:
        """The file's first comment line."""
        for line in self.path(name).read_text().splitlines():
            if line.startswith("#"):
                return line.lstrip("# ").strip()
        return ""
