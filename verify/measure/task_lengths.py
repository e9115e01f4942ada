"""Long inputs from [A]'s task generators (:mod:`ropeproof.verify.measure.tasks`), built three ways.

[A] trained on 17 tokens and tested longer inputs without saying how they were built
(``docs/theory.md`` section 6), so every length study names its ``build``:

- ``"window"``: a longer target window. Number task: ``n - 9`` letters, 8 integers, the query, integers
  up to ``n - 1`` (so every letter can be reached; target positions stay balanced over the window).
  Letter task: ``n - 9`` (letter, integer) pairs, 8 (letter, letter) pairs, the query.
- ``"distractors"``: more distractors. Number task: [A]'s 17-token input (8 letters, 8 integers
  ``<= 16``, the query) preceded by ``n - 17`` random tokens (letters, and integers pointing back into
  range), so the chain and the vocabulary are [A]'s. Letter task: 8 target pairs, ``n - 9`` (letter,
  letter) pairs, the query.
- ``"both"``: both windows grow, each to about half of ``n - 1`` (number task: integers up to ``n - 1``).

Chains keep [A]'s structure and balance (hops, targets, answers) and are checked by
:func:`ropeproof.verify.measure.tasks.follow_number_chain` / ``follow_letter_chain`` in the tests.

:func:`with_decoys` turns an input into a *decoy* input for a compiled model: every answer-kind token off
the chain is replaced by one decoy whose code sits a quarter turn from the answer's on the code circle
(the chain and its lookups unchanged), so that every leaked letter points the same wrong way. Decoys are
a second probe, not a worst case: sampled inputs are sometimes answered worse.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ropeproof.constructions.multihop_compile import CompiledModel
from ropeproof.constructions.paper import (
    ALPHABET_SIZE,
    LETTER_TASK_MAX_INT,
    NUMBER_TASK_LETTERS,
    NUMBER_TASK_MAX_INT,
    TASK_LENGTH,
    check_task,
)
from ropeproof.theory.construction import letter_tokens
from ropeproof.theory.errors import InputError
from ropeproof.theory.validate import integer
from ropeproof.verify.measure.tasks import TaskInstance, letter_task, number_task

BUILDS: tuple[str, ...] = ("window", "distractors", "both")
"""How long inputs are built (module docstring)."""


def _check(task: str, n: int, build: str) -> None:
    check_task(task)
    if build not in BUILDS:
        raise InputError(f"build={build!r} is unknown; accepted: {list(BUILDS)}")
    integer(n, "n", low=TASK_LENGTH, note="[A]'s length")


def required_max_int(task: str, n: int, build: str) -> int:
    """The largest integer token inputs of length ``n`` may hold (the vocabulary a model needs)."""
    _check(task, n, build)
    if task == "letter":
        return LETTER_TASK_MAX_INT
    return NUMBER_TASK_MAX_INT if build == "distractors" else max(NUMBER_TASK_MAX_INT, int(n) - 1)


def long_number_task(
    count: int, n: int, hops: Sequence[int] = (1, 2, 3, 4), build: str = "distractors", seed: int = 0
) -> list[TaskInstance]:
    """``count`` number-task inputs of length ``n`` (module docstring; [A]'s 120 letters)."""
    _check("number", n, build)
    n = int(n)
    if build == "window":
        return number_task(count, n - 9, 8, hops, NUMBER_TASK_LETTERS, n - 1, seed)
    if build == "both":
        n_letters = max(8, (n - 1) // 2)
        return number_task(count, n_letters, n - 1 - n_letters, hops, NUMBER_TASK_LETTERS, n - 1, seed)
    core = number_task(count, 8, 8, hops, NUMBER_TASK_LETTERS, NUMBER_TASK_MAX_INT, seed)
    rng = np.random.default_rng([seed, n])
    letters = np.array([t.name for t in letter_tokens(NUMBER_TASK_LETTERS)])
    pad = n - TASK_LENGTH
    p = np.arange(pad)
    out = []
    for inst in core:  # half letters, half integers pointing back into range (<= 16)
        is_letter = (rng.random(pad) < 0.5) | (p == 0)
        ints = rng.integers(1, np.minimum(NUMBER_TASK_MAX_INT, np.maximum(p, 1)) + 1)
        picks = letters[rng.integers(0, letters.size, size=pad)]
        prefix = tuple(str(a) if b else str(int(c)) for a, b, c in zip(picks, is_letter, ints, strict=True))
        out.append(TaskInstance(prefix + inst.tokens, inst.answer, inst.hops, inst.target_position + pad))
    return out


def long_letter_task(
    count: int, n: int, hops: Sequence[int] = (1, 2, 3, 4), build: str = "distractors", seed: int = 0
) -> list[TaskInstance]:
    """``count`` letter-task inputs of length ``n`` (module docstring; [A]'s 8 letters, integers 1..8)."""
    _check("letter", n, build)
    n = int(n)
    if build == "window":
        n_targets = n - 9
    elif build == "distractors":
        n_targets = 8
    else:
        n_targets = max(8, (n - 1) // 2)
    return letter_task(count, n_targets, n - 1 - n_targets, hops, ALPHABET_SIZE, LETTER_TASK_MAX_INT, seed)


def long_task(
    task: str,
    count: int,
    n: int,
    hops: Sequence[int] = (1, 2, 3, 4),
    build: str = "distractors",
    seed: int = 0,
) -> list[TaskInstance]:
    """:func:`long_number_task` or :func:`long_letter_task`."""
    _check(task, n, build)
    make = long_number_task if task == "number" else long_letter_task
    return make(count, n, hops, build, seed)


def chain_positions(task: str, tokens: Sequence[str]) -> list[int]:
    """Positions of the chain from the last token to its answer (``p_0 = n - 1, .., p_h``)."""
    p = len(tokens) - 1
    out = [p]
    if task == "number":
        while tokens[p].isdigit():
            p -= int(tokens[p])
            out.append(p)
        return out
    while not tokens[p][1:].isdigit():
        want = tokens[p][1:]
        p = max(j for j in range(p) if tokens[j][0] == want)
        out.append(p)
    return out


def _circular(a: int, b: int, size: int) -> int:
    d = abs(a - b) % size
    return min(d, size - d)


def with_decoys(model: CompiledModel, inst: TaskInstance) -> TaskInstance:
    """``inst`` with every answer-kind token off the chain replaced by one decoy whose code sits a quarter
    turn from the answer's (module docstring). The chain, its lookups and the answer are unchanged."""
    chain = chain_positions(model.task, inst.tokens)
    answers = list(model.answers)
    size = len(answers)
    goal = (answers.index(inst.answer) + size // 4) % size
    if model.task == "number":
        decoy = answers[goal]
    else:
        used = {inst.tokens[p][0] for p in chain[1:]}  # lookup letters must stay unique
        allowed = [i for i, t in enumerate(answers) if t[0] not in used]
        decoy = answers[min(allowed, key=lambda i: _circular(i, goal, size))]
    on_chain, is_answer = set(chain), set(answers)
    tokens = tuple(decoy if (p not in on_chain and t in is_answer) else t for p, t in enumerate(inst.tokens))
    return TaskInstance(tokens, inst.answer, inst.hops, inst.target_position)
