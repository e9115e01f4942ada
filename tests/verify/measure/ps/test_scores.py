"""[A]'s positional/symbolic scores, the ``ps.*`` claims and ``ropeproof ps-score``.

The reference is a slow loop written here: one full forward pass per swap, numpy cosine
similarities, and a numpy softmax over swaps.
"""

from __future__ import annotations

import json

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.claims import CheckContext, run_claim
from ropeproof.machinery._errors import InputError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._random_heads import random_head as _head
from ropeproof.verify.measure._subjects import index_subject, random_subject, retrieval_subject
from ropeproof.verify.measure.ps._exact import logit_row_fn
from ropeproof.verify.measure.ps._row_functions import RowFunction
from ropeproof.verify.measure.ps._scores import (
    attention_row_fn,
    cos_sim,
    last_row_fn,
    ps_scores,
    scores_from_rows,
    source_scores,
    swap_plan,
)
from ropeproof.verify.measure.ps._swap_sources import CallableSource, TableSource
from ropeproof.verify.measure.ps._swap_stream import BlockPairs, stream_swap_scores
from ropeproof.verify.testing._strategies import rope_specs

# Two routes to the same attention row (logit table vs. forward pass) agree to ~1e-15; a score is a
# weighted mean of cosines of such rows, so 1e-12 leaves three orders of margin.
TOL = 1e-12


