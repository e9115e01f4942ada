"""What a training run will cost, estimated on this machine before it starts, and the refusal of a run
that cannot fit (:func:`check_run_budget`, called by :func:`~ropeproof.verify.studies.training._trainer.
train` before it touches the run directory).

- **Memory** (:func:`~ropeproof.machinery._memory_budget.check_allocation`): the run record keeps one loss per
  step, in memory and in ``training.json`` (:data:`RECORD_BYTES_PER_STEP`), and each checkpoint draws its
  validation and scoring prompts at once (:data:`PROMPT_BYTES` each).
- **Time** (:func:`~ropeproof.machinery._time_budget.check_duration`): a probe model of the run's
  configuration, on the run's device, takes :data:`PROBE_STEPS` optimiser steps (the first is not timed)
  and evaluates :data:`PROBE_PROMPTS` validation prompts; the estimate is
  ``steps * (step + batch_size * draw) + evaluations * eval_prompts * (draw + forward)`` with the measured
  step, per-prompt draw and per-prompt forward times (``evaluations``: one per ``checkpoint_every`` steps,
  plus step 0 and the end). The learning-dynamics scores are not included: the estimate is a lower bound.
- **Disk**: every checkpoint holds the weights and AdamW's two moments (``3 * 4`` bytes per parameter),
  against the space free where the run directory will be.

The probe draws from torch's global generator; its state is restored afterwards, so a run (and its
resume) is the same with or without the check.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ropeproof.machinery._errors import OutputError
from ropeproof.machinery._memory_budget import check_allocation, format_bytes
from ropeproof.machinery._time_budget import check_duration, format_duration
from ropeproof.verify.studies.training._config import TrainConfig
from ropeproof.verify.studies.training._data import VALIDATION, TaskEncoder
from ropeproof.verify.studies.training._evaluation import predictions
from ropeproof.verify.studies.training._model import build_model, last_token_logits

RECORD_BYTES_PER_STEP = 256
"""Bytes per step of the run record: a float in a Python list and, while ``training.json`` is written,
``json.dumps``' pieces and text (measured peak about 130 bytes per step), doubled."""
PROMPT_BYTES = 4096
"""Bytes per drawn prompt while it is built (measured peak about 2 KiB: the instance objects and the
token tensors), doubled."""
CHECKPOINT_OVERHEAD = 1 << 20
"""Bytes per checkpoint besides the weights and moments (config, tokenizer, states)."""
PROBE_STEPS = 3
PROBE_PROMPTS = 16


@dataclass(frozen=True)
class Speed:
    """Measured on this machine: seconds per optimiser step (``step_s``, a batch of the configuration's
    size), per drawn prompt (``draw_s``) and per evaluated prompt (``forward_s``); the parameter count."""

    step_s: float
    draw_s: float
    forward_s: float
    parameters: int


