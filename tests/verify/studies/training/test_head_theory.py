from __future__ import annotations

import pytest
import torch

from ropeproof.verify.interop.hf._head_import import import_model_head
from ropeproof.verify.measure.ps._per_frequency import split_planes
from ropeproof.verify.studies.training._data import SCORING, TaskEncoder
from ropeproof.verify.studies.training._head_theory import (
    dominant_plane,
    frequency_profile,
    layer_head_inputs,
)
from ropeproof.verify.studies.training._shipped import load_shipped

pytest.importorskip("transformers")


def test_planes_add_up_to_the_trained_head_and_shares_sum_to_one() -> None:
    model = load_shipped("number").model
    ids = TaskEncoder("number").draw(4, 0, SCORING, 0).input_ids
    x = layer_head_inputs(model, ids, 1)
    head = import_model_head(model, layer=1, device="cpu", dtype=torch.float64)
    whole = head(x).logits[:, -1]
    parts = sum(p.head(x).logits[:, -1] for p in split_planes(head))
    # float64 sums of 32 plane logits of size O(10): agreement to ~1e-13 absolute
    assert torch.allclose(parts, whole, rtol=0, atol=1e-10)
    # the imported head on ln_1 of the block input reproduces HF's own attention row (float32 model)
    att = model(input_ids=ids, output_attentions=True).attentions[1][:, 0, -1]
    assert torch.allclose(torch.softmax(whole, -1).float(), att, atol=1e-5)
    rows = frequency_profile(model, ids, 1)
    assert [r["freq_id"] for r in rows] == list(range(1, 33))
    assert rows[1]["theta"] == pytest.approx(10000 ** (-2 / 64), rel=1e-15)
    assert sum(r["share"] for r in rows) == pytest.approx(1.0, abs=1e-12)
    assert dominant_plane(rows)["share"] == max(r["share"] for r in rows)


def test_construction_comparison_matches_the_construction_and_the_bound() -> None:
    import math

    from ropeproof.theory._bounds import index_bound
    from ropeproof.verify.studies.training._head_theory import construction_comparison, per_query_token

    model = load_shipped("number").model
    rows = construction_comparison(model, "number", 0, theta=1.0, max_n=8)
    assert [r["n"] for r in rows] == list(range(2, 9))
    # T_Index at theta = 1 (unit vectors), n = 2: the row holds the target (distance s = 1, logit
    # cos(0) = 1) and the query itself (distance 0, logit cos(theta)), so Delta(2) = 1 - cos(theta)
    assert math.isclose(rows[0]["construction_gap_sup"], 1 - math.cos(1.0), rel_tol=1e-12)
    assert all(
        math.isclose(r["bound"], float(index_bound().evaluate([r["n"]], 1.0)[0]), rel_tol=1e-15) for r in rows
    )
    assert all(r["trained_gap_sup"] >= 0 and math.isfinite(r["trained_margin_inf"]) for r in rows)
    from ropeproof.constructions._paper import index_construction
    from ropeproof.verify.measure.exact._families import family_for

    fam = family_for(index_construction())
    split = per_query_token(fam)
    assert len(split.cases) == sum(len(c.query_tokens) for c in fam.cases)
