"""Task generators: determinism, balance, and answers checked by following the chain independently."""

from __future__ import annotations

import collections

import pytest

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction, retrieval_construction
from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure._tasks import (
    encode_tasks,
    follow_letter_chain,
    follow_number_chain,
    letter_task,
    number_task,
)


def test_number_task_format_and_answers() -> None:
    tasks = number_task(240, seed=4)
    assert tasks == number_task(240, seed=4) and tasks != number_task(240, seed=5)
    for t in tasks:
        assert t.length == 17
        assert all(not x.isdigit() for x in t.tokens[:8]) and all(x.isdigit() for x in t.tokens[8:])
        assert all(1 <= int(x) <= 16 for x in t.tokens[8:])
        assert follow_number_chain(t.tokens) == t.answer == t.tokens[t.target_position]
    assert set(collections.Counter(t.hops for t in tasks).values()) == {60}
    assert set(collections.Counter(t.target_position for t in tasks).values()) == {30}


def test_letter_task_format_and_answers() -> None:
    tasks = letter_task(160, seed=9)
    for t in tasks:
        assert t.length == 17
        assert all(x[1:].isdigit() for x in t.tokens[:8]) and all(x[1].isalpha() for x in t.tokens[8:])
        assert follow_letter_chain(t.tokens) == t.answer
        assert t.tokens[-1][0] != t.tokens[-1][1]
    assert set(collections.Counter(t.hops for t in tasks).values()) == {40}
    assert set(collections.Counter(t.target_position for t in tasks).values()) == {20}


def test_any_length_and_single_hop() -> None:
    long = number_task(10, n_letters=30, n_ints=40, hops=(1,), max_int=70, seed=1)
    assert all(t.length == 71 and t.hops == 1 for t in long)
    assert all(int(t.tokens[-1]) == 70 - t.target_position for t in long)
    lt = letter_task(10, n_targets=50, n_pairs=0, hops=(1,), seed=2)
    assert all(t.length == 51 for t in lt)


def test_encoding_to_a_head() -> None:
    head = compile_construction(index_construction())
    tasks = number_task(5, seed=0)
    x = encode_tasks(head, tasks)
    assert x.shape == (5, 17, head.d_model)
    assert [head.tokens[i] for i in x[0].argmax(-1).tolist()] == list(tasks[0].tokens)
    with pytest.raises(InputError, match="unknown token"):
        encode_tasks(compile_construction(retrieval_construction()), tasks)


def test_task_errors() -> None:
    with pytest.raises(InputError, match="hops"):
        number_task(3, hops=(5,), n_ints=2)
    with pytest.raises(InputError, match="cannot fit"):
        number_task(3, n_letters=8, n_ints=20, hops=(1,), max_int=4)
    with pytest.raises(InputError, match="alphabet_size"):
        letter_task(3, alphabet_size=30)


def _cycle(rng, items, k):
    """The first ``k`` of ``items`` shuffled by ``rng`` again and again (the references' balanced draws)."""
    out = []
    while len(out) < k:
        order = list(items)
        rng.shuffle(order)
        out.extend(order)
    return out[:k]


def _number_task_token_by_token(count, n_letters, n_ints, hops, vocab_letters, max_int, seed):
    """The number task as first written, one draw per call (the reference for the batched draws)."""
    import itertools

    import numpy as np

    hop_list = sorted(set(hops))
    n = n_letters + n_ints + 1
    letters = [f"L{i}" if i >= 26 else chr(65 + i) for i in range(vocab_letters)]
    rng = np.random.default_rng(seed)

    hop_seq, answers, target_seq = (
        _cycle(rng, hop_list, count),
        _cycle(rng, letters, count),
        _cycle(rng, range(n_letters), count),
    )
    out = []
    for i in range(count):
        h, target = hop_seq[i], target_seq[i]
        for _ in range(1000):
            mids = sorted(rng.choice(np.arange(n_letters, n - 1), size=h - 1, replace=False).tolist())[::-1]
            chain = [n - 1, *mids, target]
            if all(0 < a - b <= max_int for a, b in itertools.pairwise(chain)):
                break
        tokens = [str(x) for x in rng.choice(letters, size=n_letters)]
        tokens += [str(int(rng.integers(1, min(max_int, p) + 1))) for p in range(n_letters, n)]
        for a, b in itertools.pairwise(chain):
            tokens[a] = str(a - b)
        tokens[target] = answers[i]
        out.append((tuple(tokens), answers[i], h, target))
    return out


def _letter_task_token_by_token(count, n_targets, n_pairs, hops, alphabet_size, max_int, seed):
    """The letter task as first written, one draw per call (the reference for the batched draws)."""
    import numpy as np

    hop_list = sorted(set(hops))
    n = n_targets + n_pairs + 1
    letters = [chr(65 + i) for i in range(alphabet_size)]
    rng = np.random.default_rng(seed)

    hop_seq, target_seq = _cycle(rng, hop_list, count), _cycle(rng, range(n_targets), count)
    out = []
    for i in range(count):
        h, target = hop_seq[i], target_seq[i]
        mids = sorted(rng.choice(np.arange(n_targets, n - 1), size=h - 1, replace=False).tolist())[::-1]
        chain_letters = [str(x) for x in rng.choice(letters, size=h, replace=False)]
        free = [x for x in letters if x not in chain_letters]
        tokens = []
        for p in range(n - 1):
            first = str(rng.choice(free))
            second = str(rng.integers(1, max_int + 1)) if p < n_targets else str(rng.choice(letters))
            tokens.append(first + second)
        for k, p in enumerate([*mids, target]):
            nxt = chain_letters[k + 1] if k + 1 < h else str(int(rng.integers(1, max_int + 1)))
            tokens[p] = chain_letters[k] + nxt
        tokens.append(str(rng.choice([x for x in letters if x != chain_letters[0]])) + chain_letters[0])
        out.append((tuple(tokens), tokens[target], h, target))
    return out


@pytest.mark.parametrize("seed", [0, 3, 11])
def test_batched_draws_give_the_token_by_token_inputs(seed: int) -> None:
    # the generators draw a whole input's integers (and the letter task's interleaved pairs) in one call;
    # the inputs, and so every study and training batch built on them, are those of one call per draw
    for shape in [(8, 8, 120, 16), (1, 1, 3, 2), (2, 3, 5, 5), (50, 8, 120, 58), (8, 300, 120, 308)]:
        for hops in [(1,), (1, 2, 3, 4), (2, 3)]:
            if max(hops) <= shape[1] + 1:
                got = [
                    (t.tokens, t.answer, t.hops, t.target_position)
                    for t in number_task(9, *shape[:2], hops, *shape[2:], seed)
                ]
                assert got == _number_task_token_by_token(9, *shape[:2], hops, *shape[2:], seed)
    for shape in [(8, 8, 8, 8), (1, 0, 2, 1), (2, 3, 5, 3), (100, 8, 8, 8), (8, 200, 8, 8), (40, 40, 26, 9)]:
        for hops in [(1,), (1, 2, 3, 4), (2, 3)]:
            if max(hops) <= min(shape[1] + 1, shape[2] - 1):
                got = [
                    (t.tokens, t.answer, t.hops, t.target_position)
                    for t in letter_task(9, *shape[:2], hops, *shape[2:], seed)
                ]
                assert got == _letter_task_token_by_token(9, *shape[:2], hops, *shape[2:], seed)
