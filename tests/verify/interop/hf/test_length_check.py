"""The default checkpoints through transformers alone: sampled and decoy prompts answered by
AutoModelForCausalLM after from_pretrained, in float32 and float64, with the certified horizon in the
config. Small sizes here (built for 64 tokens); the full sizes (850 and 10^4 tokens) are ``slow``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from ropeproof.constructions._multihop_compile import compile_program
from ropeproof.machinery._errors import InputError
from ropeproof.verify.interop.hf._length_check import transformers_length_check
from ropeproof.verify.interop.hf._model_export import export_model
from ropeproof.verify.studies.beyond._checkpoint_solvers import checkpoint_spec


def _export(task: str, arch: str, max_length: int, path: Path):
    spec = checkpoint_spec(task, "best", arch, max_length=max_length)
    model = compile_program(spec.program)
    exported = export_model(model, arch, notes=spec.notes, **spec.export_options())
    exported.save_pretrained(path)
    return spec, model, json.loads((path / "config.json").read_text())


@pytest.mark.parametrize("arch", ["gptj", "llama"])
@pytest.mark.parametrize("task", ["number", "letter"])
def test_best_checkpoints_answer_with_transformers_alone(task: str, arch: str, tmp_path: Path) -> None:
    spec, model, config = _export(task, arch, 64, tmp_path)
    assert config["certified_horizon"] == 64 and config["ropeproof_certificate"]["certificate_complete"]
    if arch == "gptj":
        assert config["n_embd"] == 128 and config["n_positions"] == 64
        assert config["rotary_dim"] == (120 if task == "letter" else 128)
        assert ("ropeproof_notes" in config) == (task == "letter")  # says why rotary_dim < n_embd
    else:
        assert config["hidden_size"] == config["head_dim"] == 128
        rope = config.get("rope_parameters") or config  # transformers 5 nests it; 4.x has rope_theta
        assert rope["rope_theta"] == spec.rope_theta  # 10^4 (number) or the code's 10^k (letter)
    dtypes = ("float32", "float64") if arch == "gptj" else ("float64",)
    rows = transformers_length_check(tmp_path, model, [17, 64], lambda n: 3, dtypes)
    assert len(rows) == 2 * 2 * len(dtypes) and {r["kind"] for r in rows} == {"sampled", "decoy"}
    assert all(r["accuracy"] == 1.0 and r["first_wrong"] is None for r in rows), rows
    with pytest.raises(InputError, match="dtypes"):
        transformers_length_check(tmp_path, model, [17], lambda n: 1, ("bfloat16",))


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["gptj", "llama"])
@pytest.mark.parametrize("task", ["number", "letter"])
def test_default_checkpoints_answer_10k_token_prompts(task: str, arch: str, tmp_path: Path) -> None:
    """The issue's 'done when': ropeproof export-model's default checkpoint (built for 10^4 tokens)
    is certified to 10^4 and answers sampled and decoy prompts of 17, 850 and 10^4 tokens correctly."""
    _spec, model, config = _export(task, arch, 10_000, tmp_path)
    assert config["certified_horizon"] == 10_000  # the width-128 models: certified to at least 10^4
    record = config["ropeproof_certificate"]
    assert record["label"].startswith("certified for the float64 model (exact arithmetic) to 10000 tokens")
    assert record["checkpoint"]["certified"] is False  # the float32 file: sampled below, not proved
    assert record["checkpoint"]["rope_table"]["max_angle_error_rad"] < 1e-3
    counts = {17: 4, 850: 2, 10_000: 1}
    rows = transformers_length_check(tmp_path, model, list(counts), counts.__getitem__)
    assert {(r["dtype"], r["n"]) for r in rows} == {(d, n) for d in ("float32", "float64") for n in counts}
    assert all(r["accuracy"] == 1.0 for r in rows), [r for r in rows if r["accuracy"] < 1]
