"""[A]'s positional/symbolic scores, the ``ps.*`` claims and ``ropeproof ps-score``.

The reference is a slow loop written here: one full forward pass per swap, numpy cosine
similarities, and a numpy softmax over swaps.
"""

from __future__ import annotations

import json
import statistics
import time

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.claims import CheckContext, run_claim
from ropeproof.theory.errors import InputError
from ropeproof.theory.rope_spec import RopeSpec
from ropeproof.verify.ps.scores import attention_row_fn, cos_sim, ps_scores, swap_plan
from ropeproof.verify.runtime.attention import RopeAttention
from ropeproof.verify.subjects import index_subject, random_subject, retrieval_subject
from ropeproof.verify.testing.random_heads import random_head as _head
from ropeproof.verify.testing.strategies import rope_specs

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
    for b in range(3):
        ref = _loop_reference(head, x[b], tau, block_size)
        assert float(sc.s_pos[b]) == pytest.approx(ref[0], abs=TOL)
        assert float(sc.s_sym[b]) == pytest.approx(ref[1], abs=TOL)
    assert torch.allclose(sc.s_pos, via_callable.s_pos, rtol=0, atol=TOL)
    assert torch.allclose(sc.s_sym, via_callable.s_sym, rtol=0, atol=TOL)
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
    sc = ps_scores(nope, x)
    assert torch.allclose(sc.sym, torch.ones_like(sc.sym), rtol=0, atol=TOL)
    w = _head(RopeSpec(8, freqs=[1.1, 0.3, 0.0, 2.0]), 6, seed=6)
    const_key = RopeAttention(w.W_Q, w.W_K[:1].expand(6, 8), w.W_V, w.W_O, w.spec, device="cpu")
    sc = ps_scores(const_key, x)
    assert torch.allclose(sc.pos, torch.ones_like(sc.pos), rtol=0, atol=TOL)


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


def test_scoring_speed() -> None:
    """100 inputs of 17 tokens, head_dim 64: well under a second (typically a few ms)."""
    subj = random_subject(100, 17, 64, 10000.0, 64, seed=0)
    ps_scores(subj.head, subj.inputs)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        ps_scores(subj.head, subj.inputs)
        times.append(time.perf_counter() - start)
    assert statistics.median(times) < 0.5


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


@pytest.mark.cuda
def test_cuda_matches_cpu() -> None:
    cpu = random_subject(10, 17, 64, 10000.0, 32, seed=1)
    gpu = random_subject(10, 17, 64, 10000.0, 32, seed=1, device="cuda")
    a, b = ps_scores(cpu.head, cpu.inputs), ps_scores(gpu.head, gpu.inputs)
    assert torch.allclose(a.s_pos, b.s_pos, rtol=0, atol=1e-10)
    assert torch.allclose(a.s_sym, b.s_sym, rtol=0, atol=1e-10)


# ----------------------------------------------------------------------------- claims and the CLI


def test_ps_claims_hold() -> None:
    from ropeproof.claims.ps import CLAIMS

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
    from ropeproof.cli import main

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
