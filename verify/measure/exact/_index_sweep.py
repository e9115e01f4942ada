"""Fast exact sweep for (many-plane) T_Index, using its offset structure.

For T_Index with planes ``(theta_k, a_k)``, ``a_k >= 0``, the query ``s`` at ``n - 1`` has logit
``h(s - d) = sum_k a_k cos((s - d) theta_k)`` against the key ``d`` back, whatever the tokens. The
target ``d = s`` gets ``h(0) = sum_k a_k``, the largest possible value, and the other keys get
``h(m)`` for ``m = 1 .. s`` and ``m = 1 .. n - 1 - s``. With the stable gap (derived by
:func:`index_gap_expression`)

    g(m) = h(0) - h(m) = sum_k 2 a_k sin(m theta_k / 2)^2,

and its prefix minimum ``G(M) = min_{1 <= m <= M} g(m)``:

    margin_inf(n) = gap_inf(n) = G(n - 1)               (query s = n - 1),
    gap_sup(n)                 = G(ceil((n - 1) / 2))    (query s = ceil((n - 1) / 2)).

``m theta_k`` is reduced with :func:`ropeproof.verify.measure.exact._angles.reduced_angles`, so ``g`` is
accurate to
a few
ulps relative even when it is 1e-14. Cost: ``O(N K)`` for all ``n <= N``, streamed in chunks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.machinery._values import Angle
from ropeproof.verify.kernel._angles import MAX_MULTIPLE, offset_error_cap
from ropeproof.verify.measure.exact._angles import UNIT_ROUNDOFF, reduced_angles, reduced_angles_with_error

if TYPE_CHECKING:
    import sympy as sp

    from ropeproof.theory._construction import Construction


@dataclass(frozen=True)
class PinnedIdentity:
    """An identity ``lhs == rhs`` that sympy proved once, stored so that a run reads it instead of
    proving it (and needs no sympy): both sides as sympy's ``str`` of the expressions they were derived
    as, and ``proved``, what the proof returned. A test derives both sides again from the code they come
    from and proves the identity again, so a change to either side, or to the proof, fails it."""

    lhs: str
    rhs: str
    proved: bool


INDEX_TERM_IDENTITY = PinnedIdentity(lhs="2*sin(theta/2)**2", rhs="1 - cos(theta)", proved=True)
"""T_Index's gap at the adjacent offset, ``g(1)`` (from the construction's closed form,
:func:`~ropeproof.verify.measure.exact._index_sweep.index_gap_expression`), equals Theorem 3.2's first term
``1 - cos(theta)`` (:func:`~ropeproof.theory._bounds.index_bound`):
:func:`~ropeproof.verify.measure.exact._sweep.index_term_identity`'s proof,
stored. The Index rows read ``proved``; ``tests/verify/measure/exact/test_sweep.py`` re-derives both
sides and re-proves it."""


def index_gap_expression(construction: Construction) -> sp.Expr:
    """``g(m)``: target logit minus the logit ``m`` positions off the target, in stable form.

    Derived from the construction's closed form (query integer ``s`` against a letter key at
    offsets ``-s`` and ``-s + m``), then rewritten with ``cos a - cos b = -2 sin sin``.
    """
    import sympy as sp

    from ropeproof.theory._derive import OFFSET, derive

    if construction.name != "index":
        raise InputError(f"index_gap_expression needs the index construction, got {construction.name!r}")
    d = derive(construction)
    rule = d.logit("integer", "letter")
    s = next(v for k, v in rule.query_token.params.items() if k == "s")
    m = sp.Symbol("m", integer=True, positive=True)
    from ropeproof.theory._stable import stabilize

    gap = rule.closed.subs(OFFSET, -s) - rule.closed.subs(OFFSET, -s + m)
    return stabilize(sp.expand(gap))


def planes_of(construction: Construction) -> tuple[np.ndarray, np.ndarray]:
    """``(theta_k, a_k)`` of a construction's planes, as floats."""
    freqs = np.array([construction.numeric(p.freq) for p in construction.planes])
    amps = np.array([construction.numeric(p.amplitude) for p in construction.planes])
    return freqs, amps


