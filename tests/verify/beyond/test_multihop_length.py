"""The length study: decoy inputs keep their chains, the measured accuracy agrees with the
certificate (100% wherever the proof holds), and failures come with confirmed witnesses."""

from __future__ import annotations

import pytest

from ropeproof.constructions.multihop_compile import compile_program
from ropeproof.theory.errors import InputError
from ropeproof.verify.beyond.multihop_length import (
    best_planes,
    chain_positions,
    default_count,
    default_lengths,
    length_settings,
    length_study,
    log_ticks,
    with_decoys,
)
from ropeproof.verify.task_lengths import long_task
from ropeproof.verify.tasks import follow_letter_chain, follow_number_chain


def test_settings_and_best_planes() -> None:
    keys = [s.key for s in length_settings()]
    assert keys == [
        "number-paper",
        "number-best",
        "number-checkpoint",
        "letter-paper",
        "letter-best",
        "letter-checkpoint",
    ]
    planes = best_planes()
    assert len(planes) == 8 and abs(sum(a for _, a in planes) - 1) < 1e-12
    assert default_lengths(False)[-1] == 10000 and default_count(10000, False) == 4
    assert log_ticks([17, 10000]) == [100, 1000, 10000]


@pytest.mark.parametrize("task", ["number", "letter"])
def test_decoy_inputs_keep_their_chains(task: str) -> None:
    setting = next(s for s in length_settings() if s.task == task and s.key.endswith("checkpoint"))
    model = compile_program(setting.program(16))
    follow = follow_number_chain if task == "number" else follow_letter_chain
    for inst in long_task(task, 12, 40, seed=4):
        adv = with_decoys(model, inst)
        assert follow(adv.tokens) == inst.answer
        chain = chain_positions(task, inst.tokens)
        assert chain[0] == 39 and chain[-1] == inst.target_position and len(chain) == inst.hops + 1
        assert all(adv.tokens[p] == inst.tokens[p] for p in chain)
        assert adv.tokens != inst.tokens  # some answer-kind token off the chain became the decoy


def test_accuracy_is_perfect_wherever_the_proof_holds() -> None:
    settings = [s for s in length_settings() if s.key in ("number-checkpoint", "letter-best")]
    study = length_study(settings, lengths=[17, 20, 64], builds=("distractors",), count=lambda n: 6, seed=1)
    assert len(study.rows) == 6
    for row in study.rows:
        if row.n <= row.certified_horizon:
            assert row.accuracy == 1.0 and row.decoy_accuracy == 1.0
    assert study.certificates["number-checkpoint"].horizon == 19
    past = next(r for r in study.rows if r.setting == "number-checkpoint" and r.n == 20)
    assert past.accuracy == 1.0  # sampled inputs still work where the proof has stopped
    fail = study.failures[("number-checkpoint", "distractors")]
    assert fail["n"] == 64 and fail["confirmed_by_full_module"] and len(fail["tokens"]) == 64
    assert fail["expected"] != fail["given"]
    summary = study.summary()
    assert summary["letter-best"]["measured"]["distractors"]["all_correct_up_to"] == 64
    with pytest.raises(InputError, match="builds"):
        length_study(settings, lengths=[17], builds=("nope",))
