"""What a dtype can resolve: rounding-error bounds for RoPE logits and gaps.

A logit ``sum_k q_k^T R(u theta_k) k_k`` computed in a dtype with unit roundoff ``u_d``
(``finfo.eps / 2``) after rotating both vectors carries an error of at most about
``(head_dim + 6) * u_d * magnitude``, where ``magnitude = sum_k |q_k| |k_k|`` bounds the logit
(the usual ``gamma_m`` bound for a length-``m`` dot product, plus the rotation's rounding). A
difference of two logits is therefore trustworthy only above twice that; below it the dtype cannot
resolve the gap and a check must say so rather than pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.verify.kernel._angles import angle_error_bound
from ropeproof.verify.kernel._devices import dtype_name

if TYPE_CHECKING:
    from ropeproof.verify.kernel._devices import DtypeLike

UNIT_ROUNDOFFS: dict[str, float] = {
    "float64": 2.0**-53,
    "float32": 2.0**-24,
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
}
"""``torch.finfo(dtype).eps / 2`` of each supported dtype by name (a test compares it with torch's)."""


def unit_roundoff(dtype: DtypeLike) -> float:
    """``finfo(dtype).eps / 2``: 2^-53 for float64, 2^-24 for float32, 2^-11 for float16, 2^-8 for
    bfloat16 (:data:`UNIT_ROUNDOFFS`; a dtype given by name needs no torch)."""
    return UNIT_ROUNDOFFS[dtype_name(dtype)]


def logit_error_bound(
    dtype: DtypeLike, head_dim: int, magnitude: float = 1.0, max_angle: float = 0.0
) -> float:
    """Bound on ``|computed logit - exact logit|``.

    ``((head_dim + 6) * u_d + 2 * e(max_angle)) * magnitude``: the dot product and rotation in the
    dtype, plus the error ``e`` of the rotation angles ``p * theta`` (at most ``max_angle`` in absolute
    value), reduced mod ``2 pi`` in float64 by :func:`~ropeproof.verify.kernel._angles.offset_angles`
    (``e = min(8 u_64 max_angle, 1e-14)``, :func:`~ropeproof.verify.kernel._angles.angle_error_bound`),
    which moves each rotated vector by at most ``e`` times its length.
    """
    return ((head_dim + 6) * unit_roundoff(dtype) + 2 * angle_error_bound(max_angle)) * abs(magnitude)


def gap_resolution(dtype: DtypeLike, head_dim: int, magnitude: float = 1.0) -> float:
    """The smallest logit gap the dtype resolves: twice :func:`logit_error_bound`."""
    return 2.0 * logit_error_bound(dtype, head_dim, magnitude)
