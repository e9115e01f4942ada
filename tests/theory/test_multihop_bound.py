"""The leak and propagation bound of multi-hop models, checked against brute force: softmax rows with a
given margin, and random soft-attention perturbations of the hard chain recursion."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from mpmath import iv

from ropeproof.theory.multihop import chain_coefficient
from ropeproof.theory.multihop_bound import leak_bound, propagated_error, readout_margin_bound


@given(
    keys=st.integers(1, 40),
    margin=st.floats(1e-3, 2.0),
    beta=st.floats(0.1, 200.0),
    seed=st.integers(0, 2**31 - 1),
)
def test_off_target_mass_is_below_the_leak_bound(keys, margin, beta, seed) -> None:
    rng = np.random.default_rng(seed)
    target = rng.uniform(-1, 1)
    others = target - margin - rng.exponential(0.5, size=keys) * rng.integers(0, 2, size=keys)
    row = beta * np.concatenate([[target], others])
    p = np.exp(row - row.max())
    p /= p.sum()
    bound = leak_bound(beta, margin, keys)
    # float64 softmax rounding: a few ulp of the row sum
    assert 1 - p[0] <= bound * (1 + 1e-12) + 1e-15
    if np.allclose(others, target - margin):  # every competitor exactly at the margin: equality
        assert 1 - p[0] == np.float64(bound) or math.isclose(1 - p[0], bound, rel_tol=1e-12)


def test_leak_bound_runs_on_intervals() -> None:
    lo_hi = leak_bound(iv.mpf(100), iv.mpf("0.05"), 16, exp=iv.exp)
    point = leak_bound(100.0, 0.05, 16)
    assert lo_hi.a <= point <= lo_hi.b
    assert propagated_error([0.1, 0.2], m0=1) == 4 * (0.1 + 0.2)
    assert readout_margin_bound(3, 0.5, [0.01], 1, 1) == 3 * 0.5 - 2 * 2 * 0.01


def _perturbed(hard_target: int, n: int, eps: float, rng: np.random.Generator) -> np.ndarray:
    """A probability row with mass exactly 1 - eps on the target, eps spread at random elsewhere."""
    row = np.zeros(n)
    others = [j for j in range(n) if j != hard_target]
    w = rng.dirichlet(np.ones(len(others)))
    row[others] = eps * w
    row[hard_target] = 1 - eps
    return row


@given(
    hops=st.integers(1, 3),
    extra_layers=st.integers(0, 3),
    n_extra=st.integers(0, 4),
    seed=st.integers(0, 2**31 - 1),
)
def test_soft_chain_error_is_within_the_propagated_bound(hops, extra_layers, n_extra, seed) -> None:
    """Positions 0..hops are the chain (reversed: position hops is the last one), n_extra distractors
    carry random unit channels; every layer's chain rows leak eps_l, distractor rows are arbitrary."""
    rng = np.random.default_rng(seed)
    n = hops + 1 + n_extra
    dim = 2
    pattern = [True] * hops + [False] * extra_layers
    answer = rng.normal(size=dim)
    answer /= np.linalg.norm(answer)
    channel = np.zeros((n, dim))
    channel[0] = answer  # position 0 is the chain's end (p_h); position i holds hop h - i
    for j in range(hops + 1, n):
        v = rng.normal(size=dim)
        channel[j] = v / np.linalg.norm(v) * rng.uniform(0, 1)
    eps = rng.uniform(0, 0.05, size=len(pattern))
    for hop, e in zip(pattern, eps, strict=True):
        a = np.zeros((n, n))
        for i in range(hops + 1):  # chain rows
            t = max(i - 1, 0) if hop else i
            a[i] = _perturbed(t, n, e, rng)
        for j in range(hops + 1, n):  # distractor rows: any probability vector
            a[j] = rng.dirichlet(np.ones(n))
        channel = channel + a @ channel
    c = chain_coefficient(pattern, hops)
    err = np.linalg.norm(channel[hops] - c * answer)
    assert err <= propagated_error(eps, m0=1) * (1 + 1e-12) + 1e-12
