"""The training loop: [A]'s set-up (``docs/theory.md`` section 6) on HF ``GPTJForCausalLM``.

Step ``k`` (``k = 1 .. steps``) takes training batch ``k - 1`` (a fresh balanced batch, or the next
batch of a fixed training set shuffled each epoch:
:class:`~ropeproof.verify.studies.training._data.TrainingBatches`),
computes the cross-entropy of the **last token's** logits against the answer (the only loss),
back-propagates, and takes one AdamW step; the learning rate follows the linear schedule (warm-up from
0 to ``lr`` over ``warmup_steps``, then linear decay to 0 at ``steps``; ``transformers``'
``get_linear_schedule_with_warmup``). Dropout draws from torch's global generator, seeded with the run
seed before the first step.

At step 0 (the initialised model), every ``checkpoint_every`` steps and at the end, the run writes
``checkpoints/step-NNNNNN/`` (the model by ``save_pretrained``, the word-level tokenizer, and
``training_state.pt`` with the optimiser, scheduler and random-generator states) and appends the
step's evaluation to ``training.json`` (accuracy per hop on the validation prompts and, when
``with_dynamics``, the learning-dynamics record of :mod:`ropeproof.verify.studies.training._dynamics`). At the
end the checkpoint with the best validation accuracy (earliest on ties; [A] keeps the best checkpoint)
is copied to the run directory itself, so
``from_pretrained(out)`` loads it.

Resume: :func:`train` with ``resume=True`` on a directory holding a run of the same task, config and
seed continues from its latest checkpoint; because data depend only on (seed, step) and every state is
restored, the result equals an uninterrupted run bit for bit on the same machine and thread count.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from ropeproof.constructions._paper import check_task
from ropeproof.machinery._atomic_output import (
    atomic_directory,
    atomic_path,
    check_output_target,
    staged_directory,
    write_text_atomic,
)
from ropeproof.machinery._errors import InputError, OutputError
from ropeproof.machinery._input_files import read_json
from ropeproof.machinery._size_limits import limit
from ropeproof.machinery._validate import integer
from ropeproof.verify.interop.hf._library import quiet_progress, require_transformers
from ropeproof.verify.kernel._devices import resolve_device
from ropeproof.verify.measure._tokenizer import task_tokenizer
from ropeproof.verify.studies.training._config import MAX_SEED, TrainConfig
from ropeproof.verify.studies.training._data import SCORING, VALIDATION, TaskEncoder, TrainingBatches
from ropeproof.verify.studies.training._evaluation import counts_per_hop
from ropeproof.verify.studies.training._model import build_model, last_token_logits
from ropeproof.verify.studies.training._run_budget import check_run_budget

RECORD_FILE = "training.json"
"""The run record: task, config, seed, per-step losses and per-checkpoint evaluations."""
RECORD_LIMIT = limit("JSON file bytes")
"""The most bytes read from a training record."""
STATE_FILE = "training_state.pt"
CHECKPOINTS = "checkpoints"
RECORD_FORMAT, RECORD_VERSION = "ropeproof-training", 1


@dataclass
class TrainingRecord:
    """What a run measured. ``losses[k-1]``: the training loss of step ``k``; ``evaluations``: one dict
    per checkpoint (``step``, ``accuracy`` per hop as ``{"0": all, "1": .., "4": ..}``, and
    ``dynamics`` when recorded)."""

    task: str
    config: TrainConfig
    seed: int
    losses: list[float] = field(default_factory=list)
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    best_step: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "task": self.task,
            "config": self.config.to_json(),
            "seed": self.seed,
            "losses": self.losses,
            "evaluations": self.evaluations,
            "best_step": self.best_step,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrainingRecord:
        if data.get("format") != RECORD_FORMAT or data.get("version") != RECORD_VERSION:
            raise InputError(f"not a {RECORD_FORMAT} v{RECORD_VERSION} record")
        return cls(
            data["task"],
            TrainConfig.from_json(data["config"]),
            int(data["seed"]),
            [float(x) for x in data["losses"]],
            list(data["evaluations"]),
            data.get("best_step"),
        )

    def save(self, path: Path) -> None:
        """Write the record to ``path`` atomically (a crash leaves the previous record)."""
        write_text_atomic(path, json.dumps(self.to_json(), indent=1))


def load_record(path: str | Path) -> TrainingRecord:
    """The :class:`TrainingRecord` in run directory (or record file) ``path``."""
    path = Path(path)
    file = path / RECORD_FILE if path.is_dir() else path
    if not file.exists():
        raise InputError(f"{file} does not exist; it is written by ropeproof train")
    data = read_json(file, "the training record", limit=RECORD_LIMIT)  # truncated: one line, not a crash
    try:
        return TrainingRecord.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(
            f"the training record {file} is not a complete record ({type(exc).__name__}: {exc}); was it "
            "truncated or edited?"
        ) from None


def checkpoint_dir(out: Path, step: int) -> Path:
    return out / CHECKPOINTS / f"step-{step:06d}"


def _rng_state() -> dict[str, Any]:
    state: dict[str, Any] = {"cpu": torch.random.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict[str, Any]) -> None:
    torch.random.set_rng_state(state["cpu"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


@dataclass
class Run:
    """A training run in progress (model, optimiser, schedule, encoder, record)."""

    model: Any
    optimizer: torch.optim.Optimizer
    scheduler: Any
    scaler: Any
    encoder: TaskEncoder
    tokenizer: Any
    record: TrainingRecord
    device: torch.device
    batches: TrainingBatches
    step: int = 0


def new_run(task: str, config: TrainConfig, seed: int, device: torch.device) -> Run:
    """A fresh run: the model initialised from ``seed``, AdamW (weight decay on matrices only), the
    linear schedule, loss scaling (CUDA mixed precision only), and torch's generator reseeded."""
    tf = require_transformers()
    encoder = TaskEncoder(task)
    model = build_model(config, encoder.vocab_size, seed).to(device)
    model.train()
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=config.lr,
        betas=config.betas,
    )
    scheduler = tf.get_linear_schedule_with_warmup(optimizer, config.warmup_steps, config.steps)
    amp = config.mixed_precision and device.type == "cuda"
    scaler = torch.amp.GradScaler("cuda", enabled=amp)
    torch.manual_seed(seed)  # dropout's generator; HF's initialisation above drew from it too
    return Run(
        model,
        optimizer,
        scheduler,
        scaler,
        encoder,
        task_tokenizer(task),
        TrainingRecord(task, config, seed),
        device,
        TrainingBatches(encoder, config.batch_size, seed, config.training_set),
    )


