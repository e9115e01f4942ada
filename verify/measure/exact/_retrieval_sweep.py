"""Fast exact sweep of one-plane T_Retrieval from its closed form: ``O(1)`` work per length, whatever
``|ALPH|``.

For ``|ALPH| = A``, ``omega = 2 pi / A`` and the family of :func:`ropeproof.verify.measure.exact._families.
retrieval_family` (docs/theory.md sections 4 and 5), every case ``Y`` gives the same logits: the
target (left letter ``Y``) at distance ``d`` scores ``T(d) = cos(d theta)``, a non-matching pair with
left letter ``Y + c`` scores ``cos(c omega - d theta)`` (``c = 1 .. A-1``), so the position's set of
values has largest ``H(d)`` and smallest ``L(d)`` over ``c``, and the query itself (``(Y + c, Y)``)
scores ``cos(c omega)``, largest ``S_hi``, smallest ``S_lo``. With every position choosing its value
independently (:mod:`ropeproof.verify.measure.exact._discrepancy`), for ``n`` (distances ``1 .. n-1``):

- ``margin_inf(n) = min_{d_t} [T(d_t) - max(S_hi, max_{d != d_t} H(d))]``, from the prefix top-2 of
  ``H`` and bottom-2 of ``T``;
- ``gap_sup(n)`` = the largest of: the query on top, ``S_hi - max(T(d_t), max_{d != d_t} L(d))``; the
  target on top, ``T(d_t) - max(S_lo, max_{d != d_t} L(d))``; another position ``d_a`` on top,
  ``H(d_a) - max(S_lo, T(d_t), max_{d not in {d_a, d_t}} L(d))``, maximised over ``d_t`` (and
  ``d_a``): prefix top-3 of ``H`` and ``L``, bottom-3 and top-2 of ``T`` carry every candidate that
  can attain it (cases on whether ``d_a``, ``d_t`` hit the two largest ``L``);
- ``gap_inf(n) = margin_inf(n)`` where that is positive (otherwise enumerated for small ``n`` by
  :func:`gap_inf_enumerated`, else NaN).

``H(d)`` and ``L(d)`` are read from the O(1) codes that can attain them (the codes nearest to
``d theta / omega`` and to its antipode, :mod:`ropeproof.verify.measure.exact._retrieval_codes`, which proves
it),
and ``gap_inf`` from the codes near its arcs (:mod:`ropeproof.verify.measure.exact._retrieval_gap_inf`).
Angles are reduced with :mod:`ropeproof.verify.measure.exact._angles` (``c omega`` is taken from mpmath as two
floats), so the values stay exact to a few ulps at any ``theta`` and length; each row carries a
bound on its floating-point error (``2 E + 2 u |value|`` with ``E`` the largest logit error so far).
The prefix structures stream (:class:`~ropeproof.verify.measure.exact._prefix_topk.RunningTopK`), so memory is
``O(block)`` whatever the length and the alphabet.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.machinery._values import LIMITS, AlphabetSize, Angle
from ropeproof.verify.measure.exact._angles import UNIT_ROUNDOFF, reduced_angles_with_error
from ropeproof.verify.measure.exact._index_sweep import SIN_ULPS
from ropeproof.verify.measure.exact._prefix_topk import RunningTopK
from ropeproof.verify.measure.exact._retrieval_codes import code_angles as code_angles  # re-exported
from ropeproof.verify.measure.exact._retrieval_codes import code_table, extremes
from ropeproof.verify.measure.exact._retrieval_gap_inf import (
    gap_inf_enumerated as gap_inf_enumerated,  # re-exported
)

NEG, POS = -math.inf, math.inf
MAX_LENGTH = int(LIMITS["length"].high)  # type: ignore[arg-type]
"""Longest supported length (angle reduction needs distances below ``2^26``)."""
GAP_SUP_KINDS = ("query", "target", "other")
"""Which position is on top in the input attaining ``gap_sup``."""


@dataclass
class DistanceLogits:
    """Per distance ``d``: ``T(d)``, ``H(d)`` (code ``c`` attaining it), ``L(d)`` (code), and error
    bounds: ``err_th`` for ``T`` and ``H`` (all ``margin_inf`` uses), ``err`` for all three.

    Shapes: d [distances]; t [distances]; h [distances]; h_code [distances]; low [distances]; low_code
        [distances]; err_th [distances]; err [distances]
    """

    d: np.ndarray
    t: np.ndarray
    h: np.ndarray
    h_code: np.ndarray
    low: np.ndarray
    low_code: np.ndarray
    err_th: np.ndarray
    err: np.ndarray


def retrieval_distance_logits(alphabet_size: int, theta: float, d: np.ndarray) -> DistanceLogits:
    """The closed-form logits at distances ``d`` (integers ``1 .. MAX_LENGTH``): ``H`` and ``L`` from
    the O(1) candidate codes of :func:`ropeproof.verify.measure.exact._retrieval_codes.extremes`.

    Shapes: d [distances]
    """
    u = UNIT_ROUNDOFF
    d = np.asarray(d, dtype=np.float64)
    r, e = reduced_angles_with_error(d, theta)
    angles = code_table(alphabet_size)
    t = np.cos(r)
    h, h_code, low, low_code = extremes(angles, r)
    # each angle (hi - r) + lo errs by e + w_err + u (|hi - r| + |angle|) <= e + w_err + u (2 (pi + |r|)
    # + max |lo|); cos adds SIN_ULPS ulps of a value <= 1. The extremes over c err by at most the same.
    tiny = 2.0**-1070
    err_c = e + angles.error + u * (2 * (math.pi + np.abs(r)) + angles.lo_max) + 2 * SIN_ULPS * u
    err_t = e + 2 * SIN_ULPS * u * np.abs(t) + tiny
    err_th = np.maximum(err_c, err_t) * (1 + 16 * u)
    err = err_th
    return DistanceLogits(d, t, h, h_code, low, low_code, err_th, err)


@lru_cache(maxsize=64)
def query_logits(alphabet_size: int) -> tuple[float, int, float, int, float, float]:
    """``(S_hi, c_hi, S_lo, c_lo, err_hi, err)``: extremes of ``cos(c omega)`` over ``c = 1 .. A-1``;
    ``err_hi`` bounds the error of ``S_hi``, ``err`` that of both. Small alphabets (one table of every
    code angle) scan every code; larger ones take the candidates of
    :func:`~ropeproof.verify.measure.exact._retrieval_codes.extremes` at angle 0 and the a-priori bound of
    each
    value's error."""
    angles = code_table(alphabet_size)
    u = UNIT_ROUNDOFF
    if angles.table is None:
        s_hi, c_hi, s_lo, c_lo = (x[0] for x in extremes(angles, np.zeros(1)))
        bound = (angles.error + u * math.pi + 2 * SIN_ULPS * u + 2.0**-1070) * (1 + 16 * u)
        return float(s_hi), int(c_hi), float(s_lo), int(c_lo), bound, bound
    hi, lo = angles.table
    w_err = angles.error
    angle = hi + lo
    v = np.cos(angle)
    e_c = w_err + u * np.abs(angle) + 2 * SIN_ULPS * u * np.abs(v) + 2.0**-1070
    err_hi = max(float((v + e_c).max() - v.max()), float(v.max() - (v - e_c).max()))
    err = max(err_hi, float((v + e_c).min() - v.min()), float(v.min() - (v - e_c).min()))
    c_hi, c_lo = int(v.argmax()) + 1, int(v.argmin()) + 1
    return float(v.max()), c_hi, float(v.min()), c_lo, err_hi * (1 + 16 * u), err * (1 + 16 * u)


