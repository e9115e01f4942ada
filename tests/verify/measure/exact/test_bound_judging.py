"""Judging Theorem 3.2's bounds against exact sweeps under both length conventions, against references
computed here by hand in mpmath."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from ropeproof.constructions._paper import ALPHABET_SIZE, INDEX_THETA, RETRIEVAL_THETA
from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._bound_judging import (
    best_theta_outcome,
    certified_index_outcome,
    certified_retrieval_outcome,
    length_convention_outcome,
    length_ranges,
    offset_convention,
)
from ropeproof.verify.measure.exact._sweep import sweep_index, sweep_retrieval

LENGTHS = 100


def test_index_offset_convention_matches_a_brute_force() -> None:
    """T_Index's worst margin at length L is min over key offsets 1 <= m <= L - 1 of 1 - cos(m theta)
    (the target scores cos(0) = 1, a key m positions away cos(m theta)). Recomputed here in mpmath,
    independently of the sweep: with n the largest offset the pi^2/(2 n^2) term fails exactly at the
    lengths where that minimum exceeds pi^2 / (2 (L - 1)^2); with n the length, pi^2 / (2 L^2)."""
    table = sweep_index(INDEX_THETA, LENGTHS)
    with mpmath.workdps(40):
        theta = mpmath.mpf(INDEX_THETA)
        worst = [min(1 - mpmath.cos(m * theta) for m in range(1, L)) for L in range(2, LENGTHS + 1)]
        fails_offset = [
            L
            for L, w in zip(range(2, LENGTHS + 1), worst, strict=True)
            if w > mpmath.pi**2 / (2 * (L - 1) ** 2)
        ]
        fails_length = [
            L for L, w in zip(range(2, LENGTHS + 1), worst, strict=True) if w > mpmath.pi**2 / (2 * L**2)
        ]
    got = offset_convention(table, 1, "margin_inf")
    assert got["verdict"] == "violated" and got["first_violation_n"] == fails_offset[0]
    assert got["violating_rows"] == len(fails_offset)
    assert fails_offset[0] == fails_length[0] + 1  # the shift the convention claim reports
    assert offset_convention(table, 0, "margin_inf")["verdict"] == "holds"  # 1 - cos(theta): no n


def test_retrieval_offset_convention_fails_only_where_the_margin_beats_the_shifted_bound() -> None:
    """With n the largest offset, the margin reading at theta = 0.0027 fails exactly at the lengths L
    where the exact worst margin (the toolkit's sympy-proved closed form, evaluated in mpmath)
    exceeds 1 - cos(omega - (L - 1) theta)."""
    table = sweep_retrieval(ALPHABET_SIZE, RETRIEVAL_THETA, LENGTHS)
    got = offset_convention(table, None, "margin_inf")
    margins = table.columns["margin_inf"]
    with mpmath.workdps(40):
        omega, theta = 2 * mpmath.pi / ALPHABET_SIZE, mpmath.mpf(RETRIEVAL_THETA)
        fails = [
            int(L)
            for L, m in zip(table.columns["n"], margins, strict=True)
            if mpmath.mpf(float(m)) - (1 - mpmath.cos(omega - (int(L) - 1) * theta)) > 1e-12
        ]
    assert fails == [2]
    assert got["first_violation_n"] == fails[0] and got["violating_rows"] == len(fails)


def test_length_ranges() -> None:
    assert length_ranges([2, 3, 4, 9, 11, 12]) == "2..4, 9, 11..12"
    assert length_ranges([]) == "none" and length_ranges([5]) == "5"


def test_best_theta_against_the_closed_form() -> None:
    """At theta = 2 pi / n the worst margin is 1 - cos(2 pi / n) (the nearest competitor sits one turn
    away), so its ratio to pi^2/(2 n^2) is (1 - cos(2 pi / n)) 2 n^2 / pi^2, computed here in mpmath."""
    out = best_theta_outcome(40)
    with mpmath.workdps(30):
        ratios = [(1 - mpmath.cos(2 * mpmath.pi / n)) * 2 * n**2 / mpmath.pi**2 for n in range(3, 41)]
    assert out.verdict == "violated" and out.figures["first_violation_n"] == 3
    assert np.isclose(out.figures["ratio_at_max_n"], float(ratios[-1]), rtol=1e-12)
    assert out.counterexample["n"] == 3 and out.counterexample["input"]["tokens"][-1] == "2"


def _mp_retrieval_margin(n: int, theta, omega):
    """T_Retrieval's worst margin from the toolkit's sympy-proved closed form, in mpmath (valid while
    (n - 1) theta <= omega, which every row below satisfies)."""
    shared = mpmath.sin((omega - (2 * n - 3) * theta) / 2)
    if theta == 0:
        return 2 * mpmath.sin(omega / 2) ** 2
    if n == 2 or (2 * n - 3) * theta >= omega:
        return 2 * mpmath.sin((omega + theta) / 2) * shared
    return 2 * mpmath.sin((omega - theta) / 2) * shared


def test_certified_index_outcome_counts_the_rows_mpmath_finds_violated() -> None:
    """Both readings' violated rows against mpmath: the worst margin min_{m <= L-1} (1 - cos(m theta)), the
    largest gap the same over m <= ceil((L - 1)/2), each against min(1 - cos theta, pi^2/(2 L^2))."""
    out = certified_index_outcome(INDEX_THETA, LENGTHS)
    with mpmath.workdps(40):
        theta = mpmath.mpf(INDEX_THETA)
        g = [None] + [1 - mpmath.cos(m * theta) for m in range(1, LENGTHS)]

        def bound(L: int):
            return min(1 - mpmath.cos(theta), mpmath.pi**2 / (2 * L**2))

        margin = [L for L in range(2, LENGTHS + 1) if min(g[1:L]) > bound(L)]
        gap = [L for L in range(2, LENGTHS + 1) if min(g[1 : -(-(L - 1) // 2) + 1]) > bound(L)]
    assert out.verdict == "violated" and out.certified
    assert out.figures["first_violation_n"] == min(margin[0], gap[0]) == 4
    assert out.figures["violated_rows"] == len(margin) + len(gap)
    assert out.figures["index/margin_inf"]["violated_rows"] == len(margin)
    assert out.counterexample["check"] == "index/margin_inf" and out.counterexample["n"] == 4


def test_certified_retrieval_outcome_labels_each_angle_and_counts_mpmath_violations() -> None:
    out = certified_retrieval_outcome(ALPHABET_SIZE, (0.0, RETRIEVAL_THETA), LENGTHS)
    with mpmath.workdps(40):
        omega, theta = 2 * mpmath.pi / ALPHABET_SIZE, mpmath.mpf(RETRIEVAL_THETA)
        fails = [
            L
            for L in range(2, LENGTHS + 1)
            if _mp_retrieval_margin(L, theta, omega) > 1 - mpmath.cos(omega - L * theta)
        ]
    at_zero, at_theta = (
        out.figures["retrieval(theta=0)/margin_inf"],
        out.figures["retrieval(theta=0.0027)/margin_inf"],
    )
    assert at_zero["verdict"] == "holds" and at_theta["verdict"] == "violated"
    assert at_theta["violated_rows"] == len(fails) == out.figures["violated_rows"]
    assert out.verdict == "violated" and out.figures["first_violation_n"] == fails[0] == 2


def _checks(index_table, retrieval_table) -> dict:
    return {
        "index.pi2": (index_table, 1, "margin_inf"),
        "index.one-minus-cos": (index_table, 0, "margin_inf"),
        "retrieval": (retrieval_table, None, "margin_inf"),
    }


def test_length_convention_lists_the_failing_lengths_mpmath_finds() -> None:
    """The Retrieval margin at theta = 0.0027 against 1 - cos(omega - n theta) with n = L and n = L - 1,
    the margin from the closed form in mpmath; the pi^2/(2 n^2) check moves its first failure (4 -> 5,
    as the brute force above finds) and its extent, but no verdict changes."""
    index, retrieval = (
        sweep_index(INDEX_THETA, LENGTHS),
        sweep_retrieval(ALPHABET_SIZE, RETRIEVAL_THETA, LENGTHS),
    )
    out = length_convention_outcome(_checks(index, retrieval), "retrieval")
    with mpmath.workdps(40):
        omega, theta = 2 * mpmath.pi / ALPHABET_SIZE, mpmath.mpf(RETRIEVAL_THETA)
        m = {L: _mp_retrieval_margin(L, theta, omega) for L in range(2, LENGTHS + 1)}
        length = [L for L in m if m[L] > 1 - mpmath.cos(omega - L * theta)]
        offset = [L for L in m if m[L] > 1 - mpmath.cos(omega - (L - 1) * theta)]
    f = out.figures
    assert out.verdict == "holds" and f["checks"] == 3 and f["verdict_changes"] == 0
    assert f["retrieval_margin_failing_lengths"] == length_ranges(length) == "2..24"
    assert f["retrieval_margin_failing_lengths_offset"] == length_ranges(offset) == "2"
    assert f["first_failure_changes_ids"] == ["index.pi2"] and f["by_claim"]["index.pi2"]["offset"][1] == 5
    assert f["extent_changes_ids"] == ["index.pi2", "retrieval"]
    assert f["retrieval_margin_offset_rows_agree"] is True
    assert list(f["by_claim"]) == ["index.pi2", "index.one-minus-cos", "retrieval"]


def test_length_convention_is_violated_when_a_verdict_changes() -> None:
    """To length 4, pi^2/(2 n^2) fails at n = 4 with n the length and nowhere with n the largest offset
    (its first failure there is length 5)."""
    index, retrieval = sweep_index(INDEX_THETA, 4), sweep_retrieval(ALPHABET_SIZE, RETRIEVAL_THETA, 4)
    out = length_convention_outcome(_checks(index, retrieval), "retrieval")
    assert out.verdict == "violated" and out.figures["verdict_changes_ids"] == ["index.pi2"]
    assert out.figures["by_claim"]["index.pi2"] == {
        "length": ["violated", 4, 1],
        "offset": ["holds", None, 0],
    }
    assert out.counterexample["verdict_changes"] == ["index.pi2"]


def test_length_convention_refuses_a_listed_check_that_is_not_a_min_of_terms() -> None:
    index, retrieval = sweep_index(INDEX_THETA, 4), sweep_retrieval(ALPHABET_SIZE, RETRIEVAL_THETA, 4)
    with pytest.raises(InputError, match="listed"):
        length_convention_outcome(_checks(index, retrieval), "index.pi2")
    with pytest.raises(InputError, match="listed"):
        length_convention_outcome(_checks(index, retrieval), "absent")
