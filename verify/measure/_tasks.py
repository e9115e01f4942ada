"""[A]'s number task and letter task (``docs/theory.md`` section 3), deterministic given a seed.

**Number task** (positional). ``n_letters`` letters, then ``n_ints`` integers, then the query integer
(length ``n_letters + n_ints + 1``; [A]: 8 + 8 + 1 = 17, letters from a vocabulary of 120, integers
``1..16``). An integer ``m`` at position ``p`` means "go back ``m``". From the last token follow
``p -> p - value(p)`` until a letter; that letter is the answer. The chain has ``hops`` steps.

**Letter task** (symbolic). Every token is a pair: a target window of ``(letter, integer)`` pairs, then
a window of ``(letter, letter)`` pairs, then the query pair. ``(X, Y)`` means "find the earlier pair
whose first letter is ``Y``"; the chain's lookups are unique; the answer is the (letter, integer) pair
reached. [A]: 8 letters, integers ``1..8``, windows of 8.

Token names match the compiled constructions: letters ``A, B, ...`` (``L26, ...`` past Z), integers
``"1", "2", ...``, pairs ``"AB"`` / ``"A3"``. Target positions, answers and hop counts are balanced by
cycling through shuffled lists.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._errors import InputError
from ropeproof.theory._construction import letter_tokens
from ropeproof.verify.kernel._compiled import encode


@dataclass(frozen=True)
class TaskInstance:
    """One input: ``tokens``, the ``answer`` token, the hop count and the final target's position."""

    tokens: tuple[str, ...]
    answer: str
    hops: int
    target_position: int

    @property
    def length(self) -> int:
        return len(self.tokens)


def _letter_names(count: int) -> list[str]:
    return [t.name for t in letter_tokens(count)]


def _cycle(rng: np.random.Generator, items: Sequence, count: int) -> list:
    out: list = []
    while len(out) < count:
        order = list(items)
        rng.shuffle(order)
        out.extend(order)
    return out[:count]


def _check_hops(hops: Sequence[int], most: int) -> list[int]:
    hops = sorted(set(int(h) for h in hops))
    if not hops or hops[0] < 1 or hops[-1] > most:
        raise InputError(f"hops={hops} must be non-empty, each in 1..{most}")
    return hops


def number_task(
    count: int,
    n_letters: int = 8,
    n_ints: int = 8,
    hops: Sequence[int] = (1, 2, 3, 4),
    vocab_letters: int = 120,
    max_int: int = 16,
    seed: int = 0,
) -> list[TaskInstance]:
    """``count`` number-task inputs of length ``n_letters + n_ints + 1`` (see the module docstring).

    Single-hop: ``hops=(1,)``. Requires every hop to fit: a 1-hop query reaches back at most
    ``max_int`` positions, so ``n_ints + 1 <= max_int`` for the earliest letter to be reachable.
    """
    if count < 0 or n_letters < 1 or n_ints < 0 or vocab_letters < 1 or max_int < 1:
        raise InputError("count >= 0, n_letters >= 1, n_ints >= 0, vocab_letters >= 1, max_int >= 1 required")
    hop_list = _check_hops(hops, n_ints + 1)
    n = n_letters + n_ints + 1
    letters = _letter_names(vocab_letters)
    rng = np.random.default_rng(seed)
    hop_seq = _cycle(rng, hop_list, count)
    answers = _cycle(rng, letters, count)
    target_seq = _cycle(rng, range(n_letters), count)
    out = []
    for i in range(count):
        h, target = hop_seq[i], target_seq[i]
        for _attempt in range(1000):
            # chain p_0 = n-1 > p_1 > ... > p_{h-1} (integers) > p_h = target (a letter)
            mids = sorted(
                rng.choice(np.arange(n_letters, n - 1), size=h - 1, replace=False).tolist(), reverse=True
            )
            chain = [n - 1, *mids, target]
            if all(0 < a - b <= max_int for a, b in itertools.pairwise(chain)):
                break
        else:
            raise InputError(
                f"cannot fit a {h}-hop chain to position {target} with max_int={max_int} in length {n}"
            )
        tokens: list[str] = [str(x) for x in rng.choice(letters, size=n_letters)]
        # one draw per integer position, bound min(max_int, p): with an array of bounds numpy draws them in
        # order exactly as one call per position would (the same stream, the same tokens)
        tokens += [str(m) for m in rng.integers(1, np.minimum(max_int, np.arange(n_letters, n)) + 1).tolist()]
        for a, b in itertools.pairwise(chain):
            tokens[a] = str(a - b)
        tokens[target] = answers[i]
        out.append(TaskInstance(tuple(tokens), answers[i], h, target))
    return out


