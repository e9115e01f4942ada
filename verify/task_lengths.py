"""Long inputs from [A]'s task generators (:mod:`ropeproof.verify.tasks`), built three ways.

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
:func:`ropeproof.verify.tasks.follow_number_chain` / ``follow_letter_chain`` in the tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ropeproof.constructions.paper import (
    ALPHABET_SIZE,
    LETTER_TASK_MAX_INT,
    NUMBER_TASK_LETTERS,
    NUMBER_TASK_MAX_INT,
    TASK_LENGTH,
)
from ropeproof.theory.construction import letter_tokens
from ropeproof.theory.errors import InputError
from ropeproof.verify.tasks import TaskInstance, letter_task, number_task

BUILDS: tuple[str, ...] = ("window", "distractors", "both")
"""How long inputs are built (module docstring)."""
TASKS: tuple[str, ...] = ("number", "letter")


def _check(task: str, n: int, build: str) -> None:
    if task not in TASKS:
        raise InputError(f"task={task!r} is unknown; accepted: {list(TASKS)}")
    if build not in BUILDS:
        raise InputError(f"build={build!r} is unknown; accepted: {list(BUILDS)}")
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < TASK_LENGTH:
        raise InputError(f"n={n!r} must be an integer >= {TASK_LENGTH} ([A]'s length)")


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
