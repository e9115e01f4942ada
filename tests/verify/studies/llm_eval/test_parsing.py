"""Answer parsing: whitespace, quotes and a trailing period are tolerated, nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.verify.studies.llm_eval._parsing import QUOTES, is_correct, parse_reply


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("c2", "c2"),
        ("  c2\n", "c2"),
        ('"c2"', "c2"),
        ("'y'.", "y"),
        ('"y."', "y"),
        ("`k7`", "k7"),
        ("“x4”.\n", "x4"),
        ("y.", "y"),
    ],
)
def test_tolerated_decorations(reply: str, expected: str) -> None:
    assert parse_reply(reply).answer == expected


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (None, "no reply"),
        ("", "empty reply"),
        (" '.' ", "empty reply"),
        ("The answer is y", "not one token"),
        ("y z", "not one token"),
    ],
)
def test_what_is_not_an_answer(reply: str | None, problem: str) -> None:
    parsed = parse_reply(reply)
    assert parsed.answer is None and parsed.problem == problem


def test_case_and_other_punctuation_are_not_forgiven() -> None:
    assert not is_correct("Y", "y")
    assert not is_correct("y!", "y")
    assert is_correct(" 'y'. ", "y")


@given(
    token=st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=4),
    left=st.text(" \n\t" + QUOTES, max_size=3),
    right=st.text(" \n\t." + QUOTES, max_size=3),
)
def test_any_decoration_of_a_token_reads_back(token: str, left: str, right: str) -> None:
    assert parse_reply(left + token + right).answer == token
