"""T_Retrieval's ``gap_inf(n)`` past the horizon, from the few letter codes that can attain it.

``gap_inf(n)`` is the smallest ``top1 - top2`` over inputs of length ``n`` (docs/theory.md section 5).
Per target distance ``d_t`` every position chooses its value independently: the target is fixed at
``T = cos(d_t theta)``, a key at distance ``d`` takes any ``cos(c omega - d theta)`` (``c = 1 .. A-1``),
the query any ``cos(c omega)``. :func:`ropeproof.verify.measure.exact._discrepancy._gap_inf_config` finds the
minimum over such choices from each position's lowest value ("low") and three scans of sorted
``(value, position, code)`` lists: pairs avoiding the position ``p1`` with the largest low (values
``>= low(p1)``), pairs through ``p1`` avoiding the second ``p2`` (values ``>= low(p2)``), and the pair
``{p1, p2}`` (values ``>= `` the third low); the answer is the smallest difference of neighbours from
different positions, the first in sorted order on ties.

That needs every value of every position (``O(n |ALPH|)`` per target distance). Where the target has
the largest low (``p1`` is the target, the usual case: ``T`` is near 1), far fewer suffice:

- scan 1 reads only values ``>= T``: at a key, ``cos(omega delta) >= T`` with ``delta`` the circular
  distance of the code from ``x = d theta / omega`` (:mod:`ropeproof.verify.measure.exact._retrieval_codes`)
  holds exactly on the arc ``delta <= W = |d_t theta mod 2 pi| / omega``;
- scans 2 and 3 only pair the target with its neighbours in sorted order, and a position's nearest
  values above and below ``T`` sit at the codes nearest the arc's two ends (``f`` is monotone in
  ``delta``);
- the lows come from :func:`ropeproof.verify.measure.exact._retrieval_codes.extremes`.

So each key keeps the codes ``floor(x - W) - 2 .. ceil(x + W) + 2`` (the arc, padded by two codes so
that every code whose float64 value reaches ``T``, or is a neighbour of ``T``, is kept, as in the
module docstring of :mod:`~ropeproof.verify.measure.exact._retrieval_codes`) plus its low's code, and the same
scans run on those lists. Every pair the scans can pick survives, and the lists keep their order, so
the result (value, positions, codes) is the full enumeration's, bit for bit (tested against it). The
cost per target distance is ``O(n (W + 1))``: constant in ``|ALPH|`` while ``W`` is, and estimated
against the memory limit before it is allocated where it grows (large ``|ALPH| d theta``). Where
another position's low reaches ``T`` (``d_t theta`` near ``pi``) every code is enumerated, also
estimated first.

Where ``n |ALPH|`` is small (at most :data:`SORTED_ENTRIES`), every code's value at every position is
sorted once per length instead (:class:`_SortedEntries`, the same result bit for bit), and each target
distance with the target on top costs only about its own position's values above ``T``.

A sweep needs the value alone at every length up to a limit: :func:`gap_inf_values` grows one sorted
list of every code's value by one distance per length (:class:`_GrowingEntries`) and keeps scan 1 of
each target distance up to date, so a length costs ``O(n |ALPH|)`` vectorised work instead of a sort
and a query per target distance; the values are :func:`gap_inf_enumerated`'s, bit for bit (tested).
"""

from __future__ import annotations

import math

import numpy as np

from ropeproof.machinery._memory_budget import check_allocation
from ropeproof.verify.measure.exact._angles import reduced_angles_with_error
from ropeproof.verify.measure.exact._retrieval_codes import (
    code_position,
    code_table,
    code_values,
    extremes,
)

NEG, POS = -math.inf, math.inf
ENTRY_BYTES = 96
"""Bytes per candidate ``(value, position, code)`` while the scans sort them (values, indices, sorted
copies and masks; measured ~70)."""

Best = tuple[float, int, int, int, int]
SORTED_ENTRIES = 1 << 20
"""Up to this many ``(position, code)`` entries per length, every code's value is sorted once per length
and each target distance on top is answered from that order (:class:`_SortedEntries`)."""