@dataclass(frozen=True)
class RunEstimate:
    """A run's estimated cost (module docstring): the steps still to run, the evaluations, seconds,
    peak bytes of memory and bytes of checkpoints."""

    steps: int
    evaluations: int
    seconds: float
    memory_bytes: int
    disk_bytes: int
    speed: Speed


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure_speed(task: str, config: TrainConfig, device: torch.device) -> Speed:
    """Time a probe model of ``config`` on ``device`` (module docstring); torch's generator state is
    restored afterwards."""
    cpu_state = torch.random.get_rng_state()
    cuda_state = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    try:
        encoder = TaskEncoder(task)
        start = time.perf_counter()
        probe = encoder.draw(PROBE_PROMPTS, 0, VALIDATION, 0)
        draw_s = (time.perf_counter() - start) / PROBE_PROMPTS
        model = build_model(config, encoder.vocab_size, 0).to(device)
        model.train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, betas=config.betas)
        reps = -(-config.batch_size // PROBE_PROMPTS)
        ids = probe.input_ids.repeat(reps, 1)[: config.batch_size].to(device)
        answers = probe.answers.repeat(reps)[: config.batch_size].to(device)
        amp = config.mixed_precision and device.type == "cuda"
        times = []
        for _ in range(PROBE_STEPS):
            _sync(device)
            start = time.perf_counter()
            with torch.autocast(device.type, dtype=torch.float16, enabled=amp):
                logits = last_token_logits(model, ids)
            loss = torch.nn.functional.cross_entropy(logits.float(), answers)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            _sync(device)
            times.append(time.perf_counter() - start)
        start = time.perf_counter()
        predictions(model, probe.input_ids)
        _sync(device)
        forward_s = (time.perf_counter() - start) / PROBE_PROMPTS
        parameters = sum(p.numel() for p in model.parameters())
    finally:
        torch.random.set_rng_state(cpu_state)
        if cuda_state is not None:
            torch.cuda.set_rng_state_all(cuda_state)
    return Speed(min(times[1:]), draw_s, forward_s, parameters)


_MEASURED: dict[tuple[Any, ...], Speed] = {}
"""The speeds :func:`process_speed` measured in this process, by :func:`speed_key`."""


def speed_key(task: str, config: TrainConfig, device: torch.device) -> tuple[Any, ...]:
    """What a step's, a draw's and a forward's time depend on: the task, the model's shape and dropout,
    the batch size, mixed precision and the device (not the steps, checkpoints, prompt counts, seed or
    the optimiser's settings)."""
    shape = (config.n_layer, config.n_embd, config.n_inner, config.n_positions, config.activation)
    return (task, *shape, config.dropout, config.batch_size, config.mixed_precision, str(device))


def process_speed(task: str, config: TrainConfig, device: torch.device) -> Speed:
    """:func:`measure_speed`, once per process for each :func:`speed_key` (a second run of the same shape
    in one process, as from a notebook, is estimated with the first's measurement)."""
    key = speed_key(task, config, device)
    if key not in _MEASURED:
        _MEASURED[key] = measure_speed(task, config, device)
    return _MEASURED[key]


def estimate_run(
    task: str, config: TrainConfig, device: torch.device, done_steps: int = 0, speed: Speed | None = None
) -> RunEstimate:
    """The cost of running ``config`` from step ``done_steps`` to its end (module docstring); ``speed``
    defaults to :func:`process_speed`."""
    speed = process_speed(task, config, device) if speed is None else speed
    steps = max(config.steps - done_steps, 0)
    evaluations = steps // config.checkpoint_every + 2
    drawn = steps * config.batch_size
    if config.training_set is not None:
        drawn = min(drawn, config.training_set)
    seconds = (
        steps * speed.step_s
        + drawn * speed.draw_s
        + evaluations * config.eval_prompts * (speed.draw_s + speed.forward_s)
    )
    return RunEstimate(
        steps,
        evaluations,
        seconds,
        memory_bytes=_memory_bytes(config),
        disk_bytes=evaluations * (12 * speed.parameters + CHECKPOINT_OVERHEAD),
        speed=speed,
    )


def _memory_bytes(config: TrainConfig) -> int:
    return (
        config.steps * RECORD_BYTES_PER_STEP + max(config.eval_prompts, config.score_prompts) * PROMPT_BYTES
    )


def _free_bytes(path: Path) -> int | None:
    """Bytes free on the filesystem that holds ``path`` (its nearest existing ancestor), if known."""
    path = Path(path).absolute()
    for place in (path, *path.parents):
        if place.exists():
            try:
                return shutil.disk_usage(place).free
            except OSError:
                return None
    return None


def check_run_budget(
    task: str, config: TrainConfig, device: torch.device, out: str | Path, done_steps: int = 0
) -> RunEstimate:
    """Raise :class:`~ropeproof.machinery._errors.MemoryBudgetError`,
    :class:`~ropeproof.machinery._errors.TimeBudgetError` or :class:`~ropeproof.machinery._errors.OutputError`
    (not enough disk where ``out`` will be) when the run cannot fit this machine (module docstring), each
    naming the option to lower and the limit; else the estimate. The memory is checked before anything
    is measured."""
    check_allocation(
        f"a run of --steps {config.steps} (the record keeps every loss) with --eval-prompts "
        f"{config.eval_prompts} and --score-prompts {config.score_prompts}",
        _memory_bytes(config),
    )
    est = estimate_run(task, config, device, done_steps)
    s = est.speed
    check_duration(
        f"training {est.steps} steps (--steps {config.steps}) with {config.eval_prompts} validation prompts "
        f"(--eval-prompts) at each of {est.evaluations} checkpoints",
        est.seconds,
        how=f"measured here: {format_duration(s.step_s)} per step of {config.batch_size}, "
        f"{format_duration(s.draw_s + s.forward_s)} per validation prompt",
    )
    free = _free_bytes(Path(out))
    if free is not None and est.disk_bytes > free:
        raise OutputError(
            f"--out={out}: {est.evaluations} checkpoints (--steps {config.steps} / --checkpoint-every "
            f"{config.checkpoint_every}) of about {format_bytes(est.disk_bytes / est.evaluations)} each "
            f"need {format_bytes(est.disk_bytes)}, more than the {format_bytes(free)} free there; raise "
            "--checkpoint-every or free space"
        )
    return est