@dataclass
class RetrievalBlock:
    """Rows ``n`` of a Retrieval sweep with the recipe of each attaining input and an error bound.

    ``margin_dt``: target distance of the ``margin_inf`` input (others at their largest value, the
    query at ``S_hi``); ``margin_dc``, ``margin_cc``: distance and code of its strongest competitor
    (``0``: the query). ``sup_kind`` indexes :data:`GAP_SUP_KINDS`; ``sup_dt``/``sup_da``: the target's
    distance and the top position's distance (``-1`` unless kind is ``other``); every other position
    takes its smallest value (the query its ``S_lo`` unless it is on top). ``err`` bounds
    ``|value - exact|`` of ``margin_inf`` and ``gap_sup`` at that row.

    Shapes: n [rows]; gap_sup [rows]; margin_inf [rows]; err [rows]; sup_err [rows]; margin_dt [rows];
        margin_dc [rows]; margin_cc [rows]; sup_kind [rows]; sup_dt [rows]; sup_da [rows]
    """

    n: np.ndarray
    gap_sup: np.ndarray
    margin_inf: np.ndarray
    err: np.ndarray
    sup_err: np.ndarray
    margin_dt: np.ndarray
    margin_dc: np.ndarray
    margin_cc: np.ndarray
    sup_kind: np.ndarray
    sup_dt: np.ndarray
    sup_da: np.ndarray


