"""Men et al. 2024, *Base of RoPE Bounds Context Length* (NeurIPS 2024), checked with the spectrum API.

What the paper says (second-hand, as recalled in ropeproof's issue 43; not read from the paper here): for
head dimension d = 128 (64 planes, theta_i = b^(-i/64)) let B_m(b) = sum_i cos(m theta_i). A context length
L needs a base b at least the smallest b with B_m(b) >= 0 for every 0 <= m <= L. Their table, rounded, maps
L to that base (:data:`PAPER_TABLE`). Whether "1k" means 1000 or 1024 is not known, so both readings are
checked (:data:`READINGS`).

What is computed here: B_m(b) is the spectrum sum of ``Spectrum.from_base(b, 128)``; ``sweep_spectrum``
finds the first m with B_m(b) < 0 (certified), and ``scan_parameter`` scans b over a log grid for the
smallest good base and the supremum of the bad bases (two different thresholds: the good set is not an
interval).
"""

from __future__ import annotations

from ropeproof import ParameterScan, Spectrum, scan_parameter, sweep_spectrum

DIM = 128
"""Head dimension: 64 planes, theta_i = b^(-2i/128) = b^(-i/64)."""

PAPER_TABLE: dict[str, float] = {
    "1k": 4.3e3,
    "2k": 1.6e4,
    "4k": 2.7e4,
    "8k": 8.4e4,
    "16k": 3.1e5,
    "32k": 6.4e5,
    "64k": 2.1e6,
    "128k": 7.8e6,
    "256k": 3.6e7,
    "512k": 6.4e7,
    "1M": 5.1e8,
}
"""The paper's table, second-hand and rounded to two significant figures: context length -> base."""

READINGS: dict[str, int] = {"1000": 1000, "1024": 1024}
"""The two readings of "1k" (and of "1M": 1000^2 or 1024^2)."""

RESOLUTION = 0.002
"""The base grid: ratios of 1 + 0.002 (0.2%)."""


def context_length(label: str, reading: str) -> int:
    """``"16k"`` -> 16 * 1000 or 16 * 1024; ``"1M"`` -> 1000^2 or 1024^2."""
    unit = READINGS[reading]
    if label.endswith("M"):
        return int(label[:-1]) * unit * unit
    return int(label[:-1]) * unit


def men_spectrum(base: float) -> Spectrum:
    """The paper's spectrum at ``base``: 64 unit-amplitude planes, theta_i = base^(-i/64)."""
    return Spectrum.from_base(base, DIM)


def first_negative(base: float, length: int) -> int | None:
    """The least m in 0 .. length with B_m(base) < 0 (certified), or None when every B_m >= 0."""
    return sweep_spectrum(men_spectrum(base), length).first_violation


def base_scan(length: int, lo: float, hi: float, scope: str = "all") -> ParameterScan:
    """Every base of the 0.2% log grid on [lo, hi] (``scope="thresholds"``: just what the two thresholds
    need), each good when B_m(b) >= 0 for every 0 <= m <= length."""
    return scan_parameter(men_spectrum, length, interval=(lo, hi), resolution=RESOLUTION, scope=scope)


def two_figures(x: float) -> float:
    """``x`` rounded to two significant figures, as the paper's table is."""
    return float(f"{x:.1e}")
