from __future__ import annotations

from collections import Counter

import pytest

from ropeproof.theory.errors import InputError
from ropeproof.verify.tasks import follow_letter_chain, follow_number_chain
from ropeproof.verify.tokenizer import task_tokenizer
from ropeproof.verify.training.data import TRAIN, VALIDATION, TaskEncoder, stream_seed, task_instances


@pytest.mark.parametrize("task", ["number", "letter"])
def test_batches_are_balanced_seeded_and_answered_by_the_chain(task: str) -> None:
    enc = TaskEncoder(task)
    a = enc.draw(64, 0, TRAIN, 5)
    b = enc.draw(64, 0, TRAIN, 5)
    assert a.input_ids.equal(b.input_ids) and a.answers.equal(b.answers)
    assert not enc.draw(64, 0, TRAIN, 6).input_ids.equal(a.input_ids)
    assert a.input_ids.shape == (64, 17)
    assert Counter(a.hops.tolist()) == {1: 16, 2: 16, 3: 16, 4: 16}
    follow = follow_number_chain if task == "number" else follow_letter_chain
    for row, ans in zip(a.input_ids.tolist(), a.answers.tolist(), strict=True):
        tokens = [enc.tokens[i] for i in row]
        assert follow(tokens) == enc.tokens[ans]


@pytest.mark.parametrize("task", ["number", "letter"])
def test_ids_are_the_tokenizer_ids(task: str) -> None:
    enc = TaskEncoder(task)
    tok = task_tokenizer(task)
    inst = task_instances(task, 3, seed=1)
    batch = enc.batch(inst)
    for row, i in zip(batch.input_ids.tolist(), inst, strict=True):
        assert tok(" ".join(t.lower() for t in i.tokens))["input_ids"] == row
    assert enc.vocab_size == len(tok)


def test_streams_differ_and_bad_seeds_are_refused() -> None:
    assert stream_seed(0, TRAIN, 0) != stream_seed(0, VALIDATION, 0)
    with pytest.raises(InputError, match="seed="):
        stream_seed(-1, TRAIN, 0)
    with pytest.raises(InputError, match="task="):
        TaskEncoder("words")
