"""The trained checkpoints that ship with the package, so claims about trained models run without
training: ``shipped/<task>-<config>/`` (seed 0) and ``shipped/<task>-<config>-seed<k>/``
(:func:`shipped_name`), for the ``small`` and ``paper`` configurations.

Each directory holds the best checkpoint of ``ropeproof train TASK --config CONFIG --seed K`` with its
weights rounded to float16 (``model.safetensors``: about 440 KB for ``small``, 5 MB for ``paper``;
:func:`load_shipped` loads them as float32), ``config.json``, the word-level tokenizer, the run record
``training.json`` (config, seed, every step's loss, every checkpoint's accuracy and counts per hop and
learning dynamics with intervals, measured on the float32 weights during training or by
:func:`~ropeproof.verify.studies.training._rescore.rescore_run`) and ``first_steps.json``: the losses of the
first :data:`FIRST_STEPS` steps and the parameters' norms after them, which a test recomputes from the
seed (:func:`first_steps`). Where the run's best checkpoint is not its last, ``final/`` holds the last
step's weights and config too (:data:`FINAL`), so whether the choice of checkpoint drives a verdict can be
tested (``load_shipped(..., step="final")``).

GPT-J's sin/cos table is a buffer, not a weight (RoPE learns no positions), sized by the config's
``n_positions``; :func:`load_shipped` rebuilds it with at least :data:`MIN_POSITIONS` rows so the length
study runs a model trained with [A]'s 128 positions on [A]'s 850-token inputs and past 1,000. Rows
``0 .. n_positions - 1`` are the same either way, so the model computes the same on inputs it was
trained for.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ropeproof.constructions._paper import check_task
from ropeproof.machinery._atomic_output import atomic_directory
from ropeproof.machinery._errors import InputError
from ropeproof.verify.interop.hf._library import quiet_progress, require_transformers
from ropeproof.verify.kernel._threads import thread_policy
from ropeproof.verify.studies.training._config import TrainConfig
from ropeproof.verify.studies.training._trainer import (
    RECORD_FILE,
    TrainingRecord,
    checkpoint_dir,
    load_record,
    new_run,
    save_quietly,
    train_step,
)

SHIPPED_DIR = Path(__file__).resolve().parent / "shipped"
FIRST_STEPS_FILE = "first_steps.json"
FINAL = "final"
"""The subdirectory of a shipped run holding its last step's weights, where that is not the best step."""
MIN_POSITIONS = 2048
"""The fewest rows of GPT-J's sin/cos table a loaded shipped model gets (module docstring)."""
STEPS = ("best", "final")
FIRST_STEPS = 5
"""Steps the reproducibility record covers (a few seconds to recompute on a CPU)."""


def first_steps(task: str, config: TrainConfig, seed: int, steps: int = FIRST_STEPS) -> dict[str, Any]:
    """Train ``steps`` steps in memory on the CPU (the run's seed, data and schedule) and return
    ``{"losses": [...], "param_norms": {name: ||p||_2 in float64}, "sha256": hash of the float32
    weights in state-dict order}``, on one torch thread (as training runs), so that the digest does not
    depend on the caller's thread count."""
    with thread_policy(1):
        run = new_run(check_task(task), config, seed, torch.device("cpu"))
        losses = [train_step(run) for _ in range(steps)]
    state = run.model.state_dict()
    digest = hashlib.sha256()
    norms = {}
    for name, p in state.items():
        digest.update(p.detach().float().contiguous().numpy().tobytes())
        norms[name] = float(p.detach().double().norm())
    return {"steps": steps, "losses": losses, "param_norms": norms, "sha256": digest.hexdigest()}


def shipped_name(task: str, config: str = "small", seed: int = 0) -> str:
    """The directory name of a shipped run: ``TASK-CONFIG`` for seed 0, ``TASK-CONFIG-seedK`` else."""
    return f"{check_task(task)}-{config}" + (f"-seed{seed}" if seed else "")


