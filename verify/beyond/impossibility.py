"""[A]'s Remark 3.1 as searches for counterexamples.

- A purely **symbolic** head (e.g. every plane at ``theta = 0``) cannot implement Index: take an Index
  input and move a different letter onto the target position by permuting the non-query contents. The
  two inputs hold the same multiset of tokens, so a symbolic head gives both the same answer, but their
  correct answers differ: it is wrong on one.
- A purely **positional** head (every key the same vector) cannot implement Retrieval: swap the
  matching pair with another pair. The attention pattern ignores content, so the head attends to the
  same positions in both, while the matching pair moved: it is wrong on one.

:func:`find_failure_pair` runs a hypothesis search (``hypothesis.find``, which also shrinks) for two
inputs of the family that the head does not both answer correctly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from ropeproof.theory.errors import InputError
from ropeproof.verify.exact.families import Family, family_input

Answer = Callable[[Sequence[Sequence[str]]], list[str | None]]
"""``answer(batch of token lists) -> answers at the last position`` (``None``: no answer)."""


@dataclass(frozen=True)
class FailurePair:
    """Two inputs, their correct answers and the head's answers; the head is wrong on at least one."""

    inputs: tuple[tuple[str, ...], tuple[str, ...]]
    correct: tuple[str, str]
    answered: tuple[str | None, str | None]

    @property
    def wrong_on(self) -> list[int]:
        return [i for i in range(2) if self.answered[i] != self.correct[i]]


def _pair_strategy(family: Family, n: int, move: str) -> st.SearchStrategy:
    cases = family.cases_at(n)
    if not cases:
        raise InputError(f"the {family.name} family has no input of length n={n}")

    @st.composite
    def pairs(draw: st.DrawFn) -> tuple[tuple[str, ...], int, tuple[str, ...], int]:
        ci = draw(st.sampled_from(cases))
        d_t = draw(st.integers(1, n - 1))
        picks = draw(st.lists(st.integers(0, 1 << 20), min_size=n, max_size=n))
        tokens, target = family_input(family, n, ci, d_t, picks)
        allowed = family.cases[ci].target_tokens
        # content move: the token brought onto the target position must be a valid target (a letter)
        choices = [p for p in range(n - 1) if p != target and (move == "target" or tokens[p] in allowed)]
        if not choices:
            return tokens, target, tokens, target
        other = draw(st.sampled_from(choices))
        swapped = list(tokens)
        swapped[target], swapped[other] = swapped[other], swapped[target]
        new_target = target if move == "content" else other
        return tokens, target, tuple(swapped), new_target

    return pairs()


def find_failure_pair(
    answer: Answer,
    family: Family,
    n: int,
    correct: Callable[[tuple[str, ...], int], str],
    move: str,
    max_examples: int = 2000,
) -> FailurePair | None:
    """Search two length-``n`` inputs related by one swap that ``answer`` does not both get right.

    ``move="content"``: swap the target's content with another non-query position's (the target
    position stays; Index). ``move="target"``: swap the matching item elsewhere (the target moves with
    it; Retrieval). ``correct(tokens, target_position)`` gives the right answer. Returns ``None`` when
    no failure is found within ``max_examples``.
    """
    if move not in ("content", "target"):
        raise InputError(f"move={move!r}; accepted: 'content', 'target'")

    def fails(pair: tuple[tuple[str, ...], int, tuple[str, ...], int]) -> bool:
        a, ta, b, tb = pair
        ca, cb = correct(a, ta), correct(b, tb)
        if move == "content" and ca == cb:
            return False
        got = answer([list(a), list(b)])
        return got[0] != ca or got[1] != cb

    try:
        a, ta, b, tb = find(
            _pair_strategy(family, n, move),
            fails,
            settings=settings(max_examples=max_examples, deadline=None, database=None,
                              suppress_health_check=list(HealthCheck)),
        )  # fmt: skip
    except NoSuchExample:
        return None
    got = answer([list(a), list(b)])
    return FailurePair((a, b), (correct(a, ta), correct(b, tb)), (got[0], got[1]))
