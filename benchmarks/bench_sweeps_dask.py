"""The certified Index check on a local Dask cluster against one process, and what n <= 10^9 costs.

    python3 benchmarks/bench_sweeps_dask.py [--max-n 100000000] [--workers 2] [--repeats 1]

Runs, in one invocation and in turn (round-robin when ``--repeats`` > 1):

- ``ropeproof sweep certified-index --theta 0.866 --lengths 2:MAX_N --out one.json`` (one process);
- the same with ``--executor dask --scheduler ADDRESS --out dask.json`` on a local cluster of W
  worker processes that the script starts first, exactly as ``--workers W`` would (its start-up is
  timed apart, and the workers' CPU time is read from them before and after);

and prints each median wall time, the speed-up, whether the two files hold the same bytes, the CPU
time of the one-process run and of the workers (their ratio is the parallel efficiency), and from the
one-process CPU time per offset the cost of n <= 10^9: CPU-hours, and wall-clock hours on W workers
at the measured speed-up. On a machine whose cores are busy with other jobs the speed-up measures
the share of the cores the workers got, not the method.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from ropeproof._cli import main as cli_main
from ropeproof.verify.sweep_runs import _shard_runner as shard_runner


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
    walls: dict[str, list[float]] = {"one process": [], "dask": []}
    cpu: list[float] = []
    worker_cpu: list[float] = []
    same = True
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, shard_runner._client("dask", args.workers, None) as client:
        started = time.perf_counter() - start
        dask = ["--executor", "dask", "--scheduler", client.scheduler.address]
        os.chdir(tmp)
        for k in range(args.repeats):
            start, c0 = time.perf_counter(), time.process_time()
            assert cli_main([*base, "--out", f"one{k}.json"]) == 0
            walls["one process"].append(time.perf_counter() - start)
            cpu.append(time.process_time() - c0)
            before = sum(client.run(time.process_time).values())
            start = time.perf_counter()
            assert cli_main([*base, *dask, "--out", f"dask{k}.json"]) == 0
            walls["dask"].append(time.perf_counter() - start)
            worker_cpu.append(sum(client.run(time.process_time).values()) - before)
            same &= Path(f"one{k}.json").read_bytes() == Path(f"dask{k}.json").read_bytes()
            print(
                f"  round {k + 1}: one process {walls['one process'][-1]:.1f} s ({cpu[-1]:.1f} s CPU), "
                f"dask {walls['dask'][-1]:.1f} s ({worker_cpu[-1]:.1f} s workers' CPU)",
                flush=True,
            )
        verdict = Path("one0.json").read_text()
    one, on_dask = statistics.median(walls["one process"]), statistics.median(walls["dask"])
    cpu_one, cpu_workers = statistics.median(cpu), statistics.median(worker_cpu)
    per_offset = cpu_one / (args.max_n - 1)
    speedup = one / on_dask
    hours = one / (args.max_n - 1) * 1e9 / speedup / 3600
    print(f"\ncertified Index check, n <= {args.max_n:.0e}, theta = {args.theta}:")
    print(f"  one process:          {one:10.1f} s wall, {cpu_one:.1f} s CPU")
    print(f"  dask, {args.workers} workers:      {on_dask:10.1f} s wall, {cpu_workers:.1f} s workers' CPU")
    print(f"  cluster start:        {started:10.1f} s (apart)")
    print(f"  speed-up:             {speedup:10.2f}x wall")
    print(f"  CPU ratio:            {cpu_one / cpu_workers:10.2f} (one process / workers; judging runs here)")
    print(f"  same bytes:           {same}")
    print(f"  CPU per offset:       {per_offset * 1e6:10.2f} us")
    cost = f"{per_offset * 1e9 / 3600:10.2f} CPU-hours; {hours:.2f} h wall on {args.workers} workers"
    print(f"  n <= 10^9:            {cost}")
    print(f"  verdict: {verdict[:300]}")


if __name__ == "__main__":
    main()
