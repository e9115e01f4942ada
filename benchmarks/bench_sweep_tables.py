"""Issue 46 item 6: the public sweep functions against one numpy pass, in one process.

    python3 benchmarks/bench_sweep_tables.py [--repeats 5] [--lengths 1000000]

For ``sweep_index(0.866, N)`` and ``sweep_retrieval(1000, 0.866, N)`` (``N = lengths + 1``: every
``n = 2 .. N``, every row computed with its error bounds and judged under three readings), and for the
anchors of ``benchmarks/sweep_anchors.py`` (one numpy pass computing ``margin_inf`` alone, no error
bounds, no verdicts), CPU seconds of this process, interleaved: one run of each setting per round, in
turn, after one warm-up run of each. A third setting per construction reads every verdict column of
the table afterwards (``dict(table.columns)``: the ``bound_holds*`` and ``bound_status*`` object
arrays, one Python object per row, which the tables built at once before issue 46).

Prints the medians and ``sweep / numpy pass`` (target <= 2.5), and checks that the sweep's
``margin_inf`` is the anchor's, bit for bit.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sweep_anchors

from ropeproof.verify.measure.exact._sweep import sweep_index, sweep_retrieval


def cpu(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--lengths", type=int, default=10**6)
    args = parser.parse_args()
    top = args.lengths + 1
    settings: dict[str, Callable[[], object]] = {
        "index: numpy pass": lambda: sweep_anchors.index_margins(0.866, top),
        "index: sweep_index": lambda: sweep_index(0.866, top),
        "index: sweep_index, verdict columns read": lambda: dict(sweep_index(0.866, top).columns),
        "retrieval: numpy pass": lambda: sweep_anchors.retrieval_margins(1000, 0.866, top),
        "retrieval: sweep_retrieval": lambda: sweep_retrieval(1000, 0.866, top),
        "retrieval: sweep_retrieval, verdict columns read": lambda: dict(
            sweep_retrieval(1000, 0.866, top).columns
        ),
    }
    same = all(
        np.array_equal(anchor(), table.columns["margin_inf"])
        for anchor, table in (
            (lambda: sweep_anchors.index_margins(0.866, top), sweep_index(0.866, top)),
            (lambda: sweep_anchors.retrieval_margins(1000, 0.866, top), sweep_retrieval(1000, 0.866, top)),
        )
    )
    times: dict[str, list[float]] = {name: [] for name in settings}
    for _ in range(args.repeats):
        for name, fn in settings.items():
            times[name].append(cpu(fn))
    print(f"# sweeps in process, {args.lengths} lengths, {args.repeats} interleaved rounds, CPU seconds")
    print(f"load average {os.getloadavg()[0]:.1f}; margin_inf equals the numpy pass bit for bit: {same}")
    med = {name: statistics.median(t) for name, t in times.items()}
    for name, t in times.items():
        print(f"  {name:48s} {med[name]:.3f} s  ({', '.join(f'{x:.3f}' for x in t)})")
    for kind, fn in (("index", "sweep_index"), ("retrieval", "sweep_retrieval")):
        base = med[f"{kind}: numpy pass"]
        print(
            f"{fn} / numpy pass: {med[f'{kind}: {fn}'] / base:.2f}x (target <= 2.5); with the verdict "
            f"columns read: {med[f'{kind}: {fn}, verdict columns read'] / base:.2f}x"
        )


if __name__ == "__main__":
    main()