def _scan(v: np.ndarray, p: np.ndarray, g: np.ndarray, keep: np.ndarray, through: int, best: Best) -> Best:
    """The smallest difference of sorted neighbours from different positions (through position
    ``through`` when ``>= 0``) among the kept entries, if below ``best``: ``(diff, upper position,
    upper group, lower position, lower group)``; the first in sorted order on ties. The entries are
    already in sorted order ``(value, position, group)``; a subsequence of them is too."""
    v, p, g = v[keep], p[keep], g[keep]
    if v.size < 2:
        return best
    ok = p[1:] != p[:-1]
    if through >= 0:
        ok &= (p[1:] == through) | (p[:-1] == through)
    diff = np.where(ok, v[1:] - v[:-1], POS)
    i = int(np.argmin(diff))
    if ok[i] and diff[i] < best[0]:
        return (float(diff[i]), int(p[i + 1]), int(g[i + 1]), int(p[i]), int(g[i]))
    return best


def min_top_gap(v: np.ndarray, p: np.ndarray, g: np.ndarray, lows: np.ndarray, grouped: bool = False) -> Best:
    """:func:`ropeproof.verify.measure.exact._discrepancy._gap_inf_config` on flat ``(value, position,
    group)``
    entries with each position's low given: ``(value, upper position, its group, lower position,
    its group)``, ``(inf, -1, -1, -1, -1)`` when no pair qualifies.

    The entries any scan keeps (values at least the third-largest low) are sorted once, in Python's
    tuple order on ``(value, position, group)``, and each scan reads its own subsequence of them.
    ``grouped``: the entries already come in ``(position, group)`` order, so a stable sort on the value
    alone gives that order (one key instead of three).

    Shapes: v [entries]; p [entries]; g [entries]; lows [positions]
    """
    order = np.argsort(-lows, kind="stable")
    p1 = int(order[0])
    p2 = int(order[1]) if order.size > 1 else -1
    l2 = lows[p2] if p2 >= 0 else NEG
    l3 = lows[int(order[2])] if order.size > 2 else NEG
    floor = lows[p1] if p2 < 0 else l3  # the smallest threshold of the scans that run
    wanted = v >= floor
    v, p, g = v[wanted], p[wanted], g[wanted]
    # Python's tuple order on (value, position, group)
    order = np.argsort(v, kind="stable") if grouped else np.lexsort((g, p, v))
    v, p, g = v[order], p[order], g[order]
    best: Best = (POS, -1, -1, -1, -1)
    best = _scan(v, p, g, (p != p1) & (v >= lows[p1]), -1, best)
    if p2 >= 0:
        best = _scan(v, p, g, (p != p2) & (v >= l2), p1, best)
        best = _scan(v, p, g, ((p == p1) | (p == p2)) & (v >= l3), p1, best)
    return best


def _better(
    best: tuple[float, tuple[int, ...], int],
    value: float,
    low_code: np.ndarray,
    where: tuple[int, int, int, int, int],
    d_t: int,
) -> tuple[float, tuple[int, ...], int]:
    """``best`` or, when ``value`` is smaller, ``(value, codes, d_t)``: the codes ``low_code`` with
    position ``pa`` given code ``ga + 1``, ``pb`` code ``gb + 1`` and the target ``pt`` marked ``-1``
    (``where = (pa, ga, pb, gb, pt)``)."""
    if not value < best[0]:
        return best
    pa, ga, pb, gb, pt = where
    chosen = [int(c) for c in low_code]
    chosen[pa], chosen[pb] = ga + 1, gb + 1
    chosen[pt] = -1
    return (float(value), tuple(chosen), d_t)