def letter_task(
    count: int,
    n_targets: int = 8,
    n_pairs: int = 8,
    hops: Sequence[int] = (1, 2, 3, 4),
    alphabet_size: int = 8,
    max_int: int = 8,
    seed: int = 0,
) -> list[TaskInstance]:
    """``count`` letter-task inputs of length ``n_targets + n_pairs + 1`` (see the module docstring).

    Lookups are unique: the chain's first letters appear as a first letter nowhere else before the
    query, so ``hops < alphabet_size`` is required (the query's own first letter differs from the
    letter it asks for).
    """
    if count < 0 or n_targets < 1 or n_pairs < 0 or not 2 <= alphabet_size <= 26 or max_int < 1:
        raise InputError(
            "count >= 0, n_targets >= 1, n_pairs >= 0, 2 <= alphabet_size <= 26, max_int >= 1 required"
        )
    hop_list = _check_hops(hops, min(n_pairs + 1, alphabet_size - 1))
    n = n_targets + n_pairs + 1
    letters = _letter_names(alphabet_size)
    rng = np.random.default_rng(seed)
    hop_seq = _cycle(rng, hop_list, count)
    target_seq = _cycle(rng, range(n_targets), count)
    out = []
    for i in range(count):
        h, target = hop_seq[i], target_seq[i]
        mids = sorted(
            rng.choice(np.arange(n_targets, n - 1), size=h - 1, replace=False).tolist(), reverse=True
        )
        chain_letters = [
            str(x) for x in rng.choice(letters, size=h, replace=False)
        ]  # first letters of p_1..p_h
        free = [x for x in letters if x not in chain_letters]
        # per position before the query a free first letter, then an integer 1..max_int (target window) or
        # a letter: one draw each, interleaved, as one call with an array of bounds (numpy draws them in
        # order exactly as one call per draw would: the same stream, the same tokens)
        seconds = np.where(np.arange(n - 1) < n_targets, max_int, len(letters))
        bounds = np.stack([np.full(n - 1, len(free)), seconds], axis=1).reshape(-1)
        draws = rng.integers(0, bounds).reshape(n - 1, 2).tolist()
        tokens = [free[f] + (str(v + 1) if p < n_targets else letters[v]) for p, (f, v) in enumerate(draws)]
        positions = [*mids, target]
        for k, p in enumerate(positions):
            nxt = chain_letters[k + 1] if k + 1 < h else str(int(rng.integers(1, max_int + 1)))
            tokens[p] = chain_letters[k] + nxt
        x = str(rng.choice([x for x in letters if x != chain_letters[0]]))
        tokens.append(x + chain_letters[0])
        out.append(TaskInstance(tuple(tokens), tokens[target], h, target))
    return out


def follow_number_chain(tokens: Sequence[str]) -> str:
    """The number task's answer by following the chain (independent of the generator)."""
    p = len(tokens) - 1
    while tokens[p].isdigit():
        p -= int(tokens[p])
        if p < 0:
            raise InputError("the chain leaves the sequence")
    return tokens[p]


def follow_letter_chain(tokens: Sequence[str]) -> str:
    """The letter task's answer by following the chain (independent of the generator)."""
    p = len(tokens) - 1
    while not tokens[p][1:].isdigit():
        want = tokens[p][1:]
        hits = [j for j in range(p) if _first(tokens[j]) == want]
        if len(hits) != 1:
            raise InputError(f"lookup of {want!r} from position {p} is not unique ({len(hits)} matches)")
        p = hits[0]
    return tokens[p]


def _first(pair: str) -> str:
    # pair names are first letter + second component; letters are one character (A..Z) here
    return pair[0]


def encode_tasks(
    head: CompiledHead, instances: Sequence[TaskInstance], dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """``[batch, n, d_model]`` embeddings of equal-length task inputs in ``head``'s vocabulary."""
    if not instances:
        raise InputError("instances is empty")
    lengths = {inst.length for inst in instances}
    if len(lengths) != 1:
        raise InputError(f"instances must share one length to batch, got {sorted(lengths)}")
    return encode(head, [list(inst.tokens) for inst in instances], dtype)
