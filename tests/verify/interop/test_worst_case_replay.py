"""Replaying a family's worst cases through saved exports: a head whose exact margin is positive at every
length (T_Retrieval at theta = 0 over 8 letters: 1 - cos(pi/4) everywhere) answers wrong in the float64 HF
exports at logit scale 10 from the length the softmax predicts, n = 20 (the query and 18 competitors outvote
the target once (n - 1) exp(-D scale) > 1), and ropeproof's own float64 softmax agrees; at the scale
required_logit_scale names, nothing is wrong. TransformerLens exports, the sdpa loader and the refusals
too."""

from __future__ import annotations

import dataclasses
import functools
import math

import mpmath
import numpy as np
import pytest

transformers = pytest.importorskip("transformers")

from ropeproof import required_logit_scale  # noqa: E402
from ropeproof.constructions._compile import compile_construction  # noqa: E402
from ropeproof.constructions._head import CompiledHead  # noqa: E402
from ropeproof.constructions._paper import index_construction, retrieval_construction  # noqa: E402
from ropeproof.theory._family import Family  # noqa: E402
from ropeproof.verify.interop._errors import ExportError, HeadImportError  # noqa: E402
from ropeproof.verify.interop._worst_case_replay import (  # noqa: E402
    answer_adversary,
    replay_worst_cases,
    worst_case_family,
)
from ropeproof.verify.interop.hf._export import export_head  # noqa: E402
from ropeproof.verify.kernel._compiled import answer  # noqa: E402
from ropeproof.verify.measure.exact._explain import input_logits  # noqa: E402
from ropeproof.verify.measure.exact._families import family_for  # noqa: E402

CONSTRUCTION = retrieval_construction(alphabet_size=8, theta=0.0, max_int=1)
SCALE, MAX_N = 10.0, 40


@functools.cache
def head() -> CompiledHead:
    return compile_construction(CONSTRUCTION)


def exact_margin() -> float:
    """1 - cos(2 pi / 8): the target pair's code against the nearest other letter's (mpmath)."""
    return float(1 - mpmath.cos(2 * mpmath.pi / 8))


def predicted_first_wrong(scale: float) -> int:
    """The first n at which the n - 1 other keys (each exp(-D scale) of the target's weight, all voting for
    one wrong answer) outweigh the target."""
    return next(n for n in range(2, 10**6) if (n - 1) * math.exp(-exact_margin() * scale) > 1)


@pytest.mark.parametrize("arch", ["gptj", "llama"])
def test_positive_margin_wrong_answer_in_the_float64_hf_export(arch: str, tmp_path) -> None:
    export_head(head(), arch, logit_scale=SCALE, dtype="float64", max_positions=MAX_N).save(tmp_path)
    replay = replay_worst_cases(tmp_path, head(), construction=CONSTRUCTION)
    summary = replay.summary()
    assert summary["lengths"] == f"every n in 2..{MAX_N}" and summary["library"] == "hf"
    assert summary["dtype"] == "float64" and summary["attn_implementation"] == "eager"
    assert all(r.margin == pytest.approx(exact_margin(), abs=1e-12) and r.resolved for r in replay.rows)
    assert replay.exact_horizon == MAX_N  # the margin never fails
    assert replay.first_wrong_n == predicted_first_wrong(SCALE) == 20 and replay.wrong_within_horizon
    assert all(r.correct is (r.n < 20) for r in replay.rows)  # wrong from 20 on, right before
    first = replay.first_wrong
    assert first["expected"] == "AA" and first["given"] != "AA" and len(first["tokens"]) == 20
    assert first["required_scale"] == pytest.approx(required_logit_scale(exact_margin(), 20, 0.01))
    assert first["required_scale"] > SCALE  # the softmax link did not guarantee the weight
    # independent of transformers: ropeproof's own float64 softmax at the same scale answers the same
    ours = answer(head(), [first["tokens"]], mode="softmax", softmax_scale=SCALE)[0]
    assert ours == first["given"]
    before = answer_adversary(head(), replay.sweep.family, replay.sweep.witness(19, "margin_inf"))
    assert answer(head(), [before], mode="softmax", softmax_scale=SCALE) == ["AA"]


def test_the_required_scale_makes_every_length_right(tmp_path) -> None:
    scale = required_logit_scale(exact_margin(), MAX_N, 0.01)
    export_head(head(), "llama", logit_scale=scale, dtype="float64", max_positions=MAX_N).save(tmp_path)
    replay = replay_worst_cases(tmp_path, head(), construction=CONSTRUCTION)
    assert replay.first_wrong_n is None and replay.summary()["scale_for_every_length"] == pytest.approx(scale)


@pytest.mark.xdist_group("tl")  # transformer_lens imported by one pytest worker, not both
def test_transformer_lens_exports_and_sdpa(tmp_path) -> None:
    pytest.importorskip("transformer_lens")
    from ropeproof.verify.interop.tl._export import export_hooked_transformer

    export_hooked_transformer(head(), logit_scale=SCALE, dtype="float64", n_ctx=30).save(tmp_path / "tl")
    replay = replay_worst_cases(tmp_path / "tl", head(), construction=CONSTRUCTION)
    assert (replay.library, replay.first_wrong_n, replay.exact_horizon) == ("tl", 20, 30)
    export_head(head(), "gptj", logit_scale=SCALE, dtype="float64", max_positions=30).save(tmp_path / "hf")
    sdpa = replay_worst_cases(tmp_path / "hf", head(), construction=CONSTRUCTION, attn_implementation="sdpa")
    assert sdpa.first_wrong_n == 20 and sdpa.attn_implementation == "sdpa"
    eager = replay_worst_cases(tmp_path / "hf", head(), construction=CONSTRUCTION)
    for tl_row, hf_row in zip(replay.rows, eager.rows, strict=True):  # TL's hook_pattern, HF's weights
        assert tl_row.target_weight == pytest.approx(hf_row.target_weight, abs=1e-6)
    some = replay_worst_cases(tmp_path / "hf", head(), construction=CONSTRUCTION, lengths=[25, 10, 25])
    assert [r.n for r in some.rows] == [10, 25] and some.first_wrong_n == 25
    assert "not every length" in some.lengths


