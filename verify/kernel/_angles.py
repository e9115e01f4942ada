"""The angle of an integer offset ``m`` at a frequency ``theta``: ``m * theta mod 2 pi``, accurately reduced.

This is the one place the toolkit turns positions or offsets into rotation angles: the RoPE tables of
:mod:`ropeproof.verify.kernel._rope` (so every head evaluated in torch), the exact sweeps and the
offset-logit tables all call :func:`offset_angles` (or :func:`offset_angles_with_error`).

Plain float64 ``m * theta`` carries an absolute error of ``u * m * theta`` (1e-10 rad at ``m = 10^6``,
``theta = 1``; 6 rad at ``theta = 1e12``), which swamps the ``1/n^2``-small margins a sweep must
resolve. Here ``theta`` is taken as the exact binary value of its float64 and reduced once, in mpmath
at ``exponent(theta) + 160`` bits (a local precision, :func:`mpmath.workprec`), to
``theta' = theta - 2 pi round(theta / 2 pi)`` in ``[-pi, pi]`` (so ``m theta = m theta' mod 2 pi``
exactly for integer ``m``). ``theta'`` is stored as three floats ``hi + mid + lo`` (``hi``, ``mid`` of
at most 26 significant bits, so ``m * hi`` and ``m * mid`` are exact products for ``|m| < 2^26``), and
``2 pi`` as three Cody-Waite pieces ``P1 + P2 + P3`` (``P1``, ``P2`` of 26 bits, so ``k * P1``,
``k * P2`` are exact for ``|k| < 2^26``). Then

    r = (((m hi - k P1) - k P2) + m mid) + (m lo - k P3),    k = round((m hi + m mid) / 2 pi).

Larger offsets (any int64) are split exactly as ``m = m_2 2^52 + m_1 2^26 + m_0`` with
``0 <= m_0, m_1 < 2^26`` and ``|m_2| < 2^11``; each piece is reduced as above at the frequency
``2^(26 i) theta`` (reduced in mpmath from the exact product), and the three angles are summed (so
``|r| <= 3 pi + 1e-15`` there). Offsets below ``2^26`` never take that path, so their angles are the
single reduction above, bit for bit.

:func:`offset_angles_with_error` also returns a bound on ``|r - (m theta mod 2 pi)|``: ``u = 2^-53``
times the sum of the magnitudes of every rounded intermediate, plus ``|k|`` times the (mpmath-computed)
error of ``P1 + P2 + P3`` and ``|m|`` times that of ``hi + mid + lo`` (per piece, plus the two roundings
of the sum). It is below ``2e-15`` absolute for ``|m| < 2^26`` and ``u |r|`` relative when ``k = 0``.

Both functions accept numpy arrays and torch tensors (integer, or floating with integer values) and
return the same kind, float64, on the same device; ``theta`` is one float, or a sequence of floats, in
which case the result gains a last axis, one entry per frequency (the layout of a rotation table).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

import mpmath
import numpy as np

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import real
from ropeproof.machinery._values import Angle

if TYPE_CHECKING:
    import torch

UNIT_ROUNDOFF = 2.0**-53
"""``u`` of float64 (round to nearest): every correctly rounded operation errs by at most ``u |x|``."""
MAX_MULTIPLE = 2**26
"""Offsets with ``|m| < 2^26`` are reduced in one step (the exact-product condition); larger ones are
split into 26-bit pieces first."""
PIECE_BITS = 26
"""The width of the pieces a large offset is split into."""
INV_TWO_PI = 1.0 / (2 * math.pi)

ANGLE_ERROR_CAP = 1e-14
"""No reduced angle errs by more than this (absolute), whatever ``m`` (int64) and ``theta``."""
ANGLE_ERROR_ULPS = 8
"""A reduced angle errs by at most ``ANGLE_ERROR_ULPS * u * |m theta|`` (when that is below the cap)."""

Angles = TypeVar("Angles", np.ndarray, "torch.Tensor")


def _is_tensor(x: object) -> bool:
    """Whether ``x`` is a torch tensor (torch is never imported here: a tensor means it is loaded)."""
    torch_module = sys.modules.get("torch")
    return torch_module is not None and isinstance(x, torch_module.Tensor)


def _torch() -> Any:
    return sys.modules["torch"]


def angle_error_bound(max_angle: float) -> float:
    """A bound on the error of :func:`offset_angles` for any ``|m theta| <= max_angle``:
    ``min(8 u max_angle, 1e-14)`` (``tests/verify/kernel/test_angles.py`` checks the error bounds
    :func:`offset_angles_with_error` reports against it, and those against mpmath)."""
    return min(ANGLE_ERROR_ULPS * UNIT_ROUNDOFF * abs(max_angle), ANGLE_ERROR_CAP)


def _split26(x: mpmath.mpf) -> tuple[float, mpmath.mpf]:
    """``x`` rounded to 26 significant bits (a float64) and the exact remainder."""
    with mpmath.workprec(26):
        head = +x
    return float(head), x - head


@dataclass(frozen=True)
class ReducedFrequency:
    """``theta 2^shift mod 2 pi`` as ``hi + mid + lo`` (``hi``, ``mid``: 26 significant bits), with
    ``error`` bounding ``|(theta 2^shift mod 2 pi) - (hi + mid + lo)|`` (taken in ``[-pi, pi]``)."""

    theta: float
    hi: float
    mid: float
    lo: float
    error: float
    shift: int = 0

    @property
    def value(self) -> float:
        """``theta 2^shift mod 2 pi`` rounded to float64."""
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
def reduce_frequency(theta: float, shift: int = 0) -> ReducedFrequency:
    """``theta 2^shift`` (``theta``'s exact float64 value, scaled exactly) reduced mod ``2 pi`` into
    ``[-pi, pi]``, in mpmath at a local precision (never the global ``mpmath.mp``)."""
    t = real(theta, "theta")
    exponent = max(0, math.frexp(t)[1] + shift)
    prec = exponent + 160
    with mpmath.workprec(prec):
        x = mpmath.ldexp(mpmath.mpf(t), shift)  # exact: mpmath holds any float64 and its 2^shift multiple
        two_pi = 2 * mpmath.pi
        k = mpmath.nint(x / two_pi)
        r = x - k * two_pi  # |error| <= |k| 2pi 2^-prec ~ 2^(exponent - prec + 3)
        hi, rest = _split26(r)
        mid, rest = _split26(rest)
        lo = float(rest)
        # k = 0: r is x itself, exact (so a small theta's pieces carry no absolute slop)
        err = abs(rest - lo) + (mpmath.ldexp(1, exponent - prec + 4) if k != 0 else 0)
        return ReducedFrequency(t, hi, mid, lo, float(err) * 2, shift)


def _frequencies(theta: float | Sequence[float], shift: int) -> tuple[object, object, object, object, bool]:
    """``(hi, mid, lo, error)`` of ``theta`` (scalars, or float64 numpy arrays for a sequence) and
    whether ``theta`` was a sequence."""
    if isinstance(theta, int | float | np.floating | np.integer) and not isinstance(theta, bool):
        red = reduce_frequency(theta if isinstance(theta, Angle) else float(theta), shift)
        return red.hi, red.mid, red.lo, red.error, False
    if isinstance(theta, str | bytes) or not isinstance(theta, Sequence | np.ndarray):
        raise InputError(f"theta must be a real number or a sequence of them, got {type(theta).__name__}")
    return (*_piece_arrays(tuple(float(real(t, "theta")) for t in theta), shift), True)


@lru_cache(maxsize=256)
def _piece_arrays(thetas: tuple[float, ...], shift: int) -> tuple[np.ndarray, ...]:
    """``hi``, ``mid``, ``lo`` and ``error`` of each of ``thetas`` (scaled by ``2^shift``), as arrays."""
    reds = [reduce_frequency(t, shift) for t in thetas]
    return tuple(
        np.array([getattr(r, f) for r in reds], dtype=np.float64) for f in ("hi", "mid", "lo", "error")
    )


def _as_float_offsets(m: Angles) -> tuple[Angles, Angles | None]:
    """``m`` as float64 (same kind and device), and as int64 when some ``|m| >= 2^26`` (else ``None``);
    :class:`InputError` unless every entry is a finite integer."""
    if _is_tensor(m):
        torch = _torch()
        if m.dtype.is_complex or m.dtype == torch.bool:
            raise InputError(f"offsets m must be integers, got dtype {m.dtype}")
        if m.dtype in (torch.uint64, torch.uint32):
            raise InputError(f"offsets m must be a signed integer or floating tensor, got dtype {m.dtype}")
        if not m.dtype.is_floating_point:
            if m.numel() and bool((m.to(torch.int64) == -(2**63)).any()):
                raise InputError("offsets m must satisfy |m| < 2^63")
            big = m.numel() and bool(((m >= MAX_MULTIPLE) | (m <= -MAX_MULTIPLE)).any())
            return m.to(torch.float64), (m.to(torch.int64) if big else None)
        f = m.to(torch.float64)
        if f.numel() and not bool(torch.isfinite(f).all()):
            raise InputError("offsets m must be finite integers")
        if f.numel() and not bool((f == torch.round(f)).all()):
            raise InputError("offsets m must be integers")
        if f.numel() and bool((f.abs() >= 2.0**63).any()):
            raise InputError(f"offsets m must satisfy |m| < 2^63, got {float(f.abs().max()):.17g}")
        big = f.numel() and bool((f.abs() >= MAX_MULTIPLE).any())
        return f, (f.to(torch.int64) if big else None)
    arr = np.asarray(m)
    if arr.dtype.kind in "iu":
        if arr.size and (int(arr.max()) >= 2**63 or int(arr.min()) <= -(2**63)):
            raise InputError("offsets m must satisfy |m| < 2^63")
        ints = arr.astype(np.int64)
        big = arr.size and bool(np.any((ints >= MAX_MULTIPLE) | (ints <= -MAX_MULTIPLE)))
        return ints.astype(np.float64), (ints if big else None)
    if arr.dtype.kind not in "f":
        raise InputError(f"offsets m must be integers, got dtype {arr.dtype}")
    f = arr.astype(np.float64)
    if f.size and not np.all(np.isfinite(f)):
        raise InputError("offsets m must be finite integers")
    if f.size and np.any(f != np.round(f)):
        raise InputError("offsets m must be integers")
    if f.size and np.abs(f).max() >= 2.0**63:
        raise InputError(f"offsets m must satisfy |m| < 2^63, got {np.abs(f).max():.17g}")
    big = f.size and bool(np.abs(f).max() >= MAX_MULTIPLE)
    return f, (f.astype(np.int64) if big else None)


def _to_float(x: Angles) -> Angles:
    return x.to(_torch().float64) if _is_tensor(x) else np.asarray(x).astype(np.float64)


def theta_is_sequence(theta: object) -> bool:
    """Whether ``theta`` is a sequence of frequencies (the result then gains a last axis)."""
    return not isinstance(theta, int | float | np.floating | np.integer)


def _round(x: Angles) -> Angles:
    return _torch().round(x) if _is_tensor(x) else np.round(x)


def _on(values: object, like: Angles) -> object:
    """Per-frequency arrays as tensors on ``like``'s device (scalars unchanged)."""
    if _is_tensor(like) and isinstance(values, np.ndarray):
        return _torch().as_tensor(values, device=like.device)
    return values


def _one_step(
    m: Angles, theta: float | Sequence[float], shift: int, with_error: bool
) -> tuple[Angles, object]:
    """Cody-Waite reduction of ``m * theta 2^shift``, float64 integers ``|m| < 2^26`` (module docstring)."""
    hi, mid, lo, error, many = _frequencies(theta, shift)
    hi, mid, lo = _on(hi, m), _on(mid, m), _on(lo, m)
    if many:
        m = m[..., None]
    p_hi = m * hi  # exact
    p_mid = m * mid  # exact
    k = _round((p_hi + p_mid) * INV_TWO_PI)
    a = p_hi - k * P1  # k * P1 exact
    b = a - k * P2  # k * P2 exact
    c = b + p_mid
    p_lo = m * lo
    q3 = k * P3
    d = p_lo - q3
    r = c + d
    if not with_error:
        return r, None
    rounded = abs(a) + abs(b) + abs(c) + abs(p_lo) + abs(q3) + abs(d) + abs(r)
    return r, UNIT_ROUNDOFF * rounded + abs(k) * P_ERROR + abs(m) * _on(error, m)


def _reduce(m: Angles, theta: float | Sequence[float], with_error: bool) -> tuple[Angles, Angles | None]:
    f, ints = _as_float_offsets(m)
    if ints is None:
        r, err = _one_step(f, theta, 0, with_error)
    else:  # |m| = m2 2^52 + m1 2^26 + m0: three exact pieces of at most 26 bits, all >= 0
        negative = ints < 0
        ints = abs(ints)
        mask = (1 << PIECE_BITS) - 1
        pieces = [ints & mask, (ints >> PIECE_BITS) & mask, ints >> (2 * PIECE_BITS)]
        parts = [_one_step(_to_float(p), theta, PIECE_BITS * i, with_error) for i, p in enumerate(pieces)]
        s = parts[2][0] + parts[1][0]
        r = s + parts[0][0]
        sign = _to_float(1 - 2 * negative.to(_torch().int64) if _is_tensor(negative) else 1 - 2 * negative)
        if theta_is_sequence(theta):
            sign = sign[..., None]
        r = r * sign  # angle(-m) = -angle(m), exactly
        err = None
        if with_error:
            err = parts[0][1] + parts[1][1] + parts[2][1] + UNIT_ROUNDOFF * (abs(s) + abs(r))
    if not with_error:
        return r, None
    # the bound itself is evaluated in float64: inflate by a few ulps of itself and the smallest subnormal
    return r, err * (1 + 16 * UNIT_ROUNDOFF) + 5e-324


def offset_error_cap(max_m: int, theta: float) -> float:
    """An upper bound on every error bound :func:`offset_angles_with_error` reports for an integer offset
    ``0 <= m <= max_m < 2^26`` at the one frequency ``theta`` (the one-step reduction; ``InputError``
    beyond), without evaluating one: the same sum, ``u`` times the rounded intermediates plus
    ``|k| P_ERROR`` plus ``|m|`` times ``theta``'s piece error, with every term replaced by a bound that
    holds at every such ``m``, then doubled (more than every rounding of the reported bound's own
    float64 evaluation, about 30 operations of relative error ``u`` each).

    With ``T = max_m (|hi| + |mid|)`` (bounding ``|m hi + m mid|``; the products are exact), ``k`` is
    within ``1/2 + 2.1 u T / (2 pi)`` of ``T / (2 pi)`` in size, and ``|m hi + m mid - 2 pi k| <=
    pi + 3 u T``; the intermediates then obey ``|a| <= (pi + 4 u T + max_m |mid| + K (P2 + P3 +
    P_ERROR)) (1 + u)``, ``|b| <= (|a| + K P2)(1 + u)``, ``|c| <= (|b| + max_m |mid|)(1 + u)``,
    ``|m lo| <= max_m |lo| (1 + u)``, ``|k P3| <= K P3 (1 + u)``, ``|d| <= (|m lo| + |k P3|)(1 + u)``,
    ``|r| <= (|c| + |d|)(1 + u)`` (``K`` bounding ``|k|``). Where ``T (1 + 4 u) / (2 pi) < 1/2``,
    ``k = 0`` at every offset and ``a = m hi`` exactly (``|a| <= max_m |hi|``).
    ``tests/verify/kernel/test_angles.py`` compares it with the reported bounds."""
    max_m = int(max_m)
    if not 0 <= max_m < MAX_MULTIPLE:
        raise InputError(f"max_m={max_m}: offset_error_cap covers 0 <= m < 2^26 (the one-step reduction)")
    red = reduce_frequency(theta if isinstance(theta, Angle) else float(theta))
    u, big_m = UNIT_ROUNDOFF, float(max_m)
    t = big_m * (abs(red.hi) + abs(red.mid)) * (1 + 2 * u)
    if t / (2 * math.pi) * (1 + 4 * u) < 0.5:  # k = 0 at every m: a = m hi, exactly
        k, a = 0.0, big_m * abs(red.hi)
    else:
        k = t / (2 * math.pi) * (1 + 4 * u) + 1
        a = (math.pi + 4 * u * t + big_m * abs(red.mid) + k * (abs(P2) + abs(P3) + P_ERROR)) * (1 + u)
    b = (a + k * abs(P2)) * (1 + u)
    c = (b + big_m * abs(red.mid)) * (1 + u)
    p_lo = big_m * abs(red.lo) * (1 + u)
    q3 = k * abs(P3) * (1 + u)
    d = (p_lo + q3) * (1 + u)
    r = (c + d) * (1 + u)
    return 2 * (u * (a + b + c + p_lo + q3 + d + r) + k * P_ERROR + big_m * red.error) + 2 * 5e-324


def offset_angles_with_error(m: Angles, theta: float | Sequence[float]) -> tuple[Angles, Angles]:
    """``(r, err)``: ``r = m * theta`` reduced mod ``2 pi`` (into ``[-pi, pi]`` up to ``1e-15`` for
    ``|m| < 2^26``, into ``[-3 pi, 3 pi]`` beyond) and a bound ``err`` on ``|r - (m theta - 2 pi k)|``
    (exact ``theta`` and ``pi``) for every integer ``m`` of int64 range and any finite ``theta``.

    Shapes: m [...] (any shape); theta scalar or [K]; return.0 [...] or [..., K]; return.1 likewise
    """
    r, err = _reduce(m, theta, True)
    assert err is not None
    return r, err


def offset_angles(m: Angles, theta: float | Sequence[float]) -> Angles:
    """The angle of integer offset(s) ``m`` at frequency ``theta``: ``m * theta`` reduced mod ``2 pi``
    (absolute error below ``2e-15`` for ``|m| < 2^26``, below ``1e-14`` for any int64 ``m``; see
    :func:`offset_angles_with_error`). The toolkit's one way of forming a rotation angle.

    Shapes: m [...] (any shape); theta scalar or [K]; return [...] (or [..., K] for a sequence of theta)
    """
    return _reduce(m, theta, False)[0]