def _save_checkpoint(run: Run, out: Path) -> Path:
    path = checkpoint_dir(out, run.step)
    with staged_directory(path) as tmp:
        save_quietly(run.model, run.tokenizer, tmp)
        torch.save(
            {
                "step": run.step,
                "optimizer": run.optimizer.state_dict(),
                "scheduler": run.scheduler.state_dict(),
                "scaler": run.scaler.state_dict(),
                "rng": _rng_state(),
            },
            tmp / STATE_FILE,
        )
    return path


def save_quietly(model: Any, tokenizer: Any, path: Path) -> None:
    """``save_pretrained`` of model and tokenizer without transformers' own progress bars."""
    with quiet_progress():
        model.save_pretrained(path)
        tokenizer.save_pretrained(path)


def _latest_checkpoint(out: Path) -> Path | None:
    # staging and set-aside directories are hidden (``.step-N.partial-*``, ``.step-N.old-*``); the
    # ``.partial`` suffix is what older versions staged under
    found = sorted(p for p in (out / CHECKPOINTS).glob("step-*") if not p.name.endswith(".partial"))
    return found[-1] if found else None


def _resume_run(out: Path, task: str, config: TrainConfig, seed: int, device: torch.device) -> Run:
    record = load_record(out)
    if (record.task, record.config, record.seed) != (task, config, seed):
        raise OutputError(
            f"--out={out} holds a run of task={record.task!r}, config={record.config.name!r} "
            f"(steps={record.config.steps}), seed={record.seed}; resume needs the same task, config, "
            "steps and seed"
        )
    run = new_run(task, config, seed, device)
    latest = _latest_checkpoint(out)
    if latest is None:
        return run
    tf = require_transformers()
    with quiet_progress():
        loaded = tf.GPTJForCausalLM.from_pretrained(latest, attn_implementation="eager")
    run.model.load_state_dict(loaded.state_dict())
    state = torch.load(latest / STATE_FILE, weights_only=False, map_location=device)
    run.optimizer.load_state_dict(state["optimizer"])
    run.scheduler.load_state_dict(state["scheduler"])
    run.scaler.load_state_dict(state["scaler"])
    _set_rng_state(state["rng"])
    run.step = int(state["step"])
    record.losses = record.losses[: run.step]
    record.evaluations = [e for e in record.evaluations if e["step"] <= run.step]
    run.record = record
    return run


def train_step(run: Run) -> float:
    """One optimiser step on training batch ``run.step`` (last-token cross-entropy); the loss."""
    batch = run.batches.batch(run.step)
    ids, answers = batch.input_ids.to(run.device), batch.answers.to(run.device)
    amp = run.scaler.is_enabled()
    with torch.autocast(run.device.type, dtype=torch.float16, enabled=amp):
        logits = last_token_logits(run.model, ids)
    loss = torch.nn.functional.cross_entropy(logits.float(), answers)
    run.optimizer.zero_grad(set_to_none=True)
    run.scaler.scale(loss).backward()
    run.scaler.step(run.optimizer)
    run.scaler.update()
    run.scheduler.step()
    run.step += 1
    return float(loss.detach())