def stable_gaps(freqs: Sequence[float], amps: Sequence[float], m: np.ndarray) -> np.ndarray:
    """``g(m) = sum_k 2 a_k sin(m theta_k / 2)^2`` with accurately reduced angles.

    Shapes: m [...]; return [...]
    """
    out = np.zeros(np.asarray(m).shape)
    for theta, a in zip(freqs, amps, strict=True):
        out += 2.0 * a * np.sin(reduced_angles(m, float(theta)) / 2) ** 2
    return out


SIN_ULPS = 2.0
"""Assumed accuracy of float64 ``np.sin``/``np.cos``: at most 2 ulps (``4 u`` relative). glibc and numpy
measure below 1 ulp; ``tests/verify/measure/exact/test_angles.py`` checks the assumption against mpmath."""


def stable_gaps_with_error(
    freqs: Sequence[float], amps: Sequence[float], m: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(g, err)``: :func:`stable_gaps` and a bound on ``|g - g_exact|`` (exact float parameters).

    Per plane, with ``r`` the reduced angle (error ``e_r``, :func:`reduced_angles_with_error`) and
    ``s = sin(r / 2)`` (error ``ds <= e_r / 2 + 2 SIN_ULPS u |s|``): ``|2 a s^2 - 2 a s_exact^2| <=
    2 a ds (2 |s| + ds)``, plus ``3 u`` of the term for the square and the two products; the sum over
    ``K`` planes adds ``K u`` of the total (all terms are ``>= 0``).

    Shapes: m [...] (offsets, any shape); return.0 [...]; return.1 [...] (the shape of m)
    """
    if not np.all(np.isfinite(np.asarray(freqs, dtype=np.float64))):
        raise InputError("freqs must be finite")
    out = np.zeros(np.asarray(m).shape)
    err = np.zeros(out.shape)
    for theta, a in zip(freqs, amps, strict=True):
        r, e_r = reduced_angles_with_error(m, Angle(theta))  # finite: checked above, once for all planes
        s = np.sin(r / 2)
        out += 2.0 * a * s**2
        err += _plane_error(a, s, e_r)
    return out, _total_error(err, len(freqs), out)


def _plane_error(a: float, s: np.ndarray, e_r: np.ndarray) -> np.ndarray:
    """One plane's share of :func:`stable_gaps_with_error`'s bound, from ``s = sin(r / 2)`` and the
    angle's error ``e_r`` (elementwise, so a subset of offsets gets the same bits)."""
    u = UNIT_ROUNDOFF
    ds = e_r / 2 + 2 * SIN_ULPS * u * np.abs(s)
    term = 2.0 * a * s**2
    return 2.0 * a * ds * (2 * np.abs(s) + ds) + 3 * u * term


def _total_error(err: np.ndarray, planes: int, g: np.ndarray) -> np.ndarray:
    """:func:`stable_gaps_with_error`'s bound from the planes' shares ``err`` (added to in place) and
    the gap ``g``."""
    u = UNIT_ROUNDOFF
    err += planes * u * g
    return err * (1 + 8 * u) + 5e-324


def gap_error_cap(freqs: Sequence[float], amps: Sequence[float], max_m: int) -> float:
    """An upper bound on every error bound :func:`stable_gaps_with_error` reports for ``1 <= m <= max_m <
    2^26``: its sum with ``|s| <= 1`` and each plane's angle error at its cap
    (:func:`~ropeproof.verify.kernel._angles.offset_error_cap`), doubled (more than the roundings of the
    reported bound's own evaluation). ``inf`` for ``max_m >= 2^26``. ``freqs`` are finite (checked once
    by the caller, as :func:`check_planes` does)."""
    if max_m >= MAX_MULTIPLE:
        return math.inf
    u = UNIT_ROUNDOFF
    total = weight = 0.0
    for theta, a in zip(freqs, amps, strict=True):
        ds = offset_error_cap(max_m, Angle(theta)) / 2 + 2 * SIN_ULPS * u  # finite: as the planes'
        total += 2.0 * a * ds * (2 + ds) + 3 * u * 2.0 * a
        weight += 2.0 * a
    return 2 * (total + len(freqs) * u * weight) * (1 + 8 * u) + 2 * 5e-324


CHUNK = 1 << 18
"""Offsets :class:`GapPrefix` evaluates at once by default."""
MAX_KEPT_PLANES = 8
"""With more planes :class:`GapPrefix` bounds the error at every offset instead of keeping each plane's
sines for the candidates (memory: one float64 array per plane and chunk)."""


def _spread(values: np.ndarray, before: Any, at: np.ndarray, size: int) -> np.ndarray:
    """Per index ``0 .. size - 1``: ``values[j]`` for the last ``at[j] <= index``, ``before`` ahead of
    ``at[0]`` (a step function; ``at`` increasing).

    Shapes: values [k]; at [k]; return [size]
    """
    head = int(at[0]) if at.size else size
    firsts = np.concatenate([np.array([before], dtype=values.dtype), values])
    return np.repeat(firsts, np.concatenate([[head], np.diff(at, append=size)]))  # one pass


class GapPrefix:
    """Running ``G(M) = min_{1 <= m <= M} g(m)`` with its first argmin, and (``with_error``) the
    enclosure ``[min_m max(g - err, 0), min_m (g + err)]`` of the exact prefix minimum (ends rounded
    outward).

    :meth:`values` returns them for ``M`` in ``[lo, hi]``; successive calls must not go back (``lo``
    may repeat the previous ``hi``). ``g`` is evaluated once per ``m``, in chunks of ``chunk``, so the
    results do not depend on how the range is cut. The offsets where each running minimum drops (its
    records, usually a handful) are kept, so :meth:`earlier` answers any ``M`` already passed.

    Shapes: freqs [planes]; amps [planes]
    """

    def __init__(
        self, freqs: np.ndarray, amps: np.ndarray, with_error: bool = False, chunk: int = CHUNK
    ) -> None:
        self.freqs, self.amps, self.with_error, self.chunk = freqs, amps, with_error, chunk
        self.next_m = 1
        self.cur = (np.inf, 0, np.inf, np.inf)  # G, argmin, lo, hi at M = next_m - 1
        self.records: list[list[np.ndarray]] = [[], [], []]  # offsets, G, argmin where G drops
        self.records_lo: list[list[np.ndarray]] = [[], []]
        self.records_hi: list[list[np.ndarray]] = [[], []]
        # the rounded ends G -+ max(G - G_lo, G_hi - G), where either changes (the judge's enclosure)
        self.records_ends: list[list[np.ndarray]] = [[], [], []]
        self.cur_ends = (math.nan, math.nan)

    def _fold(self, first: int, last: int) -> tuple[np.ndarray, ...]:
        """Fold ``g(first .. last)`` into the running state; the per-``M`` values over that range.

        ``g`` is evaluated at every offset (its prefix minimum is a column), its error bound only where
        :meth:`_fold_gaps` asks (``E``: :func:`gap_error_cap`; 0 without ``with_error``)."""
        m = np.arange(first, last + 1, dtype=np.float64)
        every = self.with_error and len(self.freqs) > MAX_KEPT_PLANES  # too many sines to keep: bound all
        g = np.zeros(m.size)
        sines = []
        term = np.empty(m.size)
        for theta, a in zip(self.freqs, self.amps, strict=True):
            s = reduced_angles(m, Angle(theta))  # the angles of stable_gaps_with_error
            s /= 2
            np.sin(s, out=s)
            np.multiply(s, s, out=term)  # g += 2.0 * a * s**2, in place (the same roundings)
            term *= 2.0 * a
            g += term
            if self.with_error and not every:
                sines.append(s)

        def error_at(at: np.ndarray) -> np.ndarray:
            if not self.with_error:
                return np.zeros(at.size)
            if every:
                return stable_gaps_with_error(self.freqs, self.amps, m[at])[1]
            m_c, err = m[at], np.zeros(at.size)
            for theta, a, s in zip(self.freqs, self.amps, sines, strict=True):
                err += _plane_error(a, s[at], reduced_angles_with_error(m_c, Angle(theta))[1])
            return _total_error(err, len(self.freqs), g[at])

        cap = math.inf if every else gap_error_cap(self.freqs, self.amps, last) if self.with_error else 0.0
        out = self._fold_gaps(first, g, cap, error_at)
        self.next_m = last + 1
        return out

    def _fold_gaps(
        self, first: int, g: np.ndarray, cap: float, error_at: Callable[[np.ndarray], np.ndarray]
    ) -> tuple[np.ndarray, ...]:
        """Fold the gaps ``g`` of the offsets ``first, first + 1, ...`` into the running state, reading
        their error bounds (``error_at(indices)``, elementwise) only at the *candidates*: the offsets
        ``m`` with ``g(m) <= (G(m - 1) + 4 E)(1 + 16 u)`` (rounded), ``E = cap`` bounding every error
        bound up to the last of them. Any other offset changes none of the running values: its ``g`` is
        above ``G(m - 1)``, so it is no new argmin; ``g - err`` stays above ``G(m - 1)``, which is at
        least the running ``G_lo``; and ``g`` alone is above ``G(m - 1) + err(argmin)`` rounded up, which
        is at least the running ``G_hi``. So every value is what folding every offset's bound gives, bit
        for bit (``tests/verify/measure/exact/test_index_sweep.py`` compares them with that fold).

        Shapes: g [offsets]; return.0 [offsets]; return.1 [offsets]; return.2 [offsets]; return.3 [offsets]
        """
        best, best_m, lo0, hi0 = self.cur
        vals = np.minimum.accumulate(g)
        np.minimum(vals, best, out=vals)  # G(M) for M = first .. last
        if not math.isfinite(cap):
            cand = np.arange(g.size)
        else:
            threshold = np.empty(g.size)
            threshold[0] = best
            threshold[1:] = vals[:-1]  # G(m - 1)
            threshold += 4 * cap
            threshold *= 1 + 16 * UNIT_ROUNDOFF
            cand = np.flatnonzero(g <= threshold)
        g_c, e_c = g[cand], error_at(cand)
        run = np.minimum.accumulate(g_c)
        is_record = np.concatenate([[True], run[1:] < run[:-1]])
        rec_idx = np.maximum.accumulate(np.where(is_record, np.arange(cand.size), 0))
        args_c = np.where(run < best, first + cand[rec_idx], best_m).astype(np.int64)
        # each end rounded outward: g - e and g + e rounded to nearest could land inside
        lo_c = np.minimum(np.minimum.accumulate(np.maximum(np.nextafter(g_c - e_c, -np.inf), 0.0)), lo0)
        hi_c = np.minimum(np.minimum.accumulate(np.nextafter(g_c + e_c, np.inf)), hi0)
        vals_c = vals[cand]
        err_c = vals_c - lo_c  # max(G - G_lo, G_hi - G): the expression of the judge's per-row error
        np.maximum(err_c, hi_c - vals_c, out=err_c)
        low_end_c = vals_c - err_c
        high_end_c = np.add(vals_c, err_c, out=err_c)
        changes = np.flatnonzero(
            (low_end_c != np.concatenate([[self.cur_ends[0]], low_end_c[:-1]]))
            | (high_end_c != np.concatenate([[self.cur_ends[1]], high_end_c[:-1]]))
        )
        for i, arr in enumerate((cand[changes] + first, low_end_c[changes], high_end_c[changes])):
            self.records_ends[i].append(arr)
        for arr, prev, store in (
            (vals_c, best, self.records),
            (lo_c, lo0, self.records_lo),
            (hi_c, hi0, self.records_hi),
        ):
            drops = np.flatnonzero(arr < np.concatenate([[prev], arr[:-1]]))
            store[0].append(cand[drops] + first)
            store[1].append(arr[drops])
            if store is self.records:
                store[2].append(args_c[drops])
        args, lo, hi, low_end, high_end = (
            _spread(c, before, cand, g.size)
            for c, before in (
                (args_c, best_m),
                (lo_c, lo0),
                (hi_c, hi0),
                (low_end_c, self.cur_ends[0]),
                (high_end_c, self.cur_ends[1]),
            )
        )
        self.cur = (float(vals[-1]), int(args[-1]), float(lo[-1]), float(hi[-1]))
        self.cur_ends = (float(low_end[-1]), float(high_end[-1]))
        return vals, args, lo, hi, low_end, high_end

    def earlier(self, m: np.ndarray, increasing: bool = False, ends: bool = False) -> tuple[np.ndarray, ...]:
        """``(G, argmin, G_lo, G_hi)`` at offsets ``1 <= M <= next_m - 1`` already folded (from the
        records: the last drop at or before ``M``). ``increasing``: the caller's promise that ``m`` does
        not decrease (then each record's rows are one run, written without a per-row search). ``ends``:
        also the rounded ends ``G -+ e``, ``e = max(G - G_lo, G_hi - G)`` (those float64 expressions).

        Shapes: m [k]; return.0 [k]; return.1 [k]; return.2 [k]; return.3 [k]
        """
        m = np.asarray(m)
        if m.size and (m.min() < 1 or m.max() > self.next_m - 1):
            raise InputError(f"GapPrefix.earlier needs 1 <= M <= {self.next_m - 1}")
        out = []
        stores = [(self.records, 2), (self.records_lo, 1), (self.records_hi, 1)]
        for store, count in [*stores, (self.records_ends, 2)] if ends else stores:
            if len(store[0]) > 1:  # compact the per-chunk pieces
                for i in range(len(store)):
                    if store[i]:
                        store[i][:] = [np.concatenate(store[i])]
            columns = [store[1 + i][0] for i in range(count)]
            if increasing:  # row i reads the last record at or before m[i] (m[0] >= 1, the first record)
                starts = np.searchsorted(m, store[0][0], side="left")
                out.extend(_spread(c, c[-1], starts, m.size) for c in columns)
            else:
                at = np.searchsorted(store[0][0], m, side="right") - 1
                out.extend(c[at] for c in columns)
        return tuple(out)

    def values(self, lo: int, hi: int, ends: bool = False) -> tuple[np.ndarray, ...]:
        """``(G, argmin, G_lo, G_hi)`` for ``M = lo .. hi`` (``1 <= lo <= hi``); ``ends``: also the
        rounded ends ``G -+ e`` of :meth:`earlier`."""
        if lo < max(1, self.next_m - 1) or hi < lo:
            raise InputError(f"GapPrefix.values({lo}, {hi}) goes back (next offset {self.next_m})")
        parts: list[tuple[np.ndarray, ...]] = []
        if lo == self.next_m - 1:
            g, a, l_, h = self.cur
            one = np.array([g]), np.array([a], dtype=np.int64), np.array([l_]), np.array([h])
            parts.append((*one, np.array([self.cur_ends[0]]), np.array([self.cur_ends[1]])))
        while self.next_m < lo:  # fold the skipped offsets, keeping only the running state
            self._fold(self.next_m, min(lo - 1, self.next_m + self.chunk - 1))
        while self.next_m <= hi:
            parts.append(self._fold(self.next_m, min(hi, self.next_m + self.chunk - 1)))
        width = 6 if ends else 4
        if len(parts) == 1:
            return parts[0][:width]
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(width))


