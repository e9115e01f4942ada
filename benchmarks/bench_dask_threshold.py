"""Issue 46 item 7: from what work size a local Dask cluster pays, as ``--executor dask --workers W`` runs it.

    python3 benchmarks/bench_dask_threshold.py [--sizes 1000000,3000000,10000000] [--workers 2] [--repeats 1]

For each size ``N`` (the certified Index check of every ``n = 2 .. N``, ``theta = 0.866``, 80 bits), in
turn and round robin over ``--repeats`` rounds: :func:`run_certified_index` in this process, and the same
with ``executor="dask", workers=W``, which starts a local cluster of ``W`` worker processes, runs the
shards and merges them, all inside the timing (what the command costs). Prints wall seconds (medians),
the one-process CPU seconds, the ratio dask / one process (below 1: the cluster paid), whether both
results are the same, and the load average before and after. On a machine whose cores other jobs hold,
the wall times measure the share of the cores the processes got: the load average is printed so the
reader can tell.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from ropeproof.verify.sweep_runs._shard_runner import run_certified_index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,3000000,10000000")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"# {os.cpu_count()} cores, {args.workers} workers; load average before {os.getloadavg()[0]:.1f}")
    local: dict[int, list[float]] = {n: [] for n in sizes}
    cpu: dict[int, list[float]] = {n: [] for n in sizes}
    dask: dict[int, list[float]] = {n: [] for n in sizes}
    same: dict[int, bool] = dict.fromkeys(sizes, True)
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            for n in sizes:
                c0, w0 = time.process_time(), time.perf_counter()
                one = run_certified_index(0.866, n)
                local[n].append(time.perf_counter() - w0)
                cpu[n].append(time.process_time() - c0)
                w0 = time.perf_counter()
                shared = run_certified_index(0.866, n, executor="dask", workers=args.workers, shard_root=tmp)
                dask[n].append(time.perf_counter() - w0)
                same[n] &= one.to_dict() == shared.to_dict()
                print(f"  n <= {n}: one process {local[n][-1]:.1f} s, dask {dask[n][-1]:.1f} s", flush=True)
    print(f"load average after {os.getloadavg()[0]:.1f}")
    print("| n <= | one process wall (CPU) | Dask, cluster start included | dask / one process | same |")
    print("|---|---|---|---|---|")
    for n in sizes:
        a, c, d = statistics.median(local[n]), statistics.median(cpu[n]), statistics.median(dask[n])
        print(f"| {n:.0e} | {a:.1f} s ({c:.1f} s) | {d:.1f} s | {d / a:.2f}x | {same[n]} |")


if __name__ == "__main__":
    main()
