"""Benchmark: ``ropeproof check`` of this checkout against a baseline installation, interleaved.

    python3 benchmarks/bench_check.py --baseline-python /path/to/other/venv/bin/python \\
        [--repeats 3] [--command "check --quick"] [--figure-costs]

Runs ``PYTHON -m ropeproof COMMAND --no-progress --out DIR`` as a subprocess with the baseline's
interpreter (another checkout installed in its own virtual environment, e.g. ``main`` at the branch
point) and with this one (``sys.executable``), one run of each per round, alternating which goes first,
so drift in the machine's load hits both alike. Prints each side's wall times, medians and the ratio
(this / baseline), the load average before and after, and the claims that cost the most in this
checkout's runs (median ``seconds`` per claim in ``report.json``).

It then compares the first run of each side: ``report.json`` without its timings and run metadata
(``ropeproof._report.without_timings``; the command line, git commit and package versions name the
checkout), ``report.md`` without its header line (time, command, commit) and every file under
``figures/``, byte for byte; any difference is printed and the script exits 1.

With ``--figure-costs`` it also draws every figure of this checkout once, in this process, from a fresh
store (nothing shared with the claims), and prints the seconds of each, largest first.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ropeproof._report import without_timings


def torch_version() -> str:
    import torch

    return str(torch.__version__)


def run_once(python: str, command: list[str], out: Path) -> float:
    """Wall seconds of one ``PYTHON -m ropeproof COMMAND --no-progress --out OUT`` (run from a neutral
    directory, so each interpreter imports its own installation)."""
    argv = [python, "-m", "ropeproof", *command, "--no-progress", "--out", str(out)]
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=out.parent)
    return time.perf_counter() - start


def comparable_report(out: Path) -> dict[str, Any]:
    """``report.json`` without timings and without what names the checkout (command, commit, versions)."""
    report = without_timings(json.loads((out / "report.json").read_text()))
    for key in ("command", "git_commit", "versions"):
        report["run"].pop(key, None)
    return report


def differences(before: Path, after: Path) -> list[str]:
    """What differs between two runs' outputs (empty when the reports and figures are the same)."""
    out = []
    if comparable_report(before) != comparable_report(after):
        out.append("report.json (timings and run metadata aside)")
    md_before = (before / "report.md").read_text().splitlines()
    md_after = (after / "report.md").read_text().splitlines()
    if md_before[:2] + md_before[3:] != md_after[:2] + md_after[3:]:
        out.append("report.md (header line aside)")
    names = sorted(
        {p.name for p in (before / "figures").iterdir()} | {p.name for p in (after / "figures").iterdir()}
    )
    for name in names:
        a, b = before / "figures" / name, after / "figures" / name
        if not (a.is_file() and b.is_file() and a.read_bytes() == b.read_bytes()):
            out.append(f"figures/{name}")
    return out


def figure_costs(quick: bool) -> list[tuple[str, float]]:
    """Seconds to compute and draw each figure from a fresh store, in this process."""
    from ropeproof.machinery._result_store import ResultStore
    from ropeproof.paper_figures import available_figure_names, draw_figure
    from ropeproof.verify.kernel._threads import thread_policy

    costs = []
    with thread_policy():
        for name in available_figure_names():
            start = time.perf_counter()
            draw_figure(name, quick, ResultStore())
            costs.append((name, time.perf_counter() - start))
    return sorted(costs, key=lambda c: -c[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-python", required=True, help="the baseline installation's interpreter")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--command", default="check --quick")
    parser.add_argument("--figure-costs", action="store_true")
    args = parser.parse_args(argv)
    command = shlex.split(args.command)
    sides = {"baseline": args.baseline_python, "this": sys.executable}
    times: dict[str, list[float]] = {name: [] for name in sides}
    seconds: dict[str, list[float]] = {}
    print(
        f"{os.cpu_count()} cores, python {platform.python_version()}, torch {torch_version()}, "
        f"`ropeproof {args.command}`"
    )
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            order = list(sides) if r % 2 == 0 else list(sides)[::-1]
            for name in order:
                out = Path(tmp) / f"{name}-{r}"
                times[name].append(run_once(sides[name], command, out))
                print(f"  round {r + 1}: {name:8s} {times[name][-1]:7.1f} s", flush=True)
                if name == "this":
                    for c in json.loads((out / "report.json").read_text())["claims"]:
                        seconds.setdefault(c["id"], []).append(c["seconds"])
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        med = {name: statistics.median(ts) for name, ts in times.items()}
        for name, ts in times.items():
            print(f"{name:8s} median {med[name]:7.1f} s  (runs: {', '.join(f'{t:.1f}' for t in ts)})")
        print(f"this / baseline: {med['this'] / med['baseline']:.2f}x")
        top = sorted(((statistics.median(v), k) for k, v in seconds.items()), reverse=True)[:8]
        print("claims that cost the most here (median seconds):")
        for s, k in top:
            print(f"  {s:6.2f} s  {k}")
        diff = differences(Path(tmp) / "baseline-0", Path(tmp) / "this-0")
    if args.figure_costs:
        print("figures drawn alone from a fresh store, this checkout (seconds):")
        for name, s in figure_costs("--quick" in command):
            print(f"  {s:6.2f} s  {name}")
    if diff:
        print("DIFFERENT: " + "; ".join(diff))
        return 1
    print(
        "same report.json (timings and run metadata aside), report.md (header aside) and figures, "
        "byte for byte"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
