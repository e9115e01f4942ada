"""Logits by distance with exactly reduced angles: every value within its stated error bound of the
exact logit of the float64 vectors (mpmath at 1500 bits), from tiny to huge frequencies, and the
layouts and pass-through planes as the module computes them."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.measure.exact._offset_logits import distance_logits
from ropeproof.verify.measure.exact._plane_logits import distance_logits_exact


def mp_logit(q: np.ndarray, k: np.ndarray, spec: RopeSpec, d: int, scale: float) -> mpmath.mpf:
    """``scale * q . rho(-d theta) k`` plane by plane, from the exact float64 inputs, at 1500 bits."""
    with mpmath.workprec(1500):
        total = mpmath.mpf(0)
        for (a, b), theta in zip(spec.plane_dims, spec.plane_freqs, strict=True):
            ang = -d * mpmath.mpf(float(theta))
            c, s = mpmath.cos(ang), mpmath.sin(ang)
            qa, qb, ka, kb = (mpmath.mpf(float(x)) for x in (q[a], q[b], k[a], k[b]))
            total += qa * (c * ka - s * kb) + qb * (s * ka + c * kb)
        return mpmath.mpf(float(scale)) * total


@settings(max_examples=25, deadline=None)
@given(
    exponent=st.sampled_from([-320, -20, -3, 0, 2, 12, 100, 300]),
    mantissa=st.floats(1.0, 1.999),
    seed=st.integers(0, 2**16),
    layout=st.sampled_from(["interleaved", "half"]),
)
def test_values_lie_within_their_error_bounds(exponent: int, mantissa: float, seed: int, layout: str) -> None:
    rng = np.random.default_rng(seed)
    theta = mantissa * 10.0**exponent
    spec = RopeSpec(8, rotary_dim=6, freqs=[theta, 0.7, 0.0], layout=layout)  # a pass-through plane too
    q, keys = rng.standard_normal(8), rng.standard_normal((2, 8))
    d = np.array([0, 1, 2, 7, 1000, 2**20 + 3, 2**26 - 1])
    vals, errs = distance_logits_exact(q, keys, spec, d, scale=0.75)
    assert (errs < 1e-13).all()  # tight: a few ulps of the O(1) terms, whatever theta
    for g in range(2):
        for i, dd in enumerate(d.tolist()):
            exact = mp_logit(q, keys[g], spec, dd, 0.75)
            assert abs(mpmath.mpf(float(vals[g, i])) - exact) <= errs[g, i]


def test_small_angles_agree_with_the_module() -> None:
    """Where the module's rounded products m * theta are accurate (small m theta), both agree."""
    rng = np.random.default_rng(1)
    spec = RopeSpec(6, freqs=[0.9, 0.05, 0.0])
    q, keys = rng.standard_normal(6), rng.standard_normal((3, 6))
    d = np.arange(40)
    vals, _errs = distance_logits_exact(q, keys, spec, d)
    np.testing.assert_allclose(vals, distance_logits(q, keys, spec, d), rtol=0, atol=1e-13)


def test_huge_angles_differ_from_rounded_products() -> None:
    """At theta = 1e300 a rounded product 7 * theta loses every digit of the angle; the exact
    reduction keeps them (issue 32, case 7)."""
    spec = RopeSpec(2, freqs=[1e300])
    q, k = np.array([1.0, 0.0]), np.array([[1.0, 0.0]])
    vals, errs = distance_logits_exact(q, k, spec, np.array([7]))
    with mpmath.workprec(2000):
        exact = mpmath.cos(7 * mpmath.mpf(1e300))
    assert abs(vals[0, 0] - float(exact)) <= errs[0, 0]
    assert float(exact) == pytest.approx(-0.9127396123617924, abs=1e-15)


def test_kept_angle_terms_give_the_floats_computed_afresh() -> None:
    """Short distance arrays reuse their kept angle terms; a call past KEPT_DISTANCES computes them each
    time: both give the same floats (values and bounds), and a kept term cannot be written to."""
    from ropeproof.verify.measure.exact._plane_logits import KEPT_DISTANCES, _kept_terms

    rng = np.random.default_rng(4)
    spec = RopeSpec(8)
    q, keys = rng.standard_normal(8), rng.standard_normal((3, 8))
    short, long = np.arange(1, 11), np.arange(1, KEPT_DISTANCES + 2)
    first = distance_logits_exact(q, keys, spec, short)
    again = distance_logits_exact(q, keys, spec, short)  # from the kept terms
    fresh = distance_logits_exact(q, keys, spec, long)  # too long to keep: computed
    for kept, other in ((first, again), (first, tuple(a[:, :10] for a in fresh))):
        np.testing.assert_array_equal(kept[0], other[0])
        np.testing.assert_array_equal(kept[1], other[1])
    cos, _, _ = _kept_terms(short.astype(np.float64).tobytes(), float(spec.plane_freqs[0]))
    with pytest.raises(ValueError, match="read-only"):
        cos[0] = 0.0
