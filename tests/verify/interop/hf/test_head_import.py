"""Import: one head of a GPT-J / LLaMA layer (state dict + config, GQA aware) as a RopeAttention, against
HF's own attention module on randomly initialised models (nothing downloaded); the imported heads go
through the same analyses as constructions (PS scores, per-frequency profiles) with HF's results; the
errors name what is missing or unsupported."""

from __future__ import annotations

import math

import pytest
import torch

transformers = pytest.importorskip("transformers")

from ropeproof.machinery._errors import RopeproofError  # noqa: E402
from ropeproof.verify.interop._errors import ExportError, HeadImportError  # noqa: E402
from ropeproof.verify.interop.hf._head_import import import_head, import_model_head  # noqa: E402
from ropeproof.verify.interop.hf._run import attention_module, hf_attention_forward  # noqa: E402
from ropeproof.verify.measure.ps._per_frequency import per_frequency_scores  # noqa: E402
from ropeproof.verify.measure.ps._scores import ps_scores  # noqa: E402


@pytest.mark.parametrize("arch", ["gptj", "llama"])
def test_import_trained_heads_matches_hf(arch: str, random_model, report) -> None:
    """Every head of layer 1 of a randomly initialised model (GQA for LLaMA) against HF's own module."""
    model = random_model(arch)
    x = torch.randn(2, 9, 32, generator=torch.Generator().manual_seed(2))
    hf = hf_attention_forward(model, arch, x, layer=1)
    total = torch.zeros_like(hf.output, dtype=torch.float64)
    diffs = {"scores": 0.0, "weights": 0.0}
    causal = torch.ones(9, 9, dtype=torch.bool).tril()
    for h in range(4):
        head = import_head(arch, model.state_dict(), model.config, layer=1, head=h, device="cpu")
        res = head(x.double())
        diffs["scores"] = max(
            diffs["scores"], (hf.scores[:, h][:, causal] - res.logits[:, causal]).abs().max().item()
        )
        diffs["weights"] = max(diffs["weights"], (hf.weights[:, h] - res.pattern).abs().max().item())
        total += res.output
    diffs["outputs"] = (hf.output - total).abs().max().item()
    report(f"import {arch} random model layer 1", **diffs)
    assert max(diffs.values()) < 1e-5
    spec = head.spec
    if arch == "gptj":
        assert (spec.layout, spec.rotary_dim, spec.head_dim) == ("interleaved", 4, 8)
    else:
        assert (spec.layout, spec.rotary_dim, spec.base) == ("half", 8, 500.0)
    # trained heads go through the same analyses as constructions, with the same results as HF's own
    # attention (the last head, h = 3, on 5-token inputs)
    _ps_scores_match_hf(model, arch, head, h, x[:, :5])
    _planes_add_up_to_hf(model, arch, head, h, x[:, :5])


