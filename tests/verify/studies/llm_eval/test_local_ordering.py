"""Judging [A]'s ordering on the local models: the verdict from each model's 95% intervals, read off by
hand for intervals chosen disjoint or overlapping, and the figures that carry the accuracies and [A]'s
reported levels."""

from __future__ import annotations

import pytest

from ropeproof.machinery._result_store import ResultStore
from ropeproof.verify.studies.llm_eval import _local_models as local_models
from ropeproof.verify.studies.llm_eval._local_ordering import local_ordering_outcome, ordering_outcome
from ropeproof.verify.studies.llm_eval._results import RunSummary
from ropeproof.verify.studies.llm_eval._statistics import LengthResult


def _summary(
    label: str, letter: tuple[float, float], number: tuple[float, float], length: int = 32
) -> RunSummary:
    """One model at one length: each task's 95% interval as given, its mean the interval's middle."""
    results = [
        LengthResult(t, length, (lo + hi) / 2, None, 16, lo, hi)
        for t, (lo, hi) in (("number", number), ("letter", letter))
    ]
    return RunSummary(label, {"provider": "hf"}, results, [], 0)


SHOWN = _summary("a", (0.9, 1.0), (0.0, 0.1))


@pytest.mark.parametrize(
    ("second", "verdict"),
    [
        (((0.8, 1.0), (0.0, 0.2)), "holds"),  # letter above number: disjoint
        (((0.0, 0.2), (0.8, 1.0)), "violated"),  # letter below number: disjoint
        (((0.5, 0.9), (0.4, 0.8)), "unresolvable"),  # the intervals overlap
    ],
)
def test_the_verdict_follows_the_intervals(second, verdict: str) -> None:
    out = ordering_outcome([SHOWN, _summary("b", *second)])
    assert out.verdict == verdict and out.figures["orderings"]["a"] == "shown"
    assert out.figures["reading"].startswith("a: shows [A]'s ordering") and "; b: " in out.figures["reading"]


def test_a_model_without_a_common_length_decides_nothing() -> None:
    letter_only = RunSummary(
        "c", {"provider": "hf"}, [LengthResult("letter", 32, 0.9, None, 16, 0.8, 1.0)], [], 0
    )
    out = ordering_outcome([SHOWN, letter_only])
    assert out.figures["orderings"]["c"] == "not measured" and out.verdict == "unresolvable"


def test_the_figures_carry_accuracies_and_the_reported_levels() -> None:
    """At length 32 [A] reports letter > 0.88 and number < 0.5: (0.9, 1.0) meets the first, (0.0, 0.1) the
    second."""
    out = ordering_outcome([SHOWN])
    f = out.figures["a"]
    assert f["accuracy"] == {"number": {"32": 0.05}, "letter": {"32": 0.95}}
    assert f["per_length"] == {"32": "above"}
    assert f["thresholds"] == {"letter > 0.88 at 32": "met", "number < 0.5 at 32": "met"}


def test_local_ordering_runs_the_local_models(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = {}

    def fake(lengths, prompts, draws, store=None):
        seen.update(lengths=lengths, prompts=prompts, draws=draws, store=store)
        return [SHOWN]

    monkeypatch.setattr(local_models, "local_results", fake)
    store = ResultStore()
    assert local_ordering_outcome([32], 8, 2, store).verdict == "holds"
    assert seen == {"lengths": [32], "prompts": 8, "draws": 2, "store": store}
