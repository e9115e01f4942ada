"""The semantic channel through the spectrum API: the target's logit is a spectrum sum.

The word ``c'`` ``d`` positions back scores ``sum_k cos((c' - c(w)) omega - d theta_k)``
(``semantic_head.py``). For the target (``c' = c(w)``) that is ``B(d) = sum_k cos(d theta_k)`` of the
variant's four planes (``signal_spectrum``): the channel's signal at distance ``d``, with no competitor
in it. A word one code away at distance 1 scores ``R = sum_k cos(omega - theta_k)`` (``rival_level``),
so wherever ``B(d) < R`` for some ``d >= 2`` the head is wrong at length ``d + 1`` (the target at ``d``,
that word at 1): the first such ``d``, found by one exact sweep of ``B(d) - R >= 0`` over ``d = 2 .. L``
(``signal_sweep``, the constant ``-R`` a zero frequency), is a certified **upper bound** on the head's
first violation. The exact sweep over the family (``check_bound``) finds the first violation itself,
which may come earlier: a competitor rotated toward the target can win before the target's own signal
has decayed.

The base of the spectrum is the design parameter: ``base_scan`` scans it and reports, as runs, the bases
whose signal never loses to the near rival up to a length (for the others, the head is certainly wrong
by then).

Written only against ropeproof's public API (``from ropeproof import ...``).
"""

from __future__ import annotations

import math

import sympy as sp
from semantic_head import BASE, OMEGA, PLANE_SETS, SPECTRUM, frequencies

from ropeproof import ParameterScan, Spectrum, SpectrumSweep, scan_parameter, sweep_spectrum

SCAN_RESOLUTION = 0.01
"""The base grid: ratios of 1 + 0.01."""


def signal_spectrum(variant: str) -> Spectrum:
    """The variant's four planes with unit amplitudes: ``B(d)`` is the target's logit at distance ``d``."""
    return Spectrum(tuple(frequencies(variant)))


def rival_level(thetas: list[float]) -> float:
    """``R = sum_k cos(omega - theta_k)`` (the logit of a word one code away at distance 1), rounded down
    to a float below the exact value (each ``theta_k`` the exact value of its float; the sum to 40 digits
    by sympy, then one float step down), so ``B < rival_level`` implies ``B < R``."""
    exact = sp.Add(*(sp.cos(OMEGA - sp.Rational(t)) for t in thetas))
    return math.nextafter(float(sp.N(exact, 40)), -math.inf)


def lead_over_rival(thetas: list[float]) -> Spectrum:
    """``B(d) - R`` as one spectrum: the planes with amplitude 1 and a zero frequency with amplitude
    ``-rival_level(thetas)``."""
    return Spectrum((*thetas, 0.0), (*(1.0 for _ in thetas), -rival_level(thetas)))


def signal_sweep(variant: str, max_n: int) -> SpectrumSweep:
    """``B(d) >= R`` for every ``d = 2 .. max_n - 1`` (certified); a first violation ``d`` means the head
    is wrong at length ``d + 1``."""
    return sweep_spectrum(lead_over_rival(frequencies(variant)), max_n - 1, ">=", 0.0, start=2)


def lowest_planes(base: float) -> list[float]:
    """The lowest four planes' frequencies at ``base``: ``base^(-k/16)``, ``k = 12 .. 15``."""
    return [base ** (-k / SPECTRUM) for k in PLANE_SETS["lowest"]]


def base_scan(max_n: int, hi: float = 1e6) -> ParameterScan:
    """For each base on the grid of ratio ``1 + SCAN_RESOLUTION`` over ``[BASE, hi]`` (the example's base
    first), whether the lowest planes' signal ``B(d)`` stays ``>= R`` at every ``d = 2 .. max_n - 1``."""
    return scan_parameter(
        lambda b: lead_over_rival(lowest_planes(b)),
        max_n - 1,
        interval=(BASE, hi),
        resolution=SCAN_RESOLUTION,
        start=2,
    )
