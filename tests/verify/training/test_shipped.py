"""The shipped small checkpoints: loadable with transformers alone, small, and reproducible from their
seed (the first steps retrained here match the shipped record)."""

from __future__ import annotations

import math

import pytest
import torch

from ropeproof.verify.tokenizer import prompt_text
from ropeproof.verify.training.data import VALIDATION, TaskEncoder, task_instances
from ropeproof.verify.training.shipped import (
    FIRST_STEPS,
    SHIPPED_DIR,
    first_steps,
    load_shipped,
    shipped_path,
)

transformers = pytest.importorskip("transformers")
TASKS = [t for t in ("number", "letter") if (SHIPPED_DIR / f"{t}-small" / "model.safetensors").is_file()]


def test_the_number_checkpoint_ships() -> None:
    assert "number" in TASKS


@pytest.mark.parametrize("task", TASKS)
def test_shipped_files_are_small_and_carry_config_and_seed(task: str) -> None:
    path = shipped_path(task)
    assert (path / "model.safetensors").stat().st_size < 600_000  # float16, a few hundred KB
    shipped = load_shipped(task)
    rec = shipped.record
    assert rec.task == task and rec.config.name == "small" and rec.seed == 0
    assert len(rec.losses) == rec.config.steps and rec.best_step is not None
    assert shipped.model.config.n_layer == rec.config.n_layer
    assert next(shipped.model.parameters()).dtype == torch.float32


@pytest.mark.parametrize("task", TASKS)
def test_plain_from_pretrained_answers_through_the_tokenizer(task: str) -> None:
    path = shipped_path(task)
    tok = transformers.AutoTokenizer.from_pretrained(path)
    lm = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    insts = task_instances(task, 32, seed=123)
    enc = tok([prompt_text(i.tokens) for i in insts], return_tensors="pt")
    with torch.no_grad():
        words = tok.convert_ids_to_tokens(lm(**enc).logits[:, -1].argmax(-1).tolist())
    right = sum(w == i.answer.lower() for w, i in zip(words, insts, strict=True))
    # the shipped runs reach >= 0.95 per hop on 400 held-out prompts (claim training.small-accuracy);
    # 32 fresh prompts with at most 3 wrong is a loose check that the weights are the trained ones
    assert right >= 29


@pytest.mark.parametrize("task", TASKS)
def test_retraining_the_first_steps_matches_the_shipped_record(task: str) -> None:
    shipped = load_shipped(task)
    rec, want = shipped.record, shipped.first_steps
    assert want["steps"] == FIRST_STEPS and want["losses"] == rec.losses[:FIRST_STEPS]
    got = first_steps(task, rec.config, rec.seed)
    # float32 training on another CPU may sum in another order (BLAS kernels): each loss and norm then
    # moves by a few ulps per operation; 5 Adam steps at lr <= 5e-5 (warm-up) keep the drift far below
    # 1e-5 relative. On the machine that wrote the record the run is bit-for-bit identical.
    for a, b in zip(got["losses"], want["losses"], strict=True):
        assert math.isclose(a, b, rel_tol=1e-5)
    assert got["param_norms"].keys() == want["param_norms"].keys()
    for name, norm in want["param_norms"].items():
        assert math.isclose(got["param_norms"][name], norm, rel_tol=1e-5, abs_tol=1e-9), name
    if got["sha256"] != want["sha256"]:
        pytest.xfail("weights agree to 1e-5 but not bit for bit (another CPU's float32 kernels)")


def test_validation_prompts_are_not_training_prompts() -> None:
    enc = TaskEncoder("number")
    val = enc.draw(64, 0, VALIDATION, 0).input_ids
    train = torch.cat([enc.draw(64, 0, 0, k).input_ids for k in range(20)])
    shared = {tuple(r) for r in val.tolist()} & {tuple(r) for r in train.tolist()}
    assert not shared
