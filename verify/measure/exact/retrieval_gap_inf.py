"""T_Retrieval's ``gap_inf(n)`` past the horizon, from the few letter codes that can attain it.

``gap_inf(n)`` is the smallest ``top1 - top2`` over inputs of length ``n`` (docs/theory.md section 5).
Per target distance ``d_t`` every position chooses its value independently: the target is fixed at
``T = cos(d_t theta)``, a key at distance ``d`` takes any ``cos(c omega - d theta)`` (``c = 1 .. A-1``),
the query any ``cos(c omega)``. :func:`ropeproof.verify.measure.exact.discrepancy._gap_inf_config` finds the
minimum over such choices from each position's lowest value ("low") and three scans of sorted
``(value, position, code)`` lists: pairs avoiding the position ``p1`` with the largest low (values
``>= low(p1)``), pairs through ``p1`` avoiding the second ``p2`` (values ``>= low(p2)``), and the pair
``{p1, p2}`` (values ``>= `` the third low); the answer is the smallest difference of neighbours from
different positions, the first in sorted order on ties.

That needs every value of every position (``O(n |ALPH|)`` per target distance). Where the target has
the largest low (``p1`` is the target, the usual case: ``T`` is near 1), far fewer suffice:

- scan 1 reads only values ``>= T``: at a key, ``cos(omega delta) >= T`` with ``delta`` the circular
  distance of the code from ``x = d theta / omega`` (:mod:`ropeproof.verify.measure.exact.retrieval_codes`)
  holds exactly on the arc ``delta <= W = |d_t theta mod 2 pi| / omega``;
- scans 2 and 3 only pair the target with its neighbours in sorted order, and a position's nearest
  values above and below ``T`` sit at the codes nearest the arc's two ends (``f`` is monotone in
  ``delta``);
- the lows come from :func:`ropeproof.verify.measure.exact.retrieval_codes.extremes`.

So each key keeps the codes ``floor(x - W) - 2 .. ceil(x + W) + 2`` (the arc, padded by two codes so
that every code whose float64 value reaches ``T``, or is a neighbour of ``T``, is kept, as in the
module docstring of :mod:`~ropeproof.verify.measure.exact.retrieval_codes`) plus its low's code, and the same
scans run on those lists. Every pair the scans can pick survives, and the lists keep their order, so
the result (value, positions, codes) is the full enumeration's, bit for bit (tested against it). The
cost per target distance is ``O(n (W + 1))``: constant in ``|ALPH|`` while ``W`` is, and estimated
against the memory limit before it is allocated where it grows (large ``|ALPH| d theta``). Where
another position's low reaches ``T`` (``d_t theta`` near ``pi``) every code is enumerated, also
estimated first.
"""

from __future__ import annotations

import math

import numpy as np

from ropeproof.theory.memory_budget import check_allocation
from ropeproof.verify.measure.exact.angles import reduced_angles_with_error
from ropeproof.verify.measure.exact.retrieval_codes import code_position, code_table, code_values, extremes

NEG, POS = -math.inf, math.inf
ENTRY_BYTES = 96
"""Bytes per candidate ``(value, position, code)`` while the scans sort them (values, indices, sorted
copies and masks; measured ~70)."""

Best = tuple[float, int, int, int, int]


def _scan(v: np.ndarray, p: np.ndarray, g: np.ndarray, keep: np.ndarray, through: int, best: Best) -> Best:
    """The smallest difference of sorted neighbours from different positions (through position
    ``through`` when ``>= 0``) among the kept entries, if below ``best``: ``(diff, upper position,
    upper group, lower position, lower group)``; the first in sorted order on ties."""
    v, p, g = v[keep], p[keep], g[keep]
    if v.size < 2:
        return best
    order = np.lexsort((g, p, v))  # Python's tuple order on (value, position, group)
    v, p, g = v[order], p[order], g[order]
    ok = p[1:] != p[:-1]
    if through >= 0:
        ok &= (p[1:] == through) | (p[:-1] == through)
    diff = np.where(ok, v[1:] - v[:-1], POS)
    i = int(np.argmin(diff))
    if ok[i] and diff[i] < best[0]:
        return (float(diff[i]), int(p[i + 1]), int(g[i + 1]), int(p[i]), int(g[i]))
    return best


