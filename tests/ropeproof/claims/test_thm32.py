"""Theorem 3.2's checks under both length conventions, against references computed here by hand."""

from __future__ import annotations

import math

import numpy as np

from ropeproof.claims import _thm32 as thm32
from ropeproof.constructions._paper import RETRIEVAL_THETA


def test_the_convention_claim_lists_what_depends_on_it() -> None:
    import torch

    from ropeproof.claims._registry import CheckContext, run_claim

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
    from ropeproof._cli import main

    out = tmp_path / "r"
    argv = ["check", "--quick", "--certified", "--strict", "--no-figures", "--no-progress", "--out", str(out)]
    argv += ["--jobs", "1"]  # one process (test_check_pool.py runs two)
    assert main([*argv, "--only", "thm3.2.*"]) == 0
