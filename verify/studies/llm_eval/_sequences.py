"""The 1-hop sequences of the protocol, in two formats.

**chat** ([A]'s format for chat models, :mod:`.protocol`): seeded and balanced over where the target
sits. Prompt ``i`` of a draw depends only on the draw's seed and ``i`` (never on how many prompts are
asked for), so asking for more prompts later extends a run instead of replacing it.

- number: ``length - 1`` letters drawn uniformly from ``a..z`` (repeats allowed, as in [A]'s
  examples), then the integer ``n``; ``n`` cycles through shuffled blocks of ``1 .. length - 1``;
- letter: ``length - 1`` tokens of a letter and a digit, then the final token ``XY``; the target's
  position cycles through shuffled blocks of ``0 .. length - 2``; the target is ``Y`` and a digit, no
  other earlier token starts with ``Y`` (other first letters are uniform over the remaining 25, repeats
  allowed), and ``X`` is uniform over the letters other than ``Y``. Digits are uniform over ``1..9``
  (all of [A]'s examples use ``1..9``).

**task** (the raw token sequence of the controlled tasks, for checkpoints trained or compiled on them,
``docs/theory.md`` section 3): [A]'s generators (:mod:`ropeproof.verify.measure._tasks`) with one hop, written
as the task tokenizer's words (:func:`ropeproof.verify.measure._tokenizer.prompt_text`). From 17 tokens on,
the
``distractors`` build of :mod:`ropeproof.verify.measure._task_lengths` ([A]'s 17-token input after random
tokens, every token in the trained vocabulary); below 17, the same windows shortened: up to 8 letters
(number) or (letter, integer) pairs (letter), then ``length - 9`` integers or (letter, letter) pairs
when positive, then the query. These are not prefix-stable (the generators balance a whole batch).
"""

from __future__ import annotations

import numpy as np

from ropeproof.constructions._paper import NUMBER_TASK_LETTERS, NUMBER_TASK_MAX_INT, TASK_LENGTH, check_task
from ropeproof.machinery._validate import integer
from ropeproof.verify.measure._task_lengths import long_task
from ropeproof.verify.measure._tasks import TaskInstance, letter_task, number_task
from ropeproof.verify.measure._tokenizer import word
from ropeproof.verify.studies.llm_eval._protocol import MAX_LENGTH, MIN_LENGTH, answer

FORMATS: tuple[str, ...] = ("chat", "task")
LETTERS = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "123456789"
_BLOCK, _CONTENT = 0, 1  # stream numbers of the per-prompt seeds


def check_length(length: int) -> int:
    """``length`` as an ``int`` if it is an integer in ``MIN_LENGTH .. MAX_LENGTH``; else :class:`InputError`
    naming it."""
    return integer(length, "length", low=MIN_LENGTH, high=MAX_LENGTH)


def _balanced(seed: int, index: int, size: int) -> int:
    """Item ``index`` of the cycle through shuffled blocks of ``range(size)``."""
    block, offset = divmod(index, size)
    return int(np.random.default_rng([seed, _BLOCK, block]).permutation(size)[offset])


def chat_instance(task: str, length: int, seed: int, index: int) -> TaskInstance:
    """Prompt ``index`` of the draw with seed ``seed`` (module docstring); ``target_position`` is the
    answer's index in ``tokens``."""
    check_task(task)
    n = check_length(length)
    seed, index = integer(seed, "seed", low=0), integer(index, "index", low=0)
    rng = np.random.default_rng([seed, _CONTENT, index])
    letters = np.array(list(LETTERS))
    if task == "number":
        offset = 1 + _balanced(seed, index, n - 1)
        tokens = [str(x) for x in rng.choice(letters, size=n - 1)] + [str(offset)]
        target = n - 1 - offset
    else:
        target = _balanced(seed, index, n - 1)
        want = str(rng.choice(letters))
        others = np.array([c for c in LETTERS if c != want])
        firsts = rng.choice(others, size=n - 1)
        firsts[target] = want
        digits = rng.choice(np.array(list(DIGITS)), size=n - 1)
        tokens = [f"{a}{b}" for a, b in zip(firsts, digits, strict=True)]
        tokens.append(f"{rng.choice(others)}{want}")
    tokens_t = tuple(tokens)
    return TaskInstance(tokens_t, answer(task, tokens_t), 1, target)


def task_instances(task: str, length: int, count: int, seed: int) -> list[TaskInstance]:
    """``count`` 1-hop inputs of the controlled task at ``length`` (module docstring), tokens and answer
    written as the task tokenizer's words."""
    check_task(task)
    n = check_length(length)
    count, seed = integer(count, "count", low=1), integer(seed, "seed", low=0)
    if n >= TASK_LENGTH:
        raw = long_task(task, count, n, hops=(1,), build="distractors", seed=seed)
    else:
        window = min(8, n - 1)
        if task == "number":
            raw = number_task(
                count, window, n - 1 - window, (1,), NUMBER_TASK_LETTERS, NUMBER_TASK_MAX_INT, seed
            )
        else:
            raw = letter_task(count, window, n - 1 - window, (1,), seed=seed)
    return [
        TaskInstance(tuple(word(t) for t in inst.tokens), word(inst.answer), inst.hops, inst.target_position)
        for inst in raw
    ]
