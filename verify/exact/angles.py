"""Accurate angle reduction: ``m * theta mod 2 pi`` to about 1e-16 absolute, for integer ``m < 2^26``.

Plain float64 ``m * theta`` carries an absolute error of ``u * m * theta`` (1e-10 rad at
``m = 10^6``), which swamps the ``1/n^2``-small margins a sweep must resolve. Here ``theta`` is split
into a 26-bit head and a tail (Dekker) so ``m * theta_hi`` is exact, and ``2 pi`` is subtracted in
three Cody-Waite pieces, each product exact. ``theta`` is taken as the exact binary value of the
float64 it is given.
"""

from __future__ import annotations

import math

import numpy as np

_SPLIT = 134217729.0  # 2^27 + 1


def _split(x: float) -> tuple[float, float]:
    t = _SPLIT * x
    hi = t - (t - x)
    return hi, x - hi


# 2 pi = P1 + P2 + P3, with P1, P2 holding 26 significant bits each (so k * P1, k * P2 are exact for
# k < 2^26) and P3 the float64 rounding of the rest.
_P1, _rest = _split(2 * math.pi)
_P2, _ = _split(_rest)
_P3 = (_rest - _P2) + (-math.sin(2 * math.pi))  # sin(fl(2 pi)) = -(2 pi - fl(2 pi)) to float64


def reduced_angles(m: np.ndarray, theta: float) -> np.ndarray:
    """``m * theta`` reduced to ``[-pi, pi]`` with ~1e-16 absolute error (``|m| < 2^26``).

    Shapes: m [...]; return [...]
    """
    m = np.asarray(m, dtype=np.float64)
    if m.size and np.abs(m).max() >= 2**26:
        raise ValueError("reduced_angles needs |m| < 2^26")
    hi, lo = _split(float(theta))
    k = np.round(m * theta / (2 * math.pi))
    return ((m * hi - k * _P1) - k * _P2) + (m * lo - k * _P3)