@dataclass
class IndexBlock:
    """Rows ``n`` of a T_Index sweep: the extremes, their attaining offsets and (optionally) enclosures.

    ``margin_inf = gap_inf = G(n - 1)`` (``closest``), ``gap_sup = G(ceil((n-1)/2))`` (``closest_sup``);
    ``*_lo``/``*_hi`` enclose the exact values (``None`` without ``with_error``); ``*_ends`` are the
    judge's rounded ends ``value -+ max(value - lo, hi - value)`` (:meth:`GapPrefix.earlier`).

    Shapes: n [rows]; gap_sup [rows]; margin_inf [rows]; closest [rows]; closest_sup [rows]; margin_lo
        [rows]; margin_hi [rows]; sup_lo [rows]; sup_hi [rows]; margin_ends [rows] (a pair: lower, upper);
        sup_ends [rows] (a pair: lower, upper)
    """

    n: np.ndarray
    gap_sup: np.ndarray
    margin_inf: np.ndarray
    closest: np.ndarray
    closest_sup: np.ndarray
    margin_lo: np.ndarray | None = None
    margin_hi: np.ndarray | None = None
    sup_lo: np.ndarray | None = None
    sup_hi: np.ndarray | None = None
    margin_ends: tuple[np.ndarray, np.ndarray] | None = None
    sup_ends: tuple[np.ndarray, np.ndarray] | None = None