def min_top_gap(v: np.ndarray, p: np.ndarray, g: np.ndarray, lows: np.ndarray) -> Best:
    """:func:`ropeproof.verify.measure.exact.discrepancy._gap_inf_config` on flat ``(value, position, group)``
    entries with each position's low given: ``(value, upper position, its group, lower position,
    its group)``, ``(inf, -1, -1, -1, -1)`` when no pair qualifies.

    Shapes: v [entries]; p [entries]; g [entries]; lows [positions]
    """
    order = np.argsort(-lows, kind="stable")
    p1 = int(order[0])
    p2 = int(order[1]) if order.size > 1 else -1
    l2 = lows[p2] if p2 >= 0 else NEG
    l3 = lows[int(order[2])] if order.size > 2 else NEG
    best: Best = (POS, -1, -1, -1, -1)
    best = _scan(v, p, g, (p != p1) & (v >= lows[p1]), -1, best)
    if p2 >= 0:
        best = _scan(v, p, g, (p != p2) & (v >= l2), p1, best)
        best = _scan(v, p, g, ((p == p1) | (p == p2)) & (v >= l3), p1, best)
    return best


def gap_inf_enumerated(alphabet: int, theta: float, n: int) -> tuple[float, tuple[int, ...], int]:
    """``gap_inf(n)`` over every target distance: ``(value, codes, target distance)``, where
    ``codes[p]`` is the left-letter code chosen at position ``p`` (``-1`` at the target), exactly as
    the enumeration over every code (see the module docstring)."""
    angles = code_table(alphabet)
    a = angles.alphabet
    d = np.arange(1, n, dtype=np.float64)
    r_d, _e = reduced_angles_with_error(d, theta)
    t = np.cos(r_d)
    # positions p = 0 .. n-1 hold distances n-1 .. 0 (the query last, at angle 0)
    r = np.concatenate([r_d[::-1], [0.0]])
    _h, _hc, lows0, low_code = extremes(angles, r)
    x = code_position(a, r)
    keys = np.arange(n)
    best: tuple[float, tuple[int, ...], int] = (POS, (), 0)
    for d_t in range(1, n):
        pt = n - 1 - d_t
        lows = lows0.copy()
        lows[pt] = t[d_t - 1]
        top = int(np.argsort(-lows, kind="stable")[0])
        width = abs(float(r_d[d_t - 1])) * a / (2 * math.pi)
        span = math.ceil(2 * width) + 7
        others = keys[keys != pt]
        if top == pt and span < a - 1:
            check_allocation(f"gap_inf at n = {n} with |ALPH| = {a}", ENTRY_BYTES * n * (span + 1))
            start = np.floor(x[others] - width).astype(np.int64) - 2
            codes = (start[:, None] + np.arange(span)[None, :]) % a
            codes = np.concatenate([codes, low_code[others][:, None]], axis=1)
        else:
            check_allocation(f"gap_inf at n = {n} with |ALPH| = {a} (every code)", ENTRY_BYTES * n * a)
            codes = np.broadcast_to(np.arange(1, a), (others.size, a - 1))
        v = code_values(angles, r[others], codes.T).T
        pos = np.broadcast_to(others[:, None], codes.shape)
        keep = codes != 0
        flat_v = np.concatenate([v[keep], [t[d_t - 1]]])
        flat_p = np.concatenate([pos[keep], [pt]])
        flat_g = np.concatenate([codes[keep] - 1, [0]])
        value, pa, ga, pb, gb = min_top_gap(flat_v, flat_p, flat_g, lows)
        if value < best[0]:
            chosen = [int(c) for c in low_code]
            chosen[pa], chosen[pb] = ga + 1, gb + 1
            chosen[pt] = -1
            best = (float(value), tuple(chosen), d_t)
    return best
