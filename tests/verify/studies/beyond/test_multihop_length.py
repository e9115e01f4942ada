"""The length study: decoy inputs keep their chains, the measured accuracy agrees with the certificate
(100% wherever the proof holds), first failures are exact (a planted failure between grid points is
found) and come with witnesses the exported checkpoint can be asked."""

from __future__ import annotations

import pytest

from ropeproof.constructions._multihop_compile import compile_program
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import to_json_data
from ropeproof.verify.kernel._chain_readout import long_answers
from ropeproof.verify.measure._task_lengths import long_task
from ropeproof.verify.measure._tasks import follow_letter_chain, follow_number_chain
from ropeproof.verify.studies.beyond._multihop_length import (
    chain_positions,
    default_count,
    default_lengths,
    first_failure_reading,
    length_settings,
    length_study,
    log_ticks,
    with_decoys,
)


def _settings(*keys: str) -> list:
    return [s for s in length_settings() if s.key in keys]


def test_settings() -> None:
    keys = [s.key for s in length_settings()]
    assert keys == [
        "number-paper",
        "number-smallest",
        "number-best",
        "letter-paper",
        "letter-smallest",
        "letter-best",
    ]
    assert default_lengths(False)[-1] == 10000 and 850 in default_lengths(False)
    assert default_count(10000, False) == 4
    assert log_ticks([17, 10000]) == [100, 1000, 10000]


@pytest.mark.parametrize("task", ["number", "letter"])
def test_decoy_inputs_keep_their_chains(task: str) -> None:
    (setting,) = _settings(f"{task}-smallest")
    model = compile_program(setting.spec(40).program)
    follow = follow_number_chain if task == "number" else follow_letter_chain
    for inst in long_task(task, 12, 40, seed=4):
        adv = with_decoys(model, inst)
        assert follow(adv.tokens) == inst.answer
        chain = chain_positions(task, inst.tokens)
        assert chain[0] == 39 and chain[-1] == inst.target_position and len(chain) == inst.hops + 1
        assert all(adv.tokens[p] == inst.tokens[p] for p in chain)
        assert adv.tokens != inst.tokens  # some answer-kind token off the chain became the decoy


def test_first_failure_reading_is_no_stronger_than_the_evidence() -> None:
    """Issue 34: 'first failure' is proved first only where it meets the certificate."""
    assert first_failure_reading(44, 45).startswith("first failure found; no failure below it")
    sampled = first_failure_reading(20, 45)
    assert sampled.startswith(
        "first failure found by a sampled search on the float64 model (no length skipped)"
    )
    assert "21..44 are neither proved nor seen to fail" in sampled
    assert first_failure_reading(44, None) == "no failure found by the sampled search on the float64 model"


def test_accuracy_is_perfect_wherever_the_proof_holds_and_the_first_failure_is_exact() -> None:
    """The width-6 number checkpoint is certified to 44 and first fails at 45 (offset 44 is within
    0.018 rad of 7 turns of theta = 1): the study finds 45 although its grid jumps from 32 to 64."""
    settings = _settings("number-smallest", "letter-best")
    study = length_study(settings, lengths=[17, 32, 64], builds=("distractors",), count=lambda n: 6, seed=1)
    grid = [r for r in study.rows if r.grid]
    assert len(grid) == 6 and all(r.inputs == 6 for r in grid)
    for row in study.rows:
        assert row.accuracy_ci[0] <= row.accuracy <= row.accuracy_ci[1]
        if row.n <= row.certified_horizon:
            assert row.accuracy == 1.0 and row.decoy_accuracy == 1.0
    assert study.certificates["number-smallest"].horizon == 44
    fail = study.failures[("number-smallest", "distractors")]
    assert fail["n"] == 45 and fail["exact"] and fail["searched"] == [33, 64]
    assert (
        fail["confirmed_by_full_module"] and len(fail["tokens"]) == 45 and fail["expected"] != fail["given"]
    )
    assert {r.n for r in study.rows if not r.grid and r.setting == "number-smallest"} == set(range(33, 46))
    side = study.side_by_side()
    proved_first = (
        "first failure found; no failure below it among lengths proved (the certificate reaches n - 1)"
    )
    assert side["number-smallest/distractors"] == {
        "certified_horizon": 44,
        "first_failure": 45,
        "gap": 0,
        "reading": proved_first,  # 45 meets the certificate: every shorter length is proved
    }
    assert side["letter-best/distractors"] == {
        "certified_horizon": 64,
        "first_failure": None,
        "gap": None,
        "reading": "no failure found by the sampled search on the float64 model",
    }
    summary = study.summary()
    assert summary["letter-best"]["measured"]["distractors"]["grid_all_correct_up_to"] == 64
    # what the run's store keeps of it (JSON data) is the same study
    data = to_json_data(study.to_json())
    assert data["side_by_side"] == side and data["summary"] == to_json_data(summary)
    assert data["rows"] == [to_json_data(r.as_dict()) for r in study.rows]
    assert [(f["setting"], f["build"], f["witness"]["n"]) for f in data["failures"]] == [
        ("number-smallest", "distractors", 45)
    ]
    assert summary["number-smallest"]["certificate_steps"]["basic"]["horizon"] == 19
    with pytest.raises(InputError, match="builds"):
        length_study(settings, lengths=[17], builds=("nope",))
    with pytest.raises(InputError, match="lengths"):
        length_study(settings, lengths=[16])


