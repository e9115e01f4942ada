"""Task generators: determinism, balance, and answers checked by following the chain independently."""

from __future__ import annotations

import collections

import pytest

from ropeproof.constructions.compile import compile_construction
from ropeproof.constructions.paper import index_construction, retrieval_construction
from ropeproof.theory.errors import InputError
from ropeproof.verify.measure.tasks import (
    encode_tasks,
    follow_letter_chain,
    follow_number_chain,
    letter_task,
    number_task,
)


def test_number_task_format_and_answers() -> None:
    tasks = number_task(240, seed=4)
    assert tasks == number_task(240, seed=4) and tasks != number_task(240, seed=5)
    for t in tasks:
        assert t.length == 17
        assert all(not x.isdigit() for x in t.tokens[:8]) and all(x.isdigit() for x in t.tokens[8:])
        assert all(1 <= int(x) <= 16 for x in t.tokens[8:])
        assert follow_number_chain(t.tokens) == t.answer == t.tokens[t.target_position]
    assert set(collections.Counter(t.hops for t in tasks).values()) == {60}
    assert set(collections.Counter(t.target_position for t in tasks).values()) == {30}


def test_letter_task_format_and_answers() -> None:
    tasks = letter_task(160, seed=9)
    for t in tasks:
        assert t.length == 17
        assert all(x[1:].isdigit() for x in t.tokens[:8]) and all(x[1].isalpha() for x in t.tokens[8:])
        assert follow_letter_chain(t.tokens) == t.answer
        assert t.tokens[-1][0] != t.tokens[-1][1]
    assert set(collections.Counter(t.hops for t in tasks).values()) == {40}
    assert set(collections.Counter(t.target_position for t in tasks).values()) == {20}


def test_any_length_and_single_hop() -> None:
    long = number_task(10, n_letters=30, n_ints=40, hops=(1,), max_int=70, seed=1)
    assert all(t.length == 71 and t.hops == 1 for t in long)
    assert all(int(t.tokens[-1]) == 70 - t.target_position for t in long)
    lt = letter_task(10, n_targets=50, n_pairs=0, hops=(1,), seed=2)
    assert all(t.length == 51 for t in lt)


def test_encoding_to_a_head() -> None:
    head = compile_construction(index_construction())
    tasks = number_task(5, seed=0)
    x = encode_tasks(head, tasks)
    assert x.shape == (5, 17, head.d_model)
    assert [head.tokens[i] for i in x[0].argmax(-1).tolist()] == list(tasks[0].tokens)
    with pytest.raises(InputError, match="unknown token"):
        encode_tasks(compile_construction(retrieval_construction()), tasks)


def test_task_errors() -> None:
    with pytest.raises(InputError, match="hops"):
        number_task(3, hops=(5,), n_ints=2)
    with pytest.raises(InputError, match="cannot fit"):
        number_task(3, n_letters=8, n_ints=20, hops=(1,), max_int=4)
    with pytest.raises(InputError, match="alphabet_size"):
        letter_task(3, alphabet_size=30)
