"""Accurate angle reduction: ``m * theta mod 2 pi`` for integer ``|m| < 2^26`` and any finite ``theta``.

Plain float64 ``m * theta`` carries an absolute error of ``u * m * theta`` (1e-10 rad at ``m = 10^6``,
``theta = 1``; 6 rad at ``theta = 1e12``), which swamps the ``1/n^2``-small margins a sweep must
resolve. Here ``theta`` is taken as the exact binary value of its float64 and reduced once, in mpmath
at ``exponent(theta) + 160`` bits, to ``theta' = theta - 2 pi round(theta / 2 pi)`` in ``[-pi, pi]``
(so ``m theta = m theta' mod 2 pi`` exactly for integer ``m``). ``theta'`` is stored as three floats
``hi + mid + lo`` (``hi``, ``mid`` of at most 26 significant bits, so ``m * hi`` and ``m * mid`` are
exact products for ``|m| < 2^26``), and ``2 pi`` as three Cody-Waite pieces ``P1 + P2 + P3`` (``P1``,
``P2`` of 26 bits, so ``k * P1``, ``k * P2`` are exact for ``|k| < 2^26``). Then

    r = (((m hi - k P1) - k P2) + m mid) + (m lo - k P3),    k = round((m hi + m mid) / 2 pi).

:func:`reduced_angles_with_error` also returns a bound on ``|r - (m theta mod 2 pi)|``: ``u = 2^-53``
times the sum of the magnitudes of every rounded intermediate, plus ``|k|`` times the (mpmath-computed)
error of ``P1 + P2 + P3`` and ``|m|`` times that of ``hi + mid + lo``. It is about ``1e-16`` absolute
at worst and ``u |r|`` relative when ``k = 0`` (small ``m theta``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import mpmath
import numpy as np

from ropeproof.theory.errors import InputError
from ropeproof.theory.validate import real

UNIT_ROUNDOFF = 2.0**-53
"""``u`` of float64 (round to nearest): every correctly rounded operation errs by at most ``u |x|``."""
MAX_MULTIPLE = 2**26
"""Offsets ``m`` must satisfy ``|m| < 2^26`` (the exact-product condition)."""


def _split26(x: mpmath.mpf) -> tuple[float, mpmath.mpf]:
    """``x`` rounded to 26 significant bits (a float64) and the exact remainder."""
    with mpmath.workprec(26):
        head = +x
    return float(head), x - head


@dataclass(frozen=True)
class ReducedFrequency:
    """``theta mod 2 pi`` as ``hi + mid + lo`` (``hi``, ``mid``: 26 significant bits), with ``error``
    bounding ``|(theta mod 2 pi) - (hi + mid + lo)|`` (``theta mod 2 pi`` taken in ``[-pi, pi]``)."""

    theta: float
    hi: float
    mid: float
    lo: float
    error: float

    @property
    def value(self) -> float:
        """``theta mod 2 pi`` rounded to float64."""
        return self.hi + self.mid + self.lo


def _two_pi_pieces() -> tuple[float, float, float, float]:
    with mpmath.workprec(400):
        two_pi = 2 * mpmath.pi
        p1, rest = _split26(two_pi)
        p2, rest = _split26(rest)
        p3 = float(rest)
        err = abs(rest - p3)
        return p1, p2, p3, float(err * 2)  # doubled: room for the 400-bit rounding of 2 pi


P1, P2, P3, P_ERROR = _two_pi_pieces()
"""``2 pi = P1 + P2 + P3`` up to ``P_ERROR`` (``P1``, ``P2`` of 26 bits, ``P3`` a float64)."""


@lru_cache(maxsize=4096)
def reduce_frequency(theta: float) -> ReducedFrequency:
    """``theta`` (its exact float64 value) reduced mod ``2 pi`` into ``[-pi, pi]``, in mpmath."""
    t = real(theta, "theta")
    x = mpmath.mpf(t)  # exact: mpmath holds any float64 exactly
    exponent = max(0, math.frexp(t)[1])
    prec = exponent + 160
    with mpmath.workprec(prec):
        two_pi = 2 * mpmath.pi
        k = mpmath.nint(x / two_pi)
        r = x - k * two_pi  # |error| <= |k| 2pi 2^-prec ~ 2^(exponent - prec + 3)
        hi, rest = _split26(r)
        mid, rest = _split26(rest)
        lo = float(rest)
        err = abs(rest - lo) + mpmath.ldexp(1, exponent - prec + 4)
    return ReducedFrequency(t, hi, mid, lo, float(err) * 2)


def _as_multiples(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    if m.size and not np.all(np.isfinite(m)):
        raise InputError("offsets m must be finite integers")
    if m.size and np.abs(m).max() >= MAX_MULTIPLE:
        raise InputError(f"offsets m must satisfy |m| < 2^26 = {MAX_MULTIPLE}; got {np.abs(m).max():.0f}")
    if m.size and np.any(m != np.round(m)):
        raise InputError("offsets m must be integers")
    return m


def _reduce(m: np.ndarray, theta: float, with_error: bool) -> tuple[np.ndarray, np.ndarray | None]:
    m = _as_multiples(m)
    red = reduce_frequency(theta)
    p_hi = m * red.hi  # exact
    p_mid = m * red.mid  # exact
    k = np.round((p_hi + p_mid) * (1.0 / (2 * math.pi)))
    a = p_hi - k * P1  # k * P1 exact
    b = a - k * P2  # k * P2 exact
    c = b + p_mid
    p_lo = m * red.lo
    q3 = k * P3
    d = p_lo - q3
    r = c + d
    if not with_error:
        return r, None
    rounded = np.abs(a) + np.abs(b) + np.abs(c) + np.abs(p_lo) + np.abs(q3) + np.abs(d) + np.abs(r)
    err = UNIT_ROUNDOFF * rounded + np.abs(k) * P_ERROR + np.abs(m) * red.error
    # the bound itself is evaluated in float64: inflate by a few ulps of itself and the smallest subnormal
    return r, err * (1 + 16 * UNIT_ROUNDOFF) + 5e-324


def reduced_angles_with_error(m: np.ndarray, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """``(r, err)``: ``r = m * theta`` reduced to about ``[-pi, pi]`` and a bound ``err`` on
    ``|r - (m theta - 2 pi k)|`` (exact ``theta`` and ``pi``) for every integer ``|m| < 2^26``.

    Shapes: m [...] (any shape); return.0 [...]; return.1 [...] (the shape of m)
    """
    r, err = _reduce(m, theta, True)
    assert err is not None
    return r, err


def reduced_angles(m: np.ndarray, theta: float) -> np.ndarray:
    """``m * theta`` reduced to about ``[-pi, pi]`` for integer ``|m| < 2^26`` and any finite ``theta``
    (absolute error below ``1e-15``, see :func:`reduced_angles_with_error`).

    Shapes: m [...] (any shape); return [...] (the shape of m)
    """
    return _reduce(m, theta, False)[0]
