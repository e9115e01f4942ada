"""Running a compiled head: the readout refuses settings that would give a plausible wrong answer."""

from __future__ import annotations

import math

import pytest

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import INDEX_THETA, index_construction
from ropeproof.machinery._errors import InputError
from ropeproof.verify.kernel._compiled import answer


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
