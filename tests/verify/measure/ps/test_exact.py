"""Exact positional/symbolic deviations and the exclusion principle ([B] Theorem 1).

References are independent of :mod:`ropeproof.verify.measure.ps._exact`: an explicit Python loop over
``itertools.permutations`` running the head's full forward pass, and hand-computed tiny cases.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError, MemoryBudgetError
from ropeproof.machinery._memory_budget import ENV_VAR
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._random_heads import random_head as _head
from ropeproof.verify.measure._subjects import index_subject, retrieval_subject
from ropeproof.verify.measure.ps._exact import (
    DEVIATION_BYTES,
    PERMUTATION_BYTES,
    all_permutations,
    deviations,
    exact_exclusion,
    exclusion_bytes,
    logit_row_fn,
    random_permutations,
    sampled_exclusion,
)
from ropeproof.verify.measure.ps._rows import as_inputs, key_logit_table
from ropeproof.verify.testing._strategies import rope_specs

# Tolerances. Logits here are O(1..10) sums of a few float64 products, so two routes to the same
# logit agree to ~1e-14 relative; the statistics are means of ~5040*7 such numbers.
REL = 1e-10


def _loop_reference(head: RopeAttention, x: torch.Tensor) -> dict[str, float]:
    """Slow, explicit: every permutation, full forward pass, formulas written out."""
    n = x.shape[0]
    m = n - 1
    row = head(x[None]).logits[0, -1, :m].numpy()
    pos_sq = sym_sq = diff_sq = 0.0
    count = 0
    for sigma in itertools.permutations(range(m)):
        xs = x[[*sigma, m]]  # position j receives content c_{sigma(j)}
        new = head(xs[None]).logits[0, -1, :m].numpy()
        for j in range(m):
            d_pos = new[j] - row[j]
            d_sym = new[j] - row[sigma[j]]
            pos_sq += d_pos**2
            sym_sq += d_sym**2
            diff_sq += (d_pos - d_sym) ** 2
        count += 1
    assert count == math.factorial(m)
    var = float(np.mean((row - row.mean()) ** 2))
    return {
        "variance": var,
        "delta_pos_sq": pos_sq,
        "delta_sym_sq": sym_sq,
        "bound": (pos_sq + sym_sq) / (math.factorial(m) * m),
        "half": diff_sq / (2 * count * m),
    }


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_exact_matches_explicit_permutation_loop(layout: str) -> None:
    spec = RopeSpec(6, rotary_dim=4, freqs=[0.7, 0.0], layout=layout)
    head = _head(spec, d_model=5, seed=1)
    x = torch.randn(2, 5, 5, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    for via in (head, logit_row_fn(head)):
        rep = exact_exclusion(via, x)
        assert rep.exact and rep.n_permutations == 24 and rep.n == 5
        for b in range(2):
            ref = _loop_reference(head, x[b])
            for key, value in ref.items():
                got = rep.half_msd_diff[b] if key == "half" else getattr(rep, key)[b]
                assert float(got) == pytest.approx(value, rel=REL, abs=1e-12), key


def test_hand_computed_two_keys() -> None:
    """n = 3: contents (a, b) at positions (0, 1); logit table L[content, position] = A."""
    A = torch.tensor([[1.0, 2.0], [3.0, 5.0]], dtype=torch.float64)

    def rows(x: torch.Tensor) -> torch.Tensor:  # x[..., 0] holds the content id; query ignored
        ids = x[:, :2, 0].long()
        return A[ids, torch.arange(2)]

    x = torch.tensor([[[0.0], [1.0], [0.0]]], dtype=torch.float64)
    rep = exact_exclusion(rows, x)
    # identity: row (1, 5); swap: (A[b,0], A[a,1]) = (3, 2)
    # delta_pos(swap) = (3-1, 2-5) = (2, -3); delta_sym(swap) = (3-5, 2-1) = (-2, 1)
    assert float(rep.variance[0]) == 4.0
    assert float(rep.delta_pos_sq[0]) == 13.0
    assert float(rep.delta_sym_sq[0]) == 5.0
    assert float(rep.bound[0]) == 18.0 / 4.0  # (13 + 5) / (2! * 2)
    assert float(rep.tightness[0]) == pytest.approx(8.0 / 9.0, rel=1e-15)
    assert float(rep.half_msd_diff[0]) == 4.0  # (4^2 + 4^2) / (2 * 2 perms * 2 keys) = Var
    assert rep.all_hold


def test_nope_exactly_symbolic_constant_key_exactly_positional() -> None:
    g = torch.Generator().manual_seed(3)
    x = torch.nn.functional.one_hot(torch.randint(0, 6, (4, 8), generator=g), 6).double()
    nope = _head(RopeSpec(8, rotary_dim=0), 6, seed=4)
    rep = exact_exclusion(nope, x)
    assert torch.equal(
        rep.msd_sym, torch.zeros(4, dtype=torch.float64)
    )  # exact: a direction slip in sigma breaks this
    assert (rep.msd_pos > 0).all()
    w = _head(RopeSpec(8, freqs=[1.1, 0.3, 0.0, 2.0]), 6, seed=5)
    const_key = RopeAttention(w.W_Q, w.W_K[:1].expand(6, 8), w.W_V, w.W_O, w.spec, device="cpu")
    rep = exact_exclusion(const_key, x)
    assert torch.equal(rep.msd_pos, torch.zeros(4, dtype=torch.float64))
    assert (rep.msd_sym > 0).all()
    # a purely positional or purely symbolic head sits at exactly half the bound
    assert torch.allclose(rep.tightness, torch.full((4,), 0.5, dtype=torch.float64), rtol=1e-12)


def test_direction_of_sigma_with_callables() -> None:
    """Content-only logits give delta_sym = 0, position-only logits delta_pos = 0, exactly."""
    weights = torch.tensor([0.3, -1.2, 2.5, 0.7, 1.9], dtype=torch.float64)
    x = torch.tensor([[[0.0], [3.0], [1.0], [4.0], [2.0]]], dtype=torch.float64)

    def content(x: torch.Tensor) -> torch.Tensor:
        return weights[x[:, :, 0].long()]

    def position(x: torch.Tensor) -> torch.Tensor:
        return weights[:4].expand(x.shape[0], 4) + 0 * x[:, :4, 0]

    assert float(exact_exclusion(content, x).msd_sym[0]) == 0.0
    assert float(exact_exclusion(position, x).msd_pos[0]) == 0.0


def test_bound_is_attained() -> None:
    """Equality iff delta_pos = -delta_sym: logits w[content] + w[position] with content k at k."""
    w = torch.tensor([0.4, -1.0, 2.0, 0.5, 3.0, 0.0], dtype=torch.float64)

    def additive(x: torch.Tensor) -> torch.Tensor:
        return w[x[:, :5, 0].long()] + w[:5]

    x = torch.arange(6, dtype=torch.float64).reshape(1, 6, 1)
    rep = exact_exclusion(additive, x)
    assert float(rep.tightness[0]) == pytest.approx(1.0, rel=1e-12)
    assert rep.all_hold


@settings(deadline=None)
@given(
    spec=rope_specs(max_head_dim=8),
    n=st.integers(2, 7),
    d_model=st.integers(1, 6),
    seed=st.integers(0, 2**31 - 1),
    scale=st.floats(0.1, 5.0),
)
def test_exclusion_principle_property(spec: RopeSpec, n: int, d_model: int, seed: int, scale: float) -> None:
    head = _head(spec, d_model, seed, scale)
    x = torch.randn(2, n, d_model, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    rep = exact_exclusion(head, x)
    assert rep.all_hold, (rep.variance, rep.bound)
    ok = ~torch.isnan(rep.tightness)
    assert (rep.tightness[ok] <= 1 + 1e-12).all()
    # the identity behind the theorem: Var = mean (delta_pos - delta_sym)^2 / 2 over all sigma
    scale_sq = float(rep.variance.abs().max()) + 1e-300
    assert float((rep.variance - rep.half_msd_diff).abs().max()) <= 1e-12 * max(scale_sq, 1.0)


def test_constructions_exact() -> None:
    index = index_subject(4)
    rep = exact_exclusion(index.head, index.inputs[:, -8:])
    assert torch.equal(rep.msd_pos, torch.zeros(4, dtype=torch.float64))
    assert rep.all_hold and torch.allclose(
        rep.tightness, torch.full((4,), 0.5, dtype=torch.float64), rtol=1e-12
    )
    retrieval = retrieval_subject(4, theta=0.0)
    rep = exact_exclusion(retrieval.head, retrieval.inputs[:, -8:])
    assert torch.equal(rep.msd_sym, torch.zeros(4, dtype=torch.float64))
    assert rep.all_hold
    moved = retrieval_subject(4, theta=0.0027)
    rep = exact_exclusion(moved.head, moved.inputs[:, -8:])
    assert rep.all_hold and (rep.msd_sym > 0).all()


def test_key_logit_table_matches_forward() -> None:
    spec = RopeSpec(8, rotary_dim=6, base=100.0, layout="half")
    head = _head(spec, 4, seed=7, scale=0.35)
    x = torch.randn(3, 6, 4, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    table, self_logit = key_logit_table(head, x)
    logits = head(x).logits[:, -1, :]
    assert torch.allclose(table.diagonal(dim1=1, dim2=2), logits[:, :5], rtol=0, atol=1e-12)
    assert torch.allclose(self_logit, logits[:, 5], rtol=0, atol=1e-12)


def test_sampled_estimate_agrees_with_exact() -> None:
    head = _head(RopeSpec(4, freqs=[0.9, 0.2]), 3, seed=9)
    x = torch.randn(2, 7, 3, generator=torch.Generator().manual_seed(10), dtype=torch.float64)
    exact = exact_exclusion(head, x)
    est = sampled_exclusion(head, x, n_samples=3000, seed=11)
    assert not est.exact and est.n_permutations == 3000
    assert torch.equal(est.variance, exact.variance)
    assert ((est.msd_pos - exact.msd_pos).abs() <= 5 * est.se_pos).all()
    assert ((est.msd_sym - exact.msd_sym).abs() <= 5 * est.se_sym).all()
    assert (est.se_pos > 0).all()


def test_sampled_long_input() -> None:
    head = _head(RopeSpec(16), 8, seed=12, scale=0.25)
    x = torch.randn(3, 33, 8, generator=torch.Generator().manual_seed(13), dtype=torch.float64)
    rep = sampled_exclusion(head, x, n_samples=400)
    assert rep.n == 33 and rep.n_permutations == 400 and rep.all_hold
    assert set(rep.to_dict()) >= {"variance", "bound", "tightness", "n_permutations", "exact"}


def test_permutation_helpers() -> None:
    perms = all_permutations(4)
    assert perms.shape == (24, 4) and torch.equal(perms[0], torch.arange(4))
    assert len({tuple(p) for p in perms.tolist()}) == 24
    rnd = random_permutations(6, 50, seed=1)
    assert torch.equal(rnd.sort(1).values, torch.arange(6).expand(50, 6))
    assert torch.equal(rnd, random_permutations(6, 50, seed=1))


def test_errors() -> None:
    head = _head(RopeSpec(2, freqs=[0.5]), 2, seed=0)
    with pytest.raises(InputError, match=r"n=9 .*2 <= n <= 8"):
        exact_exclusion(head, torch.zeros(1, 9, 2))
    with pytest.raises(InputError, match="n=1"):
        exact_exclusion(head, torch.zeros(1, 1, 2))
    with pytest.raises(InputError, match="shape"):
        exact_exclusion(head, torch.zeros(2))
    with pytest.raises(InputError, match="d_model"):
        exact_exclusion(head, torch.zeros(1, 4, 3))
    with pytest.raises(InputError, match="NaN"):
        exact_exclusion(head, torch.full((1, 4, 2), float("nan")))
    with pytest.raises(InputError, match="n_samples"):
        sampled_exclusion(head, torch.zeros(1, 4, 2), n_samples=0)
    with pytest.raises(InputError, match="chunk_size"):
        exact_exclusion(head, torch.zeros(1, 4, 2), chunk_size=0)
    with pytest.raises(InputError, match=r"expected \[batch=1, n=4\]"):
        exact_exclusion(lambda x: torch.zeros(1, 2), torch.zeros(1, 4, 2))
    with pytest.raises(InputError, match="callable"):
        exact_exclusion(3, torch.zeros(1, 4, 2))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="permutation"):
        deviations(head, torch.zeros(1, 4, 2), torch.tensor([[0, 0, 1]]))
    with pytest.raises(InputError, match="perms must have shape"):
        deviations(head, torch.zeros(1, 4, 2), torch.tensor([[0, 1]]))


def test_as_inputs_shapes_and_errors() -> None:
    x = as_inputs(np.ones((4, 3)))
    assert x.shape == (1, 4, 3) and x.dtype == torch.float64  # one input gets batch 1
    with pytest.raises(InputError, match="n=1 tokens; accepted: n >= 2"):
        as_inputs(np.ones((1, 1, 3)))
    with pytest.raises(InputError, match="empty batch"):
        as_inputs(np.ones((0, 4, 3)))
    with pytest.raises(InputError, match="NaN or inf"):
        as_inputs(np.full((1, 4, 3), np.nan))


def test_exclusion_refuses_what_cannot_fit_before_allocating(monkeypatch: pytest.MonkeyPatch) -> None:
    head = _head(RopeSpec(4), 4, seed=0)
    x = torch.randn(3, 20, 4, dtype=torch.float64)
    table = exclusion_bytes(head, x, 1000)
    assert table == DEVIATION_BYTES * 3 * 1000 * 19 + PERMUTATION_BYTES * 1000 * 19
    # a callable also stacks the permuted inputs and declares its forward pass per sequence
    fn, stacked = logit_row_fn(head), 3000 * 20 * 4 * 8
    assert exclusion_bytes(fn, x, 1000) == table + stacked + 3000 * head.forward_bytes(20)
    assert exclusion_bytes(fn, x, 1000, chunk_size=10) == table + stacked + 10 * head.forward_bytes(20)
    monkeypatch.setenv(ENV_VAR, "1MB")
    # 10^12 permutations would need petabytes: refused at once, naming the computation and the limit
    with pytest.raises(MemoryBudgetError, match=r"the exclusion over 1000000000000 permutations of 3 inputs"):
        sampled_exclusion(head, x, n_samples=10**12)
    with pytest.raises(MemoryBudgetError, match="exclusion over 5040 permutations"):
        exact_exclusion(head, torch.randn(8, 8, 4, dtype=torch.float64))
    assert sampled_exclusion(head, x, n_samples=50).n_permutations == 50  # 0.2 MB fits
