"""RoFormer's relative upper bound: the mean modulus of a spectrum's partial sums, at every offset, with
error bounds, and the first offset where it stops decreasing (certified).

For a spectrum ``(theta_k, a_k)``, ``k = 0 .. K-1``, and an integer offset ``m``,

    S_j(m) = sum_{k < j} a_k e^{i m theta_k}   (j = 1 .. K),      f(m) = (1/K) sum_{j=1..K} |S_j(m)|.

With unit amplitudes and ``theta_k = 10000^(-2k/d)`` this is the "relative upper bound" of Su et al.'s
RoFormer (section 3.4.3): Abel summation bounds ``|sum_k h_k e^{i m theta_k}|`` by ``max_k |h_{k+1} - h_k|
sum_j |S_j(m)|``, and ``f`` is that sum divided by ``d/2``.

**Float values.** Angles by :func:`~ropeproof.verify.kernel._angles.offset_angles_with_error` (error ``e``),
terms ``a_k cos``, ``a_k sin`` (error at most ``|a_k| (e + 2 SIN_ULPS u)(1 + u)`` per component), partial
sums by ``cumsum`` and moduli by ``hypot``. With ``delta`` a bound on ``|theta_k - theta_k exact|`` for
sympy-exact frequencies (0 otherwise; ``m delta`` bounds the angle's share of it) and
``c = sqrt(2) max_k |a_k| (e_max + m delta + 2 SIN_ULPS u + gamma_K)``, ``|S_j - S_j exact| <= j c``, so

    |f_float - f| <= (K + 1) c / 2 + (gamma_K + 3 u) f_float,

enlarged by ``16 u`` relative for its own rounding.

**The first rise** is the least ``m`` with ``f(m + 1) > f(m)``. A step is decided from the float values
when ``|f(m+1) - f(m)|`` exceeds both bounds; otherwise both values are enclosed in ``flint.arb`` balls
(frequencies as the exact values of their floats, or as their sympy expressions) at ``prec`` bits, and
the step is ``undecided`` if the balls overlap. Steps before the reported first rise are all certified
non-increasing when :attr:`PartialSumDecay.exact_first` is true.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from flint import arb

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.theory._spectrum import Spectrum
from ropeproof.verify.kernel._angles import UNIT_ROUNDOFF, offset_angles_with_error
from ropeproof.verify.measure.exact._certified import arb_ends
from ropeproof.verify.measure.exact._index_sweep import SIN_ULPS
from ropeproof.verify.measure.exact._spectrum_sweep import arb_frequencies, freq_slack

MAX_OFFSETS = 1 << 20
"""The most offsets one call evaluates."""


@dataclass(frozen=True)
class PartialSumDecay:
    """The result of :func:`partial_sum_decay`: ``values[m]`` and ``errors[m]`` for ``m = 0 .. max_m``; the
    first rise (``None`` if ``f`` never increases up to ``max_m``) with the enclosures of ``f`` at it and
    one past it; the undecided steps (``m`` for the step ``m -> m + 1``) and how many steps took balls.

    Shapes: values [max_m + 1]; errors [max_m + 1]
    """

    spectrum: Spectrum
    max_m: int
    values: np.ndarray = field(repr=False)
    errors: np.ndarray = field(repr=False)
    first_rise: int | None
    rise_enclosures: tuple[tuple[float, float], tuple[float, float]] | None
    undecided: tuple[int, ...]
    enclosed: int

    @property
    def exact_first(self) -> bool:
        """No undecided step before :attr:`first_rise` (before ``max_m`` when there is none)."""
        end = self.max_m if self.first_rise is None else self.first_rise
        return not any(m < end for m in self.undecided)

    def summary(self) -> dict[str, Any]:
        """JSON-ready: ``f(0)``, the first rise with its enclosures, the undecided steps, the final value."""
        return {
            "max_m": self.max_m,
            "f0": float(self.values[0]),
            "first_rise": self.first_rise,
            "rise_enclosures": None
            if self.rise_enclosures is None
            else [list(x) for x in self.rise_enclosures],
            "exact_first": self.exact_first,
            "undecided": list(self.undecided),
            "enclosed": self.enclosed,
            "max_error": float(self.errors.max()),
        }


def partial_sum_values(spectrum: Spectrum, max_m: int, chunk: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """``(f, err)`` for ``m = 0 .. max_m`` (module docstring).

    Shapes: return.0 [max_m + 1]; return.1 [max_m + 1]
    """
    theta = list(spectrum.freqs)
    amps = np.asarray(spectrum.amps)
    k = len(theta)
    u = UNIT_ROUNDOFF
    gamma = k * u / (1 - k * u)
    slack = freq_slack(spectrum)
    values, errors = np.empty(max_m + 1), np.empty(max_m + 1)
    for start in range(0, max_m + 1, chunk):
        m = np.arange(start, min(max_m + 1, start + chunk), dtype=np.int64)
        r, e = offset_angles_with_error(m, theta)
        re, im = np.cumsum(amps * np.cos(r), axis=1), np.cumsum(amps * np.sin(r), axis=1)
        f = np.hypot(re, im).mean(axis=1)
        c = (
            math.sqrt(2)
            * float(np.abs(amps).max())
            * (e.max(axis=1) + m * slack + 2 * SIN_ULPS * u + gamma)
            * (1 + 4 * u)
        )
        values[m] = f
        errors[m] = ((k + 1) * c / 2 + (gamma + 3 * u) * f) * (1 + 16 * u)
    return values, errors


def enclose_partial_sums(spectrum: Spectrum, m: int, prec: int = 80) -> tuple[float, float]:
    """Float64 ``(lo, hi)`` enclosing ``f(m)`` exactly (Arb at ``prec`` bits plus the bits of ``|m| max
    theta``)."""
    with arb_frequencies(spectrum, m, prec) as thetas:
        re = im = arb(0)
        total = arb(0)
        for t, a in zip(thetas, spectrum.amps, strict=True):  # type: ignore[arg-type]
            angle = t * int(m)
            re += arb(a) * angle.cos()
            im += arb(a) * angle.sin()
            total += (re * re + im * im).sqrt()
        return arb_ends(total / len(thetas))


def partial_sum_decay(
    spectrum: Spectrum, max_m: int, *, prec: int = 80, max_listed: int = 100
) -> PartialSumDecay:
    """``f(m)`` for ``m = 0 .. max_m`` with error bounds, and its first rise, certified (module docstring)."""
    if not isinstance(spectrum, Spectrum):
        raise InputError(f"spectrum must be a Spectrum, got {type(spectrum).__name__}")
    max_m = integer(max_m, "max_m", low=1, high=MAX_OFFSETS - 1)
    values, errors = partial_sum_values(spectrum, max_m)
    step = np.diff(values)
    slack = (errors[1:] + errors[:-1]) * (1 + 1e-9) + 1e-300
    rises = step > slack
    close = np.abs(step) <= slack
    undecided: list[int] = []
    enclosed = 0
    first = None
    ends = None
    for m in np.nonzero(rises | close)[0].tolist():
        if rises[m]:
            first, ends = m, (_float_ends(values[m], errors[m]), _float_ends(values[m + 1], errors[m + 1]))
            break
        enclosed += 1
        here, there = enclose_partial_sums(spectrum, m, prec), enclose_partial_sums(spectrum, m + 1, prec)
        if there[0] > here[1]:
            first, ends = m, (here, there)
            break
        if not there[1] <= here[0] and len(undecided) < max_listed:
            undecided.append(m)
    return PartialSumDecay(spectrum, max_m, values, errors, first, ends, tuple(undecided), enclosed)


def _float_ends(v: float, e: float) -> tuple[float, float]:
    return math.nextafter(float(v - e), -math.inf), math.nextafter(float(v + e), math.inf)
