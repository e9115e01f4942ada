"""The certified Index check on a local Dask cluster against one process, and what n <= 10^9 costs.

    python3 benchmarks/bench_sweeps_dask.py [--max-n 100000000] [--workers 2] [--repeats 1]

Runs, in one invocation and in turn (round-robin when ``--repeats`` > 1):

- ``ropeproof sweep certified-index --theta 0.866 --lengths 2:MAX_N --out one.json`` (one process);
- the same with ``--executor dask --workers W --out dask.json`` (a local cluster of W processes,
  started by the command and counted in its time);

and prints each median wall time, the speed-up, whether the two files hold the same bytes, the CPU
time per offset of the one-process run (``time.process_time``), and from it the cost of n <= 10^9:
CPU-hours, and wall-clock hours on W workers at the measured speed-up.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from ropeproof.cli import main as cli_main


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--max-n", type=int, default=10**8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--theta", default="0.866")
    args = parser.parse_args()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()}")
    base = [
        "sweep",
        "certified-index",
        "--theta",
        args.theta,
        "--lengths",
        f"2:{args.max_n}",
        "--no-progress",
    ]
    dask = ["--executor", "dask", "--workers", str(args.workers)]
    walls: dict[str, list[float]] = {"one process": [], "dask": []}
    cpu: list[float] = []
    same = True
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        for k in range(args.repeats):
            start, c0 = time.perf_counter(), time.process_time()
            assert cli_main([*base, "--out", f"one{k}.json"]) == 0
            walls["one process"].append(time.perf_counter() - start)
            cpu.append(time.process_time() - c0)
            start = time.perf_counter()
            assert cli_main([*base, *dask, "--out", f"dask{k}.json"]) == 0
            walls["dask"].append(time.perf_counter() - start)
            same &= Path(f"one{k}.json").read_bytes() == Path(f"dask{k}.json").read_bytes()
            print(f"  round {k + 1}: one process {walls['one process'][-1]:.1f} s ({cpu[-1]:.1f} s CPU), "
                  f"dask {walls['dask'][-1]:.1f} s", flush=True)  # fmt: skip
        verdict = Path("one0.json").read_text()
    one, on_dask = statistics.median(walls["one process"]), statistics.median(walls["dask"])
    per_offset = statistics.median(cpu) / (args.max_n - 1)
    speedup = one / on_dask
    print(f"\ncertified Index check, n <= {args.max_n:.0e}, theta = {args.theta}:")
    print(f"  one process:            {one:10.1f} s wall, {statistics.median(cpu):.1f} s CPU")
    print(f"  dask, {args.workers} workers:        {on_dask:10.1f} s wall (cluster start included)")
    print(f"  speed-up:               {speedup:10.2f}x")
    print(f"  same bytes:             {same}")
    print(f"  CPU per offset:         {per_offset * 1e6:10.2f} us")
    hours = one / (args.max_n - 1) * 1e9 / speedup / 3600
    print(f"  n <= 10^9:              {per_offset * 1e9 / 3600:10.2f} CPU-hours; "
          f"{hours:.2f} h wall on {args.workers} workers")  # fmt: skip
    print(f"  verdict: {verdict[:300]}")


if __name__ == "__main__":
    main()
