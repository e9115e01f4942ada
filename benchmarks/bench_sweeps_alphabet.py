"""Retrieval sweep cost against |ALPH|: the O(1)-candidate implementation vs the former scan of every code.

    python3 benchmarks/bench_sweeps_alphabet.py [--repeats 3] [--quick]

Keeps a private copy of the former implementation (every code's value at every distance, and
``gap_inf`` enumerated over every code with ``_gap_inf_config``) and prints, in one run:

1. ``retrieval_distance_logits`` (``T``, ``H(d)``, ``L(d)``, their codes and error bounds) for 4096
   distances at several alphabets: median seconds, former / now, and whether values, codes and bounds
   are identical;
2. ``gap_inf`` at one length past the horizon (n = 60, theta = 1e-4): the same;
3. ``ropeproof sweep retrieval --alphabet 1000 --theta 0.0001 --lengths 2:1000000`` (text table to a
   file; target under 10 s), and the former implementation's rows against today's on 2:50 (equal bytes);
4. ``--alphabet 100000000 --lengths 2:5`` (issue 22's 6.7 GB case).

Rounds are interleaved (one run of each setting per round); each figure is the median of ``--repeats``.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable

import numpy as np

from ropeproof._cli import main as cli_main
from ropeproof.verify.measure.exact import _retrieval_sweep as rs
from ropeproof.verify.measure.exact import _sweep as sw
from ropeproof.verify.measure.exact._angles import reduced_angles_with_error
from ropeproof.verify.measure.exact._discrepancy import _gap_inf_config
from ropeproof.verify.measure.exact._retrieval_codes import code_angles
from ropeproof.verify.measure.exact._retrieval_gap_inf import gap_inf_enumerated
from ropeproof.verify.sweep_runs._sweep_files import SweepHeader, write_rows

# ------------------------------------------------------------------ the former implementation (private)


def former_distance_logits(alphabet: int, theta: float, d: np.ndarray) -> rs.DistanceLogits:
    """The former ``retrieval_distance_logits``: the full table, and the same error bounds (its own copy)."""
    u = 2.0**-53
    d = np.asarray(d, dtype=np.float64)
    r, e = reduced_angles_with_error(d, theta)
    hi, lo, w_err = code_angles(alphabet)
    t = np.cos(r)
    table = np.cos((hi[:, None] - r[None, :]) + lo[:, None])
    h_arg, low_arg = table.argmax(0), table.argmin(0)
    h = np.take_along_axis(table, h_arg[None], 0)[0]
    low = np.take_along_axis(table, low_arg[None], 0)[0]
    lo_max = float(np.abs(lo).max(initial=0.0))
    err_c = e + w_err + u * (2 * (np.pi + np.abs(r)) + lo_max) + 2 * 2.0 * u
    err_t = e + 2 * 2.0 * u * np.abs(t) + 2.0**-1070
    err_th = np.maximum(err_c, err_t) * (1 + 16 * u)
    return rs.DistanceLogits(d, t, h, h_arg + 1, low, low_arg + 1, err_th, err_th)


def former_gap_inf(alphabet: int, theta: float, n: int) -> tuple[float, tuple[int, ...], int]:
    hi, lo, _ = code_angles(alphabet)
    d = np.arange(1, n, dtype=np.float64)
    r, _e = reduced_angles_with_error(d, theta)
    table = np.cos((hi[None, :] - r[:, None]) + lo[None, :])
    t = np.cos(r)
    s = np.cos(hi + lo)
    best: tuple[float, tuple[int, ...], int] = (np.inf, (), 0)
    for d_t in range(1, n):
        sets = [s if dist == 0 else np.array([t[d_t - 1]]) if dist == d_t else table[dist - 1]
                for dist in range(n - 1, -1, -1)]  # fmt: skip
        value, pa, ga, pb, gb = _gap_inf_config(sets)
        if value < best[0]:
            codes = [int(np.argmin(x)) + 1 for x in sets]
            codes[pa], codes[pb] = ga + 1, gb + 1
            codes[n - 1 - d_t] = -1
            best = (float(value), tuple(codes), d_t)
    return best


def former_gap_inf_values(alphabet: int, theta: float, lengths: list[int]) -> list[float]:
    return [former_gap_inf(alphabet, theta, n)[0] for n in lengths]


now_distance_logits = rs.retrieval_distance_logits


class former_implementation:
    """``with former_implementation():`` runs the sweeps with the former per-distance scan and
    enumeration."""

    def __enter__(self) -> None:
        self.saved = (rs.retrieval_distance_logits, sw.gap_inf_values)
        rs.retrieval_distance_logits = former_distance_logits
        sw.gap_inf_values = former_gap_inf_values

    def __exit__(self, *exc: object) -> None:
        rs.retrieval_distance_logits, sw.gap_inf_values = self.saved


# ------------------------------------------------------------------------------------------ timing


def interleaved(settings: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in settings}
    for _ in range(repeats):
        for name, fn in settings.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}


def rows_text(alphabet: int, theta: float, first: int, last: int) -> str:
    header = SweepHeader("retrieval", {}, "float64", "b", (first, last, 1), None, first, last)
    out = io.StringIO()
    write_rows(out, header, sw.iter_retrieval_sweep(alphabet, theta, first, last), True)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smaller alphabets, skip part 3's full run")
    args = parser.parse_args()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()}")

    print("\n1. retrieval_distance_logits for 4096 distances (theta = 0.0027): former scan / candidates")
    d = np.arange(1, 4097)
    alphabets = [8, 100, 1000] if args.quick else [8, 100, 1000, 10_000, 16_384]
    for a in alphabets:
        code_angles(a)  # the mpmath table, shared by both: not timed
        t = interleaved(
            {
                "former": lambda a=a: former_distance_logits(a, 0.0027, d),
                "now": lambda a=a: now_distance_logits(a, 0.0027, d),
            },
            args.repeats,
        )
        old, new = former_distance_logits(a, 0.0027, d), now_distance_logits(a, 0.0027, d)
        fields = ("h", "h_code", "low", "low_code", "err_th")
        same = all(np.array_equal(getattr(old, f), getattr(new, f)) for f in fields)
        print(f"  |ALPH| = {a:6d}: former {t['former'] * 1e3:9.2f} ms, now {t['now'] * 1e3:7.2f} ms, "
              f"ratio {t['former'] / t['now']:8.1f}x, identical: {same}")  # fmt: skip

    print("\n2. gap_inf at n = 60 past the horizon (theta = 1e-4): former enumeration / candidates")
    for a in [8, 100, 1000] if args.quick else [8, 100, 1000, 4000]:
        reps = args.repeats if a <= 1000 else 1
        t = interleaved(
            {
                "former": lambda a=a: former_gap_inf(a, 1e-4, 60),
                "now": lambda a=a: gap_inf_enumerated(a, 1e-4, 60),
            },
            reps,
        )
        same = former_gap_inf(a, 1e-4, 60) == gap_inf_enumerated(a, 1e-4, 60)
        print(f"  |ALPH| = {a:6d}: former {t['former']:8.3f} s, now {t['now']:7.4f} s, "
              f"ratio {t['former'] / t['now']:8.1f}x, identical: {same}")  # fmt: skip

    print("\n3. sweep retrieval --alphabet 1000 --theta 0.0001")
    now_rows = rows_text(1000, 1e-4, 2, 50)
    start = time.perf_counter()
    with former_implementation():
        old_rows = rows_text(1000, 1e-4, 2, 50)
    former_s = time.perf_counter() - start
    start = time.perf_counter()
    rows_text(1000, 1e-4, 2, 50)
    now_s = time.perf_counter() - start
    print(f"  rows 2:50: former {former_s:.2f} s, now {now_s:.3f} s, ratio {former_s / now_s:.0f}x, "
          f"equal bytes: {old_rows == now_rows}")  # fmt: skip
    if not args.quick:
        with tempfile.TemporaryDirectory() as tmp:
            argv = ["sweep", "retrieval", "--alphabet", "1000", "--theta", "0.0001", "--lengths", "2:1000000"]
            runs = []
            for k in range(args.repeats):
                start, cpu = time.perf_counter(), time.process_time()
                cli_main([*argv, "--no-progress", "--out", os.path.join(tmp, f"r{k}.txt")])
                runs.append((time.perf_counter() - start, time.process_time() - cpu))
            wall = statistics.median(r[0] for r in runs)
            cpu_s = statistics.median(r[1] for r in runs)
            print(f"  2:1000000 (text table to a file): median {wall:.2f} s wall, {cpu_s:.2f} s CPU "
                  f"(target < 10 s); runs {[round(r[0], 2) for r in runs]}")  # fmt: skip

    print("\n4. --alphabet 100000000 --theta 0.0027 --lengths 2:5 (issue 22: grew past 6.7 GB)")
    start = time.perf_counter()
    text = rows_text(10**8, 0.0027, 2, 5)
    print(f"  now {time.perf_counter() - start:.2f} s, {text.count(chr(10)) - 2} rows")


if __name__ == "__main__":
    main()
