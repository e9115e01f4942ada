"""Issue 46: how long the command takes to start: every subcommand's ``--help``, and a tiny ``sweep``.

    python3 benchmarks/bench_startup.py [--repeats 7]

Each setting is a fresh ``python -m ropeproof ...`` process (output discarded), timed as wall seconds and
as the child's CPU seconds (user + system; on a loaded machine the wall time mostly measures the
wait for a core); the settings run interleaved, one of each per round, and the medians are compared
with ``python -c pass`` (the interpreter alone) measured in the same rounds. The targets are judged on
the CPU seconds. Targets: every ``--help`` <= 0.15 s, ``sweep`` start
<= 0.25 s (``sweep index --theta 0.866 --lengths 2:3``: parsing, the sweep of two lengths, the output).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

from ropeproof._cli import SUBCOMMANDS

SWEEP = ["sweep", "index", "--theta", "0.866", "--lengths", "2:3"]


def seconds(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of ``argv`` as a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    command = [sys.executable, "-m", "ropeproof"]
    settings = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "ropeproof --help": [*command, "--help"],
        **{f"{sub} --help": [*command, sub, "--help"] for sub in SUBCOMMANDS},
        "sweep start": [*command, *SWEEP],
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in settings}
    for _ in range(args.repeats):
        for name, argv in settings.items():
            times[name].append(seconds(argv))
    load = os.getloadavg()[0]
    print(f"# start-up, {args.repeats} interleaved rounds, medians (load average {load:.1f})")
    print("  setting                 wall s   CPU s   CPU / interpreter's CPU   target on CPU")
    base = statistics.median(c for _, c in times["python -c pass"])
    for name, t in times.items():
        wall, cpu = statistics.median(w for w, _ in t), statistics.median(c for _, c in t)
        target = 0.25 if name == "sweep start" else 0.15 if "help" in name else None
        verdict = "" if target is None else f"<= {target}: {'met' if cpu <= target else 'NOT met'}"
        print(f"  {name:22s} {wall:7.3f} {cpu:7.3f}   {cpu / base:5.2f}x                     {verdict}")


if __name__ == "__main__":
    main()
