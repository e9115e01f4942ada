"""HF transformers interop: exact export to GPT-J / LLaMA, parity, import, round trip, errors, CLI.

Every model is built from a config; nothing is downloaded. Measured maximum differences are printed
(past pytest's capture) and stored with ``record_property``.
"""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from ropeproof.constructions.compile import compile_construction  # noqa: E402
from ropeproof.constructions.head import CompiledHead  # noqa: E402
from ropeproof.constructions.paper import (  # noqa: E402
    index_construction,
    reflexive_construction,
    retrieval_construction,
)
from ropeproof.theory.errors import RopeproofError  # noqa: E402
from ropeproof.theory.rope_spec import RopeSpec  # noqa: E402
from ropeproof.verify.interop.hf.architectures import EXPORT_INFO_FILE, ExportError, HeadImportError  # noqa: E402
from ropeproof.verify.interop.hf.export import ExportInfo, export_head, load_export_info  # noqa: E402
from ropeproof.verify.interop.hf.head_import import import_head, import_model_head  # noqa: E402
from ropeproof.verify.interop.hf.export import place_head  # noqa: E402
from ropeproof.verify.interop.hf.placement import same_freq  # noqa: E402
from ropeproof.verify.interop.hf.run import attention_module, hf_attention_forward  # noqa: E402
from ropeproof.verify.ps.per_frequency import per_frequency_scores  # noqa: E402
from ropeproof.verify.ps.scores import ps_scores  # noqa: E402
from ropeproof.verify.runtime.compiled import answer, encode, head_module  # noqa: E402
from ropeproof.verify.tasks import letter_task, number_task  # noqa: E402

K1_OF_128 = 10000 ** (-2 / 128)  # 0.8659643233600653: k = 1 of a 128-dim rotary head ([A]'s id 2)
K41_OF_128 = 10000 ** (-82 / 128)  # 0.0027390...: k = 41 ([A]'s id 42, "0.0027")
K1_OF_8 = 10000 ** (-2 / 8)  # 0.1: k = 1 of an 8-dim rotary head
POSITIONS = 64  # longest sequence the exported test models support (keeps GPT-J's sin/cos table small)


@functools.cache
def compiled(key: str) -> CompiledHead:
    builders = {
        "index": lambda: index_construction(theta=K1_OF_128),
        "retrieval0": lambda: retrieval_construction(theta=0.0),
        "retrieval41": lambda: retrieval_construction(theta=K41_OF_128),
        "reflexive": lambda: reflexive_construction(theta=0.5),
        "reflexive_k1": lambda: reflexive_construction(theta=K1_OF_8),
    }
    return compile_construction(builders[key]())


@functools.cache
def exported(key: str, arch: str, dtype: str = "float32", logit_scale: float = 1.0):
    return export_head(compiled(key), arch, dtype=dtype, logit_scale=logit_scale, max_positions=POSITIONS)


# (construction, arch) pairs with an exact placement; every construction appears in both archs
PLACED = [
    ("index", "gptj"),
    ("index", "llama"),
    ("retrieval0", "gptj"),
    ("retrieval0", "llama"),
    ("retrieval41", "gptj"),
    ("retrieval41", "llama"),
    ("reflexive", "llama"),
    ("reflexive_k1", "gptj"),
    ("reflexive_k1", "llama"),
]


def task_sequences(key: str, count: int = 8) -> list[list[str]]:
    if key == "index":
        return [list(t.tokens) for t in number_task(count, hops=(1,), seed=1)]
    if key.startswith("retrieval"):
        return [list(t.tokens) for t in letter_task(count, hops=(1,), seed=1)]
    rng = np.random.default_rng(1)
    return [[str(t) for t in rng.choice(list(compiled(key).tokens), 11)] for _ in range(count)]


def task_answers(key: str, count: int = 8) -> list[str]:
    if key == "index":
        return [t.answer for t in number_task(count, hops=(1,), seed=1)]
    if key.startswith("retrieval"):
        return [t.answer for t in letter_task(count, hops=(1,), seed=1)]
    return [seq[-1] for seq in task_sequences(key, count)]


@pytest.fixture
def report(capsys: pytest.CaptureFixture[str], record_property):
    def _report(label: str, **values: float) -> None:
        for name, value in values.items():
            record_property(f"{label} {name}", value)
        line = f"[hf-interop] {label}: " + ", ".join(f"{k}={v:.3g}" for k, v in values.items())
        with capsys.disabled():
            print("\n" + line, end="")

    return _report


