"""Export: a compiled head as a one-layer GPT-J / LLaMA causal LM whose layer-0 attention computes the
head's logits, pattern and output (parity per dtype), whose LM logits are the head's readout, and which
imports back to the head's matrices; weights that overflow the export dtype are refused.

Every model is built from a config; nothing is downloaded. Measured maximum differences are printed
(past pytest's capture) and stored with ``record_property``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from ropeproof.constructions._head import CompiledHead  # noqa: E402
from ropeproof.theory._rope_spec import RopeSpec  # noqa: E402
from ropeproof.verify.interop._errors import ExportError  # noqa: E402
from ropeproof.verify.interop.hf._export import export_head  # noqa: E402
from ropeproof.verify.interop.hf._head_import import import_head  # noqa: E402
from ropeproof.verify.interop.hf._placement import same_freq  # noqa: E402
from ropeproof.verify.interop.hf._run import hf_attention_forward  # noqa: E402
from ropeproof.verify.kernel._compiled import answer, encode, head_module  # noqa: E402
from ropeproof.verify.measure._tasks import letter_task, number_task  # noqa: E402

POSITIONS = 64  # longest sequence the exported test models support (keeps GPT-J's sin/cos table small)

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

RANDOM_SPECS = {
    # every plane carries weight: the whole default spectrum, pass-through planes, negative frequency
    "gptj": RopeSpec(12, rotary_dim=8, layout="interleaved"),
    "llama": RopeSpec(8, layout="half"),
    "llama-ratio": RopeSpec(6, freqs=[0.5, 0.25, -0.125]),
}


def task_sequences(key: str, head: CompiledHead, count: int = 8) -> list[list[str]]:
    """Task inputs for ``key``'s head: [A]'s number or letter task, or random tokens of ``head``."""
    if key == "index":
        return [list(t.tokens) for t in number_task(count, hops=(1,), seed=1)]
    if key.startswith("retrieval"):
        return [list(t.tokens) for t in letter_task(count, hops=(1,), seed=1)]
    rng = np.random.default_rng(1)
    return [[str(t) for t in rng.choice(list(head.tokens), 11)] for _ in range(count)]


def task_answers(key: str, head: CompiledHead, count: int = 8) -> list[str]:
    if key == "index":
        return [t.answer for t in number_task(count, hops=(1,), seed=1)]
    if key.startswith("retrieval"):
        return [t.answer for t in letter_task(count, hops=(1,), seed=1)]
    return [seq[-1] for seq in task_sequences(key, head, count)]


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


def parity_inputs(key: str, head: CompiledHead) -> list[tuple[str, torch.Tensor]]:
    gen = torch.Generator().manual_seed(0)
    rand = torch.randn(3, 12, head.d_model, generator=gen, dtype=torch.float64) / math.sqrt(head.d_model)
    return [("random", rand), ("task", encode(head, task_sequences(key, head)))]


@pytest.mark.parametrize(("key", "arch"), PLACED)
def test_attention_parity_float32(key: str, arch: str, compiled, exported, report) -> None:
    ex, head = exported(key, arch, "float32"), compiled(key)
    for kind, x in parity_inputs(key, head):
        diffs = compare(ex, head, x, torch.float32)
        report(f"float32 {arch} {key} {kind}", **diffs)
        assert max(diffs.values()) < 1e-5, diffs


@pytest.mark.parametrize(("key", "arch"), PLACED)
def test_attention_parity_float64(key: str, arch: str, compiled, exported, report) -> None:
    """Float64 models: HF still computes some steps in float32 (module docstring); 1e-10 where not."""
    ex, head = exported(key, arch, "float64"), compiled(key)
    exact_scores = arch == "llama" and _zero_freq_placement(ex)
    for kind, x in parity_inputs(key, head):
        diffs = compare(ex, head, x, torch.float64)
        report(f"float64 {arch} {key} {kind}", **diffs)
        assert max(diffs.values()) < 1e-5, diffs
        if exact_scores:  # LLaMA's eager q.k is float64; sin/cos of a zero angle are exact
            assert diffs["scores"] < 1e-10, diffs


@pytest.mark.parametrize("arch", ["gptj", "llama"])
def test_sdpa_outputs_float64_where_exact(arch: str, compiled, report) -> None:
    """With SDPA (float64 throughout) and zero-frequency planes, outputs agree to float64 level."""
    head = compiled("retrieval0")
    if arch == "gptj" and not hasattr(transformers.models.gptj.modeling_gptj, "GPTJRotaryEmbedding"):
        pytest.skip(f"transformers {transformers.__version__}: GPT-J has no SDPA attention path")
    ex = export_head(head, arch, dtype="float64", max_positions=POSITIONS, attn_implementation="sdpa")
    x = parity_inputs("retrieval0", head)[0][1]
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


@pytest.mark.parametrize(("key", "arch"), PLACED)
def test_lm_logits_equal_ours_and_answers_tasks(key: str, arch: str, compiled, exported, report) -> None:
    head = compiled(key)
    seqs = task_sequences(key, head)
    for dtype in ("float32", "float64"):
        ex = exported(key, arch, dtype)
        ours = head_module(head, "cpu", torch.float64)(encode(head, seqs)).output @ torch.as_tensor(head.W_U)
        diff = (ex.lm_logits(seqs).double() - ours).abs().max().item()
        report(f"{dtype} {arch} {key} LM logits", logits=diff)
        assert diff < 1e-5
    sharp = exported(key, arch, "float64", logit_scale=100.0)
    answers = sharp.answer(seqs)
    assert answers == task_answers(key, head) == answer(head, seqs, mode="hard", device="cpu")
    assert answers == answer(head, seqs, mode="softmax", softmax_scale=100.0, device="cpu")


@pytest.mark.parametrize(("key", "arch"), PLACED)
def test_export_import_round_trip(key: str, arch: str, compiled, exported, report) -> None:
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


@pytest.mark.parametrize("arch", ["gptj", "llama"])
def test_weights_that_overflow_the_export_dtype_are_refused(arch: str, compiled, exported, tmp_path) -> None:
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


def test_saved_files_share_the_umask_s_mode(exported, tmp_path) -> None:
    """HeadExport.save left model.safetensors 0600 beside 0640 files under umask 027 (issue 32, case 14,
    through the Python API)."""
    import os
    import stat

    ex = exported("retrieval0", "llama", "float32", 1.0)
    umask = os.umask(0o027)
    try:
        path = ex.save(tmp_path / "m")
    finally:
        os.umask(umask)
    modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in path.iterdir()}
    assert "model.safetensors" in modes and set(modes.values()) == {0o640}, modes
