"""Exported multi-hop checkpoints: [A]'s GPT-J shape at the smallest width, answering [A]'s tasks after
from_pretrained with transformers alone (no ropeproof code in the loop), LLaMA too, and errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers")

from ropeproof.constructions._multihop_compile import CompiledModel, compile_program
from ropeproof.constructions._multihop_programs import (
    checkpoint_program,
    gptj_frequency,
    letter_program,
    number_program,
)
from ropeproof.verify.interop._errors import ExportError, HeadImportError
from ropeproof.verify.interop.hf._model_export import (
    MODEL_INFO_FILE,
    export_model,
    load_model_info,
)
from ropeproof.verify.measure._tasks import letter_task, number_task
from ropeproof.verify.measure._tokenizer import prompt_text


@pytest.fixture(scope="module")
def models() -> dict[str, CompiledModel]:
    return {
        task: compile_program(checkpoint_program(task, hops=4, layers=12)) for task in ("number", "letter")
    }


def _tasks(task: str) -> list:
    make = number_task if task == "number" else letter_task
    return make(48, hops=(1, 2, 3, 4), seed=7)  # 12 prompts per hop count (balanced)


def _answer_with_transformers_only(path: Path, prompts: list[str]) -> tuple[list[str], object]:
    """The user's loop: load the directory and greedily decode one token, transformers and torch only."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    enc = tok(prompts, return_tensors="pt")
    with torch.no_grad():
        generated = model.generate(**enc, max_new_tokens=1, do_sample=False)
    return tok.batch_decode(generated[:, -1:]), model


def test_gptj_checkpoints_answer_the_paper_tasks_after_from_pretrained(models, tmp_path: Path) -> None:
    widths = {}
    for task, model in models.items():
        path = tmp_path / task
        export_model(model, "gptj").save_pretrained(path)
        config = json.loads((path / "config.json").read_text())
        assert "auto_map" not in config  # no custom code: transformers' own GPTJForCausalLM
        insts = _tasks(task)
        assert {i.hops for i in insts} == {1, 2, 3, 4} and all(i.length == 17 for i in insts)
        answers, lm = _answer_with_transformers_only(path, [prompt_text(i.tokens) for i in insts])
        assert answers == [i.answer.lower() for i in insts]  # 100%
        assert type(lm).__name__ == "GPTJForCausalLM" and lm.config.n_layer == 12 and lm.config.n_head == 1
        assert lm.config.rotary_dim == lm.config.n_embd  # rotary over the whole head
        widths[task] = lm.config.n_embd
    assert widths == {"number": 6, "letter": 8}  # against [A]'s 128


def test_layouts_and_info_round_trip(models, tmp_path: Path) -> None:
    ex = export_model(models["number"], "gptj")
    assert ex.info.residual_labels == ("pointer.0.x", "pointer.0.y", "one", "letter.x", "letter.y", "spare")
    assert ex.info.hidden_size == ex.info.rotary_dim == ex.info.head_dim == 6
    for pl in ex.info.placements:  # theta = 1 is plane k = 0 of 10000^(-2k/6)
        assert pl.planes == ((0, 0, False),)
    letter = export_model(models["letter"], "gptj")
    ret = letter.info.placements[0]
    assert ret.planes == ((0, 3, False),)  # the slowest plane, 10000^(-6/8) = 0.001
    assert letter.info.metadata["layers"][0]["freqs"] == [gptj_frequency(3, 8)]
    import os
    import stat

    umask = os.umask(0o027)
    try:
        path = ex.save_pretrained(tmp_path / "n")
    finally:
        os.umask(umask)
    assert load_model_info(path) == ex.info
    assert (path / MODEL_INFO_FILE).is_file()
    # model.safetensors was created 0600 by safetensors, every other file 0640 (issue 32, case 14)
    assert {stat.S_IMODE(f.stat().st_mode) for f in path.iterdir()} == {0o640}
    with pytest.raises(HeadImportError, match="does not exist"):
        load_model_info(tmp_path)


