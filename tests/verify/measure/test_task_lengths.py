"""Long inputs from [A]'s generators: every build keeps valid, balanced chains."""

from __future__ import annotations

import pytest

from ropeproof.theory.errors import InputError
from ropeproof.verify.measure.task_lengths import (
    BUILDS,
    long_letter_task,
    long_number_task,
    long_task,
    required_max_int,
)
from ropeproof.verify.measure.tasks import follow_letter_chain, follow_number_chain


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("n", [17, 40, 300])
def test_chains_are_valid_at_every_length(build: str, n: int) -> None:
    for task, follow in (("number", follow_number_chain), ("letter", follow_letter_chain)):
        insts = long_task(task, 16, n, (1, 2, 3, 4), build, seed=n)
        assert {i.hops for i in insts} == {1, 2, 3, 4}
        for inst in insts:
            assert inst.length == n
            assert follow(inst.tokens) == inst.answer == inst.tokens[inst.target_position]
        if task == "number":
            top = max(int(t) for i in insts for t in i.tokens if t.isdigit())
            assert top <= required_max_int("number", n, build)


def test_distractors_keep_the_paper_input_at_the_end() -> None:
    long = long_number_task(8, 100, build="distractors", seed=3)
    for inst in long:
        tail = inst.tokens[-17:]
        assert follow_number_chain(tail) == inst.answer
        assert all(not t.isdigit() or int(t) <= 16 for t in inst.tokens)
    letters = long_letter_task(4, 60, build="distractors", seed=3)
    assert all(sum(t[1:].isdigit() for t in i.tokens) >= 8 for i in letters)
    assert required_max_int("letter", 500, "window") == 8
    assert required_max_int("number", 500, "window") == 499
    assert required_max_int("number", 500, "distractors") == 16


def test_errors() -> None:
    with pytest.raises(InputError, match="build"):
        long_task("number", 2, 20, build="longer")
    with pytest.raises(InputError, match="task"):
        long_task("words", 2, 20)
    with pytest.raises(InputError, match="n="):
        long_task("letter", 2, 16)
