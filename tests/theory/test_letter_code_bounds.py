"""The letter-code corrections (docs/theory.md sections 9.2, 9.3, 9.5): the proofs' steps pass, and every
input of small lengths, enumerated in mpmath without the library's reductions, agrees with the closed
forms and never exceeds the corrected bound, at any angle."""

from __future__ import annotations

import itertools
import math

import mpmath
import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.theory._letter_code_bounds import (
    code_horizon,
    code_partial_induction_margin,
    largest_gap_closed_form,
    largest_gap_proof,
    partial_induction_proof,
    retrieval_bound_proof,
    retrieval_corrected_bound,
    retrieval_witness_margin,
)
from ropeproof.theory._proof_checks import PROVED, proof_level
from ropeproof.theory._retrieval_margin import retrieval_margin_closed_form

ALPHABET = 4


def _logit(c: int, d: int, theta: mpmath.mpf, alphabet: int) -> mpmath.mpf:
    """docs/theory.md section 4: query asking for Y against a pair with left letter Y + c, d back."""
    return mpmath.cos(c * 2 * mpmath.pi / alphabet - d * theta)


def _retrieval_extremes(n: int, theta: float, alphabet: int = ALPHABET) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(margin_inf, gap_sup) over every Retrieval input of length n (Y = 0 by symmetry), in mpmath."""
    th = mpmath.mpf(theta)
    margin, gap = mpmath.inf, -mpmath.inf
    others = range(1, alphabet)
    for x in others:  # the query's own left letter
        for t in range(n - 1):  # the target's position
            for fill in itertools.product(others, repeat=n - 2):
                letters = list(fill)
                letters.insert(t, 0)
                row = [_logit(c, n - 1 - p, th, alphabet) for p, c in enumerate(letters)] + [
                    _logit(x, 0, th, alphabet)
                ]
                target = row[t]
                rest = row[:t] + row[t + 1 :]
                margin = min(margin, target - max(rest))
                top = sorted(row, reverse=True)
                gap = max(gap, top[0] - top[1])
    return margin, gap


def _partial_induction_margin(n: int, theta: float, alphabet: int = ALPHABET) -> mpmath.mpf:
    """margin_inf over every partial-induction input of length n (Y = 0): the target is the last earlier
    Y; letters between it and the query are not Y, earlier ones are anything."""
    th = mpmath.mpf(theta)
    worst = mpmath.inf
    for x in range(1, alphabet):
        for t in range(n - 1):
            before = itertools.product(range(alphabet), repeat=t)
            for early in before:
                for late in itertools.product(range(1, alphabet), repeat=n - 2 - t):
                    letters = [*early, 0, *late]
                    row = [_logit(c, n - 1 - p, th, alphabet) for p, c in enumerate(letters)]
                    row.append(_logit(x, 0, th, alphabet))
                    worst = min(worst, row[t] - max(row[:t] + row[t + 1 :]))
    return worst


@pytest.mark.parametrize("proof", [retrieval_bound_proof, largest_gap_proof, partial_induction_proof])
def test_the_proofs_pass(proof) -> None:
    """Every step but the argued ones passes its check; how the steps combine is argued (``composition``),
    and in partial induction the reduction to two competitors (``independent-positions``)."""
    steps = proof()
    level, summary = proof_level(steps)
    assert level == PROVED, summary
    argued = [s.name for s in steps if s.method == "argument"]
    assert argued[-1] == "composition" and set(argued) <= {"composition", "independent-positions"}
    assert all(s.run() is True for s in steps if s.check is not None)


@pytest.mark.parametrize("theta", [0.0, 0.0027, 0.1, 0.7, 2.0])
def test_every_retrieval_input_stays_under_the_corrected_bound_at_any_angle(theta: float) -> None:
    with mpmath.workdps(30):
        for n in (2, 3, 4, 5):
            margin, _gap = _retrieval_extremes(n, theta)
            bound = retrieval_corrected_bound(n, theta, ALPHABET)
            assert float(margin) <= bound + 1e-15, (n, theta)
            assert retrieval_corrected_bound(n - 1, theta, ALPHABET, "offset") == bound
            omega = 2 * math.pi / ALPHABET
            if (n - 1) * theta <= omega:
                assert float(margin) == pytest.approx(
                    retrieval_margin_closed_form(n, theta, ALPHABET), abs=1e-14
                )
            if n >= 3 and (n - 1) * theta <= omega and theta < omega / (2 * n - 3):
                # below n* the witness of the bound's proof is the worst input
                assert float(margin) == pytest.approx(retrieval_witness_margin(n, theta, ALPHABET), abs=1e-14)


@pytest.mark.parametrize("theta", [0.0, 0.0027, 0.05])
def test_the_largest_gap_has_the_closed_form(theta: float) -> None:
    with mpmath.workdps(30):
        for n in (2, 3, 4, 5, 6):
            _margin, gap = _retrieval_extremes(n, theta)
            assert float(gap) == pytest.approx(largest_gap_closed_form(n, theta, ALPHABET), abs=1e-14)
            assert float(gap) > 2 * math.sin(math.pi / ALPHABET) ** 2  # above 1 - cos(omega)


@pytest.mark.parametrize("alphabet", [2, 3, 4])
def test_the_letter_code_solves_partial_induction_up_to_its_horizon(alphabet: int) -> None:
    omega = 2 * math.pi / alphabet
    theta = omega / (2 * 4)  # designed for n0 = 4: the horizon is 5
    assert code_horizon(theta, alphabet) == 5
    with mpmath.workdps(30):
        for n in (2, 3, 4, 5):
            exact = _partial_induction_margin(n, theta, alphabet)
            assert float(exact) == pytest.approx(code_partial_induction_margin(n, theta, alphabet), abs=1e-14)
            assert exact > 0
        assert _partial_induction_margin(6, theta, alphabet) <= 0  # the next length fails


def test_horizon_edges_and_bad_input() -> None:
    omega = 2 * math.pi / 8
    for theta in (0.0027, 0.01, omega / 7):
        h = code_horizon(theta, 8)
        assert (2 * h - 3) * theta < omega <= (2 * (h + 1) - 3) * theta
    with pytest.raises(
        InputError, match=r"theta=0.0 is out of range; accepted: a finite real number > 0 \(at theta = 0"
    ):
        code_horizon(0.0, 8)
    with pytest.raises(InputError, match="even integer >= 4"):
        largest_gap_closed_form(3, 0.0, 5)
    with pytest.raises(InputError, match="omega / 2"):
        largest_gap_closed_form(100, 0.1, 8)
    with pytest.raises(InputError, match="convention="):
        retrieval_corrected_bound(3, 0.1, 8, "nosuch")
    with pytest.raises(InputError, match=r"\(2n - 3\) theta <= omega"):
        code_partial_induction_margin(50, 0.1, 8)
