"""Placement: a compiled head's planes moved onto the exact frequencies of GPT-J's and LLaMA's spectra, and
the errors that explain why no exact placement exists (the export never approximates a frequency).
Nothing here builds a model, so these run without ``transformers``."""

from __future__ import annotations

import math

import pytest

from ropeproof.constructions.compile import compile_construction
from ropeproof.constructions.head import CompiledHead
from ropeproof.constructions.paper import index_construction, reflexive_construction, retrieval_construction
from ropeproof.verify.interop.errors import ExportError
from ropeproof.verify.interop.hf.export import export_head, place_head

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
    pl = place_head(head, "llama")  # rope_theta derived so that plane 1 is exactly 0.8660
    assert pl.target_spec().plane_freqs[pl.planes[0][1]] == pytest.approx(0.8660, rel=1e-12)