def gap_inf_enumerated(alphabet_size: int, theta: float, n: int) -> tuple[float, tuple[int, ...], int]:
    """``gap_inf(n)`` over every target distance: ``(value, codes, target distance)``, where
    ``codes[p]`` is the left-letter code chosen at position ``p`` (``-1`` at the target), exactly as
    the enumeration over every code (see the module docstring)."""
    angles = code_table(alphabet_size)
    a = angles.alphabet_size
    d = np.arange(1, n, dtype=np.float64)
    r_d, _e = reduced_angles_with_error(d, theta)
    t = np.cos(r_d)
    # positions p = 0 .. n-1 hold distances n-1 .. 0 (the query last, at angle 0)
    r = np.concatenate([r_d[::-1], [0.0]])
    _h, _hc, lows0, low_code = extremes(angles, r)
    x = code_position(a, r)
    keys = np.arange(n)
    every: np.ndarray | None = None  # every code's value at every position, computed once when needed
    sorted_entries: _SortedEntries | None = None
    best: tuple[float, tuple[int, ...], int] = (POS, (), 0)
    for d_t in range(1, n):
        pt = n - 1 - d_t
        lows = lows0.copy()
        lows[pt] = t[d_t - 1]
        ranks = np.argsort(-lows, kind="stable")
        top = int(ranks[0])
        if top == pt and n * (a - 1) <= SORTED_ENTRIES:
            if sorted_entries is None:
                every = code_values(angles, r, np.broadcast_to(np.arange(1, a), (n, a - 1)).T).T
                sorted_entries = _SortedEntries(every)
            l3 = lows[int(ranks[2])] if n > 2 else NEG
            value, pa, ga, pb, gb = sorted_entries.target_on_top(
                pt, t[d_t - 1], int(ranks[1]), lows[ranks[1]], l3
            )
            best = _better(best, value, low_code, (pa, ga, pb, gb, pt), d_t)
            continue
        width = abs(float(r_d[d_t - 1])) * a / (2 * math.pi)
        span = math.ceil(2 * width) + 7
        others = keys[keys != pt]
        if top == pt and span < a - 1:
            check_allocation(f"gap_inf at n = {n} with |ALPH| = {a}", ENTRY_BYTES * n * (span + 1))
            start = np.floor(x[others] - width).astype(np.int64) - 2
            codes = (start[:, None] + np.arange(span)[None, :]) % a
            codes = np.sort(np.concatenate([codes, low_code[others][:, None]], axis=1), axis=1)
            v = code_values(angles, r[others], codes.T).T
        else:
            check_allocation(f"gap_inf at n = {n} with |ALPH| = {a} (every code)", ENTRY_BYTES * n * a)
            if every is None:  # the same expression per position and code whatever d_t is
                every = code_values(angles, r, np.broadcast_to(np.arange(1, a), (n, a - 1)).T).T
            value, pa, ga, pb, gb = _every_code(every, lows, pt, float(t[d_t - 1]))
            best = _better(best, value, low_code, (pa, ga, pb, gb, pt), d_t)
            continue
        pos = np.broadcast_to(others[:, None], codes.shape)
        keep = codes != 0
        # entries in (position, group) order: positions ascending, each row's codes sorted, the
        # target's one entry (group 0) where its position falls
        at = int(keep[:pt].sum())
        flat_v = np.insert(v[keep], at, t[d_t - 1])
        flat_p = np.insert(pos[keep], at, pt)
        flat_g = np.insert(codes[keep] - 1, at, 0)
        value, pa, ga, pb, gb = min_top_gap(flat_v, flat_p, flat_g, lows, grouped=True)
        if value < best[0]:
            chosen = [int(c) for c in low_code]
            chosen[pa], chosen[pb] = ga + 1, gb + 1
            chosen[pt] = -1
            best = (float(value), tuple(chosen), d_t)
    return best


def _every_code(every: np.ndarray, lows: np.ndarray, pt: int, target: float) -> Best:
    """:func:`min_top_gap` for the target at position ``pt`` (value ``target``, lows ``lows``) against
    every code of every other position (``every[p, c - 1]``: code ``c``'s value at position ``p``).

    Shapes: every [positions, codes]; lows [positions]
    """
    n, k = every.shape
    others = np.delete(np.arange(n), pt)
    at = pt * k  # entries in (position, group) order, the target's one entry (group 0) at its position
    flat_v = np.insert(every[others].ravel(), at, target)
    flat_p = np.insert(np.repeat(others, k), at, pt)
    flat_g = np.insert(np.tile(np.arange(k), others.size), at, 0)
    return min_top_gap(flat_v, flat_p, flat_g, lows, grouped=True)


