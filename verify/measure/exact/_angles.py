"""Accurate angle reduction for the exact sweeps: ``m * theta mod 2 pi`` for integer ``m`` and any finite
``theta``, under the names the sweeps use.

The reduction itself lives in :mod:`ropeproof.verify.kernel._angles` (the one place the toolkit forms
rotation angles, shared with the RoPE tables of :mod:`ropeproof.verify.kernel._rope`):
:func:`reduced_angles` is its :func:`~ropeproof.verify.kernel._angles.offset_angles` and
:func:`reduced_angles_with_error` its
:func:`~ropeproof.verify.kernel._angles.offset_angles_with_error`.
"""

from __future__ import annotations

from ropeproof.verify.kernel._angles import (
    MAX_MULTIPLE,
    P1,
    P2,
    P3,
    P_ERROR,
    UNIT_ROUNDOFF,
    ReducedFrequency,
    offset_angles,
    offset_angles_with_error,
    reduce_frequency,
)

__all__ = [
    "MAX_MULTIPLE",
    "P1",
    "P2",
    "P3",
    "P_ERROR",
    "UNIT_ROUNDOFF",
    "ReducedFrequency",
    "reduce_frequency",
    "reduced_angles",
    "reduced_angles_with_error",
]

reduced_angles = offset_angles
"""``m * theta`` reduced mod ``2 pi`` (:func:`~ropeproof.verify.kernel._angles.offset_angles`)."""
reduced_angles_with_error = offset_angles_with_error
"""``(r, err)`` (:func:`~ropeproof.verify.kernel._angles.offset_angles_with_error`)."""
