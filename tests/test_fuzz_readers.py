"""Fuzzing the readers: mutated traces, machine files, scenarios and ``--set`` values either load or
fail with the project's own error, never another exception, never a hang.

Each input starts from a valid one and is mutated: fields replaced by huge,
negative, fractional, NaN, infinite or garbage values, lines cut short or
doubled, bytes flipped. ``GRIDEMU_FUZZ_EXAMPLES`` sets how many inputs each
test tries (default 60, a few seconds in all). The long run,
``GRIDEMU_FUZZ_EXAMPLES=11000``, tried 77,000 inputs over the 7 tests (and drew 7,061 that
hypothesis discarded) in 8 min 20 s on 2 cores, and found nothing.
"""

from __future__ import annotations

import os
from contextlib import suppress

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from emulator.core.config import ScenarioError
from emulator.data.scenario import load, parse
from emulator.policies import PolicyError
from workloads.alea import read_machines
from workloads.columns import TraceError
from workloads.gwf import read_gwf
from workloads.swf import read_swf

OURS = (ScenarioError, PolicyError, TraceError)
FUZZ = settings(
    max_examples=int(os.environ.get("GRIDEMU_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

odd_values = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(["nan", "inf", "-inf", "1e400", "-0", "0x10", "", "-", "1,5", "\x00", "é", "1e17"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=6),
)

SWF_LINE = "{id} {submit} 0 {run} 4 -1 -1 4 {run} -1 1 1 1 -1 1 -1 -1 -1"


def swf_lines(n: int = 6) -> list[list[str]]:
    return [SWF_LINE.format(id=i + 1, submit=10 * i, run=5 + i).split() for i in range(n)]


@st.composite
def mutated_table(draw, lines: list[list[str]], sep: str = " ") -> str:
    """``lines`` of fields with a few fields replaced, lines cut or doubled, as text."""
    rows = [list(line) for line in lines]
    for _ in range(draw(st.integers(1, 6))):
        row = draw(st.integers(0, len(rows) - 1))
        action = draw(st.sampled_from(["field", "field", "field", "cut", "double", "drop"]))
        if action == "field" and rows[row]:
            rows[row][draw(st.integers(0, len(rows[row]) - 1))] = draw(odd_values)
        elif action == "cut":
            rows[row] = rows[row][: draw(st.integers(0, len(rows[row])))]
        elif action == "double":
            rows.insert(row, list(rows[row]))
        elif len(rows) > 1:
            del rows[row]
    return "\n".join(sep.join(row) for row in rows) + "\n"


def flip_bytes(data: bytes, flips: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for where, value in flips:
        if out:
            out[where % len(out)] = value
    return bytes(out)


def loads_or_ours(read, *args, **kwargs) -> None:
    with suppress(*OURS):
        read(*args, **kwargs)


@FUZZ
@given(
    text=mutated_table(swf_lines()),
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=3),
)
def test_swf_reader(tmp_path_factory, text, flips):
    path = tmp_path_factory.mktemp("swf") / "t.swf"
    path.write_bytes(flip_bytes(("; MaxProcs: 8\n" + text).encode(errors="replace"), flips))
    for rules in ("pwa", "gridsim"):
        loads_or_ours(read_swf, path, rules=rules)


GWF_LINE = "{id}\t{submit}\t3\t{run}\t2\t-1\t-1\t2\t60\t-1\t1\tU7\tG1\t-1\tQ1\t-1\tsiteA\tsiteB\tUNITARY"
GWF_LINE += "\t-1" * 8 + "\tVO1"


@FUZZ
@given(
    text=mutated_table([GWF_LINE.format(id=i + 1, submit=i, run=7).split("\t") for i in range(5)], sep="\t")
)
def test_gwf_reader(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("gwf") / "t.gwf"
    path.write_text(text, errors="replace")
    loads_or_ours(read_gwf, path)


MACHINES = [["0", "seth", "120", "2", "1", "1048576"], ["1", "thor", "8", "4", "1", "2048"]]


@FUZZ
@given(text=mutated_table(MACHINES))
def test_machines_reader(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("machines") / "t.swf.machines"
    path.write_text(text, errors="replace")
    loads_or_ours(read_machines, path)


def small_scenario() -> dict:
    return {
        "name": "fuzz",
        "seed": 3,
        "meta": {"policy": "least-load"},
        "clusters": [
            {"name": "a", "latency": 0.5, "machines": [{"count": 2, "cpus": 2, "mips": 100.0}]},
            {"name": "b", "policy": "fcfs", "machines": [{"cpus": 4, "mips": 50.0}], "licenses": {"x": 1}},
        ],
        "workload": {"source": "synthetic", "jobs": 20, "mean_interarrival": 5.0, "cpus": [1, 2]},
        "metrics": {},
    }


KEYS = [
    ("seed",),
    ("clusters", 0, "latency"),
    ("clusters", 0, "bandwidth"),
    ("clusters", 0, "machines", 0, "count"),
    ("clusters", 0, "machines", 0, "cpus"),
    ("clusters", 0, "machines", 0, "mips"),
    ("clusters", 1, "licenses", "x"),
    ("workload", "jobs"),
    ("workload", "mean_interarrival"),
    ("workload", "cpus"),
    ("workload", "estimate"),
    ("workload", "runtime_factor"),
    ("meta", "policy"),
    ("local",),
    ("metrics", "bsld_threshold"),
    ("metrics", "warmup"),
    ("metrics", "cooldown"),
]
toml_values = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.booleans(),
    st.lists(st.one_of(st.integers(-10, 10**12), st.floats(allow_nan=True)), max_size=3),
    st.just({}),
)


@FUZZ
@given(changes=st.lists(st.tuples(st.sampled_from(KEYS), toml_values), min_size=1, max_size=3))
def test_scenario_loader(changes):
    raw = small_scenario()
    for path, value in changes:
        # a valid count of millions of jobs is a long load, not a fault: kept small here
        assume(path != ("workload", "jobs") or not isinstance(value, int) or value <= 1000)
        node = raw
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    try:
        scenario = parse(raw, "fuzz.toml")
    except OURS:
        return
    assert len(scenario.jobs) <= 1000


@FUZZ
@given(
    key=st.sampled_from(
        ["workload.jobs", "workload.cpus", "clusters.0.latency", "seed", "local.policy", "nosuch.key"]
    ),
    value=odd_values,
)
def test_set_overrides(key, value):
    overrides = [f"{key}={value}"] + (["workload.jobs=20"] if key != "workload.jobs" else [])
    with suppress(*OURS):
        load("quickstart", overrides)


REPLICATE_KEYS = ["resample", "windows", "estimate_noise", "limit", "start", "end"]


@FUZZ
@given(changes=st.lists(st.tuples(st.sampled_from(REPLICATE_KEYS), toml_values), min_size=1, max_size=3))
def test_trace_replicate_keys(tmp_path_factory, changes):
    """A trace's replicate keys (``resample``, ``windows``, ``estimate_noise``) and its selection."""
    path = tmp_path_factory.mktemp("swf") / "t.swf"
    path.write_text("; MaxProcs: 8\n" + "\n".join(" ".join(line) for line in swf_lines()) + "\n")
    workload = {"source": "swf", "path": str(path), "resample": "window", "windows": 3}
    workload |= dict(changes)
    raw = {"name": "fuzz", "clusters": [{"name": "a", "machines": [{"count": 8, "cpus": 1}]}]}
    raw |= {"workload": workload | {"site": "a"}}
    with suppress(*OURS):
        assert len(parse(raw, "fuzz.toml").jobs) <= 6


POLICY_PARAMS = {
    "easy": ["order", "half_life"],
    "conservative": ["order", "half_life", "rounding"],
    "cs2": ["sort", "classes", "period", "w_d"],
    "titan": ["population", "generations", "pairing"],
    "flexible": ["priority", "k"],
}


@FUZZ
@given(
    policy=st.sampled_from(sorted(POLICY_PARAMS)),
    data=st.data(),
    value=odd_values.filter(lambda v: not set(v) & set("[],=\"'")),
)
def test_policy_parameters(policy, data, value):
    """Every declared parameter check: an odd value is refused in one line of ours, or accepted."""
    key = data.draw(st.sampled_from(POLICY_PARAMS[policy]))
    raw = small_scenario() | {"local": {"policy": f"{policy}[{key}={value}]"}}
    with suppress(*OURS):
        parse(raw, "fuzz.toml")  # builds every cluster's policy
