"""The one export skeleton: the matrices both libraries write (checked against the compiled head's own
products), the record both write and the one reader of it (every format, the legacy one, every refusal),
the option checks, and the save that writes model, record and tokenizer together."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction, retrieval_construction
from ropeproof.verify.interop._errors import ExportError, HeadImportError
from ropeproof.verify.interop._head_export import (
    EXPORT_INFO_FILE,
    ExportInfo,
    check_export_options,
    head_weights,
    load_export_info,
)
from ropeproof.verify.interop.hf._placement import place_gptj
from ropeproof.verify.interop.tl._placement import place_tl

K1_OF_128 = 10000 ** (-2 / 128)


def test_head_weights_compute_the_heads_products() -> None:
    """Embedding times query/key weights equals the compiled head's ``W_E W_Q S`` (times the factor), the
    output lands only in the write dims, and the unembedding reads only them."""
    head = compile_construction(index_construction(theta=K1_OF_128, letters=4, max_int=4))
    pl = place_tl(head)
    w = head_weights(head, pl, 3.0)
    s = pl.qk_map(head.spec)
    np.testing.assert_array_equal(w.w_e @ w.w_q, head.W_E @ head.W_Q @ s * 3.0)
    np.testing.assert_array_equal(w.w_e @ w.w_k, head.W_E @ head.W_K @ s)
    d = head.d_model
    assert not w.w_o[:, :d].any() and not w.w_u[:d].any() and not w.w_e[:, d:].any()
    values = w.w_e @ w.w_v @ w.w_o @ w.w_u  # value path: token -> output -> logits
    sv = pl.value_map(head.spec.head_dim)
    np.testing.assert_allclose(values, head.W_E @ head.W_V @ sv @ sv.T @ head.W_O @ head.W_U, atol=1e-12)


def test_cancel_mean_annihilates_constants() -> None:
    head = compile_construction(retrieval_construction(theta=0.0))
    pl = place_gptj(
        [(p, f) for p, f in enumerate(head.spec.plane_freqs.tolist()) if f == 0], 1, 2 * head.d_model + 1
    )
    w = head_weights(head, pl, 1.0)
    spare = 2 * head.d_model
    w.cancel_mean(spare)
    ones = np.ones(pl.hidden_size)
    for m in (w.w_q, w.w_k, w.w_v, w.w_u):
        assert np.abs(ones @ m).max() <= 1e-12 * max(1.0, np.abs(m).max())


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"head": "index"}, "head must be a CompiledHead"),
        ({"logit_scale": 0.0}, "logit_scale=0.0 must be finite and > 0"),
        ({"logit_scale": float("inf")}, "logit_scale=inf"),
        ({"dtype": "bfloat16"}, "dtype=torch.bfloat16 is not supported"),
        ({"positions": 0}, "n_ctx=0 must be an integer >= 1"),
        ({"positions": True}, "n_ctx=True"),
    ],
)
def test_option_checks_name_the_parameter(kwargs: dict, match: str) -> None:
    head = compile_construction(index_construction(theta=K1_OF_128, letters=4, max_int=4))
    args = {"head": head, "logit_scale": 1.0, "dtype": "float64", "positions": 8, **kwargs}
    with pytest.raises(ExportError, match=match):
        check_export_options(args["head"], args["logit_scale"], args["dtype"], args["positions"], "n_ctx")
    assert check_export_options(head, 2, "float64", 8, "n_ctx") == (2.0, torch.float64)


@pytest.mark.xdist_group("tl")  # transformer_lens imported by one pytest worker, not both
def test_one_reader_for_every_record(tmp_path) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("transformer_lens")
    from ropeproof.verify.interop.hf._export import HFExportInfo, export_head
    from ropeproof.verify.interop.tl._export import TLExportInfo, export_hooked_transformer

    head = compile_construction(index_construction(theta=K1_OF_128, letters=4, max_int=4))
    hf = export_head(head, "llama", max_positions=16)
    tl = export_hooked_transformer(head, n_ctx=16)
    for ex, kind in ((hf, HFExportInfo), (tl, TLExportInfo)):
        record = json.loads(json.dumps(ex.info.to_json()))
        assert ExportInfo.from_json(record) == ex.info and type(ExportInfo.from_json(record)) is kind
        assert kind.from_json(record) == ex.info
        path = ex.save(tmp_path / kind.FORMAT)
        assert load_export_info(path) == ex.info
        assert {EXPORT_INFO_FILE, "tokenizer.json"} <= {p.name for p in path.iterdir()}
    hf_record, tl_record = hf.info.to_json(), tl.info.to_json()
    assert {k for k in hf_record if hf_record[k] != tl_record[k]} == {"format", "version", "placement"}
    with pytest.raises(HeadImportError, match="not a ropeproof-tl-export v1 record"):
        TLExportInfo.from_json(hf_record)
    with pytest.raises(HeadImportError, match="not a ropeproof-hf-export v2 record"):
        HFExportInfo.from_json(tl_record)
    with pytest.raises(HeadImportError, match="version=2"):
        TLExportInfo.from_json({**tl_record, "version": 2})
    legacy = {k: v for k, v in hf_record.items() if k not in ("format", "version")}  # HF's version 1
    assert ExportInfo.from_json(legacy) == hf.info
    with pytest.raises(HeadImportError, match="not a ropeproof-tl-export"):
        TLExportInfo.from_json(legacy)
    with pytest.raises(HeadImportError, match="format='x' is unknown"):
        ExportInfo.from_json({**hf_record, "format": "x"})
    (tmp_path / "bad").mkdir()
    with pytest.raises(HeadImportError, match="does not exist"):
        load_export_info(tmp_path / "bad")
    (tmp_path / "bad" / EXPORT_INFO_FILE).write_text("{")
    with pytest.raises(HeadImportError, match="not valid JSON"):
        load_export_info(tmp_path / "bad")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ExportError, match="not a directory"):
        hf.save(tmp_path / "file")