def _zero_freq_placement(ex) -> bool:
    """Every placed plane rotates at exactly 0 in HF, so HF's float32 sin/cos are exact (1, 0)."""
    target = ex.info.placement.target_spec().plane_freqs
    return all(target[t] == 0 for _, t, _ in ex.info.placement.planes)


def compare(ex, head: CompiledHead, x: torch.Tensor, dtype: torch.dtype) -> dict[str, float]:
    """Max |HF - ours| of pre-softmax scores (causal part), attention weights and outputs."""
    ours = head_module(head, "cpu", dtype)(x.to(dtype))
    hf = hf_attention_forward(ex.model, ex.info.arch, ex.info.embed(x.to(dtype)))
    n = x.shape[1]
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    assert hf.scores.shape == (x.shape[0], 1, n, n)
    assert torch.all(hf.scores[:, 0][:, ~causal] < -1e30)  # masked, as ours (-inf)
    others = [i for i in range(ex.info.placement.hidden_size) if i not in set(ex.info.write_dims)]
    assert torch.all(hf.output[..., others] == 0)  # the head writes only its write dims
    return {
        "scores": (hf.scores[:, 0][:, causal] - ours.logits[:, causal]).abs().max().item(),
        "weights": (hf.weights[:, 0] - ours.pattern).abs().max().item(),
        "outputs": (ex.info.read_output(hf.output) - ours.output).abs().max().item(),
    }


def parity_inputs(key: str) -> list[tuple[str, torch.Tensor]]:
    head = compiled(key)
    gen = torch.Generator().manual_seed(0)
    rand = torch.randn(3, 12, head.d_model, generator=gen, dtype=torch.float64) / math.sqrt(head.d_model)
    return [("random", rand), ("task", encode(head, task_sequences(key)))]


# --------------------------------------------------------------------------------------------------
# placement


def test_index_lands_on_k1_of_a_128_dim_gptj_head() -> None:
    pl = place_head(compiled("index"), "gptj")
    assert (pl.rotary_dim, pl.planes) == (128, ((0, 1, False),))  # k = 1, dims (2, 3)
    assert pl.target_spec().plane_dims[1] == (2, 3)
    assert pl.target_spec().plane_freqs[1] == pytest.approx(K1_OF_128, rel=1e-15)
    assert pl.target_spec().plane_freqs[1] != 0.8660  # [A]'s 0.8660 is this value to 4 digits


def test_retrieval_at_zero_uses_gptj_pass_through_and_llama_inf_base() -> None:
    gptj = place_head(compiled("retrieval0"), "gptj")
    assert gptj.planes[0][1] >= gptj.rotary_dim // 2  # a pass-through plane
    llama = place_head(compiled("retrieval0"), "llama")
    assert math.isinf(llama.rope_theta)
    assert llama.target_spec().plane_freqs[llama.planes[0][1]] == 0.0


def test_llama_placements() -> None:
    assert place_head(compiled("retrieval41"), "llama").rope_theta == 10000.0
    refl = place_head(compiled("reflexive"), "llama")  # theta = 0.5 -> k = 1, rope_theta = 0.5^(-4)
    assert (refl.head_dim, refl.rope_theta, refl.planes) == (8, 16.0, ((0, 1, False),))
    idx = place_head(compiled("index"), "llama")
    assert idx.rope_theta == 10000.0 and idx.target_spec().plane_freqs[idx.planes[0][1]] == pytest.approx(
        K1_OF_128, rel=1e-15
    )


# --------------------------------------------------------------------------------------------------
# parity of the attention layer


@pytest.mark.parametrize(("key", "arch"), PLACED)
def test_attention_parity_float32(key: str, arch: str, report) -> None:
    ex, head = exported(key, arch, "float32"), compiled(key)
    for kind, x in parity_inputs(key):
        diffs = compare(ex, head, x, torch.float32)
        report(f"float32 {arch} {key} {kind}", **diffs)
        assert max(diffs.values()) < 1e-5, diffs


