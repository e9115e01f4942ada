"""Running a compiled head: the readout refuses settings that would give a plausible wrong answer."""

from __future__ import annotations

import math

import pytest

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import INDEX_THETA, index_construction
from ropeproof.machinery._errors import InputError
from ropeproof.verify.kernel._compiled import answer, answers


@pytest.fixture(scope="module")
def head():
    return compile_construction(index_construction(INDEX_THETA, max_int=4, letters=3))


@pytest.mark.parametrize("scale", [math.nan, math.inf, -math.inf, 0.0, -1.0])
def test_softmax_readout_refuses_a_bad_scale(head, scale: float) -> None:
    """Issue 12: answer(mode="softmax", softmax_scale=nan) used to answer."""
    with pytest.raises(InputError, match="softmax_scale"):
        answer(head, [["A", "B", "C", "2"]], mode="softmax", softmax_scale=scale)


def test_both_readouts_answer_and_unknown_modes_are_refused(head) -> None:
    seq = ["A", "B", "C", "2"]  # the integer 2 points two positions back: B
    assert answer(head, [seq]) == ["B"]
    assert answer(head, [seq], mode="softmax", softmax_scale=30.0) == ["B"]
    with pytest.raises(InputError, match="mode='soft'"):
        answer(head, [seq], mode="soft")


def _grid_inputs(quick: bool):
    """c_accuracy's heads and inputs (paper_figures/_accuracy.py): every (head, length) input set."""
    from ropeproof.constructions._paper import retrieval_construction
    from ropeproof.paper_figures._accuracy import INPUTS, LENGTHS
    from ropeproof.verify.measure.exact._families import family_for, sample_family_inputs

    lengths = LENGTHS[quick]
    for c in (
        index_construction(0.8660, max_int=max(lengths) - 1, letters=8),
        retrieval_construction(8, 0.0027, max_int=2),
    ):
        compiled = compile_construction(c)
        for n in lengths:
            yield (
                compiled,
                [list(t) for t, _ in sample_family_inputs(family_for(c), n, INPUTS[quick], seed=n)],
            )


@pytest.mark.parametrize("quick", [True, pytest.param(False, marks=pytest.mark.e2e)])
def test_answers_are_answer_on_every_readout_of_the_accuracy_figure(quick: bool) -> None:
    """Issue 46: one projection per input set and the last query alone give :func:`answer`'s answers
    on every (head, length, dtype, readout) of c_accuracy's grid (96 quick, 192 full)."""
    from ropeproof.paper_figures._accuracy import DTYPES, SCALES

    compared = 0
    for compiled, seqs in _grid_inputs(quick):
        for dtype in DTYPES:
            got = answers(compiled, seqs, SCALES, device="cpu", dtype=dtype)
            for scale, fast in zip(SCALES, got, strict=True):
                mode = {"mode": "hard"} if scale is None else {"mode": "softmax", "softmax_scale": scale}
                assert fast == answer(compiled, seqs, device="cpu", dtype=dtype, **mode), (
                    compiled.name,
                    dtype,
                    scale,
                )
                compared += 1
    assert compared == (96 if quick else 192)


def test_answers_read_each_readout_and_refuse_a_bad_scale(head) -> None:
    seqs = [["A", "B", "C", "2"], ["C", "A", "B", "2"]]
    assert answers(head, seqs, [None, 30.0]) == [["B", "A"], ["B", "A"]]
    assert answers(head, seqs, []) == []
    for bad in (math.nan, 0.0, -2.0):
        with pytest.raises(InputError, match="softmax_scale"):
            answers(head, seqs, [None, bad])
