"""The positional readout bound (docs/theory.md section 9.4): its proof's steps pass, and on random
positional heads every Retrieval input of small lengths, enumerated, keeps the worst readout margin under
the per-query bound min_j C p_j(Q)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.theory._positional_readout import pair_constant, readout_chains, readout_proof
from ropeproof.theory._proof_checks import MACHINE_CHECKED, proof_level

LETTERS = 3
RIGHTS = LETTERS + 1  # a pair's right element: a letter, or the integer 1
TOKENS = [(left, right) for left in range(LETTERS) for right in range(RIGHTS)]


def test_the_proof_passes_with_its_composition_checked() -> None:
    """Every step passes its check, the composition included (two chains, C >= 0 and C <= 0)."""
    steps = readout_proof()
    assert proof_level(steps) == (MACHINE_CHECKED, "11/11 steps machine-checked (4 definitions)")
    assert steps[-1].name == "composition" and steps[-1].method == "sympy"
    assert [c.name for c in readout_chains()] == ["C >= 0", "C <= 0"]


def _worst_margin(readout: np.ndarray, weights: dict[int, np.ndarray], n: int) -> float:
    """min over every Retrieval input of length n of out[target] - max_{o != target} out[o], with
    out = sum_j p_j s(c_j) and p given per query token (a positional head)."""
    worst = np.inf
    index = {tok: i for i, tok in enumerate(TOKENS)}
    for y in range(LETTERS):
        queries = [index[(x, y)] for x in range(LETTERS) if x != y]
        targets = [index[(y, r)] for r in range(RIGHTS)]
        others = [index[(x, r)] for x in range(LETTERS) if x != y for r in range(RIGHTS)]
        for q in queries:
            p = weights[q]
            for t in range(n - 1):
                for tau in targets:
                    for fill in itertools.product(others, repeat=n - 2):
                        seq = list(fill)
                        seq.insert(t, tau)
                        seq.append(q)
                        out = p @ readout[seq]
                        rest = np.delete(out, tau)
                        worst = min(worst, float(out[tau] - rest.max()))
    return worst


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.sampled_from([2, 3, 4]), scale=st.sampled_from([0.1, 1.0, 5.0]))
def test_random_positional_heads_stay_under_the_bound(seed: int, n: int, scale: float) -> None:
    rng = np.random.default_rng(seed)
    v = len(TOKENS)
    readout = rng.standard_normal((v, v)) + 3 * np.eye(v)  # values that favour the token itself
    weights = {}
    for q in range(v):
        logits = scale * rng.standard_normal(n)  # depends on the query token and the positions only
        weights[q] = np.exp(logits) / np.exp(logits).sum()
    bound = np.inf
    for y in range(LETTERS):
        c, _pair = pair_constant(readout, [TOKENS.index((y, r)) for r in range(RIGHTS)])
        for x in range(LETTERS):
            if x != y:
                bound = min(bound, c * weights[TOKENS.index((x, y))][:-1].min())
    assert _worst_margin(readout, weights, n) <= bound + 1e-12


def test_pair_constant_and_bad_input() -> None:
    s = np.array([[2.0, 0.5, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    c, pair = pair_constant(s, [0, 1])
    assert c == pytest.approx(((2.0 - 0.5) + (1.0 - 1.0)) / 2) and set(pair) == {0, 1}
    with pytest.raises(InputError, match="square"):
        pair_constant(np.zeros((2, 3)), [0, 1])
    with pytest.raises(InputError, match="at least two"):
        pair_constant(np.eye(3), [0])