AMPS_SUM_LIMIT = float(np.finfo(np.float64).max) / 2 / (1 + 64 * UNIT_ROUNDOFF)
"""The largest ``sum_k a_k`` accepted: ``g(m) <= 2 sum_k a_k`` and its error bound stay finite."""


def check_planes(
    freqs: Sequence[float], amps: Sequence[float] | None, some_weight: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """``(freqs, amps)`` as equal-length, non-empty 1-D float64 arrays (``amps`` all 1 when ``None``);
    :class:`InputError` unless every frequency is finite and every amplitude finite and ``>= 0`` with
    ``sum(amps) <= AMPS_SUM_LIMIT`` (and, with ``some_weight``, not all 0)."""
    try:
        f = np.atleast_1d(np.asarray(freqs, dtype=np.float64))
        a = np.ones_like(f) if amps is None else np.atleast_1d(np.asarray(amps, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise InputError(f"freqs and amps must be sequences of real numbers ({exc})") from None
    if f.ndim != 1 or f.size == 0 or f.shape != a.shape:
        raise InputError(f"freqs and amps must be equal-length, non-empty 1-D; got {f.shape} and {a.shape}")
    if not np.all(np.isfinite(f)) or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise InputError("freqs must be finite and amps finite and >= 0")
    if some_weight and a.sum() <= 0:
        raise InputError("amps must not be all 0")
    with np.errstate(over="ignore"):
        total = 2 * a.sum()
    if not np.isfinite(total * (1 + 64 * UNIT_ROUNDOFF)):  # g(m) <= 2 sum_k a_k, with its error bound
        raise InputError(
            f"amps sum to {a.sum():.4g}; accepted: finite amps >= 0 with sum(amps) <= {AMPS_SUM_LIMIT:.4g} "
            "(the gap 2 sum_k a_k sin^2 must stay a finite float64)"
        )
    return f, a


def iter_index_blocks(
    freqs: Sequence[float],
    amps: Sequence[float] | None,
    start_n: int,
    stop_n: int,
    block: int = 1 << 18,
    with_error: bool = False,
) -> Iterator[IndexBlock]:
    """Rows ``n = start_n .. stop_n`` of many-plane T_Index, ``block`` rows at a time, in memory
    ``O(block)`` (one running prefix minimum over ``m <= n - 1``; ``gap_sup`` reads its records at
    ``ceil((n-1)/2)``)."""
    f, a = check_planes(freqs, amps)
    if not 2 <= start_n <= stop_n < 2**26:
        raise InputError(f"lengths {start_n}..{stop_n} must satisfy 2 <= start <= stop <= 2^26 - 1")
    block = integer(block, "block", low=1)
    margin = GapPrefix(f, a, with_error, chunk=max(CHUNK, block))  # the values do not depend on chunk
    for first in range(start_n, stop_n + 1, block):
        n = np.arange(first, min(stop_n, first + block - 1) + 1)
        g, arg, lo, hi, *ends = margin.values(int(n[0]) - 1, int(n[-1]) - 1, ends=with_error)
        # gap_sup(n) = G(ceil((n - 1) / 2)): an offset the running minimum has already passed
        half = n // 2  # ceil((n - 1) / 2), exactly
        sg, sarg, slo, shi, *sup_ends = margin.earlier(half, increasing=True, ends=with_error)
        if with_error:
            yield IndexBlock(
                n, sg, g, arg, sarg, lo, hi, slo, shi, (ends[0], ends[1]), (sup_ends[0], sup_ends[1])
            )
        else:
            yield IndexBlock(n, sg, g, arg, sarg)


@dataclass
class IndexSweep:
    """Exact T_Index extremes for ``n = 2 .. N`` (arrays indexed by ``n - 2``).

    ``closest[r]`` is the offset ``m`` (from the target) of the best competing key for ``margin_inf``
    at ``n = r + 2``; the attaining input is query ``s = n - 1`` with the competitor ``m`` positions
    after the target. ``normaliser`` is ``h(0) = sum_k a_k``.

    Shapes: n [N - 1]; gap_sup [N - 1]; gap_inf [N - 1]; margin_inf [N - 1]; closest [N - 1];
        closest_sup [N - 1]
    """

    n: np.ndarray
    gap_sup: np.ndarray
    gap_inf: np.ndarray
    margin_inf: np.ndarray
    closest: np.ndarray
    closest_sup: np.ndarray
    normaliser: float

    def witness(self, n: int, quantity: str = "margin_inf") -> dict[str, int | float]:
        """The attaining input, described: query integer ``s``, target distance ``s``, and the
        competing key's offset ``m`` from the target."""
        r = n - 2
        if not 0 <= r < self.n.size:
            raise InputError(f"n={n} is outside this sweep (2..{int(self.n[-1])})")
        if quantity == "gap_sup":
            s = (n - 1 + 1) // 2
            m, value = int(self.closest_sup[r]), float(self.gap_sup[r])
            return {"n": n, "s": s, "target_position": n - 1 - s, "competitor_offset": m, "value": value}
        return {
            "n": n,
            "s": n - 1,
            "target_position": 0,
            "competitor_offset": int(self.closest[r]),
            "value": float(getattr(self, quantity)[r]),
        }


def index_sweep(
    freqs: Sequence[float], amps: Sequence[float] | None = None, max_n: int = 1000, chunk: int = 1 << 20
) -> IndexSweep:
    """Exact ``gap_sup``, ``gap_inf``, ``margin_inf`` of many-plane T_Index for ``n = 2 .. max_n``."""
    f, a = check_planes(freqs, [1.0] * np.atleast_1d(freqs).size if amps is None else amps)
    max_n = integer(max_n, "max_n", low=2, high=2**26 - 1)
    blocks = list(iter_index_blocks(f, a, 2, max_n, max(1, chunk)))
    margin = np.concatenate([b.margin_inf for b in blocks])
    return IndexSweep(
        n=np.arange(2, max_n + 1),
        gap_sup=np.concatenate([b.gap_sup for b in blocks]),
        gap_inf=margin.copy(),
        margin_inf=margin,
        closest=np.concatenate([b.closest for b in blocks]),
        closest_sup=np.concatenate([b.closest_sup for b in blocks]),
        normaliser=float(a.sum()),
    )


def direct_index_extremes(
    freqs: Sequence[float], amps: Sequence[float], n: int, dps: int | None = None
) -> tuple[float, float, float]:
    """``(gap_sup, gap_inf, margin_inf)`` of K-plane T_Index at length ``n`` by brute force.

    Every query ``s = 1 .. n-1`` at position ``i = n - 1`` and every key ``j`` of its row: logit
    ``sum_k a_k cos((j - i + s) theta_k)``, target ``j = i - s``; ``gap`` is top-1 minus top-2 of
    the row, ``margin`` is the target's logit minus the best other. An ``O(n^2 K)`` oracle for the
    one-pass :func:`index_sweep`: in float64 (``dps=None``) or in mpmath at ``dps`` digits.
    """
    n = integer(n, "n", low=2)
    f = np.asarray(freqs, dtype=np.float64).reshape(-1)
    a = np.asarray(amps, dtype=np.float64).reshape(-1)
    if f.shape != a.shape or f.size == 0:
        raise InputError(f"freqs and amps must be non-empty and of equal length, got {f.size} and {a.size}")
    gaps, margins = [], []
    if dps is None:
        j = np.arange(n, dtype=np.float64)
        for s in range(1, n):
            row = (a[None, :] * np.cos((j[:, None] - (n - 1) + s) * f[None, :])).sum(1)
            target = n - 1 - s
            margins.append(row[target] - np.delete(row, target).max())
            top = np.sort(row)[::-1]
            gaps.append(top[0] - top[1])
        return float(max(gaps)), float(min(gaps)), float(min(margins))
    import mpmath

    with mpmath.workdps(dps):
        th = [mpmath.mpf(float(t)) for t in f]
        am = [mpmath.mpf(float(x)) for x in a]
        for s in range(1, n):
            row = [
                sum(ak * mpmath.cos((jj - (n - 1) + s) * tk) for ak, tk in zip(am, th, strict=True))
                for jj in range(n)
            ]
            target = n - 1 - s
            margins.append(row[target] - max(v for p_, v in enumerate(row) if p_ != target))
            top = sorted(row, reverse=True)
            gaps.append(top[0] - top[1])
        return float(max(gaps)), float(min(gaps)), float(min(margins))
