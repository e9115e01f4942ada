"""Benchmark: ``ropeproof check`` run cold (an empty cache) and then again unchanged, in CPU seconds, this
checkout against a baseline installation, interleaved.

    python3 benchmarks/bench_rerun.py --baseline-python /path/to/other/venv/bin/python \\
        [--repeats 2] [--command "check --quick"]

Each round gives each side (the baseline's interpreter and this one, ``sys.executable``; which goes first
alternates by round, so drift in the machine's load hits both alike) a fresh cache directory and runs
``PYTHON -m ropeproof COMMAND --no-progress --cache-dir CACHE --out DIR`` twice: cold, then the unchanged
rerun. Each run's CPU seconds are the user and system time of the process and every process it started
(``ropeproof check``'s second process included), read from ``resource.getrusage(RUSAGE_CHILDREN)``; its
wall seconds too. Prints each run, the medians, the ratios rerun / cold per side and this / baseline per
kind, the load average before and after, and what each rerun read from the cache
(``run.computations``).

It then compares this checkout's cold run with its rerun in every round: ``report.json`` without its
timings, run metadata and ``run.computations``, ``report.md`` without its header line, and every file
under ``figures/`` and ``store/``, byte for byte; any difference is printed and the script exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ropeproof._report import without_timings


def cpu_seconds() -> float:
    """User plus system seconds of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(python: str, command: list[str], cache: Path, out: Path) -> tuple[float, float]:
    """``(CPU seconds, wall seconds)`` of one ``PYTHON -m ropeproof COMMAND`` with its own cache and
    output (run from a neutral directory, so each interpreter imports its own installation)."""
    argv = [
        python,
        "-m",
        "ropeproof",
        *command,
        "--no-progress",
        "--cache-dir",
        str(cache),
        "--out",
        str(out),
    ]
    cpu, start = cpu_seconds(), time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=out.parent)
    return cpu_seconds() - cpu, time.perf_counter() - start


def comparable(out: Path) -> dict[str, Any]:
    """``report.json`` without timings, run metadata and ``run.computations`` (what a rerun read)."""
    report = without_timings(json.loads((out / "report.json").read_text()))
    for key in ("command", "git_commit", "versions", "computations"):
        report["run"].pop(key, None)
    return report


def tree(directory: Path) -> dict[str, bytes]:
    files = sorted(p for p in directory.rglob("*") if p.is_file()) if directory.is_dir() else []
    return {str(p.relative_to(directory)): p.read_bytes() for p in files}


def differences(before: Path, after: Path) -> list[str]:
    """What differs between two runs' outputs (empty when the reports, figures and stores are the same)."""
    out = []
    if comparable(before) != comparable(after):
        out.append("report.json (timings, run metadata and computations aside)")
    md_before = (before / "report.md").read_text().splitlines()
    md_after = (after / "report.md").read_text().splitlines()
    if md_before[:2] + md_before[3:] != md_after[:2] + md_after[3:]:
        out.append("report.md (header line aside)")
    for part in ("figures", "store"):
        a, b = tree(before / part), tree(after / part)
        out += [f"{part}/{name}" for name in sorted(set(a) | set(b)) if a.get(name) != b.get(name)]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-python", required=True)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--command", default="check --quick")
    args = parser.parse_args()
    command = shlex.split(args.command)
    sides = {"baseline": args.baseline_python, "this": sys.executable}
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="bench-rerun-") as tmp:
        root = Path(tmp)
        for r in range(args.repeats):
            order = list(sides) if r % 2 == 0 else list(reversed(sides))
            for side in order:
                cache = root / f"cache-{side}-{r}"
                for kind in ("cold", "rerun"):
                    out = root / f"{side}-{r}-{kind}"
                    cpu, wall = run_once(sides[side], command, cache, out)
                    runs.setdefault((side, kind), []).append((cpu, wall))
                    done = json.loads((out / "report.json").read_text())["run"].get("computations", {})
                    print(f"round {r} {side:8s} {kind:5s} cpu {cpu:6.2f} s  wall {wall:6.2f} s  {done}")
        print(f"load average after: {os.getloadavg()}")
        medians = {
            k: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v))
            for k, v in runs.items()
        }
        for (side, kind), (cpu, wall) in sorted(medians.items()):
            print(f"median {side:8s} {kind:5s} cpu {cpu:6.2f} s  wall {wall:6.2f} s")
        for side in sides:
            cold, rerun = medians[(side, "cold")][0], medians[(side, "rerun")][0]
            print(f"{side}: rerun / cold CPU = {rerun / cold:.3f}")
        for kind in ("cold", "rerun"):
            ratio = medians[("this", kind)][0] / medians[("baseline", kind)][0]
            print(f"{kind}: this / baseline CPU = {ratio:.3f}")
        found = []
        for r in range(args.repeats):
            for what in differences(root / f"this-{r}-cold", root / f"this-{r}-rerun"):
                found.append(what)
                print(f"round {r}: differs between this checkout's cold run and its rerun: {what}")
        if not found:
            print(
                "this checkout's rerun wrote what its cold run wrote (reports, figures, store), byte for byte"
            )
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