def test_a_planted_failure_between_grid_points_is_found() -> None:
    """Wrong answers planted at 37 and at the grid point 48, none in 38..47: a bisection between 32 and
    48 would report 48 or 47; the search over every length reports 37, with its witness."""
    planted = {37, 48}

    def answer(model, seqs):
        out = long_answers(model, seqs)
        answers = list(model.answers)
        if len(seqs[0]) in planted:
            out[0] = answers[(answers.index(out[0]) + 1) % len(answers)]
        return out

    study = length_study(
        _settings("letter-best"),
        [17, 32, 48, 64],
        ("distractors",),
        lambda n: 3,
        answer=answer,
        with_steps=False,
    )
    fail = study.failures[("letter-best", "distractors")]
    assert fail["n"] == 37 and fail["exact"] and fail["searched"] == [33, 48]
    assert len(fail["tokens"]) == 37 and fail["kind"] == "sampled"
    assert fail["confirmed_by_full_module"] is False  # the full module answers it right: a planted failure
    searched = sorted(r.n for r in study.rows if not r.grid)
    assert searched == list(range(33, 38))


def test_witnesses_are_in_the_checkpoint_vocabulary() -> None:
    """The 'window' build needs integers up to n - 1: the study's checkpoint is built for its longest
    length, so the witness is in its vocabulary and the exported tokenizer encodes it without [UNK]."""
    pytest.importorskip("transformers")
    from ropeproof.verify.measure._tokenizer import UNK, build_tokenizer, prompt_text

    (setting,) = _settings("number-smallest")
    study = length_study([setting], [17, 64], ("window",), lambda n: 6, with_steps=False)
    fail = study.failures[("number-smallest", "window")]
    assert fail["exact"] and fail["in_vocabulary"] and max(int(t) for t in fail["tokens"] if t.isdigit()) > 16
    tokens = compile_program(setting.spec(64).program).tokens
    tok = build_tokenizer(tokens)
    ids = tok(prompt_text(fail["tokens"]))["input_ids"]
    assert len(ids) == fail["n"] and tok.convert_tokens_to_ids(UNK) not in ids


def test_the_best_settings_are_the_default_checkpoints_and_take_them_from_the_store() -> None:
    """standard_study shares the store's default checkpoints with the best settings: at any design length
    the two specs compile to the same weights; a study given a compiled model and its certificate uses
    them (and reports what it would have computed), and refuses a certificate of another search."""
    import numpy as np

    from ropeproof.machinery._result_store import ResultStore
    from ropeproof.verify.measure.exact._multihop_certified import certified_horizon
    from ropeproof.verify.studies.beyond._checkpoint_solvers import DEFAULT_CHECKPOINTS

    store = ResultStore()
    (setting,) = _settings("number-best")
    spec, model = store.get(DEFAULT_CHECKPOINTS, task="number", max_length=64, hops=4, layers=12)["gptj"]
    mine = compile_program(setting.spec(64).program)
    assert spec.summary() == setting.spec(64).summary() and mine.tokens == model.tokens
    assert np.array_equal(mine.W_E, model.W_E) and np.array_equal(mine.W_U, model.W_U)
    for a, b in zip(mine.layers, model.layers, strict=True):
        assert a.spec == b.spec and all(np.array_equal(getattr(a, w), getattr(b, w)) for w in ("W_Q", "W_K"))
    cert = certified_horizon(model, 4, max_n=64)
    args = ([setting], [17, 64], ("distractors",), lambda n: 4)
    shared = length_study(*args, compiled={"number-best": (model, cert)})
    assert shared.certificates["number-best"] is cert
    assert shared.to_json() == length_study(*args).to_json()
    with pytest.raises(InputError, match="not this search's"):
        length_study(*args, compiled={"number-best": (model, certified_horizon(model, 3, max_n=64))})
