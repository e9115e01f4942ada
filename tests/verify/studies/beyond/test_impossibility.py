"""Remark 3.1: searches return concrete failures for symbolic-on-Index and positional-on-Retrieval,
and find none for the working constructions."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction, retrieval_construction
from ropeproof.verify.kernel._compiled import answer
from ropeproof.verify.measure.exact._families import family_for
from ropeproof.verify.studies.beyond._impossibility import find_failure_pair


def _target(tokens, t):
    return tokens[t]


def test_symbolic_head_fails_index() -> None:
    c = index_construction(theta=0.0, letters=4, max_int=8)  # every plane at theta = 0: symbolic
    head = compile_construction(c)
    fp = find_failure_pair(lambda b: answer(head, b, mode="softmax"), family_for(c), 6, _target, "content")
    assert fp is not None and fp.wrong_on
    a, b = fp.inputs
    assert sorted(a) == sorted(b) and fp.correct[0] != fp.correct[1]
    assert fp.answered[0] == fp.answered[1]  # same multiset -> same answer


def test_random_nope_head_fails_index() -> None:
    c = index_construction(theta=0.0, letters=3, max_int=6)
    head = compile_construction(c)
    rng = np.random.default_rng(0)
    rnd = dataclasses.replace(head, W_Q=rng.standard_normal(head.W_Q.shape) * (head.W_Q != 0),
                              W_K=rng.standard_normal(head.W_K.shape) * (head.W_K != 0))  # fmt: skip
    fp = find_failure_pair(lambda b: answer(rnd, b, mode="softmax"), family_for(c), 5, _target, "content")
    assert fp is not None and fp.wrong_on


def test_positional_head_fails_retrieval() -> None:
    c = retrieval_construction(4, 0.2, max_int=2)
    head = compile_construction(c)
    positional = dataclasses.replace(head, W_K=np.tile(head.W_K[:1], (head.W_K.shape[0], 1)))  # constant keys
    fp = find_failure_pair(lambda b: answer(positional, b), family_for(c), 5, _target, "target")
    assert fp is not None and fp.wrong_on
    assert fp.correct[0] == fp.correct[1]  # the same pair, moved


def test_working_constructions_have_no_failure_pair() -> None:
    c = index_construction(theta=0.866, letters=4, max_int=8)
    head = compile_construction(c)
    assert (
        find_failure_pair(
            functools.partial(answer, head), family_for(c), 7, _target, "content", max_examples=200
        )
        is None
    )
    c = retrieval_construction(4, 0.01, max_int=2)
    head = compile_construction(c)
    assert (
        find_failure_pair(
            functools.partial(answer, head), family_for(c), 6, _target, "target", max_examples=200
        )
        is None
    )
