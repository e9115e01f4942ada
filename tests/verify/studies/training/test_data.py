from __future__ import annotations

from collections import Counter

import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure._tasks import follow_letter_chain, follow_number_chain
from ropeproof.verify.measure._tokenizer import task_tokenizer
from ropeproof.verify.studies.training._data import (
    TRAIN,
    VALIDATION,
    TaskEncoder,
    TrainingBatches,
    fixed_training_set,
    stream_seed,
    task_instances,
    training_set_chunk,
)


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


def test_a_fixed_training_set_is_visited_once_per_epoch_in_a_new_order() -> None:
    """TrainingBatches over a fixed set: the batches of one epoch are a permutation of the set (every
    sequence once), the next epoch another permutation, and rows are the set's own rows."""
    enc = TaskEncoder("number")
    size, batch = 192, 32  # three chunks of 64; six batches an epoch
    whole = fixed_training_set(enc, size, 7)
    assert whole.input_ids.shape == (size, 17)
    assert training_set_chunk(enc, size, 7, 1).input_ids.equal(whole.input_ids[64:128])
    stream = TrainingBatches(enc, batch, 7, size)
    rows = {tuple(r) for r in whole.input_ids.tolist()}
    assert len(rows) == size  # no two sequences of the set alike (so rows identify their index)
    epochs = []
    for e in range(2):
        seen = [tuple(r) for k in range(6 * e, 6 * e + 6) for r in stream.batch(k).input_ids.tolist()]
        assert sorted(seen) == sorted(rows)
        epochs.append(seen)
    assert epochs[0] != epochs[1]
    again = TrainingBatches(enc, batch, 7, size)  # the same order from a fresh stream (resume)
    assert again.batch(8).input_ids.equal(stream.batch(8).input_ids)
    first = stream.batch(0)
    for ids, ans in zip(first.input_ids.tolist(), first.answers.tolist(), strict=True):
        assert follow_number_chain([enc.tokens[i] for i in ids]) == enc.tokens[ans]
    fresh = TrainingBatches(enc, batch, 7, None)
    assert fresh.batch(3).input_ids.equal(enc.draw(batch, 7, TRAIN, 3).input_ids)
    with pytest.raises(InputError, match="chunk=3"):
        training_set_chunk(enc, size, 7, 3)
