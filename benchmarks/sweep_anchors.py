"""The anchors of the sweep benchmarks: one numpy pass computing the same margins as ``ropeproof sweep``.

    python benchmarks/sweep_anchors.py index THETA MAX_N STEP OUT
    python benchmarks/sweep_anchors.py retrieval THETA MAX_N STEP OUT --alphabet A

Each computes ``margin_inf(n)`` for every ``n = 2 .. MAX_N`` in one vectorised pass and writes the rows
``n = 2, 2 + STEP, ...`` as ``n margin`` lines (``repr`` floats, so exact) to ``OUT``. Nothing else: no
error bounds, no verdicts, no other quantities, no torch. The per-distance values use the toolkit's
own angle reduction and code tables (so the margins are the sweeps', bit for bit, which
``bench_sweeps_anchor.py`` checks); the prefix extremes are this file's own numpy:

- T_Index (one plane, amplitude 1): ``g(m) = 2 sin(r_m / 2)^2`` with ``r_m`` the reduced ``m theta``,
  ``margin_inf(n) = min_{m <= n - 1} g(m)`` (``np.minimum.accumulate``);
- T_Retrieval: ``T(d) = cos(r_d)``, ``H(d)`` the largest competitor logit at distance ``d`` (the codes
  next to ``d theta / omega``), ``S`` the query's own best; ``margin_inf(n) = min(T_ex - max(S, H_1),
  T(i_1) - max(S, H_2))`` with ``i_1`` the first argmax of ``H`` over ``d <= n - 1``, ``H_2`` the best
  other ``H`` and ``T_ex`` the smallest other ``T``, from prefix maxima restarted at each new argmax.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np


def index_margins(theta: float, max_n: int) -> np.ndarray:
    """``margin_inf(n)`` of one-plane T_Index for ``n = 2 .. max_n`` (index ``n - 2``)."""
    from ropeproof.verify.kernel._angles import offset_angles

    m = np.arange(1, max_n, dtype=np.float64)
    g = 2.0 * 1.0 * np.sin(offset_angles(m, theta) / 2) ** 2
    return np.minimum.accumulate(g)


def _restarted(values: np.ndarray, segment: np.ndarray, record: np.ndarray, largest: bool) -> np.ndarray:
    """Per index, the best (largest or smallest) of ``values`` since the last record, the record itself
    excluded (``-inf``/``inf`` for none): an exact running extreme restarted at each record, through
    integer keys (segment, rank)."""
    sign = 1 if largest else -1
    uniq, rank = np.unique(sign * values, return_inverse=True)
    width = uniq.size + 2
    key = segment.astype(np.int64) * width + np.where(record, 0, rank + 1)
    best = np.maximum.accumulate(key) - segment.astype(np.int64) * width
    fill = -math.inf if largest else math.inf
    return np.where(best > 0, sign * uniq[np.maximum(best - 1, 0)], fill)


def retrieval_margins(alphabet: int, theta: float, max_n: int) -> np.ndarray:
    """``margin_inf(n)`` of T_Retrieval for ``n = 2 .. max_n`` (index ``n - 2``)."""
    from ropeproof.verify.kernel._angles import offset_angles
    from ropeproof.verify.measure.exact._retrieval_codes import (  # numpy and mpmath only, no torch
        code_position,
        code_table,
        code_values,
        pick,
        window,
    )

    angles = code_table(alphabet)
    r = offset_angles(np.arange(1, max_n, dtype=np.float64), theta)
    t = np.cos(r)
    if angles.table is not None and alphabet - 1 <= 10:  # every code (the sweeps do the same)
        hi, lo = angles.table
        h = np.cos((hi[:, None] - r[None, :]) + lo[:, None]).max(0)
    else:
        near = window(alphabet, code_position(alphabet, r))
        h, _code = pick(code_values(angles, r, near), near, True)
    if angles.table is not None:  # S: the query's best, cos(c omega) over every code
        s_hi = float(np.cos(angles.table[0] + angles.table[1]).max())
    else:
        s_hi = float(
            pick(
                code_values(angles, np.zeros(1), window(alphabet, np.zeros(1))),
                window(alphabet, np.zeros(1)),
                True,
            )[0][0]
        )
    idx = np.arange(h.size)
    prefix = np.maximum.accumulate(h)
    record = np.concatenate([[True], h[1:] > prefix[:-1]])  # a new first argmax
    i1 = np.maximum.accumulate(np.where(record, idx, 0))
    segment = np.cumsum(record)
    before = np.concatenate([[-math.inf], prefix[:-1]])[i1]  # the best H before the argmax
    h2 = np.maximum(before, _restarted(h, segment, record, True))
    t_before = np.concatenate([[math.inf], np.minimum.accumulate(t)[:-1]])[i1]
    t_ex = np.minimum(t_before, _restarted(t, segment, record, False))
    opt1 = t_ex - np.maximum(s_hi, h[i1])
    opt2 = t[i1] - np.maximum(s_hi, h2)
    return np.minimum(opt1, opt2)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("construction", choices=("index", "retrieval"))
    p.add_argument("theta", type=float)
    p.add_argument("max_n", type=int)
    p.add_argument("step", type=int)
    p.add_argument("out")
    p.add_argument("--alphabet", type=int, default=8)
    args = p.parse_args()
    start = time.process_time()
    if args.construction == "index":
        margins = index_margins(args.theta, args.max_n)
    else:
        margins = retrieval_margins(args.alphabet, args.theta, args.max_n)
    rows = np.arange(0, margins.size, args.step)
    with open(args.out, "w") as f:
        f.write("".join(f"{r + 2} {float(margins[r])!r}\n" for r in rows.tolist()))
    print(f"{time.process_time() - start:.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
