"""[A]'s layer-input swap on HF GPT-J and LLaMA models (built from configs, nothing downloaded):
the block input and re-run are the model's own, the streamed scores equal a naive per-swap loop,
and they agree with the same heads imported as RopeAttention modules within a derived tolerance."""

from __future__ import annotations

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from ropeproof.machinery._errors import InputError  # noqa: E402
from ropeproof.verify.interop._errors import HeadImportError  # noqa: E402
from ropeproof.verify.interop.hf._head_import import import_model_head  # noqa: E402
from ropeproof.verify.interop.hf._layer_swap import HFLayerSwap, hf_layer_swap_scores  # noqa: E402
from ropeproof.verify.measure.ps._layer_swap import LayerSwapAdapter, layer_swap_scores  # noqa: E402
from ropeproof.verify.measure.ps._scores import ps_scores  # noqa: E402

LOOP_TOL = 1e-12  # same rows (the same block on the same swapped copies); only summation order differs


def _ids(batch: int = 3, n: int = 12) -> torch.Tensor:
    return torch.randint(0, 11, (batch, n), generator=torch.Generator().manual_seed(1))


def _loop(adapter: HFLayerSwap, hidden: torch.Tensor, layer: int, tau: float, b: int):
    """One re-run of the block per swap (all inputs at once), swapped copies and scores by hand.

    Returns ``(s_pos, s_sym, smallest)``: scores ``[heads, batch]`` and the smallest row entry seen
    (base and swapped rows), used to bound how far another route's cosines can move."""
    n = hidden.shape[1]
    k = (n - 1) // b
    d = adapter.attention_rows(hidden, layer).numpy()  # [batch, H, n]
    smallest = d[..., : n - 1].min()
    pos, sym, gap = [], [], []
    for i in range(k):
        for j in range(i + 1, k):
            bi, bj = list(range(i * b, i * b + b)), list(range(j * b, j * b + b))
            order = list(range(n))
            for p, q in zip(bi, bj, strict=True):
                order[p], order[q] = q, p
            e = adapter.attention_rows(hidden[:, order], layer).numpy()
            smallest = min(smallest, e[..., : n - 1].min())
            new = np.concatenate([e[..., bi], e[..., bj]], -1)
            same = np.concatenate([d[..., bi], d[..., bj]], -1)
            moved = np.concatenate([d[..., bj], d[..., bi]], -1)
            norms = np.linalg.norm(new, axis=-1) * np.linalg.norm(same, axis=-1)
            pos.append((new * same).sum(-1) / norms)
            sym.append((new * moved).sum(-1) / norms)
            gap.append(np.abs(d[..., bi] - d[..., bj]).sum(-1))
    z = np.stack(gap, -1) / tau  # [batch, H, S]
    w = np.exp(z - z.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    s_pos = (w * np.stack(pos, -1)).sum(-1).T
    s_sym = (w * np.stack(sym, -1)).sum(-1).T
    return s_pos, s_sym, float(smallest)


@pytest.mark.parametrize("arch", ["gptj", "llama"])
def test_block_input_and_rerun_are_the_models_own(arch: str, random_model) -> None:
    model = random_model(arch).double()
    ids = _ids()
    adapter = HFLayerSwap(model)
    assert isinstance(adapter, LayerSwapAdapter) and adapter.n_layers == 2 and adapter.n_heads == 4
    out = model(input_ids=ids, output_hidden_states=True, output_attentions=True)
    for layer in (0, 1):
        hidden = adapter.layer_inputs(ids, layer)
        assert torch.equal(hidden, out.hidden_states[layer])
        assert torch.equal(adapter.attention_rows(hidden, layer), out.attentions[layer][:, :, -1, :])


@pytest.mark.parametrize(("arch", "block_size"), [("gptj", 1), ("llama", 1), ("llama", 2)])
def test_streamed_scores_equal_the_per_swap_loop(arch: str, block_size: int, random_model) -> None:
    """Done-when: batched over swaps, the scores equal one re-run per swap to 1e-12 in float64."""
    model = random_model(arch).double()
    ids = _ids()
    adapter = HFLayerSwap(model)
    hidden = adapter.layer_inputs(ids, 1)
    ref_pos, ref_sym, _ = _loop(adapter, hidden, 1, 1e-4, block_size)
    for kwargs in ({}, {"memory_budget": 100_000, "max_skipped_weight": None}):
        sc = hf_layer_swap_scores(model, ids, layer=1, block_size=block_size, **kwargs)
        assert sc.heads == (0, 1, 2, 3) and sc.s_pos.shape == (4, 3)
        assert np.abs(sc.s_pos.numpy() - ref_pos).max() <= LOOP_TOL
        assert np.abs(sc.s_sym.numpy() - ref_sym).max() <= LOOP_TOL
    some = hf_layer_swap_scores(model, ids, layer=1, heads=[3, 1], block_size=block_size)
    assert np.abs(some.s_pos.numpy() - ref_pos[[3, 1]]).max() <= LOOP_TOL
    assert torch.equal(some.head(1).s_sym, some.s_sym[1])


@pytest.mark.parametrize("arch", ["gptj", "llama"])
def test_scores_agree_with_the_imported_heads(arch: str, random_model) -> None:
    """Another route: each head imported as a RopeAttention (import_model_head), scored by the table
    path on the block's normed input (the norm acts per token, so swapping hidden states swaps the
    normed ones). HF's rotary tables are float32, so rows differ by delta ~ 1e-7. A weight
    ``exp(D / tau) / Z`` (``D`` a sum of 2 row differences) then moves by at most ``4 delta / tau``
    in total over swaps, and a cosine of 2-vectors of norm >= ``rho`` (the smallest row entry seen)
    by at most ``2 sqrt(2) delta / rho``; tolerance: their sum, x2."""
    model = random_model(arch).double()
    ids = _ids()
    adapter = HFLayerSwap(model)
    hidden = adapter.layer_inputs(ids, 1)
    block = adapter.layers[1]
    normed = (block.ln_1 if arch == "gptj" else block.input_layernorm)(hidden).detach()
    tau = 0.1
    ref_pos, ref_sym, rho = _loop(adapter, hidden, 1, tau, 1)
    sc = hf_layer_swap_scores(model, ids, layer=1, tau=tau)
    rows = adapter.attention_rows(hidden, 1)
    for h in range(4):
        head = import_model_head(model, layer=1, head=h, device="cpu")
        delta = float((head(normed).pattern[:, -1, :] - rows[:, h]).abs().max())
        assert delta < 1e-6  # float32 rotary tables, nothing worse
        tol = 2 * (4 * delta / tau + 2 * np.sqrt(2) * delta / rho)
        ours = ps_scores(head, normed, tau=tau)
        assert np.abs(ours.s_pos.numpy() - sc.s_pos[h].numpy()).max() <= tol
        assert np.abs(ours.s_sym.numpy() - sc.s_sym[h].numpy()).max() <= tol
    assert np.abs(sc.s_pos.numpy() - ref_pos).max() <= LOOP_TOL
    assert np.abs(sc.s_sym.numpy() - ref_sym).max() <= LOOP_TOL


def test_errors_name_the_parameter(random_model) -> None:
    model = random_model("llama").double()
    ids = _ids()
    with pytest.raises(HeadImportError, match="attn_implementation='eager'"):
        HFLayerSwap(random_model("llama", attn="sdpa").double())
    with pytest.raises(HeadImportError, match="arch"):
        HFLayerSwap(torch.nn.Linear(2, 2))
    with pytest.raises(InputError, match=r"layer=2 must be an integer in 0\.\.1"):
        hf_layer_swap_scores(model, ids, layer=2)
    with pytest.raises(InputError, match="heads"):
        hf_layer_swap_scores(model, ids, layer=0, heads=[4])
    with pytest.raises(InputError, match="heads"):
        hf_layer_swap_scores(model, ids, layer=0, heads=[1, 1])
    with pytest.raises(InputError, match="two blocks"):
        hf_layer_swap_scores(model, ids[:, :4], layer=0, block_size=2)
    with pytest.raises(InputError, match="LayerSwapAdapter"):
        layer_swap_scores(model, ids, layer=0)
    with pytest.raises(HeadImportError, match=r"model\.eval\(\)"):
        hf_layer_swap_scores(random_model("gptj").double().train(), ids, layer=0)
    with pytest.raises(HeadImportError, match="out of range"):
        HFLayerSwap(model).attention_rows(torch.zeros(1, 3, 32, dtype=torch.float64), 5)