def _np_cos(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def _loop_reference(head: RopeAttention, x: torch.Tensor, tau: float, b: int) -> tuple[float, float]:
    """One input; blocks of ``b`` positions from position 0; the remainder is never swapped."""
    n = x.shape[0]
    k = (n - 1) // b
    d = head(x[None]).pattern[0, -1].numpy()
    pos, sym, diff = [], [], []
    for i in range(k):
        for j in range(i + 1, k):
            bi, bj = list(range(i * b, i * b + b)), list(range(j * b, j * b + b))
            order = list(range(n))
            for p, q in zip(bi, bj, strict=True):
                order[p], order[q] = q, p
            e = head(x[order][None]).pattern[0, -1].numpy()
            new = np.concatenate([e[bi], e[bj]])
            pos.append(_np_cos(new, np.concatenate([d[bi], d[bj]])))
            sym.append(_np_cos(new, np.concatenate([d[bj], d[bi]])))
            diff.append(np.abs(d[bi] - d[bj]).sum())
    z = np.array(diff) / tau
    w = np.exp(z - z.max())
    w /= w.sum()
    return float(w @ np.array(pos)), float(w @ np.array(sym))


@pytest.mark.parametrize(
    ("layout", "block_size", "n", "tau"),
    [("interleaved", 1, 9, 1e-4), ("half", 1, 7, 0.05), ("half", 2, 10, 1e-4), ("interleaved", 3, 12, 0.3)],
)
def test_matches_slow_swap_loop(layout: str, block_size: int, n: int, tau: float) -> None:
    spec = RopeSpec(8, rotary_dim=6, freqs=[0.9, 0.05, 0.0], layout=layout)
    head = _head(spec, 5, seed=1, scale=0.7)
    x = torch.randn(3, n, 5, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    sc = ps_scores(head, x, tau=tau, block_size=block_size)
    via_callable = ps_scores(attention_row_fn(head), x, tau=tau, block_size=block_size, chunk_size=7)
    every_swap = ps_scores(last_row_fn(head), x, tau=tau, block_size=block_size, max_skipped_weight=None)
    for b in range(3):
        ref = _loop_reference(head, x[b], tau, block_size)
        assert float(sc.s_pos[b]) == pytest.approx(ref[0], abs=TOL)
        assert float(sc.s_sym[b]) == pytest.approx(ref[1], abs=TOL)
    for other in (via_callable, every_swap):
        assert torch.allclose(sc.s_pos, other.s_pos, rtol=0, atol=TOL)
        assert torch.allclose(sc.s_sym, other.s_sym, rtol=0, atol=TOL)
    assert int(every_swap.n_evaluated.min()) == sc.n_swaps and float(every_swap.skipped_weight.max()) == 0
    assert sc.S_pos == pytest.approx(float(sc.s_pos.mean()))
    assert torch.allclose(sc.weights.sum(1), torch.ones(3, dtype=torch.float64))


def test_hand_computed_single_swap() -> None:
    """n = 3: one swap; the 'head' returns the inputs themselves as the attention row."""
    x = torch.tensor([[[0.5], [0.25], [0.25]]], dtype=torch.float64)
    sc = ps_scores(lambda t: t[:, :, 0], x)
    # d = (0.5, 0.25), d' = (0.25, 0.5): pos = (0.125 + 0.125) / 0.3125 = 0.8, sym = 1
    assert sc.n_swaps == 1 and float(sc.weights[0, 0]) == 1.0
    assert float(sc.s_pos[0]) == pytest.approx(0.8, abs=1e-15)
    assert float(sc.s_sym[0]) == pytest.approx(1.0, abs=1e-15)


def test_swap_plan_blocks() -> None:
    perms, a, b = swap_plan(8, block_size=3)  # 7 keys: blocks {0,1,2}, {3,4,5}; position 6 never moves
    assert perms.tolist() == [[3, 4, 5, 0, 1, 2, 6, 7]]
    assert a.tolist() == [[0, 1, 2]] and b.tolist() == [[3, 4, 5]]
    perms, a, _ = swap_plan(5)
    assert perms.shape == (6, 5) and (perms[:, -1] == 4).all()


def test_constant_logits_score_one_one() -> None:
    head = RopeAttention(
        torch.zeros(4, 6), torch.randn(4, 6), torch.randn(4, 6), torch.randn(6, 4), RopeSpec(6), device="cpu"
    )
    x = torch.randn(5, 11, 4, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    for b in (1, 2):
        sc = ps_scores(head, x, block_size=b)
        assert torch.allclose(sc.s_pos, torch.ones(5, dtype=torch.float64), rtol=0, atol=1e-15)
        assert torch.allclose(sc.s_sym, torch.ones(5, dtype=torch.float64), rtol=0, atol=1e-15)


def test_nope_symbolic_and_constant_key_positional() -> None:
    x = torch.nn.functional.one_hot(
        torch.randint(0, 6, (4, 17), generator=torch.Generator().manual_seed(4)), 6
    )
    x = x.double()
    nope = _head(RopeSpec(8, rotary_dim=0), 6, seed=5)
    sc = ps_scores(nope, x, max_skipped_weight=None)  # every swap, so every per-swap entry is set
    assert torch.allclose(sc.sym, torch.ones_like(sc.sym), rtol=0, atol=TOL)
    w = _head(RopeSpec(8, freqs=[1.1, 0.3, 0.0, 2.0]), 6, seed=6)
    const_key = RopeAttention(w.W_Q, w.W_K[:1].expand(6, 8), w.W_V, w.W_O, w.spec, device="cpu")
    sc = ps_scores(const_key, x, max_skipped_weight=None)
    assert torch.allclose(sc.pos, torch.ones_like(sc.pos), rtol=0, atol=TOL)
    skipping = ps_scores(nope, x)  # default: zero-weight swaps are skipped and marked NaN
    assert skipping.evaluated is not None and skipping.sym is not None
    assert torch.equal(skipping.sym.isnan(), ~skipping.evaluated)
    assert torch.allclose(skipping.sym[skipping.evaluated], torch.ones(1, dtype=torch.float64), atol=TOL)
    assert skipping.weights is not None and float(skipping.weights[~skipping.evaluated].abs().max()) == 0.0


def test_index_positional_retrieval_symbolic() -> None:
    """Tolerances: S = 1 exactly up to float64 rounding of one cosine (TOL); the other score is
    compared with its closed form at the top-weighted swap, and with the 0.5 class boundary."""
    index = index_subject(100)
    sc = ps_scores(index.head, index.inputs)
    assert sc.S_pos >= 1 - TOL and sc.S_sym < 0.5
    # d' = d, so sym = 2 d_i d_j / (d_i^2 + d_j^2) on every swap
    d = index.head(index.inputs).pattern[:, -1].numpy()
    a, b = sc.block_a[:, 0].numpy(), sc.block_b[:, 0].numpy()
    closed = 2 * d[:, a] * d[:, b] / (d[:, a] ** 2 + d[:, b] ** 2)
    assert np.allclose((sc.weights.numpy() * closed).sum(1), sc.s_sym.numpy(), rtol=0, atol=TOL)
    retrieval = retrieval_subject(100, theta=0.0)
    sc = ps_scores(retrieval.head, retrieval.inputs)
    assert sc.S_sym >= 1 - TOL and sc.S_pos < 0.5


def test_batched_equals_one_by_one() -> None:
    subj = random_subject(6, 9, 16, 100.0, 8, seed=3)
    sc = ps_scores(subj.head, subj.inputs)
    for b in range(6):
        one = ps_scores(subj.head, subj.inputs[b])
        assert float(one.s_pos[0]) == pytest.approx(float(sc.s_pos[b]), abs=1e-14)
        assert float(one.s_sym[0]) == pytest.approx(float(sc.s_sym[b]), abs=1e-14)


@settings(deadline=None)
@given(spec=rope_specs(max_head_dim=8), n=st.integers(3, 12), seed=st.integers(0, 2**31 - 1))
def test_table_path_equals_forward_path(spec: RopeSpec, n: int, seed: int) -> None:
    head = _head(spec, 4, seed, scale=0.5)
    x = torch.randn(2, n, 4, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    sc = ps_scores(head, x, tau=0.01)
    ref = ps_scores(attention_row_fn(head), x, tau=0.01)
    assert torch.allclose(sc.s_pos, ref.s_pos, rtol=0, atol=1e-10)
    assert torch.allclose(sc.s_sym, ref.s_sym, rtol=0, atol=1e-10)
    for s in (sc.s_pos, sc.s_sym, sc.pos, sc.sym):
        assert ((s >= -1e-12) & (s <= 1 + 1e-12)).all()  # cosines of non-negative vectors


@given(spec=rope_specs(max_head_dim=8), n=st.integers(2, 40), seed=st.integers(0, 2**31 - 1))
def test_last_row_fn_equals_the_forward_pass(spec: RopeSpec, n: int, seed: int) -> None:
    """last_row_fn (plane brackets linear in x_p, cos/sin of the offsets) against the full forward
    pass (every key rotated). Each route's logit has rounding <~ 4 h |q| |k| u with |q| |k| <~ 100
    here (h <= 8, N(0, 1) weights and inputs of dimension 4), so rows differ by <~ 2 * 4e-13; 1e-12."""
    head = _head(spec, 4, seed, scale=0.5)
    x = torch.randn(3, n, 4, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    assert torch.allclose(last_row_fn(head)(x), head(x).pattern[:, -1, :], rtol=0, atol=1e-12)


def test_cos_sim_zero_vectors() -> None:
    z, one = torch.zeros(2), torch.tensor([1.0, 0.0])
    assert float(cos_sim(z, z)) == 1.0 and float(cos_sim(z, one)) == 0.0


def test_errors() -> None:
    head = _head(RopeSpec(2, freqs=[0.5]), 2, seed=0)
    x = torch.zeros(1, 5, 2)
    for tau in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(InputError, match="tau"):
            ps_scores(head, x, tau=tau)
    with pytest.raises(InputError, match="block_size"):
        ps_scores(head, x, block_size=0)
    with pytest.raises(InputError, match=r"n - 1 >= 2 \* block_size"):
        ps_scores(head, x, block_size=3)
    with pytest.raises(InputError, match="n >= 3"):
        ps_scores(head, torch.zeros(1, 2, 2))
    with pytest.raises(InputError, match="shape"):
        ps_scores(head, torch.zeros(1, 1, 5, 2))
    with pytest.raises(InputError, match="attention row of shape"):
        ps_scores(lambda t: t[:, :2, 0], x)
    with pytest.raises(InputError, match="callable"):
        ps_scores("head", x)  # type: ignore[arg-type]


def _loop_all_inputs(row_fn, x: torch.Tensor, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """The naive per-swap loop: one call of ``row_fn`` per swap on every input at once, the swapped
    input built by hand, the weights and cosines in numpy (independent of the streaming code)."""
    n = x.shape[1]
    d = row_fn(x).numpy()
    pos, sym, diff = [], [], []
    for i in range(n - 1):
        for j in range(i + 1, n - 1):
            order = list(range(n))
            order[i], order[j] = j, i
            e = row_fn(x[:, order]).numpy()
            new = np.stack([e[:, i], e[:, j]], 1)  # [batch, 2]
            same, moved = np.stack([d[:, i], d[:, j]], 1), np.stack([d[:, j], d[:, i]], 1)
            norms = np.linalg.norm(new, axis=1) * np.linalg.norm(same, axis=1)
            pos.append((new * same).sum(1) / norms)
            sym.append((new * moved).sum(1) / norms)
            diff.append(np.abs(d[:, i] - d[:, j]))
    z = np.array(diff).T / tau  # [batch, S]
    w = np.exp(z - z.max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    return (w * np.array(pos).T).sum(1), (w * np.array(sym).T).sum(1)


def _numpy_last_row(head: RopeAttention):
    """The last token's attention row of ``head`` in numpy, written here from the definitions
    (rotate plane k of the vector at position p by p theta_k, its cos and sin from mpmath; logit
    scale q_rot . k_rot; softmax).
    Only elementwise products and fixed-axis sums, so each row is bitwise the same whatever batch it
    is computed in: the loop and the stream see identical rows."""
    wq, wk = head.W_Q.numpy(), head.W_K.numpy()
    dims = np.array(head.spec.plane_dims)
    freqs = np.array(head.spec.plane_freqs)
    a, b = dims[:, 0], dims[:, 1]

    tables: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}

    def rotate(v: np.ndarray, pos: np.ndarray) -> np.ndarray:
        # cos and sin of the exact p theta_k, from mpmath (a float64 product p * theta would err by
        # u |p theta|, beyond the 1e-15 this reference is compared at); one table per positions
        key = tuple(int(p) for p in np.atleast_1d(pos))
        if key not in tables:
            with mpmath.workprec(120):
                ang = [[mpmath.mpf(p) * mpmath.mpf(float(t)) for t in freqs] for p in key]
                tables[key] = (
                    np.array([[float(mpmath.cos(x)) for x in r] for r in ang]),
                    np.array([[float(mpmath.sin(x)) for x in r] for r in ang]),
                )
        cos, sin = (t.reshape(*np.shape(pos), -1) for t in tables[key])
        out = v.copy()
        out[..., a] = v[..., a] * cos - v[..., b] * sin
        out[..., b] = v[..., a] * sin + v[..., b] * cos
        return out

    def row(x: torch.Tensor) -> torch.Tensor:
        xn = x.numpy()
        n = xn.shape[1]
        q = rotate((xn[:, -1, :, None] * wq).sum(1), np.array(n - 1.0))
        k = rotate((xn[:, :, :, None] * wk).sum(2), np.arange(n, dtype=np.float64))
        logits = head.scale * (k * q[:, None, :]).sum(-1)
        e = np.exp(logits - logits.max(1, keepdims=True))
        return torch.from_numpy(e / e.sum(1, keepdims=True))

    return row


@pytest.mark.parametrize(
    ("n", "layout", "freqs"), [(17, "interleaved", None), (128, "half", [0.9, 0.05, 0.0, 1.7])]
)
def test_callable_path_equals_loop_on_random_heads(n: int, layout: str, freqs: list[float] | None) -> None:
    """Done-when of issue 17: the callable path equals the naive per-swap loop to 1e-12 in float64.

    Both call the same row function on the same swapped inputs (the loop one swap at a time, the
    stream in chunks). With the numpy row function rows are bitwise equal, and with torch's forward
    pass (n = 17) equal to float64 rounding, so the scores differ by the summation order of
    ``S <= 8001`` weighted terms in [0, 1] (< S * 2^-53 ~ 1e-12 worst case). The stream runs with the
    default budget, with every swap evaluated, and with a budget that forces many chunks."""
    head = _head(RopeSpec(8, freqs=freqs, layout=layout), 6, seed=n, scale=1.5)
    x = torch.randn(2, n, 6, generator=torch.Generator().manual_seed(n), dtype=torch.float64)
    np_row = _numpy_last_row(head)
    assert torch.allclose(np_row(x), head(x).pattern[:, -1, :], rtol=0, atol=1e-15)
    # at n = 128 the numpy row declares its working memory ([C, n, d_model, head_dim] products), so the
    # budget sizes its chunks; at n = 17 it runs as a plain callable
    declared = RowFunction(np_row, "attention", bytes_per_sequence=lambda m: 3 * m * 6 * 8 * 8)
    fns = [declared] if n > 17 else [np_row, attention_row_fn(head), last_row_fn(head)]
    for fn in fns:
        ref_pos, ref_sym = _loop_all_inputs(fn, x, 1e-4)
        for kwargs in ({}, {"max_skipped_weight": None}, {"memory_budget": 60_000, "per_swap": False}):
            sc = ps_scores(fn, x, **kwargs)
            assert np.abs(sc.s_pos.numpy() - ref_pos).max() <= TOL, kwargs
            assert np.abs(sc.s_sym.numpy() - ref_sym).max() <= TOL, kwargs
    src = CallableSource(np_row, x)  # a budget of one swapped sequence: one call per evaluated swap
    one = stream_swap_scores(src, BlockPairs(n, 1), 1e-4, memory_budget=2 * src.bytes_per_sequence())
    assert one.chunk == 1 and one.calls == int(one.n_evaluated.sum()) > 0
    assert np.abs(one.s_pos[:, 0].numpy() - ref_pos).max() <= TOL
    # the table path computes the rows by another route (rotating the query back): its rows differ by
    # delta; a weight exp(D / tau) / Z, D a sum of 2 row differences, changes by at most 2 * 2 delta /
    # tau relative, and a score (a weighted mean of values in [0, 1]) by at most that plus the
    # cosines' own change (~ delta / min d, negligible here); x1.5 margin.
    delta = float((TableSource(head, x).base_rows(2)[:, 0] - np_row(x)[:, :-1]).abs().max())
    tol = max(TOL, 1.5 * 2 * 2 * delta / 1e-4)
    table = ps_scores(head, x)
    assert np.abs(table.s_pos.numpy() - ref_pos).max() <= tol
    assert np.abs(table.s_sym.numpy() - ref_sym).max() <= tol


def test_skipping_swaps_is_bounded_by_the_skipped_weight() -> None:
    """pos, sym are in [0, 1], so the exact score is in [s, s + skipped_weight] (module docstring)."""
    subj = random_subject(5, 40, 16, 100.0, 8, shared=1.0, seed=2)
    full = ps_scores(subj.head, subj.inputs, max_skipped_weight=None)
    exact_zero = ps_scores(subj.head, subj.inputs)
    assert float(exact_zero.skipped_weight.max()) == 0.0
    assert int(exact_zero.n_evaluated.max()) < full.n_swaps  # something was skipped
    assert torch.allclose(exact_zero.s_pos, full.s_pos, rtol=0, atol=TOL)
    for cap in (1e-12, 1e-6, 0.1, 0.5):
        sc = ps_scores(subj.head, subj.inputs, max_skipped_weight=cap)
        assert (sc.skipped_weight <= cap).all()
        assert sc.evaluated is not None and sc.weights is not None
        skipped = (sc.weights * ~sc.evaluated).sum(1)
        assert torch.allclose(skipped, sc.skipped_weight, rtol=1e-12, atol=0)
        for part, ref in ((sc.s_pos, full.s_pos), (sc.s_sym, full.s_sym)):
            gap = ref - part
            assert (gap >= -TOL).all() and (gap <= sc.skipped_weight + TOL).all()
    coarse = ps_scores(subj.head, subj.inputs, max_skipped_weight=0.5)
    assert int(coarse.n_evaluated.sum()) < int(exact_zero.n_evaluated.sum())


def test_memory_budget_bounds_per_swap_arrays_and_chunks() -> None:
    head = _head(RopeSpec(8), 4, seed=1)
    x = torch.randn(3, 30, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    small = ps_scores(attention_row_fn(head), x, memory_budget=30_000, per_swap=False)
    big = ps_scores(attention_row_fn(head), x)
    assert small.pos is None and small.weights is None and small.evaluated is None
    assert torch.allclose(small.s_pos, big.s_pos, rtol=0, atol=TOL)
    with pytest.raises(InputError, match="per_swap=False"):
        ps_scores(head, x, memory_budget=10_000)  # 3 x 406 swaps x 25 bytes > 10 kB
    for bad in (0, -5, 1.5, True, "1MiB"):
        with pytest.raises(InputError, match="memory_budget"):
            ps_scores(head, x, memory_budget=bad)  # type: ignore[arg-type]
    for bad in (-0.1, 1.0, float("nan"), "x"):
        with pytest.raises(InputError, match="max_skipped_weight"):
            ps_scores(head, x, max_skipped_weight=bad)  # type: ignore[arg-type]


def test_logit_rows_are_refused_not_scored() -> None:
    """Issue 12: ps_scores(logit_row_fn(head), x) used to return S_pos = -0.72 (true value 0.24)."""
    head = _head(RopeSpec(8, freqs=[1.1, 0.3, 0.0, 2.0]), 6, seed=6, scale=2.0)
    x = torch.randn(4, 11, 6, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    with pytest.raises(InputError, match="kind='logit'"):
        ps_scores(logit_row_fn(head), x)
    # the same function untyped: caught by the probability check (negative logits)
    with pytest.raises(InputError, match="negative entry"):
        ps_scores(lambda t: head(t).logits[:, -1, :], x)
    # non-negative but unnormalised rows: caught by the sum
    with pytest.raises(InputError, match="not 1"):
        ps_scores(lambda t: head(t).logits[:, -1, :].exp(), x)
    with pytest.raises(InputError, match="> 1"):
        ps_scores(lambda t: 2 * head(t).pattern[:, -1, :-1], x)
    with pytest.raises(InputError, match="NaN"):
        ps_scores(lambda t: head(t).pattern[:, -1, :] * float("nan"), x)
    # a RowFunction of kind "attention" and the plain callable both score like the table path
    ok = ps_scores(RowFunction(lambda t: head(t).pattern[:, -1, :], "attention"), x)
    plain = ps_scores(lambda t: head(t).pattern[:, -1, :], x)
    table = ps_scores(head, x)
    assert torch.allclose(ok.s_pos, table.s_pos, atol=TOL) and torch.allclose(
        plain.s_sym, table.s_sym, atol=TOL
    )
    with pytest.raises(InputError, match="n_heads=2"):
        ps_scores(RowFunction(lambda t: head(t).pattern[:, None, -1, :].expand(-1, 2, -1), "attention", 2), x)


def test_source_scores_scores_several_heads_in_one_pass() -> None:
    """A row function returning H heads: each head's scores equal that head scored alone."""
    heads = [
        _head(RopeSpec(8, freqs=f), 5, seed=s, scale=1.2) for s, f in enumerate([None, [0.0] * 4, [2.0] * 4])
    ]
    x = torch.randn(3, 13, 5, generator=torch.Generator().manual_seed(8), dtype=torch.float64)

    def rows(t: torch.Tensor) -> torch.Tensor:
        return torch.stack([h(t).pattern[:, -1, :] for h in heads], 1)

    fn = RowFunction(rows, "attention", n_heads=3)
    per_head = source_scores(CallableSource(fn, x), BlockPairs(13, 2), tau=0.01)
    assert len(per_head) == 3
    for h, sc in zip(heads, per_head, strict=True):
        alone = ps_scores(h, x, tau=0.01, block_size=2)
        assert torch.allclose(sc.s_pos, alone.s_pos, rtol=0, atol=TOL)
        assert torch.allclose(sc.s_sym, alone.s_sym, rtol=0, atol=TOL)


def test_scores_from_rows_matches_the_stream() -> None:
    """The materialised helper (used by loops and the benchmark) and the streamed path agree."""
    head = _head(RopeSpec(8), 4, seed=2)
    x = torch.randn(2, 9, 4, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    perms, a, b = swap_plan(9)
    row = head(x).pattern[:, -1, :]
    swapped = torch.stack([head(x[:, p]).pattern[:, -1, :] for p in perms], 1)
    s_pos, s_sym, *_ = scores_from_rows(row, swapped, a, b, 1e-4)
    sc = ps_scores(head, x)
    assert torch.allclose(s_pos, sc.s_pos, atol=TOL) and torch.allclose(s_sym, sc.s_sym, atol=TOL)


@pytest.mark.cuda
def test_cuda_matches_cpu() -> None:
    cpu = random_subject(10, 17, 64, 10000.0, 32, seed=1)
    gpu = random_subject(10, 17, 64, 10000.0, 32, seed=1, device="cuda")
    a, b = ps_scores(cpu.head, cpu.inputs), ps_scores(gpu.head, gpu.inputs)
    assert torch.allclose(a.s_pos, b.s_pos, rtol=0, atol=1e-10)
    assert torch.allclose(a.s_sym, b.s_sym, rtol=0, atol=1e-10)


# ----------------------------------------------------------------------------- claims and the CLI


def test_ps_claims_hold() -> None:
    from ropeproof.claims._ps import CLAIMS

    ids = [c.id for c in CLAIMS]
    assert set(ids) == {
        "ps.exclusion-principle",
        "ps.index-positional",
        "ps.retrieval-symbolic",
        "ps.reference-heads",
    }
    ctx = CheckContext(torch.device("cpu"), torch.float64, quick=True)
    for cid in ids:
        result = run_claim(CLAIMS[cid], ctx)
        assert result.outcome.verdict == "holds", (cid, result.outcome)
    tight = run_claim(CLAIMS["ps.exclusion-principle"], ctx).outcome.figures["max_tightness"]
    assert 0 < tight <= 1


def _cli(argv: list[str]) -> int:
    from ropeproof._cli import main

    try:
        return main(argv)
    except SystemExit as exc:  # argparse rejects a bad value before the command runs
        return int(exc.code or 0)


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["ps-score", "index", "--json", "--n-inputs", "20"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scores"]["S_pos"] >= 1 - TOL and out["scores"]["S_sym"] < 0.5
    assert out["exclusion"]["holds_on_all_inputs"] and not out["exclusion"]["exact"]
    assert out["exclusion"]["n_permutations"] == 1000 and len(out["scores"]["s_pos"]) == 20
    assert _cli(["ps-score", "random", "--json", "--length", "8", "--n-inputs", "5", "--per-frequency"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["exclusion"]["exact"] and out["exclusion"]["n_permutations"] == 5040
    assert len(out["per_frequency"]["freqs"]) == 32


def test_cli_text_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["ps-score", "retrieval", "--n-inputs", "10", "--block-size", "2"]) == 0
    text = capsys.readouterr().out
    assert "S_sym = 1" in text and "exclusion principle" in text
    assert _cli(["ps-score", "index", "--tau", "0"]) == 2
    assert "tau" in capsys.readouterr().err


def test_overflowing_logits_raise_instead_of_scoring_zero() -> None:
    """x * 1e160 makes every logit inf in float64 (|q||k| ~ 1e320); the scores used to come out as
    (0, 0) and the exclusion principle as 'violated' with NaN tightness."""
    from ropeproof.machinery._errors import NonFiniteError, UnderflowError
    from ropeproof.verify.measure.ps._exact import exact_exclusion, sampled_exclusion

    head = _head(RopeSpec(8), 8, seed=0)
    x = torch.randn(2, 6, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    finite = ps_scores(head, x)
    assert torch.isfinite(finite.s_pos).all() and torch.isfinite(finite.s_sym).all()
    # logits near 1e40 are finite, but every non-query attention entry underflows to 0: not resolved
    with pytest.raises(UnderflowError, match="not resolved"):
        ps_scores(head, x * 1e20)
    with pytest.raises(NonFiniteError, match="overflowed"):
        ps_scores(head, x * 1e160)
    for row_fn in (attention_row_fn(head), last_row_fn(head)):  # a callable's rows are checked as returned
        with pytest.raises(InputError, match=r"overflowed|returned a row with NaN or inf"):
            ps_scores(row_fn, x * 1e160)
    with pytest.raises(NonFiniteError, match="overflowed"):
        exact_exclusion(head, x * 1e160)
    # logits near 1e200 are finite but their squared deviations are not
    with pytest.raises(NonFiniteError, match="sums overflowed"):
        sampled_exclusion(head, x * 1e100, n_samples=10)
