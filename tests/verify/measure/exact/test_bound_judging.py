"""Judging Theorem 3.2's bounds against exact sweeps under both length conventions, against references
computed here by hand in mpmath."""

from __future__ import annotations

import mpmath
import numpy as np

from ropeproof.constructions.paper import ALPHABET_SIZE, INDEX_THETA, RETRIEVAL_THETA
from ropeproof.verify.measure.exact.bound_judging import best_theta_outcome, length_ranges, offset_convention
from ropeproof.verify.measure.exact.sweep import sweep_index, sweep_retrieval

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
