"""Judging the letter-code statements: the margins against the closed form in mpmath, the horizon
against its inequality decided in mpmath, the tolerance's derivation checked at the largest alphabet, and
the verdicts turning when a margin or a horizon is off."""

from __future__ import annotations

import dataclasses

import mpmath
import numpy as np
import pytest

from ropeproof.machinery._result_store import ResultStore
from ropeproof.verify.studies.beyond import _letter_code_judging as judging
from ropeproof.verify.studies.beyond._letter_code_judging import (
    CLOSED_FORM_REL_TOLERANCE,
    alphabet_outcome,
    slow_horizon_outcome,
)

ALPHABETS = [2, 3, 8, 64]


def test_alphabet_margins_are_the_closed_form_and_orthogonal_codes_keep_1() -> None:
    out = alphabet_outcome(ALPHABETS, 24, [3])
    assert out.verdict == "holds" and out.figures["min_orthogonal_margin"] == 1.0
    with mpmath.workdps(30):
        for row in out.figures["rows"]:
            want = 2 * mpmath.sin(mpmath.pi / row["alphabet"]) ** 2
            assert abs(row["one_plane_margin"] / want - 1) <= CLOSED_FORM_REL_TOLERANCE
    assert out.figures["one_plane_margin_at_64"] == out.figures["rows"][-1]["one_plane_margin"]
    assert 0 <= out.figures["engine_cross_check_max_diff"] <= judging.ENGINE_TOLERANCE


def test_the_closed_form_tolerance_covers_an_ulp_of_1_at_the_largest_alphabet() -> None:
    """The derivation: a margin within an ulp of 1 of exact is within eps / (2 sin(pi/64)^2) relative."""
    assert np.finfo(np.float64).eps / (2 * np.sin(np.pi / 64) ** 2) < CLOSED_FORM_REL_TOLERANCE


def test_a_code_off_the_engine_is_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    real = judging.code_margins
    monkeypatch.setattr(judging, "code_margins", lambda code, n: real(code, n) + 1e-14)
    out = alphabet_outcome(ALPHABETS, 24, [3])
    assert out.verdict == "violated" and out.figures["engine_cross_check_max_diff"] == pytest.approx(
        1e-14, rel=0.1
    )


def test_slow_horizon_is_the_largest_length_the_inequality_allows() -> None:
    """The slowest plane of head_dim 64 turns at theta = 10000^(-62/64); the horizon is the largest n with
    (2n - 3) theta < 2 pi / 8, decided here in mpmath at 40 digits."""
    out = slow_horizon_outcome(8, [64], [64], ResultStore())
    with mpmath.workdps(40):
        theta = mpmath.mpf(float(10000.0 ** (-62 / 64)))
        bound = 2 * mpmath.pi / 8
        n = int(mpmath.floor((bound / theta + 3) / 2))
        while (2 * n - 3) * theta >= bound:
            n -= 1
    fig = out.figures["head_dim=64"]
    assert out.verdict == "holds" and out.figures["horizon_64"] == fig["one_plane_horizon"] == n
    assert fig["certified_boundary"]["certified"] is True and out.figures["boundaries_certified"] is True
    assert (
        fig["certified_boundary"]["margin_at_horizon"][0] > 0 >= fig["certified_boundary"]["margin_after"][1]
    )


def test_a_horizon_one_short_is_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    real = judging.slow_horizon_of
    monkeypatch.setattr(
        judging,
        "slow_horizon_of",
        lambda d: dataclasses.replace(real(d), one_plane_horizon=real(d).one_plane_horizon - 1),
    )
    out = slow_horizon_outcome(8, [64], [64], ResultStore())
    assert (
        out.verdict == "violated" and out.figures["head_dim=64"]["certified_boundary"]["certified"] is False
    )


def test_uncertified_head_dims_leave_the_verdict_uncertified() -> None:
    out = slow_horizon_outcome(8, [64], [], ResultStore())
    assert out.verdict == "holds" and out.figures["boundaries_certified"] is False
    assert out.figures["head_dim=64"]["certified_boundary"] == "not run (quick)"
