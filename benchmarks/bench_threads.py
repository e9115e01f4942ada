"""Benchmark: the thread policy against torch's default threads and against one thread everywhere.

    python3 benchmarks/bench_threads.py [--repeats 3] [--command "check --quick --no-figures"] [--target S]

Runs ``python -m ropeproof COMMAND`` as a subprocess under three settings, round-robin (one run of
each per round, so drift in the machine's load hits all three alike), and prints each setting's
median wall time and the ratios:

- ``policy``: the toolkit's thread policy (``ROPEPROOF_THREADS`` unset; see
  ``verify/kernel/_threads.py``), no thread variables in the environment;
- ``torch default``: ``ROPEPROOF_THREADS=0``, so torch keeps its default (one thread per core);
- ``one thread``: ``OMP_NUM_THREADS=MKL_NUM_THREADS=OPENBLAS_NUM_THREADS=1`` (every thread pool,
  numpy's BLAS included, at one thread) and ``ROPEPROOF_THREADS=0``.

It also checks that the three settings reach the same verdicts (``report.json``). The policy
passes when its median is at most the better of the other two medians times ``1 + --slack``
(default 0.05: medians of a few repeats on a shared machine move by a few percent). With
``--target S`` it also prints the policy's median as a fraction of ``S`` seconds (issue 13 asks for
``check --quick`` well under a minute: ``--command "check --quick" --target 60``).
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

import torch

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "ROPEPROOF_THREADS")
SETTINGS: dict[str, dict[str, str]] = {
    "policy": {},
    "torch default": {"ROPEPROOF_THREADS": "0"},
    "one thread": {
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "ROPEPROOF_THREADS": "0",
    },
}


def run_once(command: list[str], extra_env: dict[str, str], out: Path) -> tuple[float, dict[str, str]]:
    """Wall seconds of one ``python -m ropeproof COMMAND --out OUT`` and its verdicts by claim id."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    env.update(extra_env)
    argv = [sys.executable, "-m", "ropeproof", *command, "--no-progress", "--out", str(out)]
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    report = json.loads((out / "report.json").read_text())
    return seconds, {c["id"]: c["verdict"] for c in report["claims"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--command", default="check --quick --no-figures")
    parser.add_argument("--slack", type=float, default=0.05)
    parser.add_argument("--target", type=float, default=None, help="seconds to compare with")
    args = parser.parse_args(argv)
    command = shlex.split(args.command)
    times: dict[str, list[float]] = {name: [] for name in SETTINGS}
    verdicts: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            for name, env in SETTINGS.items():
                seconds, verdicts[name] = run_once(command, env, Path(tmp) / f"{r}-{name.replace(' ', '-')}")
                times[name].append(seconds)
                print(f"  round {r + 1}: {name:13s} {seconds:7.1f} s", flush=True)
    med = {name: statistics.median(ts) for name, ts in times.items()}
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"torch default threads {torch.get_num_threads()}"
    )
    print(f"command: ropeproof {args.command}; median over {args.repeats} runs of each setting")
    for name, m in med.items():
        print(f"  {name:13s} median {m:7.1f} s   (runs: {', '.join(f'{t:.1f}' for t in times[name])})")
    best_other = min(med["torch default"], med["one thread"])
    print(f"torch default / policy: {med['torch default'] / med['policy']:.2f}x")
    print(f"one thread / policy:    {med['one thread'] / med['policy']:.2f}x")
    if args.target is not None:
        print(f"policy median / target {args.target:g} s: {med['policy'] / args.target:.2f}")
    same = len({json.dumps(v, sort_keys=True) for v in verdicts.values()}) == 1
    print(f"same verdicts under all three settings: {same}")
    ok = med["policy"] <= best_other * (1 + args.slack)
    print(f"policy at least as fast as the better of the two (slack {args.slack:.0%}): {ok}")
    return 0 if ok and same else 1


if __name__ == "__main__":
    sys.exit(main())
