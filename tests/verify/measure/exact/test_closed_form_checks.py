"""Judging T_Retrieval's closed-form and explicit margins against the exact sweep: the verdict and the
first failing length against a brute force over every (target, competitor) choice in mpmath, written here
independently of the three formulas; a formula off by more than the tolerance, or a failed proof, is
caught."""

from __future__ import annotations

import mpmath
import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact import _closed_form_checks as closed_form_checks
from ropeproof.verify.measure.exact._closed_form_checks import (
    CLOSED_FORM_TOLERANCE,
    retrieval_closed_form_outcome,
)

ALPHABET, MAX_N = 8, 40
THETAS = (0.0027, 0.05)


def _mp_margins(alphabet: int, theta: float, max_n: int) -> list:
    """The worst margin at every n = 2 .. max_n by brute force in mpmath (30 digits): the target at
    distance t = 1 .. n - 1 scores cos(t theta), a competitor of letter offset c = 1 .. |ALPH| - 1 at
    distance d = 0 .. n - 1, d != t, scores cos(c omega - d theta); each position is chosen freely."""
    with mpmath.workdps(30):
        th, omega = mpmath.mpf(theta), 2 * mpmath.pi / alphabet
        comp = [max(mpmath.cos(c * omega - d * th) for c in range(1, alphabet)) for d in range(max_n)]
        return [
            min(mpmath.cos(t * th) - max(comp[d] for d in range(n) if d != t) for t in range(1, n))
            for n in range(2, max_n + 1)
        ]


def test_the_three_margins_agree_and_the_first_failure_is_the_brute_force_one() -> None:
    out = retrieval_closed_form_outcome(ALPHABET, THETAS, MAX_N)
    assert out.verdict == "holds" and out.figures["proofs"] is True
    assert 0 <= out.figures["max_abs_diff"] <= CLOSED_FORM_TOLERANCE == out.figures["tolerance"]
    for theta in THETAS:
        mp = _mp_margins(ALPHABET, theta, MAX_N)
        first = next((n for n, m in zip(range(2, MAX_N + 1), mp, strict=True) if m <= 0), None)
        assert out.figures[f"first_failure_n_at_{theta:g}"] == first
    assert out.figures["first_failure_n_at_0.05"] == 10  # (2n - 3) 0.05 >= pi/4 first at n = 10
    assert out.figures["first_failure_n_at_0.0027"] is None  # n* = 147 lies past MAX_N


def test_a_closed_form_off_by_more_than_rounding_is_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    real = closed_form_checks.retrieval_margin_closed_form
    monkeypatch.setattr(
        closed_form_checks, "retrieval_margin_closed_form", lambda n, t, a: real(n, t, a) + 1e-12
    )
    out = retrieval_closed_form_outcome(ALPHABET, (0.05,), 20)
    assert out.verdict == "violated" and out.figures["max_abs_diff"] == pytest.approx(1e-12, rel=1e-2)
    assert out.counterexample["max_abs_diff"] == out.figures["max_abs_diff"]


def test_a_failed_proof_fails_the_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(closed_form_checks, "difference_identity", lambda: False)
    out = retrieval_closed_form_outcome(ALPHABET, (0.05,), 12)
    assert out.verdict == "violated" and out.figures["proofs"] is False


def test_bad_sizes_name_the_parameter() -> None:
    with pytest.raises(InputError, match="alphabet_size"):
        retrieval_closed_form_outcome(1, (0.05,), 12)
    with pytest.raises(InputError, match="max_n"):
        retrieval_closed_form_outcome(ALPHABET, (0.05,), 1)
