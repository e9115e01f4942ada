"""Long inputs from [A]'s generators: every build keeps valid, balanced chains."""

from __future__ import annotations

import numpy as np
import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure._task_lengths import (
    BUILDS,
    long_letter_task,
    long_number_task,
    long_task,
    required_max_int,
)
from ropeproof.verify.measure._tasks import follow_letter_chain, follow_number_chain


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


# --- the vectorised, chunked i.i.d. generator ---


@pytest.mark.parametrize("build", ["window", "distractors", "both", "near"])
@pytest.mark.parametrize("n", [17, 18, 40, 300])
def test_vectorised_inputs_have_valid_chains(build: str, n: int) -> None:
    """Every input of every build answers to its own chain (followed by the generator-independent
    followers), with the recorded hop count and target; the near build keeps the chain in the last 17
    tokens; every token is in the task's vocabulary (the number task's distractor builds up to 16)."""
    from ropeproof.verify.measure._task_lengths import chain_positions, long_inputs
    from ropeproof.verify.measure._tokenizer import task_vocabulary

    for task, follow in (("number", follow_number_chain), ("letter", follow_letter_chain)):
        vocab = set(task_vocabulary(task, max_int=max(16, n)) if task == "number" else task_vocabulary(task))
        batch = long_inputs(task, n, 0, 48, build, seed=n)
        assert batch.codes.shape == (48, n) and len(batch) == 48
        for inst in batch.instances():
            assert inst.length == n and set(inst.tokens) <= vocab
            assert follow(inst.tokens) == inst.answer == inst.tokens[inst.target_position]
            chain = chain_positions(task, inst.tokens)
            assert len(chain) - 1 == inst.hops and chain[-1] == inst.target_position
            if build == "near":
                assert chain[-1] >= n - 17
        if task == "number" and build in ("distractors", "near"):
            assert max(int(t) for i in batch.instances() for t in i.tokens if t.isdigit()) <= 16


def test_vectorised_inputs_do_not_depend_on_the_range_asked() -> None:
    """Input i is the same whichever range it is generated in, and only its chunk is generated."""
    from ropeproof.verify.measure._task_lengths import CHUNK, long_chunk, long_inputs

    whole = long_inputs("letter", 64, 0, 3 * CHUNK + 5)
    part = long_inputs("letter", 64, CHUNK + 3, 2 * CHUNK + 1)
    assert (part.codes == whole.codes[CHUNK + 3 : 2 * CHUNK + 1]).all()
    assert (part.answers == whole.answers[CHUNK + 3 : 2 * CHUNK + 1]).all()
    assert (long_chunk("letter", 64, "distractors", 0, 2).codes == whole.codes[2 * CHUNK : 3 * CHUNK]).all()
    other = long_inputs("letter", 64, 0, CHUNK, seed=1)
    assert (other.codes != whole.codes[:CHUNK]).any()
    only_one = long_inputs("number", 40, 0, 64, hops=(1,))
    assert set(only_one.hops.tolist()) == {1}


def test_vectorised_inputs_are_uniform_over_hops_targets_and_answers() -> None:
    """i.i.d. draws: on 4,096 inputs every hop count, target position and answer letter appears with
    frequency within 5 binomial standard deviations of uniform."""
    from ropeproof.verify.measure._task_lengths import long_inputs

    batch = long_inputs("letter", 40, 0, 4096)
    for values, k in ((batch.hops, 4), (batch.targets, 8), (batch.answers, 64)):
        counts = np.bincount(np.unique(values, return_inverse=True)[1])
        assert counts.size == k
        p = 1 / k
        assert np.all(np.abs(counts - 4096 * p) <= 5 * np.sqrt(4096 * p * (1 - p)))


def test_vectorised_inputs_refuse_bad_arguments() -> None:
    from ropeproof.verify.measure._task_lengths import long_inputs

    with pytest.raises(InputError, match="build='wide' is unknown"):
        long_inputs("letter", 40, 0, 4, "wide")
    with pytest.raises(InputError, match="n=10"):
        long_inputs("letter", 10, 0, 4)
    with pytest.raises(InputError, match="hops="):
        long_inputs("letter", 40, 0, 4, hops=(5,))
    with pytest.raises(InputError, match="stop="):
        long_inputs("letter", 40, 4, 4)


@pytest.mark.parametrize("task", ["letter", "number"])
def test_middle_steps_are_uniform_by_default_and_near_the_query_only_when_asked(task: str) -> None:
    """A 2-hop chain's middle step (read off the tokens by following the chain) is uniform over the pair
    window by default, as in training (chi-square against the uniform law), and under ``"near-query"``
    follows the law of the largest of a uniform 3-subset, C(v - lo, 2) / C(size, 3); the two laws differ
    by far more than the sampling noise; the 3-hop steps are a uniform 2-subset."""
    from math import comb

    from scipy.stats import chisquare

    from ropeproof.verify.measure._task_lengths import chain_positions, long_inputs

    n = 40 if task == "letter" else 17
    lo, hi = (8, n - 1)  # letter: 8 targets then pairs; number: [A]'s 8 letters then integers
    values = np.arange(lo, hi)
    size = values.size
    near = np.array([comb(v - lo, 2) for v in values]) / comb(size, 3)

    def mids(positions: str, hops: int) -> np.ndarray:
        batch = long_inputs(task, n, 0, 3200, "distractors", 5, (hops,), positions)
        return np.array([chain_positions(task, inst.tokens)[1:hops] for inst in batch.instances()])

    first = mids("uniform", 2)[:, 0]
    assert chisquare(np.bincount(first - lo, minlength=size)).pvalue > 1e-3
    biased_first = mids("near-query", 2)[:, 0]
    biased = np.bincount(biased_first - lo, minlength=size)
    can = near > 0  # the largest of three is never among the two lowest positions
    assert (biased[~can] == 0).all()
    assert chisquare(biased[can], near[can] * biased.sum()).pvalue > 1e-3
    # the two laws' means, each within 5 standard errors of its own and far from the other's
    for got, law in ((first, np.full(size, 1 / size)), (biased_first, near)):
        mean = float((values * law).sum())
        error = float(np.sqrt(((values - mean) ** 2 * law).sum() / got.size))
        assert abs(got.mean() - mean) < 5 * error
    assert biased_first.mean() - first.mean() > 0.2 * size
    pairs = mids("uniform", 3)
    assert (pairs[:, 0] > pairs[:, 1]).all()
    index = (pairs[:, 0] - lo) * size + (pairs[:, 1] - lo)
    seen = np.bincount(index, minlength=size * size).reshape(size, size)
    cells = seen[np.tril_indices(size, -1)]  # every (p1 > p2) pair equally likely
    assert cells.size == comb(size, 2) and chisquare(cells).pvalue > 1e-3
