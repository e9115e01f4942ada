"""The training claims: the shipped checkpoints' accuracy holds; [A]'s observations get a verdict that
follows the record (checked on the shipped records and on made-up ones that flip it)."""

from __future__ import annotations

import pytest
import torch

from ropeproof.claims import training as claims_training
from ropeproof.claims.registry import CheckContext, run_claim
from ropeproof.claims.training import CLAIMS, shipped_record
from ropeproof.verify.training.config import SMALL
from ropeproof.verify.training.trainer import TrainingRecord

CTX = CheckContext(device=torch.device("cpu"), dtype=torch.float64, quick=True)
IDS = [
    "training.small-accuracy",
    "training.hop-by-hop",
    "training.letter-simultaneous",
    "training.layer-roles",
    "training.letter-last-layer",
    "training.pure-heads",
    "training.uniform-early",
    "training.length",
    "training.frequencies",
]


def test_ids_expectations_and_quick() -> None:
    assert [c.id for c in CLAIMS] == IDS
    assert all(c.quick for c in CLAIMS)
    assert [c.id for c in CLAIMS if c.expected != "open"] == ["training.small-accuracy"]


def test_shipped_checkpoints_answer_the_held_out_prompts() -> None:
    pytest.importorskip("transformers")
    res = run_claim(CLAIMS["training.small-accuracy"], CTX)
    assert res.outcome.verdict == "holds", res.outcome.figures
    assert res.outcome.figures["min_accuracy_per_hop"] >= 0.95


@pytest.mark.parametrize("claim_id", IDS[1:])
def test_open_claims_are_decided(claim_id: str) -> None:
    if claim_id in ("training.letter-last-layer", "training.length", "training.frequencies"):
        pytest.importorskip("transformers")
    res = run_claim(CLAIMS[claim_id], CTX)
    assert res.outcome.verdict in ("holds", "violated"), res.outcome.detail


def test_hop_by_hop_reads_the_shipped_record() -> None:
    res = run_claim(CLAIMS["training.hop-by-hop"], CTX)
    rec = shipped_record("number")
    for h in (1, 2, 3, 4):  # the first checkpoint at >= 0.9, read off the record by hand
        first = next((e["step"] for e in rec.evaluations if e["accuracy"][str(h)] >= 0.9), None)
        assert res.outcome.figures["first_learned_step"][h] == first


def _fake(accuracy: dict[int, list[float]], s_pos: list[float], s_sym: list[float]) -> TrainingRecord:
    steps = [0, SMALL.checkpoint_every, 2 * SMALL.checkpoint_every]
    evals = []
    for k, step in enumerate(steps):
        acc = {str(h): accuracy[h][k] for h in accuracy}
        acc["0"] = 0.0
        dyn = {"S_pos": s_pos, "S_sym": s_sym, "entropy": [1.0] * len(s_pos)}
        evals.append({"step": step, "accuracy": acc, "dynamics": dyn})
    return TrainingRecord("number", SMALL, 0, [], evals, steps[-1])


def test_verdicts_flip_with_the_record(monkeypatch: pytest.MonkeyPatch) -> None:
    in_order = {1: [0, 1, 1], 2: [0, 0.5, 1], 3: [0, 0, 1], 4: [0, 0, 1]}
    together = {h: [0, 1, 1] for h in (1, 2, 3, 4)}
    roles_pos = [0.2, 0.9, 0.9, 0.9, 0.1, 0.1]  # middle layers positional, deep layers symbolic
    roles_sym = [0.8, 0.1, 0.1, 0.1, 0.9, 0.9]
    records = {
        "number": _fake(in_order, roles_pos, roles_sym),
        "letter": _fake(together, roles_sym, roles_pos),
    }
    monkeypatch.setattr(claims_training, "shipped_record", lambda task: records[task])
    verdict = {cid: run_claim(CLAIMS[cid], CTX).outcome.verdict for cid in IDS[1:4]}
    assert verdict == {
        "training.hop-by-hop": "holds",
        "training.letter-simultaneous": "holds",
        "training.layer-roles": "violated",  # the fake letter model has positional layers
    }
    records["letter"] = _fake(together, [0.1] * 6, [0.9] * 6)
    assert run_claim(CLAIMS["training.layer-roles"], CTX).outcome.verdict == "holds"
    assert run_claim(CLAIMS["training.pure-heads"], CTX).outcome.verdict == "holds"  # gaps >= 0.6
    records["number"] = _fake(together, roles_pos, roles_sym)  # 1 and 4 hops at the same step
    assert run_claim(CLAIMS["training.hop-by-hop"], CTX).outcome.verdict == "violated"
    records["letter"] = _fake(in_order, [0.1] * 6, [0.9] * 6)
    assert run_claim(CLAIMS["training.letter-simultaneous"], CTX).outcome.verdict == "violated"
    # every scored layer of the fakes has S_pos or S_sym <= 0.2: not near-uniform at any checkpoint
    assert run_claim(CLAIMS["training.uniform-early"], CTX).outcome.verdict == "violated"
    records["number"] = _fake(together, [0.95] * 6, [0.95] * 6)
    records["letter"] = _fake(together, [0.95] * 6, [0.95] * 6)
    assert run_claim(CLAIMS["training.uniform-early"], CTX).outcome.verdict == "holds"
    assert run_claim(CLAIMS["training.pure-heads"], CTX).outcome.verdict == "violated"
