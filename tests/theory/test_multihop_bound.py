"""The leak and propagation bound of multi-hop models, checked against brute force: softmax rows with a
given margin, and random soft-attention perturbations of the hard chain recursion."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mpmath import iv

from ropeproof.theory._multihop import chain_coefficient
from ropeproof.theory._multihop_bound import (
    chain_error_bound,
    leak_bound,
    mass_bound,
    propagated_error,
    readout_margin_bound,
)


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


@given(
    hops=st.integers(1, 3),
    extra_layers=st.integers(0, 3),
    n_extra=st.integers(0, 4),
    seed=st.integers(0, 2**31 - 1),
)
def test_soft_chain_error_is_within_the_per_position_bound(hops, extra_layers, n_extra, seed) -> None:
    """As above, against the per-position recursion (step 3'), with distractor channels of norm up to 1
    and hop layers anywhere in the pattern; the recursion is also never above the uniform bound."""
    rng = np.random.default_rng(seed)
    n = hops + 1 + n_extra
    pattern = [True] * hops + [False] * extra_layers
    rng.shuffle(pattern)
    answer = rng.normal(size=2)
    answer /= np.linalg.norm(answer)
    channel = np.zeros((n, 2))
    channel[0] = answer
    for j in range(hops + 1, n):
        v = rng.normal(size=2)
        channel[j] = v / np.linalg.norm(v) * rng.uniform(0.5, 1)
    eps = rng.uniform(0, 0.05, size=len(pattern))
    for hop, e in zip(pattern, eps, strict=True):
        a = np.zeros((n, n))
        for i in range(hops + 1):
            a[i] = _perturbed(max(i - 1, 0) if hop else i, n, e, rng)
        for j in range(hops + 1, n):
            a[j] = rng.dirichlet(np.ones(n))
        channel = channel + a @ channel
    c, bound = chain_error_bound(pattern, hops, list(eps))
    assert c == chain_coefficient(pattern, hops)
    assert np.linalg.norm(channel[hops] - c * answer) <= bound * (1 + 1e-12) + 1e-12
    assert bound <= propagated_error(eps, m0=1) * (1 + 1e-12)


@given(
    freq=st.floats(0.05, 3.0),
    beta=st.floats(1.0, 300.0),
    s=st.integers(0, 30),
    extra=st.integers(0, 30),
)
def test_off_target_mass_is_below_the_sum_over_offsets(freq, beta, s, extra) -> None:
    """An Index row (integer s at position p = s + extra, keys all v, one plane) puts mass
    sum_u e^{-beta g(|u|)} / (1 + ...) off target, u in -s..p-s: at most T(n-1) + T((n-1)//2) with n = p + 1,
    and exactly T(s) + T(p - s) before the /(1 + .)."""
    p = s + extra
    n = p + 1
    d = np.arange(p + 1)  # keys d back from the query
    row = beta * np.cos((s - d) * freq)
    w = np.exp(row - row.max())
    w /= w.sum()
    off = np.delete(w, s).sum()
    g = 2 * np.sin(np.arange(1, n) * freq / 2) ** 2
    t = np.concatenate([[0.0], np.cumsum(np.exp(-beta * g))])
    assert off <= mass_bound(t[s] + t[p - s]) * (1 + 1e-12) + 1e-15
    assert math.isclose(off, mass_bound(t[s] + t[p - s]), rel_tol=1e-9, abs_tol=1e-15)
    assert off <= mass_bound(t[n - 1] + t[(n - 1) // 2]) * (1 + 1e-12) + 1e-15


@pytest.mark.parametrize(("code", "size"), [("cyclic", 2), ("cyclic", 5), ("cyclic", 120), ("onehot", 7)])
def test_code_radius_is_the_largest_safe_error(code: str, size: int) -> None:
    """Brute force: with u_Y = e_Y for answers and 0 for one non-answer, the readout of c e_X + err is X
    for random errors of norm just below c rho, and an error of norm c rho (1 + 1e-9) towards the closest
    competitor flips or ties it."""
    from ropeproof.theory._multihop import code_radius, cyclic_code, onehot_code

    make = cyclic_code if code == "cyclic" else onehot_code
    codes = np.array([[float(v) for v in make(i, size)] for i in range(size)])
    u = np.vstack([codes, np.zeros(codes.shape[1])])  # the last row: a non-answer token
    rho = float(code_radius(code, size))
    rng = np.random.default_rng(size)
    c = 3.0
    for x in range(size):
        for _ in range(200):
            err = rng.normal(size=codes.shape[1])
            err *= c * rho * (1 - 1e-9) / np.linalg.norm(err)
            assert int(np.argmax(u @ (c * codes[x] + err))) == x
        y = (x + 1) % size
        towards = (u[y] - u[x]) / np.linalg.norm(u[y] - u[x])
        z = u @ (c * codes[x] + c * rho * (1 + 1e-9) * towards)
        assert z[y] >= z[x] - 1e-12
