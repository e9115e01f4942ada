"""Claim results in a notebook (``ClaimResult._repr_markdown_`` / ``_repr_html_``)."""

from __future__ import annotations

import torch

from ropeproof.claims import CheckContext, Claim, Outcome, run_claim
from ropeproof.claims._display import result_html, result_markdown, verdict_text

CTX = CheckContext(torch.device("cpu"), torch.float64)


def _claim(outcome: Outcome) -> Claim:
    return Claim("my.claim", "A < B for every n.", "my notes", {"n": 3}, lambda ctx: outcome)


def test_a_violated_claim_shows_figures_and_counterexample() -> None:
    o = Outcome.judge(ok=False, figures={"gap": 0.25, "n": 4}, key_figure="gap", counterexample={"n": 4})
    result = run_claim(_claim(o), CTX)
    md = result._repr_markdown_()
    assert md == result_markdown(result)
    head = "**`my.claim`: violated** (expected holds, got violated;"  # a claim of yours: neutral words
    assert md.splitlines()[0].startswith(head)
    assert "| gap (key) | 0.25 |" in md and "| n | 4 |" in md and 'Counterexample: `{"n": 4}`' in md
    html = result._repr_html_()
    assert html == result_html(result) and "<code>my.claim</code>: violated" in html and "&lt;" in html


def test_certified_and_error_verdicts() -> None:
    certified = run_claim(_claim(Outcome("holds", certified=True)), CTX)
    assert verdict_text(certified) == "holds (certified)"
    assert "Counterexample" not in certified._repr_markdown_()

    def boom(ctx: CheckContext) -> Outcome:
        raise RuntimeError("broken check")

    failed = run_claim(Claim("my.err", "S.", "R", {}, boom), CTX)
    assert "RuntimeError: broken check" in failed._repr_markdown_()