def shipped_path(task: str, config: str = "small", seed: int = 0) -> Path:
    """The shipped checkpoint of ``task`` trained with ``config`` and ``seed`` (default: small, seed 0)."""
    path = SHIPPED_DIR / shipped_name(task, config, seed)
    if not (path / "model.safetensors").is_file():
        raise InputError(f"no shipped checkpoint for task={task!r}, config={config!r}, seed={seed} at {path}")
    return path


def shipped_seeds(task: str, config: str) -> list[int]:
    """The seeds of the shipped runs of ``task`` with ``config``, in order (empty when none ships)."""
    seeds = []
    for path in SHIPPED_DIR.glob(f"{check_task(task)}-{config}*"):
        rest = path.name.removeprefix(f"{task}-{config}")
        if (path / "model.safetensors").is_file() and (
            rest == "" or (rest.startswith("-seed") and rest[5:].isdigit())
        ):
            seeds.append(int(rest[5:]) if rest else 0)
    return sorted(seeds)


@dataclass
class ShippedModel:
    """A shipped checkpoint: the float32 model (eval mode, eager attention), its tokenizer, the run
    record and the first-steps record."""

    task: str
    path: Path
    model: Any
    tokenizer: Any
    record: TrainingRecord
    first_steps: dict[str, Any]


def load_shipped(
    task: str, device: Any = "cpu", config: str = "small", seed: int = 0, step: str = "best"
) -> ShippedModel:
    """Load the shipped checkpoint of ``task`` (default: small, seed 0; module docstring): its best step,
    or with ``step="final"`` its last (the same weights where the best step is the last). The sin/cos
    table has ``max(n_positions, MIN_POSITIONS)`` rows."""
    tf = require_transformers()
    if step not in STEPS:
        raise InputError(f"step={step!r} is unknown; accepted: {list(STEPS)}")
    path = shipped_path(task, config, seed)
    weights = path / FINAL if step == "final" and (path / FINAL).is_dir() else path
    positions = max(int(json.loads((weights / "config.json").read_text())["n_positions"]), MIN_POSITIONS)
    with quiet_progress():
        model = tf.GPTJForCausalLM.from_pretrained(
            weights, dtype=torch.float32, attn_implementation="eager", n_positions=positions
        )
    model = model.to(device).eval()
    tok = tf.AutoTokenizer.from_pretrained(path)
    first = json.loads((path / FIRST_STEPS_FILE).read_text())
    return ShippedModel(task, path, model, tok, load_record(path), first)


def write_shipped(run_dir: str | Path, dest: str | Path) -> Path:
    """Package the finished run in ``run_dir`` as a shipped checkpoint in ``dest`` (module docstring)."""
    tf = require_transformers()
    run_dir, dest = Path(run_dir), Path(dest)
    record = load_record(run_dir)
    if record.best_step is None:
        raise InputError(f"the run in {run_dir} has not finished (no best_step)")
    with quiet_progress():
        model = tf.GPTJForCausalLM.from_pretrained(run_dir, attn_implementation="eager").to(torch.float16)
    tok = tf.AutoTokenizer.from_pretrained(run_dir)
    record_first = first_steps(record.task, record.config, record.seed)
    final = None
    if record.best_step != record.config.steps:  # the last step's weights: its checkpoint, or a package's
        last = next(
            (d for d in (checkpoint_dir(run_dir, record.config.steps), run_dir / FINAL) if d.is_dir()), None
        )
        if last is not None:
            with quiet_progress():
                final = tf.GPTJForCausalLM.from_pretrained(last, attn_implementation="eager").to(
                    torch.float16
                )
    # all or nothing: an interrupted packaging leaves ``dest`` as it was
    with atomic_directory(dest, force=True, option="dest") as staging:
        save_quietly(model, tok, staging)
        shutil.copy2(run_dir / RECORD_FILE, staging / RECORD_FILE)
        (staging / FIRST_STEPS_FILE).write_text(json.dumps(record_first, indent=1))
        if final is not None:
            with quiet_progress():
                final.save_pretrained(staging / FINAL)
        for f in staging.rglob("*"):
            f.chmod(0o755 if f.is_dir() else 0o644)  # package data: readable by everyone
    return dest
