"""Remark 3.1 on whole classes: random symbolic and positional heads, and the positional Retrieval
head whose readout answers every input up to its design length."""

from __future__ import annotations

import math

import pytest

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._counterexamples import positional_retrieval_construction
from ropeproof.machinery._errors import ConstructionError, InputError
from ropeproof.verify.kernel._compiled import answer
from ropeproof.verify.measure.exact._families import family_for, sample_family_inputs
from ropeproof.verify.measure.exact._readout_margin import content_independent_readout_margin
from ropeproof.verify.studies.beyond._impossibility import class_search


@pytest.mark.parametrize("kind", ["symbolic", "positional"])
def test_class_searches_find_the_invariance(kind: str) -> None:
    s = class_search(kind, heads=30, seed=1)
    assert s.heads == 30 and s.invariant, s


def test_the_positional_head_margin_has_its_closed_form() -> None:
    period, k = 17, 8
    head = compile_construction(positional_retrieval_construction(4, period, 10.0))
    assert (head.W_K[0] == head.W_K).all()  # constant keys: positional by construction
    fam = family_for(positional_retrieval_construction(4, period, 10.0))
    scale = math.log(2 * (period - 1)) / (k + 0.5)
    for n in (2, 3, 9, period):
        got = content_independent_readout_margin(head, fam, n, scale).margin
        # the query keeps weight 2(N-1)/(2(N-1) + n - 1); each key gets 1/(2(N-1) + n - 1)
        assert got == pytest.approx(1 / (2 * (period - 1) + n - 1), rel=1e-12)
    samples = sample_family_inputs(fam, period, 48, seed=3)
    got = answer(head, [list(x) for x, _ in samples], "softmax", scale, "cpu")
    assert got == [x[t] for x, t in samples]


def test_a_weak_bonus_fails_and_errors_are_named() -> None:
    c = positional_retrieval_construction(4, 17, 0.01)
    head = compile_construction(c)
    scale = math.log(32) / 8.5
    assert content_independent_readout_margin(head, family_for(c), 17, scale).margin < 0
    with pytest.raises(ConstructionError, match="period=4"):
        positional_retrieval_construction(4, 4, 1.0)
    with pytest.raises(InputError, match="identical W_K rows"):
        from ropeproof.constructions._paper import retrieval_construction

        rc = retrieval_construction(4, 0.1, max_int=2)
        content_independent_readout_margin(compile_construction(rc), family_for(rc), 5)
