"""Long inputs from [A]'s task generators (:mod:`ropeproof.verify.measure._tasks`), built three ways.

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
- ``"near"`` (:func:`long_inputs` only): [A]'s 17-token input, chain included, at the end behind ``n -
  17`` distractor tokens, so the chain stays within 16 tokens of the query however long the input. Letter
  task: the prefix is (letter, letter) and (letter, integer) pairs whose first letters avoid the chain's
  (lookups stay unique); number task: the ``distractors`` build's prefix (whose chain is near the query
  already).

Two generators. :func:`long_task` builds inputs one token at a time from [A]'s generators
(:mod:`ropeproof.verify.measure._tasks`), balanced over hop counts, targets and answers by cycling; the
compiled models' study (:mod:`ropeproof.verify.studies.beyond._multihop_length`) uses it. :func:`long_inputs`
builds them vectorised as integer codes (:class:`LongInputs`) in chunks of :data:`CHUNK` drawn independently
of each other, each input i.i.d. (hop count, target position, answer and every other token uniform), so
that a sample grown chunk by chunk is an i.i.d. sample (what an anytime-valid interval needs,
:func:`ropeproof.verify.measure._statistics.confidence_sequence`) and only the chunks used are generated;
the trained models' study uses it. The 17-token generators that training draws from are untouched.

**Where a chain's middle steps sit** (``positions``, :data:`POSITIONS`). Training draws them like [A]'s
generator (:mod:`ropeproof.verify.measure._tasks`): the ``h - 1`` positions between the query and the
target are a uniform ``(h - 1)``-subset of the pair window (``"uniform"``, the default). ``"near-query"``
is the draw the trained models' study used before: the largest ``h - 1`` of a uniform 3-subset, which
pushes the middle steps toward the query (a 2-hop chain's first step has mean position about 3/4 of the
way to the query instead of 1/2); it is kept as a named reading
(:data:`~ropeproof.verify.studies.training._lengths.READINGS`), not a default.

Chains keep [A]'s structure and balance (hops, targets, answers) and are checked by
:func:`ropeproof.verify.measure._tasks.follow_number_chain` / ``follow_letter_chain`` in the tests.

:func:`with_decoys` turns an input into a *decoy* input for a compiled model: every answer-kind token off
the chain is replaced by one decoy whose code sits a quarter turn from the answer's on the code circle
(the chain and its lookups unchanged), so that every leaked letter points the same wrong way. Decoys are
a second probe, not a worst case: sampled inputs are sometimes answered worse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ropeproof.constructions._multihop_compile import CompiledModel
from ropeproof.constructions._paper import (
    ALPHABET_SIZE,
    LETTER_TASK_MAX_INT,
    NUMBER_TASK_LETTERS,
    NUMBER_TASK_MAX_INT,
    TASK_LENGTH,
    check_task,
)
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.theory._construction import letter_tokens
from ropeproof.verify.measure._tasks import TaskInstance, letter_task, number_task

BUILDS: tuple[str, ...] = ("window", "distractors", "both")
"""How :func:`long_task` builds long inputs (module docstring)."""
VECTOR_BUILDS: tuple[str, ...] = (*BUILDS, "near")
"""How :func:`long_inputs` builds them: :data:`BUILDS` and ``"near"`` (module docstring)."""
CHUNK = 16
"""Inputs per independently seeded chunk of :func:`long_inputs`."""
POSITIONS: tuple[str, ...] = ("uniform", "near-query")
"""How :func:`long_inputs` places a chain's middle steps (module docstring): ``"uniform"`` (as in
training, the default) or ``"near-query"`` (the earlier, query-biased draw)."""


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


# ------------------------------------------------------------------ vectorised, chunked, i.i.d. inputs


@dataclass(frozen=True)
class LongInputs:
    """Inputs of one task and length as integer codes: ``codes [count, n]`` and ``answers [count]`` index
    ``names`` (the token names), with ``hops [count]`` and the answer's position ``targets [count]``.

    Codes: number task, letter ``i`` (of [A]'s 120) is ``i`` and integer ``m`` is ``120 + m - 1``; letter
    task, the pair of first letter ``f`` and second component ``s`` is ``f * (A + M) + s`` with ``s < A`` a
    letter and ``s = A + m - 1`` the integer ``m`` (``A`` = 8 letters, ``M`` = 8 integers)."""

    task: str
    n: int
    build: str
    codes: np.ndarray
    answers: np.ndarray
    hops: np.ndarray
    targets: np.ndarray
    names: np.ndarray

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    def instances(self) -> list[TaskInstance]:
        """The inputs as :class:`~ropeproof.verify.measure._tasks.TaskInstance` (token names)."""
        words = self.names[self.codes]
        return [
            TaskInstance(tuple(words[i].tolist()), str(self.names[self.answers[i]]), int(h), int(t))
            for i, (h, t) in enumerate(zip(self.hops, self.targets, strict=True))
        ]

    def table(self, index: dict[str, int], missing: int) -> np.ndarray:
        """``code -> index[name]`` for every code (``missing`` for a name ``index`` lacks)."""
        return np.array([index.get(str(name), missing) for name in self.names], dtype=np.int64)


def _letter_names_array(count: int) -> np.ndarray:
    return np.array([t.name for t in letter_tokens(count)], dtype=object)


def _number_names(max_int: int) -> np.ndarray:
    return np.concatenate([_letter_names_array(NUMBER_TASK_LETTERS), [str(m) for m in range(1, max_int + 1)]])


def _letter_pair_names() -> np.ndarray:
    letters = _letter_names_array(ALPHABET_SIZE)
    seconds = [*letters, *(str(m) for m in range(1, LETTER_TASK_MAX_INT + 1))]
    return np.array([f + s for f in letters for s in seconds], dtype=object)


def _subset(rng: np.random.Generator, count: int, size: int, k: int) -> np.ndarray:
    """``[count, k]``: a uniform ``k``-subset of ``range(size)`` per row, in decreasing order."""
    if k == 0:
        return np.zeros((count, 0), dtype=np.int64)
    pick = np.argpartition(rng.random((count, size)), k - 1, axis=1)[:, :k]
    return -np.sort(-pick, axis=1)


def _chains(
    rng: np.random.Generator, hops: np.ndarray, first_mid: int, n: int, n_targets: int, positions: str
):
    """Per input: the chain positions ``p_1 > .. > p_h`` (``p_1 .. p_(h-1)`` in ``[first_mid, n - 1)``,
    ``p_h`` the target in ``[0, n_targets)``) as a ``[count, 4]`` array padded with ``-1``, and the
    targets. ``positions`` ``"uniform"``: ``p_1 .. p_(h-1)`` a uniform ``(h - 1)``-subset (a uniform
    ``(h - 1)``-subset of a uniform 3-subset); ``"near-query"``: the largest ``h - 1`` of a uniform
    3-subset (module docstring)."""
    count = hops.size
    mids = _subset(rng, count, n - 1 - first_mid, 3) + first_mid  # the first h - 1 of them are used
    targets = rng.integers(0, n_targets, size=count)
    if positions == "uniform":  # h - 1 of the 3 chosen uniformly, then in decreasing order again
        order = np.argsort(rng.random((count, 3)), axis=1)
        mids = np.take_along_axis(mids, order, axis=1)
    chain = np.full((count, 4), -1, dtype=np.int64)
    for h in range(1, 5):
        sel = hops == h
        chain[sel, : h - 1] = -np.sort(-mids[sel, : h - 1], axis=1)
        chain[sel, h - 1] = targets[sel]
    return chain, targets


def _number_chunk(rng: np.random.Generator, count: int, n: int, build: str, hops: np.ndarray, positions: str):
    if build in ("distractors", "near"):
        n_letters, core, max_int = 8, TASK_LENGTH, NUMBER_TASK_MAX_INT
    elif build == "window":
        n_letters, core, max_int = n - 9, n, n - 1
    else:
        n_letters, core, max_int = max(8, (n - 1) // 2), n, n - 1
    pad = n - core
    base = NUMBER_TASK_LETTERS - 1  # integer m has code base + m
    codes = np.empty((count, n), dtype=np.int64)
    # the core: letters, then integers m at core position p uniform in 1..min(max_int, p)
    codes[:, pad : pad + n_letters] = rng.integers(0, NUMBER_TASK_LETTERS, size=(count, n_letters))
    p = np.arange(n_letters, core)
    codes[:, pad + n_letters :] = base + 1 + np.floor(rng.random((count, p.size)) * np.minimum(max_int, p))
    chain, targets = _chains(rng, hops, n_letters, core, n_letters, positions)
    answers = rng.integers(0, NUMBER_TASK_LETTERS, size=count)
    rows = np.arange(count)
    prev = np.full(count, core - 1)
    for k in range(4):
        live = chain[:, k] >= 0
        codes[rows[live], pad + prev[live]] = base + prev[live] - chain[live, k]
        prev = np.where(live, chain[:, k], prev)
    codes[rows, pad + targets] = answers
    if pad:  # half letters, half integers pointing back into the prefix (<= 16)
        q = np.arange(pad)
        letter = (rng.random((count, pad)) < 0.5) | (q == 0)
        ints = (
            base + 1 + np.floor(rng.random((count, pad)) * np.minimum(NUMBER_TASK_MAX_INT, np.maximum(q, 1)))
        )
        codes[:, :pad] = np.where(letter, rng.integers(0, NUMBER_TASK_LETTERS, size=(count, pad)), ints)
    return codes, answers, targets + pad, _number_names(max_int)


def _letter_chunk(rng: np.random.Generator, count: int, n: int, build: str, hops: np.ndarray, positions: str):
    alpha, width = ALPHABET_SIZE, ALPHABET_SIZE + LETTER_TASK_MAX_INT
    if build == "window":
        n_targets, core = n - 9, n
    elif build == "distractors":
        n_targets, core = 8, n
    elif build == "both":
        n_targets, core = max(8, (n - 1) // 2), n
    else:
        n_targets, core = 8, TASK_LENGTH
    pad = n - core
    perm = np.argsort(rng.random((count, alpha)), axis=1)  # chain letters perm[:h], free ones perm[h:]
    rows = np.arange(count)
    # every position before the query: a free first letter; second an integer (target window) or a letter
    # (pair window); the prefix of the near build mixes both
    free = hops[:, None] + np.floor(rng.random((count, n - 1)) * (alpha - hops)[:, None]).astype(np.int64)
    first = np.take_along_axis(perm, free, axis=1)
    is_int = np.zeros((count, n - 1), dtype=bool)
    is_int[:, pad : pad + n_targets] = True
    if pad:
        is_int[:, :pad] = rng.random((count, pad)) < 0.5
    second = np.where(
        is_int,
        alpha + rng.integers(0, LETTER_TASK_MAX_INT, size=(count, n - 1)),
        rng.integers(0, alpha, size=(count, n - 1)),
    )
    codes = np.empty((count, n), dtype=np.int64)
    codes[:, :-1] = first * width + second
    chain, targets = _chains(rng, hops, n_targets, core, n_targets, positions)
    final = alpha + rng.integers(0, LETTER_TASK_MAX_INT, size=count)  # the target's integer
    for k in range(4):
        live = chain[:, k] >= 0
        nxt = np.where(hops > k + 1, perm[rows, np.minimum(k + 1, alpha - 1)], final)
        codes[rows[live], pad + chain[live, k]] = perm[live, k] * width + nxt[live]
    # the query (x, chain letter 0) with x any other letter
    x = (perm[:, 0] + 1 + rng.integers(0, alpha - 1, size=count)) % alpha
    codes[:, -1] = x * width + perm[:, 0]
    answers = codes[rows, pad + targets]
    return codes, answers, targets + pad, _letter_pair_names()


def _check_vector(
    task: str, n: int, build: str, hops: Sequence[int], positions: str = "uniform"
) -> tuple[int, ...]:
    check_task(task)
    if build not in VECTOR_BUILDS:
        raise InputError(f"build={build!r} is unknown; accepted: {list(VECTOR_BUILDS)}")
    if positions not in POSITIONS:
        raise InputError(f"positions={positions!r} is unknown; accepted: {list(POSITIONS)}")
    integer(n, "n", low=TASK_LENGTH, note="[A]'s length")
    got = tuple(sorted({int(h) for h in hops}))
    if not got or got[0] < 1 or got[-1] > 4:
        raise InputError(f"hops={list(hops)} must be non-empty, each in 1..4")
    return got


def long_chunk(
    task: str,
    n: int,
    build: str,
    seed: int,
    chunk: int,
    hops: Sequence[int] = (1, 2, 3, 4),
    positions: str = "uniform",
) -> LongInputs:
    """Chunk ``chunk`` of :func:`long_inputs`: :data:`CHUNK` i.i.d. inputs from the generator seeded by
    ``(seed, n, build, hops, positions, chunk)`` (``"near-query"`` keeps the earlier study's seeds, so its
    inputs are the ones that study drew)."""
    hop_set = _check_vector(task, n, build, hops, positions)
    integer(chunk, "chunk", low=0)
    integer(seed, "seed", low=0)
    salt = 0 if positions == "near-query" else 1
    key = [int(seed), int(n), VECTOR_BUILDS.index(build), *hop_set, salt, int(chunk)]
    rng = np.random.default_rng(np.random.SeedSequence(key))
    h = np.array(hop_set)[rng.integers(0, len(hop_set), size=CHUNK)]
    make = _number_chunk if task == "number" else _letter_chunk
    codes, answers, targets, names = make(rng, CHUNK, int(n), build, h, positions)
    return LongInputs(task, int(n), build, codes, answers, h, targets, names)


def long_inputs(
    task: str, n: int, start: int, stop: int, build: str = "distractors", seed: int = 0,
    hops: Sequence[int] = (1, 2, 3, 4), positions: str = "uniform",
) -> LongInputs:  # fmt: skip
    """Inputs ``start .. stop - 1`` of length ``n`` (module docstring): input ``i`` is row ``i % CHUNK`` of
    :func:`long_chunk` ``i // CHUNK``, the same whichever range it is asked in; only the chunks the range
    meets are generated."""
    start = integer(start, "start", low=0)
    stop = integer(stop, "stop", low=start + 1)
    parts = [
        long_chunk(task, n, build, seed, c, hops, positions)
        for c in range(start // CHUNK, (stop - 1) // CHUNK + 1)
    ]
    lo = start - (start // CHUNK) * CHUNK
    sl = slice(lo, lo + stop - start)
    first = parts[0]
    return LongInputs(
        task, first.n, build,
        np.concatenate([q.codes for q in parts])[sl], np.concatenate([q.answers for q in parts])[sl],
        np.concatenate([q.hops for q in parts])[sl], np.concatenate([q.targets for q in parts])[sl],
        first.names,
    )  # fmt: skip
