"""Certified bound checks: every margin and bound for every ``n <= N`` enclosed in an interval.

Enclosures come from ball arithmetic (Arb, through python-flint's ``flint.arb``, at ``prec`` bits) for
every transcendental value; each ball ``[mid +- rad]`` is rounded outward to float64 by
:func:`arb_ends` (its lower end rounded down, its upper end rounded up), and the rest of the
computation uses only ``min``/``max`` (exact on floats) and subtractions rounded outward (``nextafter``
past the round-to-nearest result). Parameters are the exact binary values of their float64s.
:func:`interval_ends` and :class:`iv_precision` do the same for ``mpmath.iv`` intervals, which other
modules still use for one-off constants. Every precision is set locally (:class:`arb_precision`,
:class:`iv_precision`), never read from ``mpmath.mp`` or python-flint's context as a user left them, and
:func:`arb_exact_ends` / :func:`iv_exact_ends` give the ends exactly (fractions) where a refinement
must separate values closer than float64 resolves. A row of ``measured(n) <= bound(n)`` is

- ``holds``: ``hi(measured) <= lo(bound)``;
- ``holds-equal``: the intervals overlap, but a witness input's value equals the bound identically
  (sympy, with the parameters as exact rationals), so ``measured <= witness = bound``;
- ``violated``: ``lo(measured) > hi(bound)``;
- ``undecided``: none of the above, even after re-enclosing the row at ``refine_prec`` bits. Never
  guessed, never counted as a pass.

Enclosed quantities (docs/theory.md section 5; :mod:`ropeproof.verify.measure.exact._index_sweep`,
:mod:`ropeproof.verify.measure.exact._discrepancy`):

- T_Index over planes ``(theta_k, a_k)``: ``g(m) = sum_k 2 a_k sin(m theta_k / 2)^2``;
  ``margin_inf(n) = gap_inf(n) = min_{m <= n-1} g(m)``, ``gap_sup(n) = min_{m <= ceil((n-1)/2)} g(m)``
  (the interval of a minimum is ``[min lo, min hi]``).
- T_Retrieval (``|ALPH| = A``, ``omega = 2 pi / A``, one plane at ``theta``): target at distance
  ``d_t`` scores ``T(d) = cos(d theta)``, a non-matching key at distance ``d`` at most
  ``O(d) = max_{c=1..A-1} cos(c omega - d theta)``, the query itself ``S = max_c cos(c omega)``, and

      margin_inf(n) = min_{1 <= d_t <= n-1} [ T(d_t) - max(S, max_{1 <= d <= n-1, d != d_t} O(d)) ].

- Bounds: [A]'s Theorem 3.2 (:mod:`ropeproof.theory._bounds`) and Theorem D
  (:mod:`ropeproof.theory._dirichlet`).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
from flint import arb
from flint import ctx as flint_ctx
from mpmath import iv, libmp

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._memory_budget import check_allocation
from ropeproof.machinery._validate import integer, real

if TYPE_CHECKING:
    import sympy as sp

STATUSES = ("holds", "holds-equal", "violated", "undecided")


# ------------------------------------------------------------------------------------ interval basics


def interval_ends(x: Any) -> tuple[float, float]:
    """Float64 ``(lo, hi)`` enclosing the ``mpmath.iv`` interval ``x`` (rounded outward).

    ``to_float`` flushes values below the float64 range to 0 whatever the rounding mode, so each end
    is checked against the exact endpoint and stepped outward (to the nearest subnormal) if needed.
    """
    a, b = x._mpi_
    lo, hi = libmp.to_float(a, rnd="f"), libmp.to_float(b, rnd="c")
    if libmp.mpf_gt(libmp.from_float(lo), a):
        lo = math.nextafter(lo, -math.inf)
    if libmp.mpf_lt(libmp.from_float(hi), b):
        hi = math.nextafter(hi, math.inf)
    return lo, hi


def _floor_to_float(man: int, exp: int) -> float:
    """The largest float64 ``<= man * 2^exp`` (exact integers in; ``-inf`` below ``-DBL_MAX``).

    The float64 of the same size keeps ``keep = min(53, top + 1074)`` significant bits, where
    ``2^(top-1) <= |v| < 2^top`` (fewer than 53 for subnormals, whose last bit is ``2^-1074``); the
    mantissa is floored to ``keep`` bits by an arithmetic shift (Python's ``>>`` floors, negatives
    too), after which ``ldexp`` is exact."""
    if man == 0:
        return 0.0
    bits = abs(man).bit_length()
    top = bits + exp
    if top > 1024:  # |v| >= 2^1024 > DBL_MAX
        return -math.inf if man < 0 else sys.float_info.max
    keep = min(53, top + 1074)
    if keep <= 0:  # 0 < |v| < 2^-1074, the smallest subnormal
        return -math.ldexp(1.0, -1074) if man < 0 else 0.0
    if bits > keep:
        man >>= bits - keep
        exp += bits - keep
    try:
        return math.ldexp(man, exp)
    except OverflowError:  # a negative mantissa floored up to -2^1024
        return -math.inf


def _floor_exact_to_float(v: arb) -> float:
    """The largest float64 ``<= v`` for an exact, finite ``flint.arb`` ``v``.

    A first guess is ``float(v)``; it is accepted once Arb's exact comparisons show ``guess <= v`` and
    ``nextafter(guess, +inf) > v`` (so it is the largest float64 ``<= v`` whatever the guess's own
    rounding), after at most two one-ulp steps; otherwise the exact integer rounding
    :func:`_floor_to_float` of ``v``'s mantissa and exponent decides."""
    f = float(v)
    for _ in range(3):
        if arb(f) > v:
            f = math.nextafter(f, -math.inf)
        elif f != math.inf and arb(math.nextafter(f, math.inf)) <= v:
            f = math.nextafter(f, math.inf)
        else:
            return f
    man, exp = v.man_exp()
    return _floor_to_float(int(man), int(exp))


