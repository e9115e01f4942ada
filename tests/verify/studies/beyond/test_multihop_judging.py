"""Judging the multi-hop statements: the chain coefficients against the binomial sum counted here, the
certificate's threshold at the horizon itself, the length study's verdict on hand-made studies, and each
verdict turning when what it judges is made wrong."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore
from ropeproof.verify.interop.hf._converters import CONVERTERS
from ropeproof.verify.studies.beyond import _multihop_judging as judging
from ropeproof.verify.studies.beyond._multihop_judging import (
    CHAIN_RELATIVE_TOLERANCE,
    HOPS,
    LAYERS,
    NO_TRANSFORMERS,
    certified_outcome,
    checkpoint_model,
    default_checkpoint,
    hf_lengths_outcome,
    hf_parity_outcome,
    length_outcome,
    ps_layers_outcome,
    recursion_outcome,
    task_inputs,
)
from ropeproof.verify.studies.beyond._multihop_length import STANDARD_STUDY

CPU = torch.device("cpu")


def _binomial_coefficient(h: int) -> int:
    """``2^(L - L_I) sum_(k = h..L_I) binom(L_I, k)`` for the checkpoints' 4 hop layers of 12."""
    return 2 ** (LAYERS - HOPS) * sum(math.comb(HOPS, k) for k in range(h, HOPS + 1))


def test_checkpoint_models_are_compiled_once_per_run() -> None:
    store = ResultStore()
    assert checkpoint_model(store, "number") is checkpoint_model(store, "number")
    assert checkpoint_model(store, "letter").n_layers == LAYERS and len(store.computed) == 2


def test_task_inputs_and_default_checkpoint_name_what_they_accept() -> None:
    insts = task_inputs("letter", 3, (2,), seed=1)
    assert len(insts) == 3 and all(len(i.tokens) == 17 for i in insts)
    with pytest.raises(InputError, match=r"task='words'.*'number', 'letter'"):
        task_inputs("words", 3)
    store = ResultStore()
    store.get = lambda product, **kw: {a: (a, None) for a in CONVERTERS}  # type: ignore[method-assign]
    assert default_checkpoint(store, "number", "llama") == ("llama", None)
    with pytest.raises(InputError, match="arch='mistral' is unknown; accepted: \\['gptj', 'llama'\\]"):
        default_checkpoint(store, "number", "mistral")


def test_recursion_holds_with_the_binomial_coefficients() -> None:
    out = recursion_outcome(ResultStore(), CPU, 2)
    assert out.verdict == "holds", out.counterexample
    assert out.figures["chain_coefficients"] == {h: _binomial_coefficient(h) for h in range(1, HOPS + 1)}
    assert 0 <= out.figures["max_relative_channel_error"] <= CHAIN_RELATIVE_TOLERANCE


def test_recursion_off_the_closed_form_is_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    real = judging.standard_chain_coefficient
    monkeypatch.setattr(judging, "standard_chain_coefficient", lambda hl, L, h: real(hl, L, h) + (h == 2))
    out = recursion_outcome(ResultStore(), CPU, 1)
    assert out.verdict == "violated"
    assert out.counterexample["closed_form"][2] == _binomial_coefficient(2) + 1


def test_recursion_with_a_channel_off_its_multiple_is_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    """Coefficients scaled by ``1 + 1e-6`` on both sides: they agree with each other, but the real
    channel is ``1e-6`` relative away from the scaled multiple."""
    real, closed = judging.chain_coefficient, judging.standard_chain_coefficient
    monkeypatch.setattr(judging, "chain_coefficient", lambda p, h: real(p, h) * (1 + 1e-6))
    monkeypatch.setattr(judging, "standard_chain_coefficient", lambda hl, L, h: closed(hl, L, h) * (1 + 1e-6))
    out = recursion_outcome(ResultStore(), CPU, 1)
    assert out.verdict == "violated"
    assert out.figures["max_relative_channel_error"] > 100 * CHAIN_RELATIVE_TOLERANCE


@pytest.mark.parametrize("task", ["number", "letter"])
def test_the_certificate_is_judged_at_its_horizon(task: str) -> None:
    """The smallest checkpoints are certified to 44 tokens: that holds when 44 are needed and is violated,
    with the proof's stopping row at 45 as counterexample, when 45 are."""
    store = ResultStore()
    held = certified_outcome(store, task, HOPS, 64, needed=44)
    assert held.verdict == "holds" and held.certified and held.figures["certified_horizon"] == 44
    assert held.figures["gptj_width"] == (6 if task == "number" else 8)
    short = certified_outcome(store, task, HOPS, 64, needed=45)
    assert short.verdict == "violated" and short.counterexample["n"] == 45
    assert len(short.counterexample["tokens"]) == 45