def test_llama_checkpoints(models) -> None:
    assert {task: m.d_model for task, m in models.items()} == {"number": 5, "letter": 7}
    for task, model in models.items():
        ex = export_model(model, "llama", dtype="float64")
        insts = _tasks(task)[:16]
        assert ex.answer([i.tokens for i in insts]) == [i.answer for i in insts]
        assert ex.info.hidden_size == model.d_model  # no spare dim: RMSNorm does not subtract the mean
        assert type(ex.model).__name__ == "LlamaForCausalLM"
    assert export_model(models["number"], "llama").info.head_dim == 2


def test_lm_logits_equal_the_readout(models) -> None:
    from ropeproof.verify.kernel._multilayer import model_module

    model = models["number"]
    ex = export_model(model, "gptj", dtype="float64")
    insts = _tasks("number")[:8]
    enc = ex.tokenizer([prompt_text(i.tokens) for i in insts], return_tensors="pt")
    hf = ex.model(input_ids=enc["input_ids"]).logits[:, -1, :-1].detach().numpy()
    ours = model_module(model, device="cpu").run([i.tokens for i in insts]).readout[:, -1].numpy()
    # float64 GPT-J: only the eager q.k is float32, and at logit scale 1000 the softmax is saturated;
    # readouts reach ~4000, so agreement to 1e-9 absolute is float64-level
    np.testing.assert_allclose(hf, ours, atol=1e-9)


def test_export_errors(models, tmp_path: Path) -> None:
    nope = compile_program(number_program(hops=1, layers=2, reflexive="symbolic", letters=4, max_int=4))
    with pytest.raises(ExportError, match="theta = 0"):
        export_model(nope, "gptj")
    off = compile_program(
        number_program(hops=1, layers=1, index_planes=((0.8660, 1.0),), letters=4, max_int=4)
    )
    with pytest.raises(ExportError, match=r"layer 0.*not on GPT-J's spectrum"):
        export_model(off, "gptj")
    deep = compile_program(checkpoint_program("number", hops=1, layers=14))
    with pytest.raises(ExportError, match="layers"):
        export_model(deep, "gptj", dtype="float64")
    with pytest.raises(ExportError, match="hidden_size"):
        export_model(models["number"], "gptj", hidden_size=5)
    with pytest.raises(ExportError, match="head_dim"):
        export_model(models["number"], "gptj", head_dim=8)
    with pytest.raises(ExportError, match="dtype"):
        export_model(models["number"], "gptj", dtype="bfloat16")
    with pytest.raises(ExportError, match="arch"):
        export_model(models["number"], "gpt2")
    with pytest.raises(ExportError, match="CompiledModel"):
        export_model("m", "gptj")  # type: ignore[arg-type]
    (tmp_path / "file").write_text("x")
    with pytest.raises(ExportError, match="not a directory"):
        export_model(models["number"], "gptj").save_pretrained(tmp_path / "file")
    wide = export_model(models["number"], "gptj", hidden_size=8)
    assert wide.info.residual_labels[-2:] == ("unused6", "unused7") and wide.info.rotary_dim == 8


def test_weights_are_checked_finite_before_anything_is_written(models, tmp_path: Path) -> None:
    """Issue 22: a logit scale whose q_proj weights overflow float32 is refused with the accepted range,
    and the largest accepted scale gives finite weights; a NaN in the embedding is refused too."""
    import dataclasses

    import torch

    from ropeproof.verify.interop.hf._model_export import max_logit_scale

    model = models["letter"]
    limit = max_logit_scale(model, 8)
    big = dataclasses.replace(model, logit_scale=1e300)
    with pytest.raises(
        ExportError, match=r"logit_scale=1e\+300 is out of range.*accepted: 0 < logit_scale <= "
    ):
        export_model(big, "gptj", certify=False)
    edge = dataclasses.replace(model, layers=tuple(dataclasses.replace(h, scale=limit) for h in model.layers))
    edge = dataclasses.replace(edge, logit_scale=limit)
    ex = export_model(edge, "gptj", certify=False)
    q = ex.model.transformer.h[0].attn.q_proj.weight
    assert torch.isfinite(q).all() and q.abs().max() > 1e30  # near the limit, and still finite
    bad = model.W_E.copy()
    bad[0, 0] = float("nan")
    with pytest.raises(ExportError, match="not finite"):
        export_model(dataclasses.replace(model, W_E=bad), "gptj", certify=False)
    assert not any(tmp_path.iterdir())