def test_the_family_and_the_refusals(tmp_path) -> None:
    assert worst_case_family(head(), construction=CONSTRUCTION).name == "retrieval"
    fam = family_for(CONSTRUCTION)
    assert worst_case_family(head(), fam) is fam
    assert worst_case_family(head()).name == "retrieval"  # the head records its construction's family
    bare = dataclasses.replace(head(), family=None, metadata={})
    assert worst_case_family(bare).name == "tokens"  # nothing recorded: every input over the vocabulary
    export_head(head(), "llama", logit_scale=SCALE, max_positions=8).save(tmp_path)
    other = compile_construction(index_construction(theta=0.5, letters=4, max_int=4))
    with pytest.raises(HeadImportError, match="another head"):
        replay_worst_cases(tmp_path, other)
    with pytest.raises(ExportError, match="dtype='float16'"):
        replay_worst_cases(tmp_path, head(), dtype="float16")
    with pytest.raises(ExportError, match="attn_implementation='flash'"):
        replay_worst_cases(tmp_path, head(), attn_implementation="flash")
    with pytest.raises(Exception, match="max_n=9 is out of range"):
        replay_worst_cases(tmp_path, head(), construction=CONSTRUCTION, max_n=9)  # the table holds 8
    with pytest.raises(ExportError, match="Family"):
        worst_case_family(head(), "retrieval")  # type: ignore[arg-type]


def three_back() -> Family:
    """The retrieval family with the target always 3 back: its shortest input has length 4."""
    cases = tuple(dataclasses.replace(c, target_distance=3) for c in family_for(CONSTRUCTION).cases)
    return Family("three-back", cases, "the retrieval family with the target 3 back")


def test_a_family_starting_at_4_is_replayed_from_4_and_every_length_counts(tmp_path) -> None:
    """Lengths below the family's shortest input have no worst case: the replay starts at n = 4 by
    default, the horizon counts the family's lengths only (every one covered: 40, not 1), and
    ``lengths=`` holding every length 4..40 says so; a length below 4 is refused by name."""
    fam = three_back()
    export_head(head(), "gptj", logit_scale=SCALE, dtype="float64", max_positions=MAX_N).save(tmp_path)
    replay = replay_worst_cases(tmp_path, head(), fam)
    assert [r.n for r in replay.rows] == list(range(4, MAX_N + 1))
    assert replay.lengths == f"every n in 4..{MAX_N}" and replay.exact_horizon == MAX_N
    assert replay.first_wrong_n == predicted_first_wrong(SCALE) == 20
    given = replay_worst_cases(tmp_path, head(), fam, lengths=range(4, MAX_N + 1))
    assert given.lengths == f"every n in 4..{MAX_N}" and given.exact_horizon == MAX_N
    assert given.summary()["exact_horizon"] == MAX_N
    with pytest.raises(Exception, match="lengths=3 is out of range"):
        replay_worst_cases(tmp_path, head(), fam, lengths=[3, 10])


def test_replay_rows_carry_the_saved_models_attention_weights(tmp_path) -> None:
    """Each row's target and strongest-other weights are the eager export's own; they match a float64
    softmax of ropeproof's logits at the export's scale (independent of transformers; to float32's
    ulps), and the summary shows the first wrong witness as a bounded excerpt naming the competitor,
    not all n tokens."""
    export_head(head(), "llama", logit_scale=SCALE, dtype="float64", max_positions=MAX_N).save(tmp_path)
    replay = replay_worst_cases(tmp_path, head(), construction=CONSTRUCTION)
    for row in (replay.rows[0], replay.rows[17], replay.rows[-1]):
        w = replay.sweep.witness(row.n, "margin_inf")
        tokens = answer_adversary(head(), replay.sweep.family, w)
        z = SCALE * input_logits(head(), tokens)
        p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        # Llama's eager attention takes its softmax in float32 whatever the model's dtype: float32's ulps
        assert row.target_weight == pytest.approx(p[w.target_position], abs=1e-6)
        others = np.delete(p, w.target_position)
        assert row.competitor_weight == pytest.approx(others.max(), abs=1e-6)
        assert row.competitor_position != w.target_position
    first = replay.summary()["first_wrong"]
    assert "tokens" not in first and first["excerpt"]["n"] == 20
    assert len(first["excerpt"]["tokens"]) <= 12 and first["competitor_token"]
    assert (
        first["excerpt"]["tokens"][first["excerpt"]["positions"].index(first["competitor_position"])]
        == (first["competitor_token"])
    )
    sdpa = replay_worst_cases(
        tmp_path, head(), construction=CONSTRUCTION, max_n=5, attn_implementation="sdpa"
    )
    assert all(r.target_weight is None for r in sdpa.rows)  # SDPA computes no weights