class _SortedEntries:
    """Every code's value at every position of one length, sorted once in ``(value, position, group)``
    order, answering :func:`min_top_gap` for a target distance whose target has the largest low.

    Then (module docstring) scan 1 reads the entries ``>= T`` of every position but the target's, a
    suffix of the order with the target position's entries taken out: its neighbour pairs are the
    pairs inside the runs between taken-out entries (a range minimum over the gaps of adjacent
    entries, from a sparse table) and the pairs bridging each block of taken-out entries. Scans 2 and
    3 pair the target's one entry with its nearest kept neighbours on each side. Differences, ties
    (the first pair in sorted order) and the order of the scans are :func:`min_top_gap`'s, so the
    result is the same, bit for bit (tested); the work per target distance is about the target
    position's entries above ``T``, not the whole table.

    Shapes: values [positions, codes]
    """

    def __init__(self, values: np.ndarray) -> None:
        n, k = values.shape
        v = values.ravel()
        p = np.repeat(np.arange(n), k)
        g = np.tile(np.arange(k), n)
        order = np.argsort(v, kind="stable")  # the entries come in (position, group) order
        self.v, self.p, self.g = v[order], p[order], g[order]
        size = self.v.size
        self.gap = np.where(self.p[1:] != self.p[:-1], self.v[1:] - self.v[:-1], POS)  # pair (j, j + 1)
        levels = [np.arange(size - 1)]
        width = 1
        while 2 * width <= size - 1:  # levels[k][i]: the first argmin of gap[i : i + 2^k]
            prev = levels[-1]
            left, right = prev[: prev.size - width], prev[width:]
            levels.append(np.where(self.gap[right] < self.gap[left], right, left))
            width *= 2
        self.levels = levels
        by_position = np.argsort(self.p, kind="stable")  # indices grouped by position, ascending
        self.starts = np.searchsorted(self.p[by_position], np.arange(n + 1))
        self.by_position = by_position

    def _entries_of(self, position: int) -> np.ndarray:
        return self.by_position[self.starts[position] : self.starts[position + 1]]

    def _range_argmin(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The first argmin of ``gap[lo .. hi]`` (inclusive) for each pair of ends (``lo <= hi``)."""
        level = np.frexp((hi - lo + 1).astype(np.float64))[1] - 1
        out = np.empty(lo.size, dtype=np.int64)
        for k in np.unique(level).tolist():
            rows = level == k
            table = self.levels[k]
            a, b = table[lo[rows]], table[hi[rows] - (1 << k) + 1]
            out[rows] = np.where(self.gap[b] < self.gap[a], b, a)
        return out

    def _scan_one(self, pt: int, target: float) -> Best:
        """Scan 1: neighbours from different positions among the entries ``>= target`` outside ``pt``."""
        size = self.v.size
        start = int(np.searchsorted(self.v, target, "left"))
        own = self._entries_of(pt)
        removed = own[own >= start]
        if size - start - removed.size < 2:
            return (POS, -1, -1, -1, -1)
        bounds = np.concatenate([[start - 1], removed, [size]])
        lo, hi = bounds[:-1] + 1, bounds[1:] - 2  # the pairs (j, j + 1) inside each run
        inside = lo <= hi
        lower = self._range_argmin(lo[inside], hi[inside]) if inside.any() else np.zeros(0, np.int64)
        upper = lower + 1
        diff = self.gap[lower]  # inf for a pair from one position
        # each block of consecutive removed entries is bridged by its two outer neighbours
        if removed.size:
            block_start = np.concatenate([[True], np.diff(removed) > 1])
            block_end = np.concatenate([np.diff(removed) > 1, [True]])
            below, above = removed[block_start] - 1, removed[block_end] + 1
            fits = (below >= start) & (above < size)
            below, above = below[fits], above[fits]
            fits = self.p[below] != self.p[above]
            lower = np.concatenate([lower, below[fits]])
            upper = np.concatenate([upper, above[fits]])
            diff = np.concatenate([diff, self.v[above[fits]] - self.v[below[fits]]])
        if not lower.size:
            return (POS, -1, -1, -1, -1)
        first = np.lexsort((lower, diff))[0]  # the smallest difference, the first pair on ties
        if not diff[first] < POS:
            return (POS, -1, -1, -1, -1)
        i, j = int(lower[first]), int(upper[first])
        return (float(diff[first]), int(self.p[j]), int(self.g[j]), int(self.p[i]), int(self.g[i]))

    def _nearest(
        self, at: int, step: int, allowed: np.ndarray | None, skip: tuple[int, ...], floor: float
    ) -> int:
        """The nearest index from ``at`` (included) in direction ``step`` whose position is in ``allowed``
        (a position's ascending indices) or else not in ``skip``, and whose value is ``>= floor``; ``-1``
        if none (values fall going down, so the first one below ``floor`` ends the search)."""
        if allowed is not None:
            k = int(np.searchsorted(allowed, at + (1 if step < 0 else 0), "left"))
            if step > 0:
                idx = int(allowed[k]) if k < allowed.size else -1
            else:
                idx = int(allowed[k - 1]) if k > 0 else -1
            return idx if idx >= 0 and self.v[idx] >= floor else -1
        i, chunk = at, 64
        while 0 <= i < self.v.size:
            if step > 0:
                window = np.arange(i, min(self.v.size, i + chunk))
            else:
                window = np.arange(i, max(-1, i - chunk), -1)
            ok = self.v[window] >= floor
            for position in skip:
                ok &= self.p[window] != position
            hit = np.nonzero(ok)[0]
            if hit.size:
                return int(window[hit[0]])
            if step < 0 and not (self.v[window] >= floor).any():
                return -1  # values only fall below the floor further down
            i, chunk = int(window[-1]) + step, chunk * 2
        return -1

    def target_on_top(self, pt: int, target: float, p2: int, l2: float, l3: float) -> Best:
        """:func:`min_top_gap` for the target at position ``pt`` (value ``target``, the largest low) with
        every other position's entries: ``p2`` the position of the second-largest low ``l2``, ``l3`` the
        third-largest low (``-inf`` for none)."""
        best = self._scan_one(pt, target)
        lo = int(np.searchsorted(self.v, target, "left"))
        hi = int(np.searchsorted(self.v, target, "right"))
        at = lo + int(np.count_nonzero(self.p[lo:hi] < pt))  # where (target, pt, 0) sorts
        for allowed, skip, floor in ((None, (pt, p2), l2), (self._entries_of(p2), (), l3)):
            below = self._nearest(at - 1, -1, allowed, skip, floor)
            above = self._nearest(at, 1, allowed, skip, floor)
            # the scan's first smallest pair through the target: the one below it on ties
            pair: Best | None = None
            if below >= 0:
                pair = (float(target - self.v[below]), pt, 0, int(self.p[below]), int(self.g[below]))
            if above >= 0:
                up = float(self.v[above] - target)
                if pair is None or up < pair[0]:
                    pair = (up, int(self.p[above]), int(self.g[above]), pt, 0)
            if pair is not None and pair[0] < best[0]:
                best = pair
        return best


def gap_inf_values(alphabet_size: int, theta: float, lengths: list[int]) -> list[float]:
    """``gap_inf_enumerated(alphabet_size, theta, n)[0]`` for each ``n`` of ``lengths`` (the value alone,
    the same float64), the lengths with ``n |ALPH|`` at most :data:`SORTED_ENTRIES` grown one distance
    at a time (:class:`_GrowingEntries`) instead of enumerated afresh; the others enumerated."""
    a = code_table(alphabet_size).alphabet_size
    grown = sorted({int(n) for n in lengths if int(n) * (a - 1) <= SORTED_ENTRIES})
    found: dict[int, float] = {}
    if grown:
        growing = _GrowingEntries(alphabet_size, theta, grown[-1])
        if growing.finite:
            wanted = set(grown)
            while growing.n < grown[-1]:
                growing.grow()
                if growing.n in wanted:
                    found[growing.n] = growing.gap_inf()
    return [found[n] if n in found else gap_inf_enumerated(alphabet_size, theta, n)[0] for n in lengths]


class _GrowingEntries:
    """Every code's value at distances ``0 .. n-1`` (``0``: the query) in one sorted list, grown one
    distance at a time, with, for each target distance ``d_t < n``, scan 1 of :func:`min_top_gap`
    (the smallest difference of values ``>= T(d_t)`` from two different distances other than
    ``d_t``) kept up to date.

    Adding distance ``D`` adds its values to that set for each earlier ``d_t``, and the smallest
    difference of a grown set is the smaller of the old one and the smallest difference between a
    new value and its nearest old values (of another distance than ``d_t``) above and below, which
    the runs of one distance in the sorted list give for every ``d_t`` at once; for ``d_t = D``
    itself it is a suffix minimum over the neighbours of the old list. With the target on top, the
    target's own pairs (scans 2 and 3) are its nearest values above and below (the one below avoiding
    the distances of ``d_t`` and of the second-largest low, at least that low; or of that position,
    at least the third-largest low). Differences are taken upper minus lower as the scans do, and a
    rounded difference only grows with the distance, so every value is :func:`gap_inf_enumerated`'s,
    bit for bit (tested); a target not on top goes to :func:`_every_code`.

    Shapes: rows [distances, codes]; v [entries]; dist [entries]; scan [distances]
    """

    def __init__(self, alphabet_size: int, theta: float, max_n: int) -> None:
        self.angles = code_table(alphabet_size)
        a = self.angles.alphabet_size
        r_d, _e = reduced_angles_with_error(np.arange(1, max_n, dtype=np.float64), theta)
        self.finite = bool(np.isfinite(r_d).all())
        self.t = np.concatenate([[NEG], np.cos(r_d)])  # t[d] = T(d)
        r = np.concatenate([[0.0], r_d])  # r[d], the query at distance 0
        self.r = r
        self.lows = extremes(self.angles, r)[2]  # lows[d]
        self.rows = code_values(self.angles, r, np.broadcast_to(np.arange(1, a), (max_n, a - 1)).T).T
        self.sorted_rows = np.sort(self.rows, axis=1)
        self.n = 1
        self.v = self.sorted_rows[0].copy()
        self.dist = np.zeros(self.v.size, dtype=np.int64)
        self.scan = np.full(max_n, POS)  # scan[d_t]: scan 1 at the current length
        self._runs_at: tuple[int, tuple[np.ndarray, np.ndarray]] = (0, (self.dist, self.dist))

    def _runs(self) -> tuple[np.ndarray, np.ndarray]:
        """Per entry, the index before its run of one distance (``-1``) and the index after it (at
        the current length, computed once)."""
        if self._runs_at[0] == self.n:
            return self._runs_at[1]
        change = np.flatnonzero(self.dist[1:] != self.dist[:-1]) + 1
        starts = np.concatenate([[0], change])
        ends = np.concatenate([change, [self.v.size]])
        mark = np.zeros(self.v.size, dtype=np.int64)
        mark[change] = 1
        run = np.cumsum(mark)
        self._runs_at = (self.n, (starts[run] - 1, ends[run]))
        return self._runs_at[1]

    def grow(self) -> None:
        """Length ``n + 1``: distance ``D = n`` joins."""
        d_new = self.n
        v, dist, size = self.v, self.dist, self.v.size
        before, after = self._runs()
        # d_t = D: the smallest neighbour difference of the old list from two distances, values >= T(D)
        gaps = np.where(dist[1:] != dist[:-1], v[1:] - v[:-1], POS)
        start = int(np.searchsorted(v, self.t[d_new], "left"))
        self.scan[d_new] = float(gaps[start:].min()) if start < size - 1 else POS
        if d_new > 1:
            x = self.sorted_rows[d_new]
            b1 = np.searchsorted(v, x, "right") - 1  # the old value nearest below (or equal)
            b2 = np.where(b1 >= 0, before[np.maximum(b1, 0)], -1)  # ... of another distance than b1's
            a1 = np.searchsorted(v, x, "left")  # nearest above (or equal)
            a2 = np.where(a1 < size, after[np.minimum(a1, size - 1)], size)
            dts = np.arange(1, d_new)[:, None]
            t = self.t[1:d_new][:, None]
            vb = np.concatenate([v, [NEG]])  # index -1 and size read the sentinels
            va = np.concatenate([v, [POS]])
            db = np.concatenate([dist, [-1]])
            below = np.where(db[b1] != dts, b1, b2)  # [d_t, value]
            above = np.where(db[np.minimum(a1, size)] != dts, a1, a2)
            lo, hi = vb[below], va[np.minimum(above, size)]
            down = np.where((below >= 0) & (lo >= t), x - lo, POS)
            up = np.where(above < size, hi - x, POS)
            new = np.where(x >= t, np.minimum(down, up), POS).min(axis=1)
            self.scan[1:d_new] = np.minimum(self.scan[1:d_new], new)
        at = np.searchsorted(v, self.sorted_rows[d_new], "left")
        self.v = np.insert(v, at, self.sorted_rows[d_new])
        self.dist = np.insert(dist, at, d_new)
        self.n += 1

    def gap_inf(self) -> float:
        """``gap_inf_enumerated(alphabet_size, theta, n)[0]`` at the current length ``n``: every target
        distance with the target on top at once (vectorised; the same float64 operations per target
        distance as one at a time), the others through :func:`_every_code`."""
        n = self.n
        v, dist, size = self.v, self.dist, self.v.size
        before, after = self._runs()
        lows0 = self.lows[n - 1 :: -1]  # by position: distances n-1 .. 0
        order = np.argsort(-lows0, kind="stable")
        best = POS
        d_ts = np.arange(1, n)
        pts = n - 1 - d_ts
        targets = self.t[1:n]
        above_max = np.concatenate([[NEG], np.maximum.accumulate(lows0)])  # [p]: max of lows0[:p]
        below_max = np.concatenate([np.maximum.accumulate(lows0[::-1])[::-1], [NEG]])  # [p]: of lows0[p:]
        on_top = (targets > above_max[pts]) & (targets >= below_max[pts + 1])
        for d_t in d_ts[~on_top].tolist():
            pt, target = n - 1 - d_t, float(self.t[d_t])
            a = self.angles.alphabet_size
            check_allocation(f"gap_inf at n = {n} with |ALPH| = {a} (every code)", ENTRY_BYTES * n * a)
            every = self.rows[n - 1 :: -1]
            lows = lows0.copy()
            lows[pt] = target
            best = min(best, _every_code(every, lows, pt, target)[0])
        if not on_top.any():
            return best
        d_ts, pts, targets = d_ts[on_top], pts[on_top], targets[on_top]
        # the position with the largest low other than the target's (p2), and the next one's low (l3)
        first, second = order[0], order[1]
        third = order[2] if n > 2 else order[1]
        p2 = np.where(first != pts, first, second)
        l2 = lows0[p2]
        l3 = (
            lows0[np.where((first == pts) | (second == pts), third, second)]
            if n > 2
            else np.full(pts.size, NEG)
        )
        q = n - 1 - p2
        value = self.scan[d_ts].copy()
        last = size - 1
        i = np.searchsorted(v, targets, "left")  # the nearest value above, not d_t's
        own_run = (i < size) & (dist[np.minimum(i, last)] == d_ts)
        i = np.where(own_run, after[np.minimum(i, last)], i)
        value = np.where(i < size, np.minimum(value, v[np.minimum(i, last)] - targets), value)
        i = np.searchsorted(v, targets, "right") - 1  # below: neither d_t's nor q's, >= l2
        while True:
            at = dist[np.maximum(i, 0)]
            skip = (i >= 0) & ((at == d_ts) | (at == q))
            if not skip.any():
                break
            i = np.where(skip, before[np.maximum(i, 0)], i)
        below = v[np.maximum(i, 0)]
        value = np.where((i >= 0) & (below >= l2), np.minimum(value, targets - below), value)
        own = self.sorted_rows[q]  # below among q's own values, >= l3
        j = np.count_nonzero(own <= targets[:, None], axis=1) - 1  # searchsorted(own, target, "right") - 1
        own_below = own[np.arange(q.size), np.maximum(j, 0)]
        value = np.where((j >= 0) & (own_below >= l3), np.minimum(value, targets - own_below), value)
        return min(best, float(value.min()))
