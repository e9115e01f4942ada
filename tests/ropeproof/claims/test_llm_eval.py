"""The claim ``llm-eval.local-ordering``: its verdict follows the models' orderings (each way), and its
meaning carries the readings."""

from __future__ import annotations

import pytest
import torch

from ropeproof.claims import _llm_eval as claims_llm_eval
from ropeproof.claims._llm_eval import CLAIMS
from ropeproof.claims._registry import CheckContext, run_claim
from ropeproof.verify.studies.llm_eval import _local_models as local_models
from ropeproof.verify.studies.llm_eval._results import RunSummary
from ropeproof.verify.studies.llm_eval._statistics import LengthResult


def _summary(label: str, letter: tuple[float, float], number: tuple[float, float]) -> RunSummary:
    results = [
        LengthResult(t, 32, (lo + hi) / 2, None, 16, lo, hi)
        for t, (lo, hi) in (("number", number), ("letter", letter))
    ]
    return RunSummary(label, {"provider": "hf"}, results, [], 0)


@pytest.mark.parametrize(
    ("second", "verdict"),
    [
        (((0.8, 1.0), (0.0, 0.2)), "holds"),
        (((0.0, 0.2), (0.8, 1.0)), "violated"),
        (((0.5, 0.9), (0.4, 0.8)), "unresolvable"),
    ],
)
def test_the_verdict_follows_the_orderings(monkeypatch: pytest.MonkeyPatch, second, verdict: str) -> None:
    summaries = [_summary("a", (0.9, 1.0), (0.0, 0.1)), _summary("b", *second)]
    monkeypatch.setattr(local_models, "local_results", lambda *args, **kw: summaries)
    monkeypatch.setattr(claims_llm_eval, "HAS_HF", True)
    (claim,) = CLAIMS
    result = run_claim(claim, CheckContext(device=torch.device("cpu"), dtype=torch.float64, quick=True))
    assert result.outcome.verdict == verdict
    assert result.outcome.figures["orderings"]["a"] == "shown"
    meaning = claim.meaning_for(True, result.outcome.figures)
    assert "(8 prompts x 2 draws per task and length): a: shows [A]'s ordering" in meaning
    assert claim.expected == "open" and claim.id == "llm-eval.local-ordering"