def arb_ends(x: arb) -> tuple[float, float]:
    """Float64 ``(lo, hi)`` enclosing the ball ``x = [mid +- rad]`` (``flint.arb``), rounded outward.

    ``lo`` is the largest float64 ``<= x.lower()`` and ``hi`` the smallest float64 ``>= x.upper()``, where
    ``x.lower()``/``x.upper()`` are ``mid - rad``/``mid + rad`` rounded down/up at the working precision.
    At a working precision of at least 53 bits every float64 is one of its numbers, so ``lo``/``hi`` are
    then the tightest float64 ends of ``[mid - rad, mid + rad]`` itself. Each end is decided by exact
    comparisons (:func:`_floor_exact_to_float`), subnormals and the overflow range included; a ball
    that is not finite (infinite radius, NaN midpoint) gives ``(-inf, inf)``.
    """
    if not x.is_finite():
        return -math.inf, math.inf
    # the ends at 53 bits, rounded outward: flooring that to float64 is flooring the exact end (every float64
    # is a 53-bit number), and no user's flint precision below 53 bits loosens it
    with arb_precision(53):
        lower, upper = x.lower(), x.upper()
    # 0.0 - f negates exactly and turns -0.0 into 0.0
    return _floor_exact_to_float(lower), 0.0 - _floor_exact_to_float(-upper)


SMALLEST_NORMAL = 2.0**-1022
"""Below this magnitude float64 has fewer than 53 significant bits (subnormals)."""


def arb_ends_many(balls: Sequence[arb], scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`arb_ends` of ``scale * b`` for every ball ``b`` (``scale`` a power of two, 1 by default), as two
    float64 arrays, bit for bit the same, faster (``benchmarks/bench_certified.py``).

    Each ball's ends are rounded outward to 53 bits by Arb itself (``lower``/``upper`` at a working
    precision of 53 bits); in float64's normal range those are float64 numbers, so ``float`` converts
    them exactly, and flooring a 53-bit floor to float64 changes nothing (every float64 is a 53-bit
    number). An end that converts to a magnitude of 2^-1022 or less may be a 53-bit number below the
    normal range that ``float`` rounded to nearest, so it is not trusted. Scaling by a power of two
    commutes with both roundings while the result stays normal, so it is applied to the floats. Ends
    outside the normal range (zero, subnormals, overflow), before or after the scaling, and balls that
    are not finite take :func:`arb_ends` itself (of the exactly scaled ball).

    Shapes: return [len(balls)] (lo, hi)
    """
    count = len(balls)
    mant, _ = math.frexp(scale)
    if not (math.isfinite(scale) and scale > 0 and mant == 0.5):
        raise InputError(f"scale={scale!r} must be a power of two")
    with arb_precision(53):
        lo = np.fromiter(map(float, map(arb.lower, balls)), np.float64, count)
        hi = np.fromiter(map(float, map(arb.upper, balls)), np.float64, count)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):  # (a 0.0 may be an underflow)
        # strictly above: a 53-bit end just below 2^-1022 is not a float64, and ``float`` rounds it to
        # nearest, possibly to 2^-1022 itself (inward); such ends take the exact path
        normal = (np.abs(lo) > SMALLEST_NORMAL) & np.isfinite(lo) & (np.abs(hi) > SMALLEST_NORMAL)
        normal &= np.isfinite(hi)
        if scale != 1.0:
            lo, hi = lo * scale, hi * scale  # exact where both stay normal
            normal &= (np.abs(lo) >= SMALLEST_NORMAL) & np.isfinite(lo)
            normal &= (np.abs(hi) >= SMALLEST_NORMAL) & np.isfinite(hi)
    for i in np.nonzero(~normal)[0].tolist():
        ball = balls[i]
        if scale != 1.0:
            with arb_precision(EXACT_SCALING_BITS):  # more bits than any midpoint here: exact
                ball = ball * scale
        lo[i], hi[i] = arb_ends(ball)
    return lo, hi


EXACT_SCALING_BITS = 1 << 14
"""A working precision above any ball's midpoint bits in this module (``prec <= 4096`` plus the exponent
and offset extras), at which a product with a power of two is exact."""


ExactEnd = Fraction | float
"""An exact interval end: a :class:`~fractions.Fraction`, or ``-inf``/``inf`` (floats) for unbounded ends."""


def _mpf_fraction(t: tuple) -> ExactEnd:
    """The exact value of an mpmath ``libmp`` number (``-inf``/``inf`` as floats; NaN is refused)."""
    if t == libmp.finf:
        return math.inf
    if t == libmp.fninf:
        return -math.inf
    if t == libmp.fnan:
        raise InputError("an interval end is NaN")
    p, q = libmp.to_rational(t)
    return Fraction(p, q)


def iv_exact_ends(x: Any) -> tuple[ExactEnd, ExactEnd]:
    """The ends of the ``mpmath.iv`` interval ``x`` as exact fractions, read from its binary ends (never
    through ``mpmath.mp``, so independent of the global precision); no rounding at all."""
    a, b = x._mpi_
    return _mpf_fraction(a), _mpf_fraction(b)


def arb_exact_ends(x: arb) -> tuple[ExactEnd, ExactEnd]:
    """``[mid - rad, mid + rad]`` of the ``flint.arb`` ball ``x`` as exact fractions (its ends rounded
    outward at the working precision by Arb's ``lower``/``upper``, so call it inside the computation's
    :class:`arb_precision`; an exact ``x`` gives its own value at any precision); ``(-inf, inf)`` for a
    ball that is not finite."""
    if not x.is_finite():
        return -math.inf, math.inf
    if x.is_exact():  # a number, not a ball: its value, whatever the working precision
        value = _arb_fraction(x)
        return value, value
    return _arb_fraction(x.lower()), _arb_fraction(x.upper())


def _arb_fraction(x: arb) -> Fraction:
    """The value of an exact ``flint.arb`` as a fraction."""
    man, exp = (int(v) for v in x.mid().man_exp())
    return Fraction(man) * 2**exp if exp >= 0 else Fraction(man, 2**-exp)


def _down(x: np.ndarray) -> np.ndarray:
    return np.nextafter(x, -np.inf)


def _up(x: np.ndarray) -> np.ndarray:
    return np.nextafter(x, np.inf)


class iv_precision:
    """``with iv_precision(bits):`` sets ``mpmath.iv``'s working precision and restores it."""

    def __init__(self, bits: int) -> None:
        self.bits = bits

    def __enter__(self) -> None:
        self.saved = iv.prec
        iv.prec = self.bits

    def __exit__(self, *exc: object) -> None:
        iv.prec = self.saved


