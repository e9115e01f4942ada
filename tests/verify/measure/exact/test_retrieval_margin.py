"""The closed-form and explicit Retrieval margins against the exact family sweep, every n <= 300."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import retrieval_construction
from ropeproof.theory._retrieval_margin import retrieval_margin_closed_form
from ropeproof.verify.measure.exact._discrepancy import build_tables, exact_sweep
from ropeproof.verify.measure.exact._families import retrieval_family
from ropeproof.verify.measure.exact._retrieval_margin import retrieval_margin_explicit

MAX_N = 300


def _exact(theta: float) -> np.ndarray:
    c = retrieval_construction(8, theta, max_int=1)
    return exact_sweep(build_tables(compile_construction(c), retrieval_family(c), MAX_N), MAX_N, 0).margin_inf


@pytest.mark.parametrize("theta", [0.0027, 0.01, 0.05, 0.0])
def test_every_length_matches_the_exact_sweep(theta: float) -> None:
    exact = _exact(theta)
    # both sides are differences of O(1) cosines evaluated with a few float64 roundings each
    tol = 16 * np.finfo(np.float64).eps
    np.testing.assert_allclose(retrieval_margin_explicit(MAX_N, theta, 8), exact, rtol=0, atol=tol)
    omega = 2 * math.pi / 8
    inside = [n for n in range(2, MAX_N + 1) if (n - 1) * theta <= omega]
    closed = np.array([retrieval_margin_closed_form(n, theta, 8) for n in inside])
    np.testing.assert_allclose(closed, exact[np.array(inside) - 2], rtol=0, atol=tol)
    assert len(inside) >= 15