def _pick(idx: np.ndarray, vals: np.ndarray, excluded: list[np.ndarray], count: int, fill: float):
    """The first ``count`` entries of each row's list whose index is not excluded: (values, indices)."""
    rows = idx.shape[0]
    out_v = [np.full(rows, fill) for _ in range(count)]
    out_i = [np.full(rows, -1, dtype=np.int64) for _ in range(count)]
    taken = np.zeros(rows, dtype=np.int8)
    for j in range(idx.shape[1]):
        ok = idx[:, j] >= 0
        for ex in excluded:
            ok &= idx[:, j] != ex
        for slot in range(count):
            put = ok & (taken == slot)
            out_v[slot] = np.where(put, vals[:, j], out_v[slot])
            out_i[slot] = np.where(put, idx[:, j], out_i[slot])
        taken += ok
    return np.stack(out_v, 1), np.stack(out_i, 1)


class RetrievalRows:
    """Streams the rows of :func:`retrieval_sweep`; the prefix state is carried between blocks."""

    def __init__(self, alphabet_size: int, theta: float) -> None:
        self.alphabet_size, self.theta = AlphabetSize.of(alphabet_size), Angle.of(theta)  # once, or as parsed
        self.s_hi, self.c_hi, self.s_lo, self.c_lo, s_err_hi, s_err = query_logits(self.alphabet_size)
        self.h_top = RunningTopK(3)
        self.l_top = RunningTopK(3)
        self.t_bottom = RunningTopK(3, largest=False)
        self.t_top = RunningTopK(2)
        self.err_max = s_err  # the largest error of any logit so far (gap_sup)
        self.err_th_max = s_err_hi  # of T, H and S_hi (margin_inf)
        self.next_d = 1

    def advance(self, last_d: int) -> RetrievalBlock:
        """Rows ``n = next_d + 1 .. last_d + 1``: fold distances ``next_d .. last_d``."""
        first = self.next_d
        d = np.arange(first, last_d + 1)
        lg = retrieval_distance_logits(self.alphabet_size, self.theta, d)
        # every value below is a function of the four prefix states alone: computed once per distinct
        # combination of states (few: benchmarks/RESULTS.md counts them) and written out to its rows
        hs, hv, hi, h_pay = self.h_top.feed_states(lg.h, np.stack([lg.t, lg.h_code], 1))  # T, H's code
        ls, lv, li, l_pay = self.l_top.feed_states(lg.low, np.stack([lg.t, lg.h], 1))
        assert h_pay is not None and l_pay is not None
        tbs, tbv, tbi, _ = self.t_bottom.feed_states(lg.t, None)
        tts, ttv, tti, _ = self.t_top.feed_states(lg.t, None)
        new = np.empty(d.size, dtype=bool)
        new[0] = True
        np.not_equal(hs[1:], hs[:-1], out=new[1:])
        for src in (ls, tbs, tts):
            new[1:] |= src[1:] != src[:-1]
        starts = np.flatnonzero(new)
        seg = np.cumsum(new) - 1  # the state combination of each row
        hv, hi, h_pay = hv[hs[starts]], hi[hs[starts]], h_pay[hs[starts]]
        lv, li, l_pay = lv[ls[starts]], li[ls[starts]], l_pay[ls[starts]]
        tbv, tbi = tbv[tbs[starts]], tbi[tbs[starts]]
        ttv, tti = ttv[tts[starts]], tti[tts[starts]]
        err = np.maximum.accumulate(np.maximum(lg.err, self.err_max))
        err_th = np.maximum.accumulate(np.maximum(lg.err_th, self.err_th_max))
        self.err_max, self.err_th_max = float(err[-1]), float(err_th[-1])
        self.next_d = last_d + 1
        s_hi, s_lo = self.s_hi, self.s_lo
        size = starts.size

        # margin_inf: the target anywhere but at H's argmax i1, or exactly there
        i1 = hi[:, 0]
        t_ex = np.where(tbi[:, 0] != i1, tbv[:, 0], tbv[:, 1])
        t_ex_i = np.where(tbi[:, 0] != i1, tbi[:, 0], tbi[:, 1])
        opt1 = t_ex - np.maximum(s_hi, hv[:, 0])
        opt2 = h_pay[:, 0, 0] - np.maximum(s_hi, hv[:, 1])
        margin = np.minimum(opt1, opt2)
        away = opt1 <= opt2  # the target away from H's argmax
        margin_dt = np.where(away, t_ex_i, i1) + 1
        # the attaining input's strongest competitor: H's argmax away from the target (0: the query)
        comp = np.where(away, 0, 1)
        comp_v = np.where(away, hv[:, 0], hv[:, 1])
        margin_dc = np.where(comp_v > s_hi, np.where(away, hi[:, 0], hi[:, 1]) + 1, 0)
        margin_cc = np.where(margin_dc > 0, np.take_along_axis(h_pay[:, :, 1], comp[:, None], 1)[:, 0], 0)

        # gap_sup candidates: (value, kind, target index, top index)
        j1, j2 = li[:, 0], li[:, 1]
        has_j2 = j2 >= 0
        t_j1, t_j2 = l_pay[:, 0, 0], np.where(has_j2, l_pay[:, 1, 0], POS)
        h_j1, h_j2 = l_pay[:, 0, 1], np.where(has_j2, l_pay[:, 1, 1], NEG)
        l1, l2, l3 = lv[:, 0], lv[:, 1], lv[:, 2]
        bt, bti = _pick(tbi, tbv, [j1], 2, POS)  # two smallest T away from j1
        tt, tti = _pick(tti, ttv, [j1], 1, NEG)  # largest T away from j1
        bt2, bti2 = _pick(tbi, tbv, [j1, j2], 1, POS)  # smallest T away from j1, j2
        ha, hai = _pick(hi, hv, [j1], 2, NEG)  # two largest H away from j1
        ha2, hai2 = _pick(hi, hv, [j1, j2], 1, NEG)  # largest H away from j1, j2
        none = np.full(size, -1, dtype=np.int64)
        cands = [
            (s_hi - np.maximum(bt[:, 0], l1), 0, bti[:, 0], none),
            (s_hi - np.maximum(t_j1, l2), 0, j1, none),
            (tt[:, 0] - np.maximum(s_lo, l1), 1, tti[:, 0], none),
            (t_j1 - np.maximum(s_lo, l2), 1, j1, none),
        ]
        for a_slot, t_slot in ((0, 0), (0, 1), (1, 0)):
            ok = (hai[:, a_slot] >= 0) & (bti[:, t_slot] >= 0) & (hai[:, a_slot] != bti[:, t_slot])
            rest = np.maximum(np.maximum(s_lo, bt[:, t_slot]), l1)
            cands.append((np.where(ok, ha[:, a_slot] - rest, NEG), 2, bti[:, t_slot], hai[:, a_slot]))
        ok = has_j2 & (bti2[:, 0] >= 0)
        cands.append(
            (np.where(ok, h_j1 - np.maximum(np.maximum(s_lo, bt2[:, 0]), l2), NEG), 2, bti2[:, 0], j1)
        )
        cands.append((np.where(has_j2, h_j1 - np.maximum(np.maximum(s_lo, t_j2), l3), NEG), 2, j2, j1))
        ok = hai2[:, 0] >= 0
        cands.append(
            (np.where(ok, ha2[:, 0] - np.maximum(np.maximum(s_lo, t_j1), l2), NEG), 2, j1, hai2[:, 0])
        )
        cands.append((np.where(has_j2, h_j2 - np.maximum(np.maximum(s_lo, t_j1), l3), NEG), 2, j1, j2))
        sup = np.full(size, NEG)
        kind = np.zeros(size, dtype=np.int64)
        sup_dt = np.full(size, -1, dtype=np.int64)
        sup_da = np.full(size, -1, dtype=np.int64)
        for value, k, t_idx, a_idx in cands:
            better = value > sup
            sup = np.where(better, value, sup)
            kind = np.where(better, k, kind)
            sup_dt = np.where(better, t_idx + 1, sup_dt)
            sup_da = np.where(better, np.where(a_idx >= 0, a_idx + 1, -1), sup_da)
        u = UNIT_ROUNDOFF
        margin, sup = np.take(margin, seg), np.take(sup, seg)
        return RetrievalBlock(
            n=d + 1,
            gap_sup=sup,
            margin_inf=margin,
            err=(2 * err_th + 2 * u * np.abs(margin)) * (1 + 8 * u),
            sup_err=(2 * err + 2 * u * np.abs(sup)) * (1 + 8 * u),
            margin_dt=np.take(margin_dt, seg),
            margin_dc=np.take(margin_dc, seg),
            margin_cc=np.take(margin_cc.astype(np.int64), seg),
            sup_kind=np.take(kind, seg),
            sup_dt=np.take(sup_dt, seg),
            sup_da=np.take(sup_da, seg),
        )


