"""The one-plane optimum (docs/theory.md section 9.1): the proof's steps pass, and a brute force over the
angle in mpmath, independent of the proof, finds the same maximum and the same maximisers."""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy as sp

from ropeproof.machinery._errors import InputError
from ropeproof.theory._one_plane_optimum import (
    EUCLID_RANGE,
    attaining_angles,
    attaining_angles_proof,
    best_value,
    competing_offsets,
    euclid_lemma_holds,
    euclid_lemma_range,
    optimum_proof,
    readings_steps,
    reported_term,
)
from ropeproof.theory._proof_checks import DEFINITION, MACHINE_CHECKED, PROVED, proof_level, steps_table


@pytest.mark.parametrize("proof", [readings_steps, optimum_proof])
def test_the_value_and_the_readings_are_machine_checked(proof) -> None:
    steps = proof()
    level, summary = proof_level(steps)
    assert level == MACHINE_CHECKED, summary
    table = steps_table(steps)
    assert all(r["status"] == "checked" for r in table)
    assert {r["method"] for r in table} <= {"sympy", "interval", DEFINITION}  # ratio-increasing: Arb


def test_which_angles_attain_has_one_argued_step_checked_up_to_its_range() -> None:
    level, summary = proof_level(attaining_angles_proof())
    assert level == PROVED and f"attaining-angles (exhaustive for M + 1 <= {EUCLID_RANGE})" in summary
    assert [s.name for s in attaining_angles_proof() if s.method == "argument"] == ["attaining-angles"]


def _grid_max(big_m: int, points: int = 2400) -> tuple[mpmath.mpf, mpmath.mpf]:
    """max over a grid of (0, pi] of min_{m <= M} (1 - cos m theta), in mpmath, and its argmax. The function
    is symmetric under theta -> 2 pi - theta, so (0, pi] holds every maximum value."""
    best, arg = mpmath.mpf(-1), mpmath.mpf(0)
    for i in range(1, points + 1):
        theta = mpmath.pi * i / points
        v = min(1 - mpmath.cos(m * theta) for m in range(1, big_m + 1))
        if v > best:
            best, arg = v, theta
    return best, arg


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8])
def test_brute_force_over_the_angle_matches_the_closed_form(n: int) -> None:
    """The function is M-Lipschitz, so the grid maximum is within M * (grid step) / 2 of the true one; it
    is never above the proved optimum, and the grid's argmax sits next to an angle 2 pi k / n."""
    big_m = n - 1
    points = 2400
    with mpmath.workdps(30):
        grid, arg = _grid_max(big_m, points)
        exact = 2 * mpmath.sin(mpmath.pi / n) ** 2
        slack = big_m * mpmath.pi / points / 2
        assert grid <= exact + mpmath.mpf(10) ** -25
        assert exact - grid <= slack
        angles = [mpmath.mpf(sp.N(a, 30)) for a in attaining_angles(n)]
        assert min(abs(arg - a) for a in angles) <= mpmath.pi / points
    assert best_value(n) == pytest.approx(float(exact), rel=1e-15)


def test_a_non_coprime_multiple_does_not_attain() -> None:
    # theta = 2 pi * 2/6 repeats after 3 steps: g(3) = 0
    theta = 2 * math.pi * 2 / 6
    assert min(1 - math.cos(m * theta) for m in range(1, 6)) == pytest.approx(0.0, abs=1e-12)
    assert [str(a) for a in attaining_angles(6)] == ["pi/3", "5*pi/3"]
    assert euclid_lemma_holds(24) and euclid_lemma_range(EUCLID_RANGE)


def test_readings_and_conventions() -> None:
    assert [competing_offsets(n) for n in (2, 3, 10)] == [1, 2, 9]
    assert [competing_offsets(n, "gap_sup") for n in (2, 3, 4, 10)] == [1, 1, 2, 5]
    assert [competing_offsets(n, convention="offset") for n in (1, 2, 9)] == [1, 2, 9]
    assert [competing_offsets(n, "gap_sup", "offset") for n in (1, 2, 3, 9)] == [1, 1, 2, 5]
    # the offset convention at n is the length convention at n + 1
    assert best_value(7, convention="offset") == best_value(8)
    ratio = best_value(100) / reported_term(100)
    assert 3.99 < ratio < 4 and best_value(2) / reported_term(2) == pytest.approx(16 / math.pi**2)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": 1}, r"n=1 is out of range; accepted: an integer >= 2 \(length convention\)"),
        ({"n": 0, "convention": "offset"}, ">= 1"),
        ({"n": 3, "reading": "nosuch"}, "reading="),
        ({"n": 3, "convention": "nosuch"}, "convention="),
        ({"n": 2.5}, "integer"),
    ],
)
def test_bad_input_is_named(kwargs: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        competing_offsets(**kwargs)