def test_partial_rotary_and_wide_llama(tmp_path: Path) -> None:
    """theta = 0 planes go to GPT-J's unrotated dims (rotary_dim < n_embd); LLaMA pads to a width."""
    program = letter_program(
        hops=1,
        layers=2,
        code="orthogonal",
        retrieval_theta=0.0,
        reflexive_planes=((1.0, 1.0),),
        alphabet=4,
        max_int=2,
    )
    model = compile_program(program)
    ex = export_model(model, "gptj", hidden_size=16, rotary_dim=8, max_positions=40)
    retrieval = ex.info.placements[0]
    assert ex.info.rotary_dim == 8 and retrieval.planes == ((0, 4, False), (1, 5, False))  # past k = 3
    assert ex.model.config.rotary_dim == 8 and ex.certified_horizon == 40  # the table, not the proof (44)
    assert ex.answer([["A1", "B2", "CA"]]) == ["A1"]
    with pytest.raises(ExportError, match="theta = 0 plane"):
        export_model(model, "gptj", hidden_size=16)
    with pytest.raises(ExportError, match="rotary_dim=7"):
        export_model(model, "gptj", hidden_size=16, rotary_dim=7)
    with pytest.raises(ExportError, match=r"rope_theta=5\.0"):
        export_model(model, "gptj", rope_theta=5.0)
    wide = export_model(
        compile_program(number_program(hops=1, layers=2, letters=3, max_int=3)), "llama", hidden_size=12
    )
    assert wide.info.hidden_size == 12 and wide.model.config.hidden_size == 12
    assert wide.answer([["A", "B", "C", "2"]]) == ["B"]
    with pytest.raises(ExportError, match="hidden_size=2"):
        export_model(model, "llama", hidden_size=2)
    with pytest.raises(ExportError, match="rotary_dim"):
        export_model(model, "llama", rotary_dim=4)


def test_horizon_record_never_exceeds_the_position_table(models) -> None:
    ex = export_model(models["number"], "gptj", max_positions=30)  # the proof reaches 44 (checked to 30)
    record = ex.info.metadata["certificate"]
    assert ex.certified_horizon == record["certified_horizon"] == 30
    assert record["limited_by"] == "max_positions" and record["certificate_complete"]
    ex = export_model(models["number"], "gptj", max_positions=64)
    record = ex.info.metadata["certificate"]
    assert record["certified_horizon"] == 44 and record["limited_by"] == "certificate"
    assert "at most 44 tokens" in record["statement"]
    assert export_model(models["number"], "gptj", certify=False).certified_horizon is None


def test_a_certificate_computed_already_is_recorded_as_certifying_would(models) -> None:
    from ropeproof.verify.measure.exact._multihop_certified import certified_horizon

    model = models["number"]
    cert = certified_horizon(model, model.hop_layers, max_n=64)
    given = export_model(model, "gptj", max_positions=64, certificate=cert)
    assert given.certificate is cert
    assert (
        given.info.metadata["certificate"]
        == export_model(model, "gptj", max_positions=64).info.metadata["certificate"]
    )
    with pytest.raises(ExportError, match=r"certificate: .*rows ending at n = 64"):
        export_model(model, "gptj", max_positions=30, certificate=cert)  # a search to 30 stops at 30
    with pytest.raises(ExportError, match=r"certificate: .*model"):
        export_model(models["letter"], "gptj", max_positions=64, certificate=cert)
