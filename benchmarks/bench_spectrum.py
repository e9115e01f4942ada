"""Benchmark: a certified spectrum sweep against a plain numpy pass of the same sums (issue 43).

    python3 benchmarks/bench_spectrum.py [--max-m 1000000] [--repeats 5] [--base 310000] [--json]

Men et al.'s quantity ``B(m) = sum_{i<64} cos(m b^(-i/64))`` for ``m = 0 .. max_m`` (``b = 3.1e5`` by
default), in one process, round robin (one run of each path per round), medians over ``--repeats``:

- ``numpy``: the plain pass, ``np.cos(np.multiply.outer(m, theta)).sum(axis=1)`` over chunks of 16384
  offsets (no error bound, no certification);
- ``sweep, every row``: ``sweep_spectrum(spectrum, max_m, stop_at_first=False)``: every row decided and
  certified (Arb for the rows within the float bound), not stopping at the first violation;
- ``sweep, first violation``: ``sweep_spectrum(spectrum, max_m)`` as a user calls it: stops at the first
  violation (``m = 12223`` for ``b = 3.1e5``).

The target is ``sweep, every row / numpy <= 3``. Each round also checks that the sweep's float values are
within their bound of the numpy pass's (both errors counted) and that the first violation agrees.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import numpy as np

from ropeproof import Spectrum, sweep_spectrum


def numpy_pass(theta: np.ndarray, max_m: int, chunk: int = 16384) -> np.ndarray:
    out = np.empty(max_m + 1)
    for start in range(0, max_m + 1, chunk):
        m = np.arange(start, min(max_m + 1, start + chunk), dtype=np.float64)
        out[start : start + m.size] = np.cos(np.multiply.outer(m, theta)).sum(axis=1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-m", type=int, default=10**6)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--base", type=float, default=3.1e5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    spectrum = Spectrum.from_base(args.base, 128)
    theta = np.asarray(spectrum.freqs)
    times: dict[str, list[float]] = {"numpy": [], "sweep, every row": [], "sweep, first violation": []}
    checks = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        plain = numpy_pass(theta, args.max_m)
        times["numpy"].append(time.perf_counter() - t)
        t = time.perf_counter()
        full = sweep_spectrum(spectrum, args.max_m, stop_at_first=False)
        times["sweep, every row"].append(time.perf_counter() - t)
        t = time.perf_counter()
        first = sweep_spectrum(spectrum, args.max_m)
        times["sweep, first violation"].append(time.perf_counter() - t)
        kept = sweep_spectrum(spectrum, args.max_m, stop_at_first=False, certified=False, keep_values=True)
        plain_error = 1e-9  # np.cos of an unreduced m theta: u m theta per term, 64 terms, m theta <= 1e6
        within = bool(np.all(np.abs(kept.values - plain) <= kept.errors + plain_error))
        negative = np.nonzero(plain < 0)[0]
        checks.append(
            {
                "within_bounds": within,
                "first_violation": first.first_violation,
                "numpy_first_negative": int(negative[0]) if negative.size else None,
                "same_first": full.first_violation == first.first_violation,
                "enclosed_rows": full.enclosed,
                "undecided_rows": full.n_undecided,
            }
        )
    med = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "max_m": args.max_m,
        "base": args.base,
        "repeats": args.repeats,
        "machine": platform.platform(),
        "medians_s": med,
        "runs_s": times,
        "ratio_every_row_over_numpy": med["sweep, every row"] / med["numpy"],
        "ratio_first_violation_over_numpy": med["sweep, first violation"] / med["numpy"],
        "checks": checks[-1],
        "all_rounds_agree": all(c == checks[-1] for c in checks),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for k, v in med.items():
        print(f"{k:24s} {v * 1e3:10.1f} ms  runs {', '.join(f'{x * 1e3:.1f}' for x in times[k])}")
    print(f"every row / numpy: {result['ratio_every_row_over_numpy']:.2f}x (target <= 3)")
    print(f"first violation / numpy: {result['ratio_first_violation_over_numpy']:.3f}x")
    print("checks:", json.dumps(result["checks"]), "all rounds agree:", result["all_rounds_agree"])


if __name__ == "__main__":
    main()
