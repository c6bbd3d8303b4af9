"""The package layout is the architecture: emulator's layers import only downwards, nothing imports
in a circle (``TYPE_CHECKING`` imports included), and the trace readers use only the model.

Layers, bottom up (docs/architecture.md): ``core`` (the model); ``state`` (a cluster's state, views,
placement, execution models); ``policies`` and ``sync`` (side by side: neither imports the other);
``partitions``; ``data`` (scenarios, traces, metrics); ``engine`` (runner, sweeps); ``report``;
the CLI and API modules at ``emulator/``'s top.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RANK = {"core": 0, "state": 1, "policies": 2, "sync": 2, "partitions": 3, "data": 4, "engine": 5, "report": 6}
TOP = 7
WORKLOADS_MAY_USE = ("emulator.core", "emulator.data.rundir")


def modules() -> dict[str, Path]:
    found = {}
    for folder in ("emulator", "workloads", "actors"):
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports, anywhere in it (functions and TYPE_CHECKING blocks too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join([*base, node.module] if node.module else base)
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.add(full if full in known else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {t for t in found if t in known and t != name}


def layer(name: str) -> str:
    """The emulator layer a module belongs to (``"top"`` for ``emulator/``'s own modules)."""
    parts = name.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in RANK) else "top"


def rank(name: str) -> int:
    return RANK.get(layer(name), TOP)


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_emulator_layers_import_only_downwards():
    upward = [
        (name, target)
        for name, targets in graph().items()
        if name.startswith("emulator.")
        for target in targets
        if target.startswith("emulator.") and target != "emulator" and rank(target) > rank(name)
    ]
    assert upward == []


def test_policies_and_sync_do_not_import_each_other():
    crossing = [
        (name, target)
        for name, targets in graph().items()
        if name.startswith("emulator.")
        for target in targets
        if target.startswith("emulator.") and {layer(name), layer(target)} == {"policies", "sync"}
    ]
    assert crossing == []


def test_the_trace_readers_use_only_the_model_and_run_directories():
    used = {
        target
        for name, targets in graph().items()
        if name.startswith("workloads")
        for target in targets
        if target.startswith("emulator")
    }
    assert all(t.startswith(WORKLOADS_MAY_USE) for t in used), sorted(used)


def test_no_module_imports_in_a_circle():
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert circles == []


MAX_CLASS_LINES = 200
"""The most lines a class in ``actors/`` may span (docstring included): one job each (issue 33)."""


def class_lines(path: Path) -> dict[str, int]:
    """The lines each class of the module at ``path`` spans, by name (nested classes too)."""
    tree = ast.parse(path.read_text())
    return {
        node.name: node.end_lineno - node.lineno + 1
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    }


def test_class_lines_are_measured_from_class_to_last_line(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        'class A:\n    """Doc."""\n\n    def f(self):\n        return 1\n\n\nclass B:\n    x = 1\n'
    )
    assert class_lines(module) == {"A": 5, "B": 2}


def test_no_class_in_actors_is_over_200_lines():
    long = {
        f"{path.name}:{name}": lines
        for path in sorted((ROOT / "actors").glob("*.py"))
        for name, lines in class_lines(path).items()
        if lines > MAX_CLASS_LINES
    }
    assert long == {}
