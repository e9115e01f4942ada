"""Judging the partial-induction statements: margins against closed forms evaluated in mpmath, horizons
against a plain scan over lengths, and each verdict turning when what it judges is made wrong."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.verify.studies.beyond import _partial_induction_judging as judging
from ropeproof.verify.studies.beyond._partial_induction import design_two_plane, two_plane_margins
from ropeproof.verify.studies.beyond._partial_induction_judging import (
    TWO_PLANE_TOLERANCE,
    largest_n_below,
    one_plane_fixed_length_outcome,
    two_plane_outcome,
    uniform_horizon_outcome,
)


def _mp_two_plane(alphabet: int, theta: float, beta: float, n: int):
    """The claim's closed form: min(2 beta sin(theta/2) min(sin(3 theta/2), sin((2n-3) theta/2)),
    (1 - beta)(1 - cos omega) - beta (1 - cos((n - 1) theta))), in mpmath; at n = 2 there is no later
    occurrence of Y, so only the second term."""
    th, b, omega = mpmath.mpf(theta), mpmath.mpf(beta), 2 * mpmath.pi / alphabet
    if n == 2:
        return (1 - b) * (1 - mpmath.cos(omega)) - b * (1 - mpmath.cos(th))
    later = 2 * b * mpmath.sin(th / 2) * min(mpmath.sin(3 * th / 2), mpmath.sin((2 * n - 3) * th / 2))
    return min(later, (1 - b) * (1 - mpmath.cos(omega)) - b * (1 - mpmath.cos((n - 1) * th)))


def test_two_plane_margins_are_the_mpmath_closed_form() -> None:
    out = two_plane_outcome([2, 4], [16])
    assert out.verdict == "holds" and 0 <= out.figures["max_diff_vs_closed_form"] <= TWO_PLANE_TOLERANCE
    with mpmath.workdps(30):
        for row in out.figures["designs"]:
            a, n0 = row["alphabet"], row["n0"]
            d = design_two_plane(a, n0)
            exact = two_plane_margins(a, d.theta, d.beta, n0 + 1)
            want = [float(_mp_two_plane(a, d.theta, d.beta, n)) for n in range(2, n0 + 2)]
            assert np.abs(exact - want).max() <= TWO_PLANE_TOLERANCE
            assert row["horizon"] >= n0 and row["theta"] == pytest.approx(math.pi / n0)


def test_two_plane_off_its_closed_form_is_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    real = judging.two_plane_margin_formula
    monkeypatch.setattr(judging, "two_plane_margin_formula", lambda a, t, b, n: real(a, t, b, n) + 1e-13)
    out = two_plane_outcome([2], [16])
    assert out.verdict == "violated" and out.figures["max_diff_vs_closed_form"] == pytest.approx(
        1e-13, rel=0.05
    )


def _mp_retrieval_margin(n: int, theta, omega):
    """T_Retrieval's worst margin, the sympy-proved closed form, in mpmath ((n - 1) theta <= omega)."""
    shared = mpmath.sin((omega - (2 * n - 3) * theta) / 2)
    if n == 2 or (2 * n - 3) * theta >= omega:
        return 2 * mpmath.sin((omega + theta) / 2) * shared
    return 2 * mpmath.sin((omega - theta) / 2) * shared


def test_the_letter_code_solves_a_fixed_length() -> None:
    """The best head is a letter code; its margin is the best over the searched angles of
    min(2 sin(theta/2) sin(3 theta/2), margin_Retrieval(16)) (the correction's closed form, in mpmath)."""
    alphabet, length = 4, 16
    out = one_plane_fixed_length_outcome(alphabet, length, 20)
    with mpmath.workdps(30):
        omega = 2 * mpmath.pi / alphabet
        best = max(
            min(
                2 * mpmath.sin(mpmath.mpf(t) / 2) * mpmath.sin(3 * mpmath.mpf(t) / 2),
                _mp_retrieval_margin(length, mpmath.mpf(t), omega),
            )
            for t in (float(f * (2 * math.pi / alphabet) / (2 * length)) for f in np.linspace(0.05, 1.2, 24))
        )
    f = out.figures
    assert out.verdict == "violated" and out.certified and f["counterexample_is_letter_code"]
    assert f["best_margin"] == pytest.approx(float(best), rel=1e-9)
    assert (
        f["certified_margin"][0] <= float(best) <= f["certified_margin"][1] and f["certified_margin"][0] > 0
    )
    assert f["theta0_tie_f(Y,1)-f(Y,2)"] == "0" and f["tried"] == 20 + 24


def test_no_head_found_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    real = judging.search_one_plane

    def nothing(*args, **kw):
        s = real(*args, **kw)
        s.certified_margin = None
        return s

    monkeypatch.setattr(judging, "search_one_plane", nothing)
    out = one_plane_fixed_length_outcome(4, 16, 10)
    assert out.verdict == "holds" and not out.certified and out.figures["counterexample_found"] is False


def _scan(bound: float, theta: float) -> int:
    n = 1
    while (2 * (n + 1) - 3) * theta < bound:
        n += 1
    return n


@settings(max_examples=200, deadline=None)
@given(st.floats(0.01, 10.0), st.floats(1e-3, 3.0))
def test_largest_n_below_is_a_plain_scan(bound: float, theta: float) -> None:
    assert largest_n_below(bound, theta) == _scan(bound, theta)


def test_uniform_horizons_are_the_scans_and_the_two_plane_one_ignores_the_alphabet() -> None:
    out = uniform_horizon_outcome([2, 4], [0.03, 0.1], 0.1)
    assert out.verdict == "holds"
    for row in out.figures["horizons"]:
        assert row["one_plane"] == _scan(2 * math.pi / row["alphabet"], row["theta"])
        assert row["two_plane"] == _scan(2 * math.pi, row["theta"])


def test_a_horizon_off_by_one_is_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    real = judging.one_plane_code_horizon
    monkeypatch.setattr(judging, "one_plane_code_horizon", lambda a, t: real(a, t) + 1)
    assert uniform_horizon_outcome([2], [0.1], 0.1).verdict == "violated"