def iter_retrieval_blocks(
    alphabet_size: int, theta: float, start_n: int, stop_n: int, block: int = 1 << 17
) -> Iterator[RetrievalBlock]:
    """Rows ``n = start_n .. stop_n`` of T_Retrieval, ``block`` rows at a time (the prefix from
    ``n = 2`` is always computed; earlier rows are dropped)."""
    if not 2 <= start_n <= stop_n <= MAX_LENGTH:
        raise InputError(f"lengths {start_n}..{stop_n} must satisfy 2 <= start <= stop <= {MAX_LENGTH}")
    block = integer(block, "block", low=1)
    rows = RetrievalRows(alphabet_size, theta)
    last = 1
    while last < stop_n:
        nxt = min(stop_n, last + block)
        out = rows.advance(nxt - 1)
        last = nxt
        if out.n[-1] < start_n:
            continue
        keep = out.n >= start_n
        if not keep.all():
            out = RetrievalBlock(*(getattr(out, f)[keep] for f in RetrievalBlock.__dataclass_fields__))
        yield out


@dataclass
class RetrievalSweep:
    """Every row ``n = 2 .. N`` of :func:`retrieval_sweep` in memory (arrays indexed by ``n - 2``).

    Shapes: n [rows]; gap_sup [rows]; gap_inf [rows]; margin_inf [rows]; gap_inf_exact [rows]; err [rows];
        sup_err [rows]; margin_dt [rows]; sup_kind [rows]; sup_dt [rows]; sup_da [rows]
    """

    alphabet_size: int
    theta: float
    n: np.ndarray
    gap_sup: np.ndarray
    gap_inf: np.ndarray
    margin_inf: np.ndarray
    gap_inf_exact: np.ndarray
    err: np.ndarray
    sup_err: np.ndarray
    margin_dt: np.ndarray
    sup_kind: np.ndarray
    sup_dt: np.ndarray
    sup_da: np.ndarray
    enumerated: dict[int, tuple[float, tuple[int, ...], int]] = field(default_factory=dict)

    def codes(self, n: int, quantity: str) -> tuple[list[int], int]:
        """The attaining input of length ``n`` as left-letter code offsets ``c`` per position (``0``:
        the target's letter ``Y``; the query's entry is its own ``c``), and the target position."""
        if quantity not in ("gap_sup", "gap_inf", "margin_inf"):
            raise InputError(f"quantity={quantity!r}; accepted: gap_sup, gap_inf, margin_inf")
        if not 2 <= n <= int(self.n[-1]):
            raise InputError(f"n={n} is outside this sweep (2..{int(self.n[-1])})")
        r = n - 2
        if quantity == "gap_inf":
            if not self.gap_inf_exact[r]:
                raise InputError(f"gap_inf at n={n} was not computed (past the horizon, above the limit)")
            if n in self.enumerated:
                _v, codes, d_t = self.enumerated[n]
                out = list(codes)
                out[n - 1 - d_t] = 0
                return out, n - 1 - d_t
            quantity = "margin_inf"
        dist = np.arange(n - 1, -1, -1, dtype=np.float64)
        lg = retrieval_distance_logits(self.alphabet_size, self.theta, np.maximum(dist, 1))
        _s_hi, c_hi, _s_lo, c_lo, *_ = query_logits(self.alphabet_size)
        if quantity == "margin_inf":
            codes = lg.h_code.copy()
            codes[-1] = c_hi
            d_t = int(self.margin_dt[r])
        else:
            kind = GAP_SUP_KINDS[int(self.sup_kind[r])]
            codes = lg.low_code.copy()
            codes[-1] = c_hi if kind == "query" else c_lo
            d_t = int(self.sup_dt[r])
            if kind == "other":
                d_a = int(self.sup_da[r])
                codes[n - 1 - d_a] = lg.h_code[n - 1 - d_a]
        codes[n - 1 - d_t] = 0
        return [int(c) for c in codes], n - 1 - d_t


