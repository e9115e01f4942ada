"""Theorem 3.2's checks under both length conventions, against references computed here by hand."""

from __future__ import annotations

import math

import mpmath
import numpy as np

from ropeproof.claims import thm32
from ropeproof.constructions.paper import ALPHABET_SIZE, INDEX_THETA, RETRIEVAL_THETA


def test_index_offset_convention_matches_a_brute_force() -> None:
    """T_Index's worst margin at length L is min over key offsets 1 <= m <= L - 1 of 1 - cos(m theta)
    (the target scores cos(0) = 1, a key m positions away cos(m theta)). Recomputed here in mpmath,
    independently of the sweep: with n the largest offset the pi^2/(2 n^2) term fails exactly at the
    lengths where that minimum exceeds pi^2 / (2 (L - 1)^2); with n the length, pi^2 / (2 L^2)."""
    table = thm32._index_table(INDEX_THETA, thm32.LENGTHS, "float64")
    with mpmath.workdps(40):
        theta = mpmath.mpf(INDEX_THETA)
        worst = [min(1 - mpmath.cos(m * theta) for m in range(1, L)) for L in range(2, thm32.LENGTHS + 1)]
        fails_offset = [
            L
            for L, w in zip(range(2, thm32.LENGTHS + 1), worst, strict=True)
            if w > mpmath.pi**2 / (2 * (L - 1) ** 2)
        ]
        fails_length = [
            L
            for L, w in zip(range(2, thm32.LENGTHS + 1), worst, strict=True)
            if w > mpmath.pi**2 / (2 * L**2)
        ]
    got = thm32.offset_convention(table, 1, "margin_inf")
    assert got["verdict"] == "violated" and got["first_violation_n"] == fails_offset[0]
    assert got["violating_rows"] == len(fails_offset)
    assert fails_offset[0] == fails_length[0] + 1  # the shift the convention claim reports
    assert thm32.offset_convention(table, 0, "margin_inf")["verdict"] == "holds"  # 1 - cos(theta): no n


def test_retrieval_offset_convention_fails_only_where_the_margin_beats_the_shifted_bound() -> None:
    """With n the largest offset, the margin reading at theta = 0.0027 fails exactly at the lengths L
    where the exact worst margin (the toolkit's sympy-proved closed form, evaluated in mpmath)
    exceeds 1 - cos(omega - (L - 1) theta)."""
    table = thm32._retrieval_table(RETRIEVAL_THETA, thm32.LENGTHS, "float64")
    got = thm32.offset_convention(table, None, "margin_inf")
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
    assert thm32.length_ranges([2, 3, 4, 9, 11, 12]) == "2..4, 9, 11..12"
    assert thm32.length_ranges([]) == "none" and thm32.length_ranges([5]) == "5"


def test_the_convention_claim_lists_what_depends_on_it() -> None:
    import torch

    from ropeproof.claims.registry import CheckContext, run_claim

    claim = next(c for c in thm32.CLAIMS if c.id == "thm3.2.length-convention")
    result = run_claim(claim, CheckContext(torch.device("cpu"), torch.float64, quick=True))
    f = result.outcome.figures
    assert result.regression is None, result.regression
    assert f["verdict_changes_ids"] == []
    # the Index 1/n^2 term (alone and in the min) moves by one length under every reading
    assert sorted(f["first_failure_changes_ids"]) == sorted(
        f"thm3.2.index.{t}.{r}" for t in ("pi2-over-2n2", "min") for r in thm32.READINGS
    )
    assert np.isin(
        ["thm3.2.retrieval.theta=0.0027.margin_inf", "thm3.2.retrieval.theta=0.0027.gap_inf"],
        f["extent_changes_ids"],
    ).all()
    assert math.isclose(RETRIEVAL_THETA, 0.0027)


def test_certified_verdicts_carry_the_pinned_figures(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``check --quick --certified --strict`` on Theorem 3.2: the interval-arithmetic outcomes carry
    the same pinned figures (violating_rows, first_violation_n) as the float64 ones, so no pin is
    reported missing."""
    from ropeproof.cli import main

    out = tmp_path / "r"
    argv = ["check", "--quick", "--certified", "--strict", "--no-figures", "--no-progress", "--out", str(out)]
    assert main([*argv, "--only", "thm3.2.*"]) == 0
