"""A training run's cost is estimated before it starts: memory, time from a measured step, disk."""

from __future__ import annotations

import dataclasses
import json
import tracemalloc
from pathlib import Path

import pytest
import torch

from ropeproof.machinery._errors import MemoryBudgetError, OutputError, TimeBudgetError
from ropeproof.machinery._memory_budget import ENV_VAR as MEMORY_ENV
from ropeproof.machinery._time_budget import ENV_VAR as TIME_ENV
from ropeproof.verify.studies.training import _run_budget as run_budget
from ropeproof.verify.studies.training._config import SMALL
from ropeproof.verify.studies.training._data import VALIDATION, TaskEncoder
from ropeproof.verify.studies.training._model import build_model
from ropeproof.verify.studies.training._run_budget import (
    PROMPT_BYTES,
    RECORD_BYTES_PER_STEP,
    Speed,
    check_run_budget,
    estimate_run,
    measure_speed,
)

pytest.importorskip("transformers")

TINY = SMALL.with_overrides(steps=6, checkpoint_every=3, eval_prompts=8, score_prompts=0)
CPU = torch.device("cpu")


def test_the_record_costs_at_most_its_bytes_per_step() -> None:
    steps = 20_000
    tracemalloc.start()
    losses = [float(i) / 7.0 + 1e-3 for i in range(steps)]  # full-precision floats, as a run's losses
    text = json.dumps({"losses": losses}, indent=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(text) > 20 * steps  # the file holds a line per loss
    assert peak <= steps * RECORD_BYTES_PER_STEP


@pytest.mark.parametrize("task", ["number", "letter"])
def test_drawn_prompts_cost_at_most_their_bytes(task: str) -> None:
    n = 2000
    encoder = TaskEncoder(task)
    tracemalloc.start()
    batch = encoder.draw(n, 0, VALIDATION, 0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    tensors = sum(t.numel() * t.element_size() for t in (batch.input_ids, batch.answers, batch.hops))
    assert peak + tensors <= n * PROMPT_BYTES  # torch's buffers are not traced: added


def test_the_probe_leaves_torch_generator_alone() -> None:
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    speed = measure_speed("number", TINY, CPU)
    assert torch.equal(torch.rand(3), expected)
    assert speed.step_s > 0 and speed.draw_s > 0 and speed.forward_s > 0
    model = build_model(TINY, TaskEncoder("number").vocab_size, 0)
    assert speed.parameters == sum(p.numel() for p in model.parameters())


def test_a_process_measures_each_shape_once(monkeypatch: pytest.MonkeyPatch) -> None:
    measured: list[tuple[str, int]] = []

    def measure(task: str, config, device) -> Speed:
        measured.append((task, config.batch_size))
        return Speed(step_s=0.5, draw_s=0.01, forward_s=0.02, parameters=1000)

    monkeypatch.setattr(run_budget, "_MEASURED", {})
    monkeypatch.setattr(run_budget, "measure_speed", measure)
    for config in (SMALL, SMALL.with_overrides(steps=7, checkpoint_every=7, eval_prompts=5)):
        estimate_run("number", config, CPU)
    assert measured == [("number", SMALL.batch_size)]  # steps, checkpoints, prompts: not the speed
    estimate_run("number", dataclasses.replace(SMALL, batch_size=8), CPU)
    estimate_run("letter", SMALL, CPU)
    assert measured[1:] == [("number", 8), ("letter", SMALL.batch_size)]


def test_the_estimate_adds_up() -> None:
    speed = Speed(step_s=0.5, draw_s=0.01, forward_s=0.02, parameters=1000)
    config = SMALL.with_overrides(steps=100, checkpoint_every=10, eval_prompts=50)
    est = estimate_run("number", config, CPU, speed=speed)
    assert est.evaluations == 12  # steps 0, 10, .., 100 and the end's
    assert est.seconds == pytest.approx(100 * 0.5 + 100 * 64 * 0.01 + 12 * 50 * 0.03)
    assert est.disk_bytes == 12 * (12 * 1000 + run_budget.CHECKPOINT_OVERHEAD)
    resumed = estimate_run("number", config, CPU, done_steps=60, speed=speed)
    assert resumed.steps == 40 and resumed.evaluations == 6


def test_runs_that_cannot_fit_are_refused_with_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    monkeypatch.delenv(TIME_ENV, raising=False)
    with pytest.raises(MemoryBudgetError, match=r"--steps 1000000000000 .* more than the memory limit of"):
        check_run_budget("number", SMALL.with_overrides(steps=10**12), CPU, tmp_path)
    with pytest.raises(MemoryBudgetError, match=r"--eval-prompts 100000000 .* memory limit"):
        check_run_budget("number", SMALL.with_overrides(eval_prompts=10**8), CPU, tmp_path)
    fast = Speed(step_s=1e-3, draw_s=1e-5, forward_s=1e-5, parameters=1000)
    monkeypatch.setattr(run_budget, "process_speed", lambda *a: fast)
    monkeypatch.setenv(MEMORY_ENV, "100TiB")
    slow = r"--steps 10000000000\).* about 190 days .*time limit of 30 days"
    with pytest.raises(TimeBudgetError, match=slow):
        check_run_budget("number", SMALL.with_overrides(steps=10**10, checkpoint_every=10**9), CPU, tmp_path)
    monkeypatch.setenv(TIME_ENV, "1s")
    with pytest.raises(TimeBudgetError, match=r"measured here: 0.001 s per step of 64.*time limit of 1 s"):
        check_run_budget("number", TINY.with_overrides(steps=2000), CPU, tmp_path)
    monkeypatch.delenv(TIME_ENV)
    monkeypatch.setattr(run_budget, "_free_bytes", lambda path: 10**6)
    with pytest.raises(OutputError, match=r"checkpoints .* more than the 977 KiB free there"):
        check_run_budget("number", TINY, CPU, tmp_path / "run")
    monkeypatch.setattr(run_budget, "_free_bytes", lambda path: None)
    assert check_run_budget("number", TINY, CPU, tmp_path / "run").steps == TINY.steps