@pytest.mark.parametrize(("key", "arch"), PLACED)
def test_attention_parity_float64(key: str, arch: str, report) -> None:
    """Float64 models: HF still computes some steps in float32 (module docstring); 1e-10 where not."""
    ex, head = exported(key, arch, "float64"), compiled(key)
    exact_scores = arch == "llama" and _zero_freq_placement(ex)
    for kind, x in parity_inputs(key):
        diffs = compare(ex, head, x, torch.float64)
        report(f"float64 {arch} {key} {kind}", **diffs)
        assert max(diffs.values()) < 1e-5, diffs
        if exact_scores:  # LLaMA's eager q.k is float64; sin/cos of a zero angle are exact
            assert diffs["scores"] < 1e-10, diffs
        # GPT-J eager casts q, k to float32 and its sin/cos table is float32; LLaMA's rotary angles
        # and eager softmax are float32: those stay at float32 level.


@pytest.mark.parametrize("arch", ["gptj", "llama"])
def test_sdpa_outputs_float64_where_exact(arch: str, report) -> None:
    """With SDPA (float64 throughout) and zero-frequency planes, outputs agree to float64 level."""
    head = compiled("retrieval0")
    if arch == "gptj" and not hasattr(transformers.models.gptj.modeling_gptj, "GPTJRotaryEmbedding"):
        pytest.skip(f"transformers {transformers.__version__}: GPT-J has no SDPA attention path")
    ex = export_head(head, arch, dtype="float64", max_positions=POSITIONS, attn_implementation="sdpa")
    x = parity_inputs("retrieval0")[0][1]
    n = x.shape[1]
    mask = torch.zeros(1, 1, n, n, dtype=torch.float64)
    mask = mask.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), torch.finfo(torch.float64).min)
    base = ex.model.transformer if arch == "gptj" else ex.model.model
    pos = torch.arange(n)[None]
    with torch.no_grad():
        out = ex.attention(
            hidden_states=ex.info.embed(x), position_embeddings=base.rotary_emb(x, pos), attention_mask=mask
        )[0]
    diff = (ex.info.read_output(out) - head_module(head, "cpu")(x).output).abs().max().item()
    report(f"float64 sdpa {arch} retrieval0 random", outputs=diff)
    assert diff < 1e-10


def _random_head(spec: RopeSpec, d_model: int = 6, seed: int = 0) -> CompiledHead:
    rng = np.random.default_rng(seed)
    w = [rng.normal(size=(d_model, spec.head_dim)) / math.sqrt(d_model) for _ in range(3)]
    return CompiledHead(
        name="random",
        tokens=tuple(f"t{i}" for i in range(d_model)),
        W_E=np.eye(d_model),
        W_Q=w[0],
        W_K=w[1],
        W_V=w[2],
        W_O=rng.normal(size=(spec.head_dim, d_model)) / math.sqrt(spec.head_dim),
        W_U=np.eye(d_model),
        spec=spec,
    )


RANDOM_SPECS = {
    # every plane carries weight: the whole default spectrum, pass-through planes, negative frequency
    "gptj": RopeSpec(12, rotary_dim=8, layout="interleaved"),
    "llama": RopeSpec(8, layout="half"),
    "llama-ratio": RopeSpec(6, freqs=[0.5, 0.25, -0.125]),
}