def evaluate_checkpoint(
    model: Any, encoder: TaskEncoder, config: TrainConfig, seed: int, step: int, with_dynamics: bool
) -> dict[str, Any]:
    """One checkpoint's record entry: ``step``; ``accuracy`` per hop (key ``"0"``: all) and ``counts``
    per hop (``[correct, instances]``, for intervals) on the run's validation prompts; with
    ``with_dynamics``, the learning-dynamics record
    (:func:`~ropeproof.verify.studies.training._dynamics.layer_dynamics`) on its scoring prompts."""
    val = encoder.draw(config.eval_prompts, seed, VALIDATION, 0)
    counts = counts_per_hop(model, val)
    entry: dict[str, Any] = {
        "step": step,
        "accuracy": {str(h): k / n for h, (k, n) in counts.items()},
        "counts": {str(h): [k, n] for h, (k, n) in counts.items()},
    }
    if with_dynamics and config.score_prompts > 0:
        from ropeproof.verify.studies.training._dynamics import layer_dynamics

        prompts = encoder.draw(config.score_prompts, seed, SCORING, 0)
        entry["dynamics"] = layer_dynamics(model, prompts.input_ids)
    return entry


def _evaluate(run: Run, with_dynamics: bool) -> dict[str, Any]:
    return evaluate_checkpoint(
        run.model, run.encoder, run.record.config, run.record.seed, run.step, with_dynamics
    )


def _finish(run: Run, out: Path) -> None:
    evals = run.record.evaluations
    best = max(evals, key=lambda e: (e["accuracy"]["0"], -e["step"]))
    run.record.best_step = int(best["step"])
    src = checkpoint_dir(out, run.record.best_step)
    for f in src.iterdir():
        if f.is_file() and f.name != STATE_FILE:
            with atomic_path(out / f.name, option="--out") as tmp:  # a crash leaves the previous file
                shutil.copy2(f, tmp)


def train(
    task: str,
    config: TrainConfig,
    out: str | Path,
    *,
    seed: int = 0,
    device: Any = "auto",
    resume: bool = False,
    force: bool = False,
    progress: bool = True,
    with_dynamics: bool = True,
    stop_after: int | None = None,
    check_budget: bool = True,
) -> TrainingRecord:
    """Train ``task`` (``number`` or ``letter``) with ``config`` into run directory ``out`` (module
    docstring) and return the record. ``resume``: continue the run in ``out``; otherwise ``out`` must
    be absent or empty, or, with ``force``, a directory whose old contents are replaced as a whole once
    the new run's step-0 checkpoint and record are in place (the one swap protocol of
    :mod:`ropeproof.machinery._atomic_output`: the old run is deleted only then, never before). Every input
    is validated, and the run's time, memory and disk estimated against this machine
    (:func:`~ropeproof.verify.studies.training._run_budget.check_run_budget`, skipped with
    ``check_budget=False``), before ``out`` is touched. ``stop_after``: stop after that step as an
    interruption would (the last checkpoint is what a resume continues from). ``with_dynamics``: record
    the per-layer scores and entropies at each checkpoint."""
    check_task(task)
    seed = integer(seed, "seed", low=0, high=MAX_SEED, note="torch.manual_seed's range")
    if not isinstance(config, TrainConfig):
        raise InputError(f"config must be a TrainConfig, got {type(config).__name__}")
    if stop_after is not None:
        stop_after = integer(stop_after, "stop_after", low=0)
    out = Path(out)
    dev = resolve_device(device)
    if resume:
        if not (out / RECORD_FILE).is_file():
            raise OutputError(f"--out={out} holds no {RECORD_FILE}; nothing to resume (drop --resume)")
        run = _resume_run(out, task, config, seed, dev)  # writes nothing
        if check_budget:
            check_run_budget(task, config, dev, out, done_steps=run.step)
    else:
        check_output_target(out, force)
        if check_budget:
            check_run_budget(task, config, dev, out)
        with atomic_directory(out, force) as staging:  # the old run, if any, goes only once this is in
            run = new_run(task, config, seed, dev)
            run.record.evaluations.append(_evaluate(run, with_dynamics))  # step 0: the initialised model
            _save_checkpoint(run, staging)
            run.record.save(staging / RECORD_FILE)
    last = config.steps if stop_after is None else min(config.steps, stop_after)
    bar = tqdm(total=config.steps, initial=run.step, disable=not progress, desc=f"train {task}", unit="step")
    try:
        while run.step < last:
            loss = train_step(run)
            if not math.isfinite(loss):
                raise InputError(f"the loss became {loss} at step {run.step}; lower the learning rate")
            run.record.losses.append(loss)
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.3f}")
            if run.step % config.checkpoint_every == 0 or run.step == config.steps:
                run.record.evaluations.append(_evaluate(run, with_dynamics))
                _save_checkpoint(run, out)
                run.record.save(out / RECORD_FILE)
    finally:
        bar.close()
    if run.step == config.steps:
        _finish(run, out)
        run.record.save(out / RECORD_FILE)
    return run.record
