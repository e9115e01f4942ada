"""The shipped checkpoints (small and paper configurations, every seed): loadable with transformers
alone, small, and reproducible from their seed (the first steps retrained here match the shipped
record)."""

from __future__ import annotations

import json
import math

import pytest
import torch

from ropeproof.verify.measure._tokenizer import prompt_text
from ropeproof.verify.studies.training._config import in_a_configuration
from ropeproof.verify.studies.training._data import VALIDATION, TaskEncoder, task_instances
from ropeproof.verify.studies.training._shipped import (
    FIRST_STEPS,
    SHIPPED_DIR,
    first_steps,
    load_shipped,
    shipped_name,
    shipped_path,
    shipped_seeds,
)
from ropeproof.verify.studies.training._trainer import load_record

transformers = pytest.importorskip("transformers")
TASKS = [t for t in ("number", "letter") if (SHIPPED_DIR / f"{t}-small" / "model.safetensors").is_file()]
RUNS = [(t, c, s) for t in ("number", "letter") for c in ("small", "paper") for s in shipped_seeds(t, c)]
SIZE_LIMIT = {"small": 600_000, "paper": 6_000_000}  # float16 weights: a few hundred KB, about 5 MB


def test_both_configurations_ship_for_both_tasks() -> None:
    for task in ("number", "letter"):
        for config in ("small", "paper"):
            assert 0 in shipped_seeds(task, config), (task, config)
    assert shipped_name("number", "paper", 2) == "number-paper-seed2"


@pytest.mark.parametrize(("task", "config", "seed"), RUNS)
def test_shipped_files_are_small_and_carry_config_and_seed(task: str, config: str, seed: int) -> None:
    path = shipped_path(task, config, seed)
    assert (path / "model.safetensors").stat().st_size < SIZE_LIMIT[config]
    shipped = load_shipped(task, config=config, seed=seed)
    rec = shipped.record
    assert rec.task == task and rec.config.name == config and rec.seed == seed
    assert len(rec.losses) == rec.config.steps and rec.best_step is not None
    assert shipped.model.config.n_layer == rec.config.n_layer
    assert next(shipped.model.parameters()).dtype == torch.float32
    # every checkpoint carries the counts and intervals that decisions under uncertainty need
    assert all("counts" in e and "S_pos_ci" in e["dynamics"] for e in rec.evaluations)


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


FOLLOWING_A = [
    s
    for s in shipped_seeds("number", "paper")
    if in_a_configuration(load_record(shipped_path("number", "paper", s)).config)
]
"""The paper seeds trained in [A]'s configuration (a fixed training set, exact GELU): retrained too."""


def _retraining_cases() -> list:
    """Seed 0 of each task and configuration, and the first paper seed in [A]'s configuration: the
    default suite retrains the small seeds and one task's paper seed in [A]'s configuration, the ``e2e``
    pass (which CI runs) the other paper runs, the slowest of the suite's retrainings."""
    cases = [(t, c, 0) for t in TASKS for c in ("small", "paper")]
    cases += [(t, "paper", s) for t in TASKS for s in FOLLOWING_A[:1]]
    first_a = [c for c in cases if c[1] == "paper" and c[2] in FOLLOWING_A][-1:]
    return [pytest.param(*c, marks=() if c[1] == "small" or c in first_a else pytest.mark.e2e) for c in cases]


def assert_first_steps_agree(got: dict, want: dict) -> None:
    """Two first-steps records (:func:`first_steps`) of one run agree: the same steps, every loss and
    parameter norm within 1e-5 relative. float32 training on another CPU may sum in another order (BLAS
    kernels): each loss and norm then moves by a few ulps per operation; 5 Adam steps at lr <= 5e-5
    (warm-up) keep the drift far below 1e-5 relative. On the machine that wrote the record the run is
    bit-for-bit identical (the weights' ``sha256`` too)."""
    assert got["steps"] == want["steps"]
    for a, b in zip(got["losses"], want["losses"], strict=True):
        assert math.isclose(a, b, rel_tol=1e-5)
    assert got["param_norms"].keys() == want["param_norms"].keys()
    for name, norm in want["param_norms"].items():
        assert math.isclose(got["param_norms"][name], norm, rel_tol=1e-5, abs_tol=1e-9), name


@pytest.mark.parametrize(("task", "config", "seed"), _retraining_cases())
def test_retraining_the_first_steps_matches_the_shipped_record(task: str, config: str, seed: int) -> None:
    shipped = load_shipped(task, config=config, seed=seed)
    rec, want = shipped.record, shipped.first_steps
    assert want["steps"] == FIRST_STEPS and want["losses"] == rec.losses[:FIRST_STEPS]
    got = first_steps(task, rec.config, rec.seed)
    assert_first_steps_agree(got, want)
    if got["sha256"] != want["sha256"]:
        pytest.xfail("weights agree to 1e-5 but not bit for bit (another CPU's float32 kernels)")