def _ps_scores_match_hf(model, arch: str, head, h: int, x: torch.Tensor) -> None:
    """ps_scores of the imported head equal those of HF's attention row (a callable head).

    Let eps bound |d_ours - d_hf| over the row and every swapped row (asserted <= 1e-5). Per swap, the
    2-vectors v = (d_a, d_b) and v' move by at most sqrt(2) eps, so their angle by at most
    (pi/2) sqrt(2) eps / |v| and each cos-similarity by that much for v and v' together; the weights
    softmax(|d_a - d_b| / tau) move by a factor within exp(+-4 eps / tau). With S a weighted mean of
    values in [-1, 1]: |dS| <= max_s |d cos_sim| + 2 (exp(4 eps / tau) - 1). tau = 1 keeps this small
    (at tau = 1e-4 the weights would amplify eps 4e4-fold).
    """
    from ropeproof.verify.measure.ps._scores import attention_row_fn, swap_plan

    def swapped_rows(fn, x: torch.Tensor, perms: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The last-token row of ``x`` and of every swapped input ``x[:, perms[s]]`` without the query's
        own column (``[b, n - 1]``, ``[b, S, n - 1]``), by direct calls."""
        b, n, d = x.shape
        rows = fn(x[:, perms].reshape(b * perms.shape[0], n, d)).reshape(b, perms.shape[0], n)
        return fn(x)[:, : n - 1], rows[..., : n - 1]

    def hf_row(inp: torch.Tensor) -> torch.Tensor:
        return hf_attention_forward(model, arch, inp.float(), layer=1).weights[:, h, -1, :].double()

    x = x.double()
    perms, block_a, block_b = swap_plan(x.shape[1])
    ours_row, ours = swapped_rows(attention_row_fn(head), x, perms)
    hf_row0, hf = swapped_rows(hf_row, x, perms)
    n = x.shape[1]
    eps = max(
        (ours_row[:, : n - 1] - hf_row0[:, : n - 1]).abs().max().item(),
        (ours[..., : n - 1] - hf).abs().max().item(),
    )
    assert eps <= 1e-5
    v = torch.stack([ours_row[:, block_a[:, 0]], ours_row[:, block_b[:, 0]]], -1).norm(dim=-1)
    w = torch.stack([ours.gather(2, block_a[None].expand(2, -1, -1))[..., 0],
                     ours.gather(2, block_b[None].expand(2, -1, -1))[..., 0]], -1).norm(dim=-1)  # fmt: skip
    tau = 1.0
    dcos = float((math.pi / 2 * math.sqrt(2) * eps * (1 / v + 1 / w)).max())
    tol = dcos + 2 * math.expm1(4 * eps / tau)
    a, b = ps_scores(head, x, tau=tau), ps_scores(hf_row, x, tau=tau)
    assert (a.s_pos - b.s_pos).abs().max().item() <= tol
    assert (a.s_sym - b.s_sym).abs().max().item() <= tol
    assert tol < 0.01  # the comparison says something
    print(f"ps_scores vs HF ({arch}): eps = {eps:.2g}, |dS| <= {tol:.2g}")


def _planes_add_up_to_hf(model, arch: str, head, h: int, x: torch.Tensor) -> None:
    """The per-frequency profile covers HF's spectrum, and the plane heads' logits add up to HF's
    scores (RoPE rotates planes independently; HF's float32 scores agree to 1e-5 as above)."""
    from ropeproof.verify.measure.ps._per_frequency import split_planes

    config = model.config
    if arch == "gptj":  # rotary_dim rotating dims at base 10000, the rest pass through
        rotary = [10000.0 ** (-2 * k / config.rotary_dim) for k in range(config.rotary_dim // 2)]
        spectrum = rotary + [0.0] * ((head.spec.head_dim - config.rotary_dim) // 2)
    else:
        spectrum = [500.0 ** (-2 * k / 8) for k in range(4)]
    profile = per_frequency_scores(head, x.double())
    assert sorted(profile.freqs.tolist()) == pytest.approx(sorted(spectrum), rel=1e-12, abs=0)
    # each plane is scored on its own: its aggregate is the mean of its per-input scores
    assert profile.S_pos.shape == (len(spectrum),)
    for k, plane in enumerate(split_planes(head)):
        assert profile.S_pos[k].item() == pytest.approx(ps_scores(plane.head, x.double()).S_pos, abs=1e-12)
    total = sum(p.head(x.double()).logits for p in split_planes(head))
    hf_scores = hf_attention_forward(model, arch, x.float(), layer=1).scores[:, h]
    causal = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).tril()
    assert (total[:, causal] - hf_scores[:, causal]).abs().max().item() <= 1e-5


def test_import_model_head_and_module_state_dict(random_model) -> None:
    model = random_model("llama")
    a = import_model_head(model, layer=1, head=3, device="cpu")
    module_state = attention_module(model, "llama", 1).state_dict()  # bare attention module keys
    b = import_head("llama", module_state, model.config, head=3, device="cpu")
    assert torch.equal(a.W_Q, b.W_Q) and torch.equal(a.W_K, b.W_K)
    # GQA: query heads 2 and 3 share key/value head 1
    c = import_model_head(model, layer=1, head=2, device="cpu")
    assert torch.equal(a.W_K, c.W_K) and torch.equal(a.W_V, c.W_V) and not torch.equal(a.W_Q, c.W_Q)


def test_legacy_gptj_buffers_are_ignored(random_model, tmp_path) -> None:
    from safetensors.torch import load_file, save_file

    model = random_model("gptj")
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    legacy = dict(state)
    for layer in range(2):
        legacy[f"transformer.h.{layer}.attn.bias"] = torch.tril(torch.ones(1, 1, 16, 16, dtype=torch.bool))
        legacy[f"transformer.h.{layer}.attn.masked_bias"] = torch.tensor(-1e9)
    a = import_head("gptj", state, model.config, layer=1, head=2, device="cpu")
    b = import_head("gptj", legacy, model.config, layer=1, head=2, device="cpu")
    assert all(torch.equal(getattr(a, n), getattr(b, n)) for n in ("W_Q", "W_K", "W_V", "W_O"))
    model.config.save_pretrained(tmp_path)  # an old-style checkpoint: from_pretrained ignores them too
    save_file(legacy, str(tmp_path / "model.safetensors"), metadata={"format": "pt"})
    loaded = transformers.GPTJForCausalLM.from_pretrained(tmp_path)
    c = import_model_head(loaded, layer=1, head=2, device="cpu")
    d = import_head("gptj", load_file(str(tmp_path / "model.safetensors")), loaded.config, 1, 2, device="cpu")
    assert torch.equal(a.W_Q, c.W_Q) and torch.equal(a.W_O, d.W_O)


def test_import_errors(random_model) -> None:
    model = random_model("llama")
    state, config = model.state_dict(), model.config
    with pytest.raises(HeadImportError, match=r"missing keys.*model\.layers\.0\.self_attn\.q_proj\.weight"):
        import_head("llama", {}, config)
    with pytest.raises(HeadImportError, match=r"layers present: \[0, 1\]"):
        import_head("llama", state, config, layer=5)
    partial = {k: v for k, v in state.items() if "layers.1.self_attn.v_proj" not in k}
    with pytest.raises(HeadImportError, match=r"missing key 'model\.layers\.1\.self_attn\.v_proj\.weight'"):
        import_head("llama", partial, config, layer=1)
    with pytest.raises(HeadImportError, match=r"head=4 is out of range; the config has heads 0\.\.3"):
        import_head("llama", state, config, head=4)
    bad = config.to_dict() | {"hidden_size": 40}
    with pytest.raises(HeadImportError, match=r"q_proj.weight has shape \(32, 32\).*\(32, 40\)"):
        import_head("llama", state, bad)
    with pytest.raises(HeadImportError, match="GQA: num_key_value_heads"):
        import_head("llama", state, config.to_dict() | {"num_key_value_heads": 4})
    with pytest.raises(HeadImportError, match="not a multiple of num_key_value_heads=3"):
        import_head("llama", state, config.to_dict() | {"num_key_value_heads": 3})
    scaled = config.to_dict() | {"rope_parameters": {"rope_type": "llama3", "rope_theta": 500.0, "factor": 8}}
    with pytest.raises(HeadImportError, match="rope_type='llama3'"):
        import_head("llama", state, scaled)
    with pytest.raises(HeadImportError, match="partial_rotary_factor"):
        import_head("llama", state, config.to_dict() | {"partial_rotary_factor": 0.5})
    biased = dict(state) | {"model.layers.0.self_attn.q_proj.bias": torch.ones(32)}
    with pytest.raises(HeadImportError, match="bias is nonzero"):
        import_head("llama", biased, config)
    with pytest.raises(HeadImportError, match="read_dims has 3 dims and write_dims 2"):
        import_head("llama", state, config, read_dims=[0, 1, 2], write_dims=[3, 4])
    gptj = random_model("gptj")
    with pytest.raises(HeadImportError, match="rotary_dim=12"):
        import_head("gptj", gptj.state_dict(), gptj.config.to_dict() | {"rotary_dim": 12})
    assert issubclass(ExportError, RopeproofError) and issubclass(HeadImportError, ValueError)