class _Study:
    """A store that answers :data:`STANDARD_STUDY` with a given study."""

    def __init__(self, study: dict[str, Any]) -> None:
        self.study = study

    def get(self, product: Any, **kw: Any) -> dict[str, Any]:
        assert product is STANDARD_STUDY and set(kw) == {"quick"}
        return self.study


def _row(n: int, horizon: int, acc: float, decoy: float = 1.0, hi: float = 1.0) -> dict[str, Any]:
    return {
        "n": n,
        "certified_horizon": horizon,
        "accuracy": acc,
        "decoy_accuracy": decoy,
        "accuracy_ci": [0.0, hi],
        "inputs": 4,
    }


STUDY: dict[str, Any] = {
    "rows": [_row(17, 44, 1.0), _row(44, 44, 1.0), _row(45, 44, 0.0, hi=0.2), _row(60, 44, 0.5, hi=0.9)],
    "summary": {
        "s": {"measured": {"distractors": {"first_failure": {"n": 45}}, "window": {"first_failure": None}}}
    },
    "side_by_side": {"s/distractors": {"certified_horizon": 44, "first_failure": 45, "gap": 0}},
    "failures": [{"witness": {"in_vocabulary": True, "exact": True}}],
}


def test_a_study_wrong_only_past_its_horizon_holds() -> None:
    out = length_outcome(_Study(STUDY), quick=True)  # type: ignore[arg-type]
    assert out.verdict == "holds"
    assert out.figures["first_failure_n"] == {"s/distractors": 45, "s/window": None}
    assert out.figures["violations"] == 0 and out.figures["inputs_answered"] == 16
    assert out.figures["rows_below_25_past_horizon"] == 1


@pytest.mark.parametrize("field", ["accuracy", "decoy_accuracy"])
def test_a_wrong_answer_at_a_certified_length_is_violated(field: str) -> None:
    study = copy.deepcopy(STUDY)
    study["rows"][1][field] = 0.75  # n = 44, the certified horizon itself
    out = length_outcome(_Study(study), quick=True)  # type: ignore[arg-type]
    assert out.verdict == "violated" and out.figures["violations"] == 1
    assert out.counterexample == [study["rows"][1]]


@pytest.mark.parametrize("flaw", ["in_vocabulary", "exact"])
def test_a_witness_outside_the_vocabulary_or_inexact_is_violated(flaw: str) -> None:
    study = copy.deepcopy(STUDY)
    study["failures"][0]["witness"][flaw] = False
    out = length_outcome(_Study(study), quick=True)  # type: ignore[arg-type]
    assert out.verdict == "violated" and out.figures["violations"] == 0


def test_ps_layers_hold_and_turn_on_the_wrong_label(monkeypatch: pytest.MonkeyPatch) -> None:
    store = ResultStore()
    out = ps_layers_outcome(store, CPU, 8, 1e-4, HOPS + 1)
    assert out.verdict == "holds"
    for task, kind in (("number", "index"), ("letter", "retrieval")):
        assert [s["layer"] for s in out.figures[task]] == list(range(HOPS + 1))
        assert sum(s["kind"] == kind for s in out.figures[task]) == HOPS
    assert out.figures["min_index_S_pos"] > 0.5 and out.figures["min_retrieval_S_sym"] > 0.5
    monkeypatch.setattr(
        judging, "PS_LAYER_KINDS", (("number", "index", "symbolic"), *judging.PS_LAYER_KINDS[1:])
    )
    assert ps_layers_outcome(store, CPU, 8, 1e-4, HOPS + 1).verdict == "violated"


def test_without_transformers_the_hf_checks_are_unresolvable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judging, "_transformers", lambda: None)
    for out in (hf_parity_outcome(ResultStore(), 4), hf_lengths_outcome(ResultStore(), [17], {"17": 1})):
        assert out.verdict == "unresolvable" and out.detail == NO_TRANSFORMERS


def test_hf_lengths_needs_a_count_for_every_length() -> None:
    pytest.importorskip("transformers")
    with pytest.raises(InputError, match="missing: \\[850\\]"):
        hf_lengths_outcome(ResultStore(), [17, 850], {"17": 1})
