"""Judging [A] Theorem 3.1: the margins and horizons each outcome reports against references computed here
(mpmath minima over key offsets, the horizon from its inequality in exact rationals, a float64 brute force
over offsets), and the verdict turning when the head answers wrongly or the margin is a tie."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch

from ropeproof.constructions._paper import ALPHABET_SIZE, INDEX_THETA, RETRIEVAL_THETA
from ropeproof.verify.kernel._resolution import gap_resolution
from ropeproof.verify.measure.exact import _horizon_judging as horizon_judging
from ropeproof.verify.measure.exact._horizon_judging import (
    LONG_INDEX_LENGTH,
    index_horizon_outcome,
    retrieval_horizon_outcome,
)


def test_index_least_margin_is_the_mpmath_minimum_over_offsets() -> None:
    """T_Index's worst margin at length n is min over offsets 1 <= m <= n - 1 of 1 - cos(m theta)."""
    out = index_horizon_outcome(INDEX_THETA, 120, 16, 17, 20, 30, torch.float64)
    with mpmath.workdps(30):
        want = min(1 - mpmath.cos(m * mpmath.mpf(INDEX_THETA)) for m in range(1, 17))
    assert out.verdict == "holds"
    assert out.figures["min_margin_inf_2..17"] == pytest.approx(float(want), rel=1e-12)
    assert out.figures["accuracy_argmax"] == out.figures["accuracy_softmax"] == 1.0
    assert out.figures["first_n_margin_below_dtype_resolution"] is None


def test_index_reports_where_the_margin_sinks_below_float32_resolution() -> None:
    """The first length whose exact margin min_{m < n} 2 sin(m theta / 2)^2 (a float64 brute force over
    every offset) is at most float32's resolution."""
    out = index_horizon_outcome(INDEX_THETA, 120, 16, 17, 20, 30, torch.float32)
    m = np.arange(1, LONG_INDEX_LENGTH, dtype=np.float64)
    prefix = np.minimum.accumulate(2 * np.sin(m * INDEX_THETA / 2) ** 2)  # index L - 2: length L
    below = np.nonzero(prefix <= gap_resolution(torch.float32, head_dim=2))[0]
    assert below.size and out.figures["first_n_margin_below_dtype_resolution"] == int(below[0]) + 2
    assert out.verdict == "holds"


def test_index_with_a_tie_is_unresolvable() -> None:
    """At theta = 2 pi / 8 the keys 8 positions apart score alike: the worst margin is 0 (a tie)."""
    out = index_horizon_outcome(2 * math.pi / 8, 120, 16, 17, 20, 30, torch.float64)
    assert out.verdict == "unresolvable" and abs(out.figures["min_margin_inf_2..17"]) < 1e-12
    assert out.counterexample is not None


def test_retrieval_horizon_and_first_failure_from_their_inequalities() -> None:
    """[A]'s horizon is the largest n0 with theta < omega / (2 n0); the exact margin first fails where
    (2n - 3) theta >= omega (the closed form's shared factor changes sign), both decided here in mpmath."""
    out = retrieval_horizon_outcome(ALPHABET_SIZE, RETRIEVAL_THETA, 200, 20, torch.float64)
    with mpmath.workdps(40):
        omega, theta = 2 * mpmath.pi / ALPHABET_SIZE, mpmath.mpf(RETRIEVAL_THETA)
        horizon = max(n0 for n0 in range(1, 400) if theta < omega / (2 * n0))
        first = min(n for n in range(2, 400) if (2 * n - 3) * theta >= omega)
    f = out.figures
    assert out.verdict == "holds" and f["claimed_horizon"] == horizon and f["exact_first_failure_n"] == first
    assert f["offset_horizon_length"] == horizon + 1 and f["offset_convention"] == "holds"
    assert f["task_accuracy"] == 1.0 and f["min_margin_within_horizon"] > 0


def test_retrieval_with_wrong_answers_is_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(horizon_judging, "answer", lambda head, seqs, **kw: [None] * len(seqs))
    out = retrieval_horizon_outcome(ALPHABET_SIZE, 0.05, 20, 10, torch.float64)
    assert out.verdict == "violated" and out.figures["task_accuracy"] == 0.0
    assert out.counterexample is not None
