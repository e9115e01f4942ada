"""[A]'s 1-hop protocol: the prompts verbatim, the answer rules on [A]'s own examples, and the
generators' sequences obeying the rules (both formats), balanced and reproducible."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure._tokenizer import task_vocabulary, word
from ropeproof.verify.studies.llm_eval._plan import build_plan, draw_seed
from ropeproof.verify.studies.llm_eval._protocol import (
    EXAMPLES,
    LETTER_INSTRUCTIONS,
    NUMBER_INSTRUCTIONS,
    answer,
    chat_prompt,
    letter_answer,
    number_answer,
)
from ropeproof.verify.studies.llm_eval._sequences import chat_instance, task_instances


def _one_line(text: str) -> str:
    return " ".join(text.split())


# copied from docs/theory.md section 3 by hand, so a slip in the module's copy shows here
NUMBER_TEXT = _one_line(
    """You will be given a sequence of space-separated tokens. Your task is to find the target token
    by following these rules: 1. Identify the very last token in the sequence, which will always be a
    number 'n'. 2. Move 'n' positions to the left from that final token. 3. The token you land on is
    the target token. Output just the target token."""
)
LETTER_TEXT = _one_line(
    """You will be given a sequence of space-separated tokens. Your task is to find the target token
    by following these rules: 1. Start with the very last token in the sequence. 2. Identify the
    second character of that token. 3. Scan backwards (to the left) to find the token that starts with
    that exact character; there is only one token that fulfills this condition. 4. This is your
    target token. Output just the target token."""
)


def test_prompts_are_verbatim_and_the_sequence_is_the_last_line() -> None:
    assert NUMBER_INSTRUCTIONS == NUMBER_TEXT
    assert LETTER_INSTRUCTIONS == LETTER_TEXT
    text = chat_prompt("letter", "a4 b3 c2 d1 fc")
    assert text == LETTER_TEXT + "\n\nSequence: a4 b3 c2 d1 fc"
    assert text.splitlines()[-1] == "Sequence: a4 b3 c2 d1 fc"


@pytest.mark.parametrize(("task", "sequence", "expected"), EXAMPLES)
def test_the_answer_rules_reproduce_every_listed_example(task: str, sequence: str, expected: str) -> None:
    assert answer(task, sequence.split()) == expected


def test_the_examples_are_all_of_the_listed_ones() -> None:
    assert [e[0] for e in EXAMPLES] == ["number"] * 3 + ["letter"] * 3


@pytest.mark.parametrize(
    ("rule", "tokens", "fragment"),
    [
        (number_answer, ["a", "b", "x"], "must be an integer in 1..2"),
        (number_answer, ["a", "b", "3"], "must be an integer in 1..2"),
        (number_answer, ["a", "0"], "must be an integer in 1..1"),
        (number_answer, ["5"], "at least 2 tokens"),
        (letter_answer, ["a4", "a5", "xa"], "2 earlier tokens start with 'a'"),
        (letter_answer, ["a4", "b5", "xc"], "0 earlier tokens start with 'c'"),
        (letter_answer, ["a4", "xab"], "must have two characters"),
    ],
)
def test_the_rules_refuse_sequences_without_one_answer(rule, tokens, fragment) -> None:
    with pytest.raises(InputError, match=fragment):
        rule(tokens)


@given(
    task=st.sampled_from(["number", "letter"]),
    length=st.integers(2, 120),
    seed=st.integers(0, 2**32 - 1),
    index=st.integers(0, 500),
)
def test_chat_sequences_follow_the_protocol(task: str, length: int, seed: int, index: int) -> None:
    inst = chat_instance(task, length, seed, index)
    tokens = inst.tokens
    assert len(tokens) == length
    assert inst.answer == answer(task, tokens) == tokens[inst.target_position]
    if task == "number":
        assert all(len(t) == 1 and "a" <= t <= "z" for t in tokens[:-1])
        assert 1 <= int(tokens[-1]) <= length - 1
    else:
        assert all(len(t) == 2 and t[0].islower() and t[1] in "123456789" for t in tokens[:-1])
        assert len(tokens[-1]) == 2 and tokens[-1].isalpha() and tokens[-1][0] != tokens[-1][1]
        assert sum(t[0] == tokens[-1][1] for t in tokens[:-1]) == 1


@pytest.mark.parametrize("task", ["number", "letter"])
@pytest.mark.parametrize("length", [2, 9, 32])
def test_chat_targets_are_balanced_over_every_block(task: str, length: int) -> None:
    seed = draw_seed(0, task, length, 0)
    targets = [chat_instance(task, length, seed, i).target_position for i in range(2 * (length - 1))]
    block = length - 1
    assert sorted(targets[:block]) == sorted(targets[block:]) == list(range(block))


def test_chat_plans_are_prefix_stable_and_draws_differ() -> None:
    small = build_plan(["number", "letter"], [8, 32], 5, 2, seed=3)
    large = build_plan(["number", "letter"], [8, 32], 9, 2, seed=3)
    keys = {p.key for p in large}
    assert {p.key for p in small} <= keys
    assert build_plan(["letter"], [8], 5, 1, seed=3) == build_plan(["letter"], [8], 5, 1, seed=3)
    d0 = [p.tokens for p in large if p.draw == 0 and p.task == "number" and p.length == 32]
    d1 = [p.tokens for p in large if p.draw == 1 and p.task == "number" and p.length == 32]
    assert d0 != d1
    assert len({p.id for p in large}) == len(large) == 2 * 2 * 9 * 2


@pytest.mark.parametrize("task", ["number", "letter"])
@pytest.mark.parametrize("length", [2, 8, 16, 17, 40])
def test_task_format_sequences_are_one_hop_in_the_task_vocabulary(task: str, length: int) -> None:
    vocab = {word(t) for t in task_vocabulary(task)}
    instances = task_instances(task, length, 24, seed=7)
    for inst in instances:
        assert len(inst.tokens) == length and set(inst.tokens) <= vocab
        assert answer(task, inst.tokens) == inst.answer == inst.tokens[inst.target_position]
        assert inst.hops == 1


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: chat_instance("words", 8, 0, 0), "task='words' is unknown"),
        (
            lambda: chat_instance("number", 1, 0, 0),
            "length=1 is out of range; accepted: an integer >= 2 and <= 4096",
        ),
        (lambda: build_plan(["number"], [8], 0, 1), "prompts=0 is out of range"),
        (lambda: build_plan(["number"], [8], 1, 1, fmt="json"), "format='json' is unknown"),
    ],
)
def test_bad_plans_are_refused(call, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        call()