def retrieval_sweep(
    alphabet_size: int, theta: float, max_n: int, gap_inf_limit: int = 96, block: int = 1 << 17
) -> RetrievalSweep:
    """Exact ``gap_sup``, ``gap_inf``, ``margin_inf`` of T_Retrieval for every ``n = 2 .. max_n``."""
    max_n = integer(max_n, "max_n", low=2, high=MAX_LENGTH)
    blocks = list(iter_retrieval_blocks(alphabet_size, theta, 2, max_n, block))
    cols = {f: np.concatenate([getattr(b, f) for b in blocks]) for f in RetrievalBlock.__dataclass_fields__}
    margin = cols["margin_inf"]
    exact = margin > 0
    gap_inf = np.where(exact, margin, np.nan)
    enumerated = {}
    for r in np.nonzero(~exact)[0]:
        n = int(cols["n"][r])
        if n > gap_inf_limit:
            break
        enumerated[n] = gap_inf_enumerated(int(alphabet_size), float(theta), n)
        gap_inf[r], exact[r] = enumerated[n][0], True
    return RetrievalSweep(
        int(alphabet_size),
        float(theta),
        cols["n"],
        cols["gap_sup"],
        gap_inf,
        margin,
        exact,
        cols["err"],
        cols["sup_err"],
        cols["margin_dt"],
        cols["sup_kind"],
        cols["sup_dt"],
        cols["sup_da"],
        enumerated,
    )
