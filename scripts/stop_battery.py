"""Stop runs at random moments, as a user's fingers and batch system would, and check what they leave.

Each trial starts ``gridemu run`` on a scenario whose clusters run ahead of
each other (by default the LCG-2005-1 trace's 170 sites), sends it a signal
at a random moment of its run (SIGINT: Ctrl-C; SIGTERM: a batch system's
cancel or ``timeout``; SIGKILL: ``kill -9``), waits for it to end, salvages
what it left with ``gridemu inspect --recover`` and compares the rows with
the complete run's trace. A stopped run must leave an exact prefix of the
complete trace (or the complete trace itself, if it finished first): rows
below the watermark, nothing beyond it, never a file with a hole.

Counts per backend and signal: ``prefix`` (an exact prefix, rows > 0),
``empty`` (stopped before its first flush: nothing to recover, which is a
prefix too), ``complete`` (it finished before the signal), ``NOT PREFIX``
(a defect), and the exit codes seen (130 SIGINT, 143 SIGTERM, -9 SIGKILL).

    python scripts/stop_battery.py [--trials 50] [--backends inproc,ray] [--signals INT,TERM,KILL]
                                   [--seed 1] [--shared DIR] [-- RUN ARGUMENTS...]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("GRIDEMU_SHARED", ROOT.parent / "shared"))
SIGNALS = {"INT": signal.SIGINT, "TERM": signal.SIGTERM, "KILL": signal.SIGKILL}


def command(run_args: list[str], backend: str, out: Path) -> list[str]:
    extra = ["--backend", "ray", "--partitions", "2"] if backend == "ray" else []
    return [sys.executable, "-m", "emulator.cli", "run", *run_args, *extra, "--out", str(out), "--quiet"]


def complete_run(run_args: list[str], backend: str, out: Path) -> tuple[pa.Table, float]:
    """The complete trace, and how long the whole command took (the window signals are sent in)."""
    started = time.perf_counter()
    subprocess.run(command(run_args, backend, out), cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return read(out / "events.arrow"), time.perf_counter() - started


def read(path: Path) -> pa.Table:
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


def trial(run_args: list[str], backend: str, sig: signal.Signals, at: float, out: Path, full: pa.Table):
    """One stopped run: ``(verdict, exit code, rows left)``."""
    process = subprocess.Popen(
        command(run_args, backend, out), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(at)
    process.send_signal(sig)
    code = process.wait(timeout=600)
    if (out / "events.arrow").exists():  # (a final name is only ever a complete file)
        rows = read(out / "events.arrow")
        return ("complete" if rows.equals(full) else "NOT PREFIX"), code, rows.num_rows
    subprocess.run(
        [sys.executable, "-m", "emulator.cli", "inspect", "--recover", str(out)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    recovered = out / "events.recovered.arrow"
    if not recovered.exists():
        return "empty", code, 0
    rows = read(recovered)
    if rows.num_rows == 0:
        return "empty", code, 0
    return ("prefix" if full.slice(0, rows.num_rows).equals(rows) else "NOT PREFIX"), code, rows.num_rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--trials", type=int, default=50, help="trials in all, spread over backends and signals"
    )
    parser.add_argument("--backends", default="inproc,ray")
    parser.add_argument("--signals", default="INT,TERM,KILL")
    parser.add_argument("--seed", type=int, default=1, help="seeds the moments and the order of trials")
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("run_args", nargs="*", help="gridemu run's arguments (default: LCG-2005-1's sites)")
    args = parser.parse_args(argv)
    run_args = args.run_args or [
        "--swf",
        str(args.shared / "traces/LCG-2005-1.swf.gz"),
        "--sites",
        "partition",
    ]
    backends = args.backends.split(",")
    signals = [SIGNALS[name] for name in args.signals.split(",")]
    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="stop-battery-"))
    try:
        references = {b: complete_run(run_args, b, tmp / f"full-{b}") for b in backends}
        if len(backends) > 1 and not all(
            references[b][0].equals(references[backends[0]][0]) for b in backends
        ):
            print("the backends' complete traces differ: no trial can be judged", file=sys.stderr)
            return 1
        counts: Counter = Counter()
        codes: dict[tuple[str, str], Counter] = {}
        plan = [
            (backends[i % len(backends)], signals[(i // len(backends)) % len(signals)])
            for i in range(args.trials)
        ]
        rng.shuffle(plan)
        for n, (backend, sig) in enumerate(plan):
            full, seconds = references[backend]
            at = rng.uniform(0.3, seconds)
            out = tmp / f"trial-{n:03d}"
            verdict, code, rows = trial(run_args, backend, sig, at, out, full)
            counts[(backend, sig.name, verdict)] += 1
            codes.setdefault((backend, sig.name), Counter())[code] += 1
            print(
                f"{n + 1:3d}/{len(plan)} {backend:6s} {sig.name:7s} at {at:5.2f} s: "
                f"{verdict:10s} {rows:>9,} rows (exit {code})",
                flush=True,
            )
            shutil.rmtree(out, ignore_errors=True)
        report(counts, codes, backends, signals, references)
        return 1 if any(v == "NOT PREFIX" for _, _, v in counts) else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def report(counts, codes, backends, signals, references) -> None:
    verdicts = ["prefix", "empty", "complete", "NOT PREFIX"]
    print()
    print(f"{'backend':8s} {'signal':8s} " + " ".join(f"{v:>10s}" for v in verdicts) + "  exit codes")
    for backend in backends:
        for sig in signals:
            cells = " ".join(f"{counts[(backend, sig.name, v)]:>10d}" for v in verdicts)
            seen = ", ".join(f"{c}: {k}" for c, k in sorted(codes.get((backend, sig.name), {}).items()))
            print(f"{backend:8s} {sig.name:8s} {cells}  {seen}")
    total = {v: sum(counts[(b, s.name, v)] for b in backends for s in signals) for v in verdicts}
    print(f"{'all':17s} " + " ".join(f"{total[v]:>10d}" for v in verdicts))
    for backend, (full, seconds) in references.items():
        print(f"complete run ({backend}): {full.num_rows:,} rows in {seconds:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
