"""``ropeproof export gptj|llama CONSTRUCTION --out DIR``: a directory ``from_pretrained`` loads, that
answers the construction's task and maps back onto the compiled head; no placement is one line on stderr
and no directory; ``--json`` describes what was written. (``export tl`` is in test_head_commands.py.)"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from ropeproof.constructions._compile import compile_construction  # noqa: E402
from ropeproof.constructions._head import CompiledHead  # noqa: E402
from ropeproof.constructions._paper import reflexive_construction  # noqa: E402
from ropeproof.verify.interop._errors import HeadImportError  # noqa: E402
from ropeproof.verify.interop._head_export import EXPORT_INFO_FILE, ExportInfo, load_export_info  # noqa: E402
from ropeproof.verify.interop.hf._export import HFExportInfo  # noqa: E402
from ropeproof.verify.interop.hf._head_import import import_model_head  # noqa: E402
from ropeproof.verify.measure._tasks import number_task  # noqa: E402

K1_OF_128 = 10000 ** (-2 / 128)  # 0.8659643233600653: k = 1 of a 128-dim rotary head ([A]'s id 2)


def reflexive_head() -> CompiledHead:
    """What ``ropeproof export ... reflexive`` compiles (theta = 0.5, the default)."""
    return compile_construction(reflexive_construction(theta=0.5))


def reflexive_sequences(head: CompiledHead, count: int = 8) -> list[list[str]]:
    rng = np.random.default_rng(1)
    return [[str(t) for t in rng.choice(list(head.tokens), 11)] for _ in range(count)]


def _cli(argv: list[str]) -> int:
    from ropeproof._cli import main

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
    assert ExportInfo.from_json(legacy) == info and isinstance(info, HFExportInfo)
    with pytest.raises(HeadImportError, match="not a ropeproof-hf-export"):
        HFExportInfo.from_json({**record, "format": "ropeproof-tl-export"})
    with pytest.raises(HeadImportError, match="format='something-else' is unknown"):
        ExportInfo.from_json({**record, "format": "something-else"})
    with pytest.raises(HeadImportError, match="version=7"):
        ExportInfo.from_json({**record, "version": 7})
    back = info.to_source(import_model_head(model, device="cpu", **info.import_kwargs()))
    head = reflexive_head()
    assert torch.allclose(back.W_Q, torch.as_tensor(head.W_Q), rtol=0, atol=1e-6)  # float32 model
    seqs = reflexive_sequences(head)
    ids = torch.tensor([[info.tokens.index(t) for t in s] for s in seqs])
    with torch.no_grad():
        got = [info.tokens[int(i)] for i in model(input_ids=ids).logits[:, -1].argmax(-1)]
    assert got == [seq[-1] for seq in seqs]  # Reflexive attends to the query itself

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


def test_cli_refuses_a_frequency_no_float_base_holds(tmp_path, capsys) -> None:
    """Issue 34: theta = 1e-300 was an OverflowError (exit 3); it is a one-line refusal (exit 2)."""
    for arch in ("llama", "tl"):
        assert _cli(["export", arch, "index", "--theta", "1e-300", "--out", str(tmp_path / arch)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("ropeproof export: error: plane 0 has |theta|=1e-300") and err.count("\n") == 1
        assert not (tmp_path / arch).exists()


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


@pytest.mark.parametrize("theta", ["1e-150", "1e-300", "5e-324"])
def test_cli_refuses_a_llama_base_past_float64_in_one_line(tmp_path, capsys, theta: str) -> None:
    # `export llama index --theta 1e-300` was an OverflowError (exit 3) while the base was computed
    assert _cli(["export", "llama", "index", "--theta", theta, "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ropeproof export: error: plane 0 has |theta|=")
    assert "past float32's range (3.4e+38)" in err and "so it has no exact LLaMA placement" in err
    assert list(tmp_path.iterdir()) == []
