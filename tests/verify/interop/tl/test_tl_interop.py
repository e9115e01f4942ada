"""TransformerLens interop: export parity, import parity on random rotary models, round trips, the
HF-vs-TL import agreement, the on-disk format, and the errors.

Every model is built from a config; nothing is downloaded. Measured maxima are printed past pytest's
capture. Tolerances: float32 parity at 1e-5 (the issue's requirement; the measured values are about
1e-6); float64 parity at :func:`~ropeproof.verify.kernel._resolution.logit_error_bound`, the
rounding of a ``d_head``-term dot product after a rotation, scaled by the row's ``|q| |k|``.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import warnings

import numpy as np
import pytest
import torch

# transformer_lens is imported by the first test that uses it (``tl`` below), not at collection: its
# import takes seconds, and every pytest worker collects this module
pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("transformer_lens") is None, reason="needs transformer_lens (the tl extra)"
    ),
    pytest.mark.xdist_group("tl"),  # its seconds-long import paid by one pytest worker, not both
]
transformers = pytest.importorskip("transformers")

from ropeproof.constructions._compile import compile_construction  # noqa: E402
from ropeproof.constructions._head import CompiledHead, load_head  # noqa: E402
from ropeproof.constructions._paper import index_construction, retrieval_construction  # noqa: E402
from ropeproof.theory._rope_spec import RopeSpec  # noqa: E402
from ropeproof.verify.interop._errors import ExportError, HeadImportError  # noqa: E402
from ropeproof.verify.interop._head_export import EXPORT_INFO_FILE, load_export_info  # noqa: E402
from ropeproof.verify.interop._imported import MAX_IMPORT_VOCAB, choose_token_ids  # noqa: E402
from ropeproof.verify.interop.hf._head_import import import_model_head  # noqa: E402
from ropeproof.verify.interop.hf._model_head import compiled_from_hf_model, load_hf_model  # noqa: E402
from ropeproof.verify.interop.tl._checkpoint import load_hooked_transformer, save_hooked_transformer  # noqa: E402
from ropeproof.verify.interop.tl._export import TLExportInfo, export_hooked_transformer  # noqa: E402
from ropeproof.verify.interop.tl._head_import import from_hooked_transformer, tl_rope_spec  # noqa: E402
from ropeproof.verify.interop.tl._library import build_hooked_transformer, require_transformer_lens  # noqa: E402
from ropeproof.verify.interop.tl._model_head import compiled_from_hooked_transformer  # noqa: E402
from ropeproof.verify.interop.tl._placement import place_tl  # noqa: E402
from ropeproof.verify.kernel._compiled import answer, encode, head_module  # noqa: E402
from ropeproof.verify.kernel._resolution import logit_error_bound  # noqa: E402
from ropeproof.verify.measure._tasks import letter_task, number_task  # noqa: E402
from ropeproof.verify.measure.exact._discrepancy import build_tables, exact_sweep  # noqa: E402
from ropeproof.verify.measure.exact._families import family_for, token_family  # noqa: E402
from ropeproof.verify.measure.ps._per_frequency import per_frequency_scores  # noqa: E402
from ropeproof.verify.measure.ps._scores import ps_scores  # noqa: E402


class _TransformerLens:
    """``transformer_lens``, imported on first use of a public name (:func:`require_transformer_lens`;
    pytest's collection looks up private names such as ``_mock_name`` on every module attribute)."""

    def __getattr__(self, name: str) -> object:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(require_transformer_lens(), name)


tl = _TransformerLens()
K1_OF_128 = 10000 ** (-2 / 128)  # k = 1 of a 128-dim rotary head at base 10000


@pytest.fixture
def report(capsys: pytest.CaptureFixture[str], record_property):
    def _report(label: str, **values: float) -> None:
        for name, value in values.items():
            record_property(f"{label} {name}", value)
        with capsys.disabled():
            print(f"\n[tl-interop] {label}: " + ", ".join(f"{k}={v:.3g}" for k, v in values.items()), end="")

    return _report


@functools.cache
def compiled(key: str) -> CompiledHead:
    builders = {
        "index": lambda: index_construction(theta=0.8660),  # [A]'s rounded angle: a derived base
        "index_k1": lambda: index_construction(theta=K1_OF_128),  # on the base-10000 spectrum
        "retrieval0": lambda: retrieval_construction(theta=0.0),  # a theta = 0 plane: pass-through
        "retrieval": lambda: retrieval_construction(theta=0.0027),
    }
    return compile_construction(builders[key]())


def sequences(key: str, count: int = 6) -> tuple[list[list[str]], list[str]]:
    tasks = (
        number_task(count, hops=(1,), seed=3)
        if key.startswith("index")
        else letter_task(count, hops=(1,), seed=3)
    )
    return [list(t.tokens) for t in tasks], [t.answer for t in tasks]


def float64_tolerance(q: torch.Tensor, k: torch.Tensor, spec: RopeSpec, scale: float) -> float:
    """:func:`logit_error_bound` for the largest ``|q_i| |k_j|`` of the batch, counted twice (both
    implementations round; each error is bounded separately), at the largest rotation angle."""
    magnitude = float(q.norm(dim=-1).max() * k.norm(dim=-1).max()) * abs(scale)
    max_angle = float(spec.plane_freqs.max()) * q.shape[-2]
    return 2 * logit_error_bound("float64", spec.head_dim, magnitude, max_angle)


# --------------------------------------------------------------------------------------------------
# placement


def test_placement_prefers_base_10000_and_derives_a_base_otherwise() -> None:
    on_spectrum = place_tl(compiled("index_k1"))
    assert (on_spectrum.rope_theta, on_spectrum.rotary_dim, on_spectrum.planes) == (
        10000.0,
        128,
        ((0, 1, False),),
    )
    derived = place_tl(compiled("index"))  # 0.8660 is on no base-10000 spectrum: k = 1 of a 4-dim one
    assert derived.rotary_dim == 4 and derived.planes == ((0, 1, False),)
    assert derived.target_spec().plane_freqs[1] == pytest.approx(0.8660, rel=1e-12)
    zero = place_tl(compiled("retrieval0"))  # theta = 0: a pass-through plane past rotary_dim
    assert (
        zero.planes[0][1] >= zero.rotary_dim // 2 and zero.target_spec().plane_freqs[zero.planes[0][1]] == 0
    )
    half = place_tl(compiled("index"), layout="half")
    assert half.target_spec().plane_dims[1] == (1, 3)  # (k, k + rotary_dim/2) with rotary_dim = 4


def test_placement_errors_name_the_problem() -> None:
    with pytest.raises(ExportError, match="layout"):
        place_tl(compiled("index"), layout="diagonal")  # type: ignore[arg-type]
    with pytest.raises(ExportError, match="not on GPT-J's spectrum"):
        place_tl(compiled("index"), rotary_base=10000.0)  # 0.8660 is not 10000^(-2k/r)
    with pytest.raises(ExportError, match="d_head=4 is too small"):
        place_tl(compiled("index"), d_head=4)
    with pytest.raises(ExportError, match="rotary_dim=3"):
        place_tl(compiled("index"), rotary_dim=3)


# --------------------------------------------------------------------------------------------------
# export: the HookedTransformer computes the compiled head


def _export_parity(key: str, layout: str, dtype: torch.dtype) -> dict[str, float]:
    head = compiled(key)
    ex = export_hooked_transformer(head, layout=layout, dtype=dtype, n_ctx=64)
    seqs, _ = sequences(key)
    _, cache = ex.model.run_with_cache(ex.ids(seqs))
    ours = head_module(head, "cpu", dtype)(encode(head, seqs, dtype))
    scores, pattern = cache["blocks.0.attn.hook_attn_scores"][:, 0], cache["blocks.0.attn.hook_pattern"][:, 0]
    n = scores.shape[-1]
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    assert torch.all(scores[:, future] == float("-inf"))  # TransformerLens masks with -inf, as we do
    out = ex.info.read_output(cache["blocks.0.hook_attn_out"])
    others = [i for i in range(2 * head.d_model) if i not in set(ex.info.write_dims)]
    assert torch.all(cache["blocks.0.hook_attn_out"][..., others] == 0)  # writes only its write dims
    return {
        "scores": (scores[:, ~future] - ours.logits[:, ~future]).abs().max().item(),
        "pattern": (pattern - ours.pattern).abs().max().item(),
        "output": (out - ours.output).abs().max().item(),
    }


@pytest.mark.parametrize("key", ["index", "index_k1", "retrieval0", "retrieval"])
@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_export_parity_float32(key: str, layout: str, report) -> None:
    diffs = _export_parity(key, layout, torch.float32)
    report(f"export float32 {layout} {key}", **diffs)
    assert max(diffs.values()) < 1e-5, diffs


@pytest.mark.parametrize("key", ["index", "retrieval"])
@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_export_parity_float64(key: str, layout: str, report) -> None:
    """TransformerLens computes a float64 model in float64 throughout (its sin/cos table included),
    so the scores agree to the rounding bound of a unit-vector logit: (d_head + 6) u_64 doubled."""
    head = compiled(key)
    diffs = _export_parity(key, layout, torch.float64)
    report(f"export float64 {layout} {key}", **diffs)
    # the construction's q, k are unit vectors; angles reach 16 * theta; TL's W_Q carries sqrt(d_head)
    tol = 2 * logit_error_bound("float64", 2 * head.spec.head_dim, 1.0, 16 * max(head.spec.plane_freqs))
    assert diffs["scores"] < tol and diffs["pattern"] < tol, (diffs, tol)


def test_exported_model_answers_like_the_head() -> None:
    head = compiled("index")
    ex = export_hooked_transformer(head, logit_scale=100.0, n_ctx=64)
    seqs, answers = sequences("index", 20)
    assert ex.answer(seqs) == answers == answer(head, seqs, device="cpu")


def test_export_round_trip_recovers_the_compiled_matrices() -> None:
    head = compiled("retrieval")
    ex = export_hooked_transformer(head, dtype=torch.float64, layout="half", logit_scale=3.0)
    back = ex.info.to_source(from_hooked_transformer(ex.model, 0, 0, device="cpu", **ex.info.import_kwargs()))
    for name in ("W_Q", "W_K", "W_V", "W_O"):  # one multiply and divide by sqrt(d_head) * 3: a few ulps
        assert torch.allclose(getattr(back, name), torch.as_tensor(getattr(head, name)), rtol=0, atol=1e-14)
    assert back.spec == head.spec and back.scale == head.scale


def test_export_errors() -> None:
    with pytest.raises(ExportError, match="CompiledHead"):
        export_hooked_transformer("index")  # type: ignore[arg-type]
    with pytest.raises(ExportError, match="logit_scale"):
        export_hooked_transformer(compiled("index"), logit_scale=0.0)
    with pytest.raises(ExportError, match="dtype"):
        export_hooked_transformer(compiled("index"), dtype="bfloat16")
    with pytest.raises(ExportError, match="n_ctx"):
        export_hooked_transformer(compiled("index"), n_ctx=0)


def test_export_saves_and_loads(tmp_path) -> None:
    head = compiled("index")
    ex = export_hooked_transformer(head, n_ctx=64)
    path = ex.save(tmp_path / "tl")
    assert (path / EXPORT_INFO_FILE).is_file()
    info = load_export_info(path)  # the one reader: the record's format says TransformerLens
    assert isinstance(info, TLExportInfo) and info == ex.info and info.tokens == head.tokens
    tok = transformers.AutoTokenizer.from_pretrained(path)  # the export ships its tokenizer
    assert tok(" ".join(head.tokens[:5]))["input_ids"] == [0, 1, 2, 3, 4]
    model = load_hooked_transformer(path)
    seqs, _ = sequences("index")
    assert torch.equal(model(ex.ids(seqs)), ex.model(ex.ids(seqs)))  # bit for bit
    (tmp_path / "bad").mkdir()
    with pytest.raises(HeadImportError, match=r"tl_config\.json"):
        load_hooked_transformer(tmp_path / "bad")
    (path / "tl_config.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(HeadImportError, match="ropeproof-tl-model"):
        load_hooked_transformer(path)
    with pytest.raises(HeadImportError, match="does not exist"):
        load_export_info(tmp_path / "bad")


# --------------------------------------------------------------------------------------------------
# import: random rotary HookedTransformers built from a config


def random_model(
    adjacent: bool, dtype: torch.dtype, gqa: bool = True, rotary_dim: int = 6, **extra
) -> object:
    cfg = tl.HookedTransformerConfig(
        n_layers=2,
        d_model=24,
        n_ctx=64,
        d_head=8,
        n_heads=4,
        n_key_value_heads=2 if gqa else None,
        d_vocab=30,
        attn_only=True,
        normalization_type="LN",
        positional_embedding_type="rotary",
        rotary_dim=rotary_dim,
        rotary_base=500,
        rotary_adjacent_pairs=adjacent,
        scale_attn_by_inverse_layer_idx=True,  # layer 1 divides its scores by 2 sqrt(d_head)
        use_attn_result=True,
        init_mode="gpt2",
        initializer_range=0.5,  # larger than default: far-from-uniform patterns
        dtype=dtype,
        device="cpu",
        seed=1,
        **extra,
    )
    return build_hooked_transformer(cfg).eval()


def _import_parity(model, layer: int, head: int, dtype: torch.dtype) -> tuple[dict[str, float], float]:
    tokens = torch.randint(0, model.cfg.d_vocab, (3, 11), generator=torch.Generator().manual_seed(layer))
    _, cache = model.run_with_cache(tokens)
    x = cache[f"blocks.{layer}.ln1.hook_normalized"]
    attn = from_hooked_transformer(model, layer, head, device="cpu", dtype=dtype)
    ours = attn(x)
    scores = cache[f"blocks.{layer}.attn.hook_attn_scores"][:, head]
    n = scores.shape[-1]
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    q, k, _ = attn.project(x)
    tol = float64_tolerance(q, k, attn.spec, attn.scale)
    return {
        "scores": (scores[:, causal] - ours.logits[:, causal]).abs().max().item(),
        "pattern": (cache[f"blocks.{layer}.attn.hook_pattern"][:, head] - ours.pattern).abs().max().item(),
        "result": (cache[f"blocks.{layer}.attn.hook_result"][:, :, head] - ours.output).abs().max().item(),
    }, tol


@pytest.mark.parametrize("adjacent", [True, False])
def test_import_parity_float32(adjacent: bool, report) -> None:
    model = random_model(adjacent, torch.float32)
    for layer in (0, 1):
        for head in (0, 3):  # head 3 reads key/value head 1 (GQA, 2 query heads per kv head)
            diffs, _ = _import_parity(model, layer, head, torch.float32)
            report(f"import float32 adjacent={adjacent} L{layer}H{head}", **diffs)
            assert max(diffs.values()) < 1e-5, diffs


@pytest.mark.parametrize("adjacent", [True, False])
def test_import_parity_float64(adjacent: bool, report) -> None:
    model = random_model(adjacent, torch.float64)
    for layer in (0, 1):
        for head in (0, 3):
            diffs, tol = _import_parity(model, layer, head, torch.float64)
            report(f"import float64 adjacent={adjacent} L{layer}H{head}", tol=tol, **diffs)
            assert diffs["scores"] < tol, (diffs, tol)
            assert diffs["pattern"] < tol and diffs["result"] < 1e3 * tol, (diffs, tol)


def test_imported_spec_follows_the_config() -> None:
    inter = tl_rope_spec(random_model(True, torch.float32).cfg)
    assert inter == RopeSpec(8, 6, 500.0, layout="interleaved")
    assert inter.plane_dims[:3] == [(0, 1), (2, 3), (4, 5)] and inter.plane_freqs[3] == 0.0
    half = tl_rope_spec(random_model(False, torch.float32).cfg)
    assert half.plane_dims[:3] == [(0, 3), (1, 4), (2, 5)]  # (k, k + rotary_dim/2), rotary_dim = 6
    assert half.plane_freqs.tolist()[:3] == pytest.approx([1.0, 500 ** (-1 / 3), 500 ** (-2 / 3)], rel=1e-15)
    scaled = tl_rope_spec(random_model(True, torch.float32, rotary_scaling_factor=4.0).cfg)
    assert scaled.plane_freqs[1] == pytest.approx(500 ** (-1 / 3) / 4, rel=1e-15)


def test_gqa_heads_share_keys_and_scale_is_folded() -> None:
    model = random_model(True, torch.float64)
    h0, h1, h2 = (from_hooked_transformer(model, 1, h, device="cpu") for h in (0, 1, 2))
    assert torch.equal(h0.W_K, h1.W_K) and not torch.equal(h0.W_K, h2.W_K)  # kv head 0, 0, 1
    raw = from_hooked_transformer(model, 1, 0, device="cpu", fold_scale=False)
    assert raw.scale == pytest.approx(1 / (2 * math.sqrt(8)))  # layer 1: attn_scale * (layer + 1)
    assert torch.allclose(raw.W_Q * raw.scale, h0.W_Q, rtol=1e-15, atol=0)


def test_import_errors() -> None:
    model = random_model(True, torch.float32)
    with pytest.raises(HeadImportError, match="layer=2"):
        from_hooked_transformer(model, 2, 0)
    with pytest.raises(HeadImportError, match="head=4"):
        from_hooked_transformer(model, 0, 4)
    with pytest.raises(HeadImportError, match="HookedTransformer"):
        from_hooked_transformer(object(), 0, 0)
    with pytest.raises(HeadImportError, match="read_dims"):
        from_hooked_transformer(model, 0, 0, read_dims=[0, 1], write_dims=[0])
    with torch.no_grad():
        model.blocks[0].attn.b_Q[1] += 0.5
    with pytest.raises(HeadImportError, match=r"b_Q\[1\] is nonzero"):
        from_hooked_transformer(model, 0, 1)
    with pytest.raises(HeadImportError, match="use_yarn_rope"):
        tl_rope_spec(random_model(True, torch.float32, use_yarn_rope=True).cfg)
    cfg = tl.HookedTransformerConfig(
        n_layers=1, d_model=8, n_ctx=8, d_head=4, n_heads=2, d_vocab=5, attn_only=True
    )
    with pytest.raises(HeadImportError, match="positional_embedding_type='standard'"):
        tl_rope_spec(cfg)


# --------------------------------------------------------------------------------------------------
# the same weights through HF and through TransformerLens


@functools.cache
def llama_pair() -> tuple[object, object]:
    """A random LLaMA (GQA, rope_theta 500) and the HookedTransformer TransformerLens' own converter
    makes of it."""
    from transformer_lens.loading_from_pretrained import convert_hf_model_config
    from transformer_lens.pretrained.weight_conversions.llama import convert_llama_weights

    state = torch.random.get_rng_state()
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=20,
        hidden_size=32,
        intermediate_size=16,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        rope_theta=500.0,
        initializer_range=0.3,
        attn_implementation="eager",
        architectures=["LlamaForCausalLM"],  # what save_pretrained of the model would record
    )
    hf = transformers.LlamaForCausalLM(config).to(torch.float64).eval()
    torch.random.set_rng_state(state)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        config.save_pretrained(d)  # convert_hf_model_config reads config.json from a local dir
        cfg_dict = convert_hf_model_config(d)
    cfg_dict.update(dtype=torch.float64, device="cpu", tokenizer_name=None)
    cfg = tl.HookedTransformerConfig.from_dict(cfg_dict)
    model = build_hooked_transformer(cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.load_and_process_state_dict(
            convert_llama_weights(hf, cfg),
            fold_ln=False,
            center_writing_weights=False,
            center_unembed=False,
            fold_value_biases=False,
        )
    return hf, model.eval()


@pytest.mark.parametrize(("layer", "head"), [(0, 0), (1, 3)])
def test_tl_and_hf_imports_of_the_same_weights_agree(layer: int, head: int, report) -> None:
    """Done criterion of the issue: same matrices, same ps_scores, same exact sweep."""
    hf, model = llama_pair()
    from_hf = import_model_head(hf, "llama", layer, head, device="cpu")
    from_tl = from_hooked_transformer(model, layer, head, device="cpu")
    assert from_hf.spec == from_tl.spec  # half layout, rope_theta 500, float64 formula in both
    for name in ("W_Q", "W_K", "W_V", "W_O"):  # the converter only reshapes: bit-for-bit equal
        assert torch.equal(getattr(from_hf, name), getattr(from_tl, name)), name
    x = torch.randn(16, 9, 32, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    s_hf, s_tl = ps_scores(from_hf, x), ps_scores(from_tl, x)
    assert torch.equal(s_hf.s_pos, s_tl.s_pos) and torch.equal(s_hf.s_sym, s_tl.s_sym)
    assert 0 < s_tl.S_pos < 1 and 0 < s_tl.S_sym < 1  # a random head: neither pure nor uniform
    prof_hf, prof_tl = per_frequency_scores(from_hf, x[:4]), per_frequency_scores(from_tl, x[:4])
    assert np.array_equal(prof_hf.S_pos, prof_tl.S_pos) and np.array_equal(prof_hf.S_sym, prof_tl.S_sym)
    tokens = list(range(8))
    c_hf = compiled_from_hf_model(hf, layer, head, tokens)
    c_tl = compiled_from_hooked_transformer(model, layer, head, tokens)
    assert np.allclose(c_hf.W_E, c_tl.W_E, rtol=0, atol=1e-13)  # RMSNorm in float64, two code paths
    family = token_family(c_hf.tokens)
    sw_hf = exact_sweep(build_tables(c_hf, family, 24), 24)
    sw_tl = exact_sweep(build_tables(c_tl, family, 24), 24)
    diff = max(float(np.abs(getattr(sw_hf, q) - getattr(sw_tl, q)).max()) for q in ("gap_sup", "gap_inf"))
    report(f"HF vs TL L{layer}H{head}", sweep=diff, S_pos=s_tl.S_pos, S_sym=s_tl.S_sym)
    # W_E rows differ by <= 1e-13 (RMSNorm); logits are ~|q||k| <= 10: 1e-11 is rounding, not a difference
    assert diff < 1e-11 and np.all(sw_tl.gap_sup >= sw_tl.gap_inf)
    w = sw_tl.witness(24, "gap_sup")
    assert w.tokens == sw_hf.witness(24, "gap_sup").tokens


def test_compiled_heads_from_models_answer_and_save(tmp_path) -> None:
    hf, model = llama_pair()
    c = compiled_from_hooked_transformer(model, 0, 1, [3, 5, 7])
    assert c.tokens == ("3", "5", "7") and c.metadata["imported"]["library"] == "tl"
    assert "exact" in c.metadata["imported"]["embedding"]
    assert "proxy" in compiled_from_hooked_transformer(model, 1, 1, [3]).metadata["imported"]["embedding"]
    back = load_head(c.save(tmp_path / "head"))
    assert np.array_equal(back.W_Q, c.W_Q) and back.metadata == c.metadata
    hf_dir = tmp_path / "hf"
    hf.save_pretrained(hf_dir)
    loaded = compiled_from_hf_model(load_hf_model(hf_dir), 0, 1, [3, 5, 7])
    assert np.array_equal(loaded.W_K, compiled_from_hf_model(hf, 0, 1, [3, 5, 7]).W_K)
    with pytest.raises(HeadImportError, match=r"config\.json"):
        load_hf_model(tmp_path / "nothing")


def test_token_choice() -> None:
    assert choose_token_ids(5, None) == [0, 1, 2, 3, 4]
    with pytest.raises(HeadImportError, match="choose token_ids"):
        choose_token_ids(MAX_IMPORT_VOCAB + 1, None)
    with pytest.raises(HeadImportError, match=r"distinct ids in 0\.\.4"):
        choose_token_ids(5, [1, 1])
    with pytest.raises(HeadImportError, match=r"distinct ids in 0\.\.4"):
        choose_token_ids(5, [5])


def test_saved_random_model_round_trips(tmp_path) -> None:
    model = random_model(False, torch.float64)
    path = save_hooked_transformer(model, tmp_path / "m")
    back = load_hooked_transformer(path)
    tokens = torch.arange(10)[None]
    assert torch.equal(back(tokens), model(tokens))
    assert back.cfg.n_key_value_heads == 2 and back.cfg.dtype == torch.float64


def test_export_of_the_index_head_keeps_its_family_semantics() -> None:
    """A construction exported to TL and imported back is still the construction (exact sweep)."""
    head = compiled("index")
    ex = export_hooked_transformer(head, dtype=torch.float64)
    back = ex.info.to_source(from_hooked_transformer(ex.model, 0, 0, device="cpu", **ex.info.import_kwargs()))
    rebuilt = CompiledHead(
        head.name, head.tokens, head.W_E, back.W_Q.numpy(), back.W_K.numpy(), back.W_V.numpy(),
        back.W_O.numpy(), head.W_U, back.spec, back.scale,
    )  # fmt: skip
    fam = family_for(index_construction(theta=0.8660))
    a = exact_sweep(build_tables(head, fam, 17), 17)
    b = exact_sweep(build_tables(rebuilt, fam, 17), 17)
    assert np.allclose(a.margin_inf, b.margin_inf, rtol=0, atol=1e-13) and (b.margin_inf > 0).all()


def test_float32_parity_fails_at_long_positions_and_the_angle_table_explains_it(report) -> None:
    """The one parity failure: a float32 TransformerLens model forms its angles ``p / freq`` in
    float32, so at position ~2000 an angle of ~1700 rad carries a rounding of ~1e-4 and the scores
    differ from ours (angles in float64, then cast) by more than 1e-5. Recomputing our logits from
    TransformerLens' own float32 sin/cos table removes the difference."""
    head = compiled("index")  # theta = 0.8660 on a derived base: freq = base^(1/2) is inexact in float32
    ex = export_hooked_transformer(head, n_ctx=2048)
    n = 2048
    rng = np.random.default_rng(0)
    seq = [str(t) for t in rng.choice(list(head.tokens), n)]
    _, cache = ex.model.run_with_cache(ex.ids([seq]))
    tl_last = cache["blocks.0.attn.hook_attn_scores"][0, 0, -1].double()
    x = encode(head, [seq], "float64")
    ours = head_module(head, "cpu", "float64")(x).logits[0, -1]
    attn = ex.model.blocks[0].attn  # the float32 table TransformerLens rotates with, [n_ctx, rotary_dim]
    cos, sin = attn.rotary_cos[:n].double(), attn.rotary_sin[:n].double()
    s = torch.as_tensor(ex.info.placement.qk_map(head.spec))
    q = (x[0] @ torch.as_tensor(head.W_Q) @ s)[:, : ex.info.placement.rotary_dim]
    k = (x[0] @ torch.as_tensor(head.W_K) @ s)[:, : ex.info.placement.rotary_dim]

    def rotate(v: torch.Tensor) -> torch.Tensor:  # TransformerLens' rotate_every_two, adjacent pairs
        flip = torch.empty_like(v)
        flip[:, ::2], flip[:, 1::2] = -v[:, 1::2], v[:, ::2]
        return v * cos + flip * sin

    explained = rotate(q)[-1] @ rotate(k).T  # float64 arithmetic on TransformerLens' float32 angles
    direct = (tl_last - ours).abs().max().item()
    residual = (tl_last - explained).abs().max().item()
    report("float32 at position 2047", direct=direct, after_tl_angles=residual)
    assert direct > 1e-5  # the failure is real
    assert residual < 1e-5  # and it is all in the angle table (the rest is float32 dot products)


def test_tl_weights_that_overflow_float32_are_refused() -> None:
    head = compile_construction(index_construction(theta=0.866))
    with pytest.raises(ExportError, match=r"W_Q is not finite in float32 .*lower logit_scale=1e\+300"):
        export_hooked_transformer(head, logit_scale=1e300, n_ctx=16)