@pytest.mark.parametrize("case", sorted(RANDOM_SPECS))
def test_random_multi_plane_head_parity_and_round_trip(case: str, report) -> None:
    arch = case.split("-")[0]
    head = _random_head(RANDOM_SPECS[case])
    ex = export_head(head, arch, dtype="float32", max_positions=POSITIONS)
    if case == "llama-ratio":  # ln-frequencies 1:2:3 -> rope_theta = 0.5^(-8/2) = 16, third plane swapped
        assert ex.info.placement.rope_theta == 16.0 and (2, 3, True) in ex.info.placement.planes
    x = torch.randn(2, 10, head.d_model, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    diffs = compare(ex, head, x / math.sqrt(head.d_model), torch.float32)
    report(f"float32 {case} random head", **diffs)
    assert max(diffs.values()) < 1e-5
    ex64 = export_head(head, arch, dtype="float64", max_positions=POSITIONS)
    back = ex64.info.to_source(
        import_head(arch, ex64.model.state_dict(), ex64.config, **ex64.info.import_kwargs(), device="cpu")
    )
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        assert torch.allclose(getattr(back, name), torch.as_tensor(getattr(head, name)), rtol=0, atol=1e-15)


# --------------------------------------------------------------------------------------------------
# the causal-LM wrapper


@pytest.mark.parametrize(("key", "arch"), PLACED)
def test_lm_logits_equal_ours_and_answers_tasks(key: str, arch: str, report) -> None:
    head, seqs = compiled(key), task_sequences(key)
    for dtype in ("float32", "float64"):
        ex = exported(key, arch, dtype)
        ours = head_module(head, "cpu", torch.float64)(encode(head, seqs)).output @ torch.as_tensor(head.W_U)
        diff = (ex.lm_logits(seqs).double() - ours).abs().max().item()
        report(f"{dtype} {arch} {key} LM logits", logits=diff)
        assert diff < 1e-5
    sharp = exported(key, arch, "float64", logit_scale=100.0)
    answers = sharp.answer(seqs)
    assert answers == task_answers(key) == answer(head, seqs, mode="hard", device="cpu")
    assert answers == answer(head, seqs, mode="softmax", softmax_scale=100.0, device="cpu")


# --------------------------------------------------------------------------------------------------
# import and round trip


@pytest.mark.parametrize(("key", "arch"), PLACED)
def test_export_import_round_trip(key: str, arch: str, report) -> None:
    head, ex = compiled(key), exported(key, arch, "float64", 100.0)  # logit_scale is undone too
    state = ex.model.state_dict()
    for fold in (True, False):
        imported = import_head(
            arch, state, ex.config, fold_scale=fold, device="cpu", **ex.info.import_kwargs()
        )
        assert imported.spec == ex.info.placement.target_spec()
        assert imported.scale == (1.0 if fold else ex.info.placement.head_dim**-0.5)
        back = ex.info.to_source(imported)
        diffs = {
            n: (getattr(back, n) - torch.as_tensor(getattr(head, n))).abs().max().item()
            for n in ("W_Q", "W_K", "W_V", "W_O")
        }
        if fold:
            report(f"round trip {arch} {key}", **diffs)
        assert back.spec == head.spec and back.scale == head.scale
        assert max(diffs.values()) <= 1e-15
    for p, t, _ in ex.info.placement.planes:  # frequencies carried over exactly
        assert same_freq(imported.spec.plane_freqs[t], head.spec.plane_freqs[p])


def _random_model(arch: str, seed: int = 0):
    torch.manual_seed(seed)
    if arch == "gptj":
        config = transformers.GPTJConfig(
            vocab_size=11,
            n_embd=32,
            n_head=4,
            n_layer=2,
            rotary_dim=4,
            n_inner=8,
            attn_implementation="eager",
        )
        model = transformers.GPTJForCausalLM(config)
    else:
        config = transformers.LlamaConfig(
            vocab_size=11,
            hidden_size=32,
            intermediate_size=8,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            rope_theta=500.0,
            attn_implementation="eager",
        )
        model = transformers.LlamaForCausalLM(config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "proj" in name and "mlp" not in name:
                p.copy_(torch.randn_like(p) * 0.3)
    return model.eval()


@pytest.mark.parametrize("arch", ["gptj", "llama"])
def test_import_trained_heads_matches_hf(arch: str, report) -> None:
    """Every head of layer 1 of a randomly initialised model (GQA for LLaMA) against HF's own module."""
    model = _random_model(arch)
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
    from ropeproof.verify.ps.scores import attention_row_fn, swap_plan

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
    from ropeproof.verify.ps.per_frequency import split_planes

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


def test_import_model_head_and_module_state_dict() -> None:
    model = _random_model("llama")
    a = import_model_head(model, layer=1, head=3, device="cpu")
    module_state = attention_module(model, "llama", 1).state_dict()  # bare attention module keys
    b = import_head("llama", module_state, model.config, head=3, device="cpu")
    assert torch.equal(a.W_Q, b.W_Q) and torch.equal(a.W_K, b.W_K)
    # GQA: query heads 2 and 3 share key/value head 1
    c = import_model_head(model, layer=1, head=2, device="cpu")
    assert torch.equal(a.W_K, c.W_K) and torch.equal(a.W_V, c.W_V) and not torch.equal(a.W_Q, c.W_Q)


def test_legacy_gptj_buffers_are_ignored(tmp_path) -> None:
    from safetensors.torch import load_file, save_file

    model = _random_model("gptj")
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


# --------------------------------------------------------------------------------------------------
# errors


def test_unknown_architecture() -> None:
    with pytest.raises(ExportError, match=r"arch='gpt2' is unknown; accepted: \['gptj', 'llama'\]"):
        export_head(compiled("reflexive"), "gpt2")
    with pytest.raises(HeadImportError, match="arch='neox' is unknown"):
        import_head("neox", {}, {})
    with pytest.raises(HeadImportError, match="does not match arch"):
        import_head("gptj", {}, transformers.LlamaConfig())


def test_no_exact_placement_errors_explain() -> None:
    with pytest.raises(ExportError) as exc:  # [A]'s rounded 0.8660 is not on GPT-J's spectrum
        export_head(compiled_index_0866(), "gptj")
    msg = str(exc.value)
    assert "not on GPT-J's spectrum" in msg and "k=1 of rotary_dim=128" in msg
    assert repr(K1_OF_128) in msg and "Would work" in msg and "llama" in msg
    with pytest.raises(ExportError, match=r"\|theta\|=0.5.*not on GPT-J's spectrum"):
        place_head(compiled("reflexive"), "gptj")
    with pytest.raises(ExportError, match="rotary_dim=64"):
        place_head(compiled("index"), "gptj", rotary_dim=64)  # 10000^(-1/64) needs 2k/64 = 1/64
    with pytest.raises(ExportError, match="> 1"):
        place_head(compile_construction(reflexive_construction(theta=2.0)), "gptj")
    # a theta = 0 plane next to a rotating one: GPT-J places it, LLaMA has nowhere exact for it
    two = compile_construction(retrieval_construction(theta=0.0, extra_planes=[(K1_OF_128, 1)]))
    assert len(place_head(two, "gptj").planes) == 2
    with pytest.raises(ExportError, match=r"theta=0.*no partial rotary.*rope_theta=inf.*arch='gptj'"):
        place_head(two, "llama")
    with pytest.raises(ExportError, match=r"rope_theta=10000\.0 is finite"):
        place_head(compiled("retrieval0"), "llama", rope_theta=10000.0)
    with pytest.raises(ExportError, match="both have"):
        place_head(compile_construction(reflexive_construction(theta=0.5, extra_planes=[(0.5, 1)])), "llama")
    with pytest.raises(ExportError, match="no exact LLaMA placement"):
        place_head(compiled("reflexive"), "llama", rope_theta=10000.0, head_dim=8)
    with pytest.raises(ExportError, match="head_dim=4 is too small"):
        place_head(compiled("reflexive"), "llama", head_dim=4)
    with pytest.raises(ExportError, match="no partial rotary"):
        place_head(compiled("reflexive"), "llama", rotary_dim=8)
    with pytest.raises(ExportError, match="fixed at 10000"):
        place_head(compiled("index"), "gptj", rope_theta=500.0)
    with pytest.raises(ExportError, match="logit_scale"):
        export_head(compiled("reflexive"), "llama", logit_scale=0.0)
    with pytest.raises(ExportError, match="dtype"):
        export_head(compiled("reflexive"), "llama", dtype="float16")


def compiled_index_0866() -> CompiledHead:
    return compile_construction(index_construction(theta=0.8660, letters=8, max_int=4))


def test_llama_places_the_rounded_index_angle_exactly() -> None:
    head = compiled_index_0866()
    pl = place_head(head, "llama")  # rope_theta derived so that plane 1 is exactly 0.8660
    assert pl.target_spec().plane_freqs[pl.planes[0][1]] == pytest.approx(0.8660, rel=1e-12)


def test_import_errors() -> None:
    model = _random_model("llama")
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
    gptj = _random_model("gptj")
    with pytest.raises(HeadImportError, match="rotary_dim=12"):
        import_head("gptj", gptj.state_dict(), gptj.config.to_dict() | {"rotary_dim": 12})
    assert issubclass(ExportError, RopeproofError) and issubclass(HeadImportError, ValueError)


# --------------------------------------------------------------------------------------------------
# command line


def _cli(argv: list[str]) -> int:
    from ropeproof.cli import main

    return main(argv)


def test_cli_writes_a_from_pretrained_directory(tmp_path, capsys) -> None:
    out = tmp_path / "reflexive-llama"
    assert _cli(["export", "llama", "reflexive", "--out", str(out), "--logit-scale", "50"]) == 0
    assert "rope_theta 16.0" in capsys.readouterr().out
    assert {"config.json", "model.safetensors", EXPORT_INFO_FILE} <= {p.name for p in out.iterdir()}
    model = transformers.LlamaForCausalLM.from_pretrained(out, attn_implementation="eager")
    record = json.loads((out / EXPORT_INFO_FILE).read_text())
    assert (record["format"], record["version"]) == ("ropeproof-hf-export", 2)
    info = load_export_info(out)
    legacy = {k: v for k, v in record.items() if k not in ("format", "version")}  # written before v2
    assert ExportInfo.from_json(legacy) == info
    with pytest.raises(HeadImportError, match="not a ropeproof-hf-export"):
        ExportInfo.from_json({**record, "format": "something-else"})
    back = info.to_source(import_model_head(model, device="cpu", **info.import_kwargs()))
    head = compiled("reflexive")
    assert torch.allclose(back.W_Q, torch.as_tensor(head.W_Q), rtol=0, atol=1e-6)  # float32 model
    seqs = task_sequences("reflexive")
    ids = torch.tensor([[info.tokens.index(t) for t in s] for s in seqs])
    with torch.no_grad():
        got = [info.tokens[int(i)] for i in model(input_ids=ids).logits[:, -1].argmax(-1)]
    assert got == task_answers("reflexive")

    out = tmp_path / "index-gptj"
    argv = ["export", "gptj", "index", "--theta", repr(K1_OF_128), "--letters", "8", "--max-int", "8"]
    assert _cli([*argv, "--out", str(out), "--logit-scale", "100"]) == 0
    model = transformers.GPTJForCausalLM.from_pretrained(out)
    assert model.config.rotary_dim == 128
    tasks = number_task(4, n_letters=4, n_ints=4, hops=(1,), vocab_letters=8, max_int=8)
    ids = torch.tensor([[load_export_info(out).tokens.index(t) for t in task.tokens] for task in tasks])
    with torch.no_grad():
        got = [load_export_info(out).tokens[int(i)] for i in model(input_ids=ids).logits[:, -1].argmax(-1)]
    assert got == [task.answer for task in tasks]


def test_cli_reports_no_placement(tmp_path, capsys) -> None:
    assert _cli(["export", "gptj", "reflexive", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ropeproof export: error:") and "not on GPT-J's spectrum" in err
    assert err.count("\n") == 1  # one line, no traceback
    assert not (tmp_path / "x").exists() and list(tmp_path.iterdir()) == []  # no staging directory left


def test_cli_json_describes_what_was_written(tmp_path, capsys) -> None:
    out = tmp_path / "m"
    assert _cli(["export", "llama", "reflexive", "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    config = transformers.AutoConfig.from_pretrained(out)  # where config.json keeps rope_theta varies
    theta = getattr(config, "rope_theta", None) or config.rope_parameters["rope_theta"]
    assert doc["rope_theta"] == theta
    assert (doc["hidden_size"], doc["head_dim"]) == (config.hidden_size, config.head_dim)
    assert doc["path"] == str(out) and doc["arch"] == "llama" and doc["construction"] == "reflexive"
    placement = load_export_info(out).placement
    assert doc["planes"] == [list(p) for p in placement.planes]


@pytest.mark.parametrize("arch", ["gptj", "llama"])
def test_weights_that_overflow_the_export_dtype_are_refused(arch: str, tmp_path) -> None:
    """logit_scale=1e300 used to write inf q_proj weights (every prompt then gives NaN logits)."""
    head = compiled("retrieval0")
    with pytest.raises(
        ExportError, match=r"q_proj.weight is not finite in float32 .*lower logit_scale=1e\+300"
    ):
        export_head(head, arch, logit_scale=1e300, max_positions=POSITIONS)
    big = export_head(head, arch, dtype="float64", logit_scale=1e300, max_positions=POSITIONS)  # fits float64
    assert all(bool(torch.isfinite(p).all()) for p in big.model.parameters())
    ok = exported("retrieval0", arch, "float32", 1e30)  # 1e30 still fits float32
    assert all(bool(torch.isfinite(p).all()) for p in ok.model.parameters())