class arb_precision:
    """``with arb_precision(bits):`` sets python-flint's working precision (``flint.ctx.prec``, used by
    every ``flint.arb`` operation) and restores it."""

    def __init__(self, bits: int) -> None:
        self.bits = bits

    def __enter__(self) -> None:
        self.saved = flint_ctx.prec
        flint_ctx.prec = self.bits

    def __exit__(self, *exc: object) -> None:
        flint_ctx.prec = self.saved


GAP_CHUNK = 1 << 14
"""Offsets enclosed per batch of balls (the balls are rounded to float64 together, :func:`arb_ends_many`)."""
MAX_OFFSET = 2**53 - 2
"""Largest offset ``m`` of a certified enclosure: ``n = m + 1`` must be an exact float64."""


def _check_n(max_n: int, limit: int = 10**6) -> int:
    return integer(max_n, "max_n", low=2, high=limit)


def _check_prec(prec: int) -> int:
    return integer(prec, "prec", low=53, high=4096, note="bits")


# --------------------------------------------------------------------------------------- enclosures


def enclose_index_gaps(
    freqs: Sequence[float], amps: Sequence[float], max_m: int, prec: int = 80, first_m: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Enclosures ``(lo, hi)`` of ``g(m) = sum_k 2 a_k sin(m theta_k / 2)^2`` for ``m = first_m .. max_m``.

    Each ``g(m)`` is one ``flint.arb`` ball: ``h_k = theta_k / 2`` and ``w_k = 2 a_k`` are exact, ``s_k =
    sin(m h_k)`` is Arb's rigorous sine of the ball ``m h_k`` (exact while ``m h_k`` fits the working
    precision), and ``g(m) = sum_k w_k s_k s_k``; the ball is rounded outward to float64 by
    :func:`arb_ends`, and a negative lower end is raised to 0 (``g(m) >= 0`` since ``a_k >= 0``).

    For ``max |theta_k| >= 1`` the working precision is ``prec`` plus ``26`` plus the binary exponent of
    ``max |theta_k|``, so every angle ``m theta_k`` (``m < 2^26``) keeps ``prec`` bits after its
    integer part (large ``|theta|``, docs/theory.md section 7). Offsets ``m >= 2^26`` add
    ``bits(m) - 26`` more bits, so ``m h_k`` stays exact (or keeps the same bits after its integer part)
    however large ``m`` is: the exact angle reduction is Arb's, at a precision set by ``m``. The
    precision depends on the frequencies and on ``m`` only, and each ``g(m)`` is computed on its own,
    so any split of the offsets encloses each ``g(m)`` identically. Offsets up to :data:`MAX_OFFSET`
    (``n`` stays an exact float64 in the bound)."""
    f = [float(x) for x in freqs]
    a = [float(x) for x in amps]
    if not f or len(f) != len(a) or any(x < 0 for x in a) or not all(map(math.isfinite, f + a)):
        raise InputError("freqs and amps must be equal-length, finite, non-empty; amps >= 0")
    if not 1 <= first_m <= max_m + 1:
        raise InputError(f"first_m={first_m} must be in 1 .. max_m + 1 = {max_m + 1}")
    if max_m > MAX_OFFSET:
        raise InputError(f"offsets up to {max_m} exceed the largest supported offset 2^53 - 2 = {MAX_OFFSET}")
    size = max_m - first_m + 1
    lo, hi = np.empty(size), np.empty(size)
    big = max(abs(t) for t in f)
    extra = math.frexp(big)[1] + 26 if big >= 1 else 0
    base = _check_prec(prec) + extra
    with arb_precision(base):  # never at the precision a user left in flint's context
        halves = [arb(t) / 2 for t in f]  # exact: a float64 halved
        weights = [2 * arb(w) for w in a]  # exact
    mant, _ = math.frexp(2 * a[0])
    scale = 2 * a[0] if len(a) == 1 and mant == 0.5 and math.isfinite(2 * a[0]) else None
    start = first_m
    while start <= max_m:
        bits = start.bit_length()
        # the offsets of one bit length share a precision; at most GAP_CHUNK balls are held at a time
        stop = min(max_m, (1 << bits) - 1, start + GAP_CHUNK - 1)
        with arb_precision(base + max(0, bits - 26)):
            if len(halves) == 1:  # one plane: w s^2 itself (adding it to an exact 0 changes no bit)
                h, w = halves[0], weights[0]
                squares = [s * s for s in map(arb.sin, map(h.__mul__, range(start, stop + 1)))]
                if scale is None:
                    balls = [w * x for x in squares]
            else:
                balls = []
                for m in range(start, stop + 1):
                    total = arb(0)
                    for h, w in zip(halves, weights, strict=True):
                        s = (m * h).sin()
                        total += w * (s * s)
                    balls.append(total)
        if len(halves) == 1 and scale is not None:  # w = 2 a a power of two: scaled exactly on the floats
            end_lo, end_hi = arb_ends_many(squares, scale)
        else:
            end_lo, end_hi = arb_ends_many(balls)
        lo[start - first_m : stop - first_m + 1] = np.maximum(end_lo, 0.0)
        hi[start - first_m : stop - first_m + 1] = end_hi
        start = stop + 1
    return lo, hi


def _mul(a_lo, a_hi, b_lo, b_hi) -> tuple[np.ndarray, np.ndarray]:
    """Outward-rounded interval product ``[a] [b]`` (elementwise, broadcasting)."""
    p = np.stack(np.broadcast_arrays(a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi))
    return _down(p.min(0)), _up(p.max(0))


def _add(a_lo, a_hi, b_lo, b_hi) -> tuple[np.ndarray, np.ndarray]:
    """Outward-rounded interval sum ``[a] + [b]``."""
    return _down(a_lo + b_lo), _up(a_hi + b_hi)


def enclose_retrieval_terms(
    alphabet: int, theta: float, max_d: int, prec: int = 80
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray], tuple[float, float]]:
    """Enclosures of ``T(d) = cos(d theta)`` and ``O(d) = max_c cos(c omega - d theta)`` for
    ``d = 1 .. max_d``, and of ``S = max_c cos(c omega)`` (``c = 1 .. A-1``, ``omega = 2 pi / A``).

    ``cos(d theta)``, ``sin(d theta)``, ``cos(c omega)``, ``sin(c omega)`` are ``flint.arb`` balls at
    ``prec`` bits (Arb's ``sin_cos`` of the exact ``d theta`` and of ``c omega``, ``omega = 2 pi / A``
    with Arb's enclosure of ``pi``), each rounded outward to float64 by :func:`arb_ends`;
    ``cos(c omega - d theta) = cos(c omega) cos(d theta) + sin(c omega) sin(d theta)`` is then formed
    with outward-rounded float64 interval products and sums. Each ``d`` is enclosed on its own, so any
    range of ``d`` gives the same enclosures.
    """
    alphabet, theta = integer(alphabet, "alphabet", low=2), real(theta, "theta")
    # the interval products below hold a few [max_d, A - 1] arrays (4 corners, 2 ends, clip copies)
    check_allocation(
        f"certified retrieval terms for |ALPH| = {alphabet} to d = {max_d}", 12 * 8 * max_d * (alphabet - 1)
    )
    cd = np.empty((2, max_d))
    sd = np.empty((2, max_d))
    cc = np.empty((2, alphabet - 1))
    sc = np.empty((2, alphabet - 1))
    with arb_precision(_check_prec(prec)):
        th = arb(float(theta))
        omega = 2 * arb.pi() / alphabet
        code_balls = [(c * omega).sin_cos() for c in range(1, alphabet)]
        distance_balls = [(d * th).sin_cos() for d in range(1, max_d + 1)]
    sc[:], cc[:] = (np.stack(arb_ends_many([b[i] for b in code_balls])) for i in (0, 1))
    if max_d:
        sd[:], cd[:] = (np.stack(arb_ends_many([b[i] for b in distance_balls])) for i in (0, 1))
    p1 = _mul(cc[0][None, :], cc[1][None, :], cd[0][:, None], cd[1][:, None])
    p2 = _mul(sc[0][None, :], sc[1][None, :], sd[0][:, None], sd[1][:, None])
    o_lo, o_hi = _add(*p1, *p2)
    s = (float(cc[0].max()), float(cc[1].max()))
    return (cd[0], cd[1]), (np.clip(o_lo, -1, 1).max(1), np.clip(o_hi, -1, 1).max(1)), s


def prefix_top2(values: np.ndarray, largest: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(top, index)``, each ``[N, 2]``: the two largest (or smallest) of ``values[0 .. r]`` and their
    indices, per row ``r`` (first occurrence wins ties; missing entries are ``-/+inf`` with index -1).
    Comparisons only, so exact.

    Shapes: values [N]; return [N, 2] (top, index)
    """
    sign = 1.0 if largest else -1.0
    vals = (sign * np.asarray(values, dtype=np.float64)).tolist()
    top = np.empty((len(vals), 2))
    idx = np.empty((len(vals), 2), dtype=np.int64)
    v1 = v2 = -math.inf
    i1 = i2 = -1
    for r, v in enumerate(vals):
        if v > v1:
            v1, v2, i1, i2 = v, v1, r, i1
        elif v > v2:
            v2, i2 = v, r
        top[r, 0], top[r, 1], idx[r, 0], idx[r, 1] = v1, v2, i1, i2
    return sign * top, idx


def prefix_min_interval(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Enclosure of ``min(x_1 .. x_M)`` for every ``M`` given enclosures of each ``x_i``.

    Shapes: lo [M]; hi [M]; return [M] (lo, hi)
    """
    return np.minimum.accumulate(lo), np.minimum.accumulate(hi)


def retrieval_margin_interval(
    t: tuple[np.ndarray, np.ndarray], o: tuple[np.ndarray, np.ndarray], s: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Enclosure ``(lo, hi)`` of ``margin_inf(n)`` for ``n = 2 .. D + 1`` from the term enclosures, and
    the target distance ``d_t`` minimising the upper end (a witness), per row.

    For each ``n`` and ``d_t``: ``lo = lo T(d_t) - max(hi S, max_{d != d_t} hi O(d))`` and
    ``hi = hi T(d_t) - max(lo S, max_{d != d_t} lo O(d))``; the ``max`` excluding ``d_t`` is read from
    prefix top-2 lists, and the minimum over ``d_t <= n - 1`` from prefix bottom-2 lists.

    Shapes: t [D] (lo, hi); o [D] (lo, hi); return [D] (lo, hi, d_t)
    """
    t_lo, t_hi = t
    o_lo, o_hi = o
    rows = t_lo.size
    out = []
    witness = np.zeros(rows, dtype=np.int64)
    for t_end, o_end, s_end, side in ((t_lo, o_hi, s[1], "lo"), (t_hi, o_lo, s[0], "hi")):
        top, idx = prefix_top2(o_end)  # row r: the two largest O over d = 1 .. r + 1
        first = np.maximum(top[:, 0], s_end)
        second = np.maximum(np.where(idx[:, 1] >= 0, top[:, 1], -np.inf), s_end)
        # margin over d_t != argmax: T(d_t) - first; at d_t = argmax: T(argmax) - second
        bot, bidx = prefix_top2(t_end, largest=False)
        excl = np.where(bidx[:, 0] != idx[:, 0], bot[:, 0], np.where(bidx[:, 1] >= 0, bot[:, 1], np.inf))
        at_arg = t_end[idx[:, 0]]
        if side == "lo":
            a = _down(excl - first)
            b = _down(at_arg - second)
        else:
            a = _up(excl - first)
            b = _up(at_arg - second)
            witness = (
                np.where(a <= b, np.where(bidx[:, 0] != idx[:, 0], bidx[:, 0], bidx[:, 1]), idx[:, 0]) + 1
            )
        out.append(np.minimum(a, b))
    return out[0], out[1], witness


# ---------------------------------------------------------------------------------------- judging


@dataclass
class CertifiedComparison:
    """Row-by-row certified verdicts of ``measured(n) <= bound(n)`` (arrays indexed by ``n - 2``).

    Shapes: n [N - 1]; measured_lo [N - 1]; measured_hi [N - 1]; bound_lo [N - 1]; bound_hi [N - 1];
        status [N - 1]
    """

    name: str
    reading: str
    n: np.ndarray
    measured_lo: np.ndarray
    measured_hi: np.ndarray
    bound_lo: np.ndarray
    bound_hi: np.ndarray
    status: np.ndarray
    seconds: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)

    def count(self, status: str) -> int:
        return int((self.status == status).sum())

    @property
    def violated_n(self) -> np.ndarray:
        return self.n[self.status == "violated"]

    @property
    def undecided_n(self) -> np.ndarray:
        return self.n[self.status == "undecided"]

    def verdict(self) -> str:
        """``violated`` if any row is; else ``unresolvable`` if any is undecided; else ``holds``."""
        if self.violated_n.size:
            return "violated"
        return "unresolvable" if self.undecided_n.size else "holds"

    def max_width(self) -> float:
        """Widest enclosure of ``measured`` or ``bound``, relative to its magnitude."""
        w1 = (self.measured_hi - self.measured_lo) / np.maximum(np.abs(self.measured_hi), 1e-300)
        w2 = (self.bound_hi - self.bound_lo) / np.maximum(np.abs(self.bound_hi), 1e-300)
        return float(max(w1.max(), w2.max()))

    def summary(self) -> dict[str, Any]:
        v = self.violated_n
        return {
            "name": self.name,
            "reading": self.reading,
            "verdict": self.verdict(),
            "certified": True,
            "rows": {s: self.count(s) for s in STATUSES},
            "n_range": [int(self.n[0]), int(self.n[-1])],
            "first_violation_n": int(v[0]) if v.size else None,
            "violated_rows": int(v.size),
            "undecided_n": self.undecided_n[:20].tolist(),
            "max_relative_width": self.max_width(),
            "seconds": round(self.seconds, 3),
            **self.detail,
        }


Identity = Callable[[int], bool]
"""``identity(n)``: whether a witness input at length ``n`` scores exactly the bound (sympy)."""
Refine = Callable[[int], tuple[tuple[float, float], tuple[float, float]]]
"""``refine(n) -> ((m_lo, m_hi), (b_lo, b_hi))``: the row re-enclosed at higher precision."""


def judge(
    name: str,
    reading: str,
    n: np.ndarray,
    measured: tuple[np.ndarray, np.ndarray],
    bound: tuple[np.ndarray, np.ndarray],
    identity: Identity | None = None,
    refine: Refine | None = None,
    max_refine: int = 32,
) -> CertifiedComparison:
    """Certified statuses of ``measured <= bound`` (see the module docstring).

    Shapes: n [rows]; measured [rows] (lo, hi); bound [rows] (lo, hi)
    """
    m_lo, m_hi = (np.asarray(x, dtype=np.float64) for x in measured)
    b_lo, b_hi = (np.asarray(x, dtype=np.float64) for x in bound)
    status = np.where(m_hi <= b_lo, "holds", np.where(m_lo > b_hi, "violated", "undecided")).astype(object)
    refined = identities = 0
    for r in np.nonzero(status == "undecided")[0]:
        if identity is not None and identity(int(n[r])):
            status[r] = "holds-equal"
            identities += 1
            continue
        if refine is None or refined >= max_refine:
            continue
        (lo, hi), (blo, bhi) = refine(int(n[r]))
        refined += 1
        m_lo[r], m_hi[r], b_lo[r], b_hi[r] = lo, hi, blo, bhi
        status[r] = "holds" if hi <= blo else ("violated" if lo > bhi else "undecided")
    return CertifiedComparison(
        name,
        reading,
        np.asarray(n),
        m_lo,
        m_hi,
        b_lo,
        b_hi,
        status.astype(str),
        detail={"refined_rows": refined, "identity_rows": identities},
    )


_IDENTITY_CACHE: dict[str, bool] = {}


def exactly_equal(a: sp.Expr, b: sp.Expr) -> bool:
    """Whether sympy proves ``a == b`` (parameters must already be exact rationals); cached."""
    import sympy as sp

    key = sp.srepr(a) + "|" + sp.srepr(b)
    if key not in _IDENTITY_CACHE:
        diff = sp.simplify(sp.expand_trig(a - b))
        _IDENTITY_CACHE[key] = bool(diff == 0)
    return _IDENTITY_CACHE[key]


# ----------------------------------------------------------------------------------- index checks


@dataclass
class CertifiedCheck:
    """Certified comparisons of one construction against one bound, per reading."""

    construction: str
    params: dict[str, Any]
    bound: str
    comparisons: dict[str, CertifiedComparison]
    seconds: float

    def verdicts(self) -> dict[str, str]:
        return {k: c.verdict() for k, c in self.comparisons.items()}

    def summary(self) -> dict[str, Any]:
        return {
            "construction": self.construction,
            "params": self.params,
            "bound": self.bound,
            "seconds": round(self.seconds, 3),
            "readings": {k: c.summary() for k, c in self.comparisons.items()},
        }


def _index_bound_enclosure(theta: float, n: np.ndarray, prec: int) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Enclosure of ``min(2 sin(theta/2)^2, pi^2 / (2 n^2))`` and of its first term: ``flint.arb`` balls
    at ``prec`` bits for ``2 sin(theta/2)^2`` and ``pi^2 / 2`` (:func:`arb_ends`), then outward-rounded
    float64 division by the exact ``n^2``."""
    with arb_precision(prec):
        s = (arb(float(theta)) / 2).sin()
        t1 = arb_ends(2 * (s * s))
        t1 = (max(t1[0], 0.0), t1[1])  # a square: >= 0
        pi = arb.pi()
        pi2 = arb_ends(pi * pi / 2)
    nf = n.astype(np.float64)  # exact: n < 2^53
    n2 = nf**2  # exact below 2^26.5; otherwise rounded, so widened by an ulp each way
    inexact = nf >= 2.0**26
    n2_lo = np.where(inexact, _down(n2), n2)
    n2_hi = np.where(inexact, _up(n2), n2)
    t2_lo, t2_hi = _down(pi2[0] / n2_hi), _up(pi2[1] / n2_lo)
    return np.minimum(t1[0], t2_lo), np.minimum(t1[1], t2_hi), (t1, (t2_lo, t2_hi))


INDEX_TERMS = ("min", "one-minus-cos", "pi2-over-2n2")
"""Which side of Theorem 3.2 (Index) to certify against: the reported ``min`` of the two terms, or
either term alone."""


def _index_term(theta: float, n: np.ndarray, prec: int, term: str) -> tuple[np.ndarray, np.ndarray, tuple]:
    b_lo, b_hi, (t1, t2) = _index_bound_enclosure(theta, n, prec)
    if term == "one-minus-cos":
        return np.full(n.size, t1[0]), np.full(n.size, t1[1]), (t1, t2)
    if term == "pi2-over-2n2":
        return t2[0], t2[1], (t1, t2)
    return b_lo, b_hi, (t1, t2)


def certified_index(
    theta: float,
    max_n: int,
    prec: int = 80,
    readings: Sequence[str] = ("margin_inf", "gap_sup"),
    refine_prec: int = 256,
    term: str = "min",
) -> CertifiedCheck:
    """Certify [A]'s Theorem 3.2 for one-plane T_Index, ``Delta(n) <= min(1 - cos theta, pi^2/(2n^2))``
    (or one ``term`` of it, :data:`INDEX_TERMS`), for every ``n = 2 .. max_n`` and each reading of
    ``Delta`` (``margin_inf``/``gap_inf``, ``gap_sup``)."""
    start = time.perf_counter()
    max_n = _check_n(max_n)
    bad = sorted(set(readings) - {"margin_inf", "gap_inf", "gap_sup"})
    if bad:
        raise InputError(f"readings {bad} unknown; accepted: margin_inf, gap_inf, gap_sup")
    if term not in INDEX_TERMS:
        raise InputError(f"term={term!r}; accepted: {INDEX_TERMS}")
    n = np.arange(2, max_n + 1)
    g_lo, g_hi = enclose_index_gaps([theta], [1.0], max_n - 1, prec)
    p_lo, p_hi = prefix_min_interval(g_lo, g_hi)
    b_lo, b_hi, (t1, t2) = _index_term(theta, n, prec, term)
    from ropeproof.verify.measure.exact import _index_sweep

    def identity(n_: int) -> bool:
        # Delta <= g(1) (m = 1 is a competitor in every reading) and g(1) = 2 sin(theta/2)^2 is term 1,
        # 1 - cos(theta), identically (sympy's proof, stored); the bound is term 1 when only term 1 is
        # used, or when pi^2/(2n^2) >= term 1 (certified)
        if term == "pi2-over-2n2":
            return False
        if term == "min" and not bool(t2[0][n_ - 2] >= t1[1]):
            return False
        return _index_sweep.INDEX_TERM_IDENTITY.proved

    def refine_for(last_m: Callable[[int], int]) -> Refine:
        def refine(n_: int) -> tuple[tuple[float, float], tuple[float, float]]:
            lo, hi = enclose_index_gaps([theta], [1.0], last_m(n_), refine_prec)
            b = _index_term(theta, np.array([n_]), refine_prec, term)
            return (float(lo.min()), float(hi.min())), (float(b[0][0]), float(b[1][0]))

        return refine

    comparisons = {}
    for q in readings:
        if q == "gap_sup":
            half = (n - 1 + 1) // 2
            meas = (p_lo[half - 1], p_hi[half - 1])
            refine = refine_for(lambda n_: -(-(n_ - 1) // 2))
        else:
            meas = (p_lo[n - 2], p_hi[n - 2])
            refine = refine_for(lambda n_: n_ - 1)
        t0 = time.perf_counter()
        cmp = judge("index-thm3.2", q, n, meas, (b_lo, b_hi), identity, refine)
        cmp.seconds = time.perf_counter() - t0
        comparisons[q] = cmp
    bound = {
        "min": "min(1 - cos(theta), pi^2/(2 n^2))",
        "one-minus-cos": "1 - cos(theta)",
        "pi2-over-2n2": "pi^2/(2 n^2)",
    }[term]
    return CertifiedCheck(
        "index",
        {"theta": theta, "max_n": max_n, "prec": prec, "term": term},
        f"Delta_Index(n) <= {bound}",
        comparisons,
        time.perf_counter() - start,
    )


def certified_dirichlet(
    freqs: Sequence[float], amps: Sequence[float] | None, max_n: int, prec: int = 80
) -> CertifiedCheck:
    """Certify Theorem D, ``margin_inf(n) <= 2 A sin(pi / max(2, Q_K(n-1)))^2``, for ``n = 2 .. max_n``,
    and ``gap_sup(n) <=`` the same with ``M = ceil((n-1)/2)``.

    ``g(m)`` is enclosed by :func:`enclose_index_gaps`; the bound ``2 A sin(pi / Q)^2`` is one
    ``flint.arb`` ball per distinct ``Q`` at ``prec`` bits (``A = sum_k a_k`` summed in Arb), rounded
    outward by :func:`arb_ends`."""
    from ropeproof.theory._dirichlet import dirichlet_q

    start = time.perf_counter()
    max_n = _check_n(max_n)
    f = [float(x) for x in freqs]
    a = [1.0] * len(f) if amps is None else [float(x) for x in amps]
    n = np.arange(2, max_n + 1)
    g_lo, g_hi = enclose_index_gaps(f, a, max_n - 1, prec)
    p_lo, p_hi = prefix_min_interval(g_lo, g_hi)
    k = len(f)
    comparisons = {}
    for q, ms in (("margin_inf", n - 1), ("gap_sup", (n - 1 + 1) // 2)):
        cache: dict[int, tuple[float, float]] = {}
        b_lo, b_hi = np.empty(n.size), np.empty(n.size)
        with arb_precision(prec):
            total = arb(0)
            for w in a:
                total += arb(w)
            for i, m in enumerate(ms.tolist()):
                qq = max(2, dirichlet_q(int(m), k))
                if qq not in cache:
                    s = (arb.pi() / qq).sin()
                    lo_, hi_ = arb_ends(2 * total * (s * s))
                    cache[qq] = (max(lo_, 0.0), hi_)  # A >= 0 times a square
                b_lo[i], b_hi[i] = cache[qq]
        meas = (p_lo[ms - 1], p_hi[ms - 1])
        comparisons[q] = judge("dirichlet", q, n, meas, (b_lo, b_hi))
    return CertifiedCheck(
        "index",
        {"freqs": f, "amps": a, "max_n": max_n, "prec": prec},
        "min_{m<=M} g(m) <= 2 A sin(pi / max(2, floor(M^(1/K))))^2",
        comparisons,
        time.perf_counter() - start,
    )


# ------------------------------------------------------------------------------- retrieval checks


def _retrieval_bound_enclosure(
    alphabet: int, theta: float, n: np.ndarray, prec: int
) -> tuple[np.ndarray, np.ndarray]:
    """Enclosure of ``1 - cos(omega - n theta) = 2 sin((omega - n theta)/2)^2`` for every ``n``: one
    ``flint.arb`` ball per ``n`` at ``prec`` bits (``omega = 2 pi / A`` from Arb's ``pi``, ``n theta``
    exact), rounded outward by :func:`arb_ends` (a negative lower end raised to 0: a square)."""
    lo, hi = np.empty(n.size), np.empty(n.size)
    with arb_precision(prec):
        th = arb(float(theta))
        omega = 2 * arb.pi() / alphabet
        for i, nn in enumerate(n.tolist()):
            s = ((omega - nn * th) / 2).sin()
            end_lo, end_hi = arb_ends(2 * (s * s))
            lo[i], hi[i] = max(end_lo, 0.0), end_hi
    return lo, hi


def certified_retrieval(
    alphabet: int, theta: float, max_n: int, prec: int = 80, refine_prec: int = 256
) -> CertifiedCheck:
    """Certify [A]'s Theorem 3.2 for T_Retrieval, ``Delta(n) <= 1 - cos(omega - n theta)``, reading
    ``Delta`` as ``margin_inf`` (closed form in the module docstring), for ``n = 2 .. max_n``."""
    start = time.perf_counter()
    max_n = _check_n(max_n)
    n = np.arange(2, max_n + 1)
    t, o, s = enclose_retrieval_terms(alphabet, theta, max_n - 1, prec)
    m_lo, m_hi, witness = retrieval_margin_interval(t, o, s)
    b_lo, b_hi = _retrieval_bound_enclosure(alphabet, theta, n, prec)
    import sympy as sp

    th = sp.Rational(float(theta))
    omega = 2 * sp.pi / alphabet

    competitors: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def strongest(n_: int, d_t: int) -> tuple[int, int]:
        """``(c, d)`` of the largest non-target logit at length ``n_`` (float64 choice; any choice is
        a valid witness, the identity itself is proved exactly)."""
        if not competitors:
            d = np.arange(0, max_n, dtype=np.float64)
            c = np.arange(1, alphabet, dtype=np.float64)
            vals = np.cos(c[None, :] * (2 * math.pi / alphabet) - d[:, None] * float(theta))
            best_c = vals.argmax(1) + 1
            top, idx = prefix_top2(vals.max(1))
            competitors.append((best_c, top, idx))
        best_c, _top, idx = competitors[0]
        d = int(idx[n_ - 1, 0]) if int(idx[n_ - 1, 0]) != d_t else int(idx[n_ - 1, 1])
        return int(best_c[d]), d

    frac = Fraction(float(theta))
    decided: dict[tuple[Fraction, int, Fraction, Fraction], bool] = {}

    def identity(n_: int) -> bool:
        d_t = int(witness[n_ - 2])
        c, d = strongest(n_, d_t)
        key = (d_t * frac, c, d * frac, n_ * frac)
        if key not in decided:
            witness_expr = sp.cos(d_t * th) - sp.cos(c * omega - d * th)
            decided[key] = exactly_equal(witness_expr, 1 - sp.cos(omega - n_ * th))
        return decided[key]

    def refine(n_: int) -> tuple[tuple[float, float], tuple[float, float]]:
        tt, oo, ss = enclose_retrieval_terms(alphabet, theta, n_ - 1, refine_prec)
        lo, hi, _ = retrieval_margin_interval(tt, oo, ss)
        blo, bhi = _retrieval_bound_enclosure(alphabet, theta, np.array([n_]), refine_prec)
        return (float(lo[-1]), float(hi[-1])), (float(blo[0]), float(bhi[0]))

    cmp = judge("retrieval-thm3.2", "margin_inf", n, (m_lo, m_hi), (b_lo, b_hi), identity, refine)
    cmp.seconds = time.perf_counter() - start
    return CertifiedCheck(
        "retrieval",
        {"alphabet": alphabet, "theta": theta, "max_n": max_n, "prec": prec},
        "Delta_Retrieval(n) <= 1 - cos(omega - n theta)",
        {"margin_inf": cmp},
        time.perf_counter() - start,
    )