def test_validation_prompts_are_not_training_prompts() -> None:
    enc = TaskEncoder("number")
    val = enc.draw(64, 0, VALIDATION, 0).input_ids
    train = torch.cat([enc.draw(64, 0, 0, k).input_ids for k in range(20)])
    shared = {tuple(r) for r in val.tolist()} & {tuple(r) for r in train.tolist()}
    assert not shared


def test_packaging_a_run_is_all_or_nothing(tmp_path, monkeypatch) -> None:
    """write_shipped stages the checkpoint beside ``dest``: an interruption while writing leaves the
    previous package untouched and no partial directory behind; a finished packaging loads."""
    import ropeproof.verify.studies.training._shipped as shipped_module

    source = shipped_path("number", "small", 0)  # a shipped package is itself a finished run
    dest = tmp_path / "number-small"
    dest.mkdir()
    (dest / "previous").write_text("kept")

    def interrupted(model, tokenizer, path):
        (path / "config.json").write_text("{}")
        raise KeyboardInterrupt

    monkeypatch.setattr(shipped_module, "save_quietly", interrupted)
    with pytest.raises(KeyboardInterrupt):
        shipped_module.write_shipped(source, dest)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["number-small"]
    assert [p.name for p in dest.iterdir()] == ["previous"]

    monkeypatch.undo()
    shipped_module.write_shipped(source, dest)
    assert not (dest / "previous").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["number-small"]
    assert (dest / "training.json").read_bytes() == (source / "training.json").read_bytes()
    # packaging recomputes the first steps (the record a retraining is compared with): byte for byte the
    # shipped ones where the weights come out bit for bit (the machine that wrote them), else within
    # float32's ulps (another CPU's kernels)
    got, want = (json.loads((d / "first_steps.json").read_text()) for d in (dest, source))
    assert_first_steps_agree(got, want)
    if got["sha256"] == want["sha256"]:
        assert (dest / "first_steps.json").read_bytes() == (source / "first_steps.json").read_bytes()
    packaged = transformers.GPTJForCausalLM.from_pretrained(dest)
    original = load_shipped("number", config="small").model
    for (name, a), (_, b) in zip(packaged.state_dict().items(), original.state_dict().items(), strict=True):
        assert torch.equal(a.float(), b.float()), name


def test_a_package_ships_the_final_step_where_it_is_not_the_best(tmp_path) -> None:
    """A run whose best checkpoint is not its last ships the last step's weights in ``final/`` too."""
    from ropeproof.verify.studies.training._config import SMALL
    from ropeproof.verify.studies.training._shipped import FINAL, write_shipped
    from ropeproof.verify.studies.training._trainer import checkpoint_dir, train

    tiny = SMALL.with_overrides(steps=4, checkpoint_every=2, eval_prompts=8, score_prompts=0)
    record = train("number", tiny, tmp_path / "run", progress=False)
    if record.best_step == tiny.steps:
        pytest.skip("the last step was the best here; nothing else to ship")
    dest = write_shipped(tmp_path / "run", tmp_path / "pkg")
    final = transformers.GPTJForCausalLM.from_pretrained(dest / FINAL)
    last = transformers.GPTJForCausalLM.from_pretrained(checkpoint_dir(tmp_path / "run", tiny.steps))
    for (name, a), (_, b) in zip(final.state_dict().items(), last.state_dict().items(), strict=True):
        assert torch.equal(a, b.half().float()), name  # float16 as shipped
    best = transformers.GPTJForCausalLM.from_pretrained(dest)
    assert any(not torch.equal(a, b) for a, b in zip(best.parameters(), final.parameters(), strict=True))


def test_loading_a_step_and_a_table_long_enough_for_the_length_study() -> None:
    from ropeproof.machinery._errors import InputError
    from ropeproof.verify.studies.training._shipped import MIN_POSITIONS

    shipped = load_shipped("number", config="small")
    assert shipped.model.config.n_positions >= MIN_POSITIONS
    tables = [b for name, b in shipped.model.named_buffers() if name.endswith("embed_positions")]
    assert tables and all(t.shape[0] >= MIN_POSITIONS for t in tables)
    final = load_shipped("number", config="small", step="final")  # no final/ shipped: the best weights
    assert all(
        torch.equal(a, b) for a, b in zip(final.model.parameters(), shipped.model.parameters(), strict=True)
    )
    with pytest.raises(InputError, match="step='last'"):
        load_shipped("number", config="small", step="last")
