"""Placement: a compiled head's planes moved onto the exact frequencies of GPT-J's and LLaMA's spectra, and
the errors that explain why no exact placement exists (the export never approximates a frequency).
Nothing here builds a model, so these run without ``transformers``."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._head import CompiledHead
from ropeproof.constructions._paper import index_construction, reflexive_construction, retrieval_construction
from ropeproof.verify.interop._errors import ExportError
from ropeproof.verify.interop.hf._export import export_head, place_head

K1_OF_128 = 10000 ** (-2 / 128)  # 0.8659643233600653: k = 1 of a 128-dim rotary head ([A]'s id 2)


def test_index_lands_on_k1_of_a_128_dim_gptj_head(compiled) -> None:
    pl = place_head(compiled("index"), "gptj")
    assert (pl.rotary_dim, pl.planes) == (128, ((0, 1, False),))  # k = 1, dims (2, 3)
    assert pl.target_spec().plane_dims[1] == (2, 3)
    assert pl.target_spec().plane_freqs[1] == pytest.approx(K1_OF_128, rel=1e-15)
    assert pl.target_spec().plane_freqs[1] != 0.8660  # [A]'s 0.8660 is this value to 4 digits


def test_retrieval_at_zero_uses_gptj_pass_through_and_llama_inf_base(compiled) -> None:
    gptj = place_head(compiled("retrieval0"), "gptj")
    assert gptj.planes[0][1] >= gptj.rotary_dim // 2  # a pass-through plane
    llama = place_head(compiled("retrieval0"), "llama")
    assert math.isinf(llama.rope_theta)
    assert llama.target_spec().plane_freqs[llama.planes[0][1]] == 0.0


def test_llama_placements(compiled) -> None:
    assert place_head(compiled("retrieval41"), "llama").rope_theta == 10000.0
    refl = place_head(compiled("reflexive"), "llama")  # theta = 0.5 -> k = 1, rope_theta = 0.5^(-4)
    assert (refl.head_dim, refl.rope_theta, refl.planes) == (8, 16.0, ((0, 1, False),))
    idx = place_head(compiled("index"), "llama")
    assert idx.rope_theta == 10000.0 and idx.target_spec().plane_freqs[idx.planes[0][1]] == pytest.approx(
        K1_OF_128, rel=1e-15
    )


def test_no_exact_placement_errors_explain(compiled) -> None:
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
    pl = place_head(head, "llama")  # rope_theta derived so that plane 1 is 0.8660 to FREQ_RTOL
    from ropeproof.verify.interop.hf._placement import FREQ_RTOL

    assert FREQ_RTOL == 1e-12  # the "relative 1e-12" of export's help and docs/guides/exports.md
    assert pl.target_spec().plane_freqs[pl.planes[0][1]] == pytest.approx(0.8660, rel=FREQ_RTOL)


# --------------------------------------------------------------------------------------------------
# frequencies the library's float32 spectrum cannot hold (issue 34: `export llama index --theta 1e-300`)


def test_a_frequency_past_every_float_base_is_refused_in_one_line() -> None:
    """theta = 1e-300 needs rope_theta >= 10^304 on any plane of a 136-dim head: past float32 (where
    transformers evaluates the spectrum) and, on the first plane, past float64: an ExportError, not an
    OverflowError."""
    tiny = compile_construction(index_construction(theta=1e-300))
    with pytest.raises(ExportError, match=r"\|theta\|=1e-300.*10\^304, past float32's range") as exc:
        place_head(tiny, "llama")
    assert "\n" not in str(exc.value)
    from ropeproof.verify.interop.tl._placement import place_tl

    with pytest.raises(ExportError, match=r"past float64's range"):
        place_tl(compile_construction(reflexive_construction(theta=1e-300)), spectrum_dtype="float64")


def test_a_small_frequency_moves_to_a_higher_plane_that_float32_holds() -> None:
    """theta = 1e-15 on plane k = 1 of a 136-dim head needs rope_theta = 10^1020; on plane k = 27 the base
    is 10^37.8, inside float32, and transformers' own float32 spectrum holds theta there."""
    from ropeproof.verify.interop.hf._placement import library_spectrum, spectrum_rtol

    pl = place_head(compile_construction(index_construction(theta=1e-15)), "llama")
    ((_, k, _),) = pl.planes
    assert (pl.head_dim, k) == (136, 27) and pl.rope_theta < 3.4e38
    assert pl.target_spec().plane_freqs[k] == pytest.approx(1e-15, rel=1e-12)
    assert library_spectrum(pl.rope_theta, 136)[k] == pytest.approx(
        1e-15, rel=spectrum_rtol(pl.rope_theta, "float32")
    )


def test_a_given_base_past_float32_is_refused() -> None:
    """rope_theta = 1e39 places theta = 1e39^(-2/8) in float64, but transformers' float32 base is inf and
    its frequency 0."""
    theta = 1e39 ** (-2 / 8)
    head = compile_construction(reflexive_construction(theta=theta))
    with pytest.raises(
        ExportError, match=r"evaluates that spectrum in float32.*gets 0.*past float32's range"
    ):
        place_head(head, "llama", head_dim=8, rope_theta=1e39)
    from ropeproof.verify.interop.tl._placement import place_tl

    pl = place_tl(head, rotary_base=1e39, rotary_dim=8, spectrum_dtype="float64")  # float64: it fits
    assert pl.rope_theta == 1e39


def test_library_spectrum_is_what_transformers_builds() -> None:
    transformers = pytest.importorskip("transformers")
    import torch

    from ropeproof.verify.interop.hf._placement import library_spectrum

    for base, dim in ((10000.0, 128), (16.0, 8), (5.99e37, 136), (math.inf, 6)):
        config = transformers.LlamaConfig(
            hidden_size=dim, num_attention_heads=1, head_dim=dim, rope_theta=base, max_position_embeddings=8
        )
        ours = library_spectrum(base, dim)
        theirs = transformers.models.llama.modeling_llama.LlamaRotaryEmbedding(config).inv_freq
        assert torch.equal(torch.as_tensor(ours, dtype=torch.float32), theirs)  # bit for bit


@settings(max_examples=200, deadline=None)
@given(
    log_base=st.floats(min_value=0.01, max_value=88.0),
    dim=st.integers(min_value=1, max_value=2048).map(lambda h: 2 * h),
    dtype=st.sampled_from(["float32", "float64"]),
)
def test_spectrum_rtol_bounds_the_library_error(log_base: float, dim: int, dtype: str) -> None:
    """Against mpmath at 50 digits: every frequency the library computes is within spectrum_rtol of the
    exact ``base^(-2k/dim)``, wherever it is a normal number of the dtype."""
    import mpmath
    import numpy as np

    from ropeproof.verify.interop.hf._placement import library_spectrum, spectrum_rtol

    base = math.exp(log_base)
    got = library_spectrum(base, dim, dtype)
    tiny = float(np.finfo(np.float32 if dtype == "float32" else np.float64).tiny)
    with mpmath.workdps(50):
        for k in range(0, dim // 2, max(1, dim // 64)):
            exact = float(mpmath.mpf(1) / mpmath.power(mpmath.mpf(base), mpmath.mpf(2 * k) / dim))
            if exact >= tiny:
                assert abs(got[k] - exact) <= spectrum_rtol(base, dtype) * exact, (k, got[k], exact)
