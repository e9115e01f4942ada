"""Re-evaluate every checkpoint of a finished run with today's evaluation, keeping what it measured.

A run written by an earlier version of :func:`~ropeproof.verify.studies.training._trainer.train` records, per
checkpoint, the accuracy per hop and the mean layer scores, but not the counts and per-layer intervals
that decisions under uncertainty need (:mod:`ropeproof.verify.measure._statistics`). :func:`rescore_run` loads
each
``checkpoints/step-N/`` of a run directory, evaluates it with
:func:`~ropeproof.verify.studies.training._trainer.evaluate_checkpoint` (the same seeded validation and
scoring
prompts) and replaces the record's entries, after checking that every number the old entry holds comes
out the same (to 1e-9 relative, or now unresolved where a layer's rows underflow): re-scoring adds
intervals, it never changes a measurement silently. The record is rewritten atomically.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch

from ropeproof.machinery._errors import InputError
from ropeproof.verify.interop.hf._library import quiet_progress, require_transformers
from ropeproof.verify.studies.training._data import TaskEncoder
from ropeproof.verify.studies.training._trainer import (
    RECORD_FILE,
    TrainingRecord,
    checkpoint_dir,
    evaluate_checkpoint,
    load_record,
)


def _same(old: Any, new: Any, path: str) -> None:
    if isinstance(old, dict):
        for key, value in old.items():
            if key in new:
                _same(value, new[key], f"{path}.{key}")
        return
    if isinstance(old, list):
        if len(old) != len(new):
            raise InputError(f"{path}: {len(old)} values recorded, {len(new)} measured now")
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _same(a, b, f"{path}[{i}]")
        return
    if new is None:  # a layer now found unresolved (its rows underflow): no number to compare
        return
    if isinstance(old, float) and not math.isclose(old, new, rel_tol=1e-9, abs_tol=1e-12):
        raise InputError(f"{path}: recorded {old!r}, measured {new!r} now; the checkpoint does not reproduce")


def rescore_run(run_dir: str | Path, with_dynamics: bool = True) -> TrainingRecord:
    """Re-evaluate every checkpoint of the run in ``run_dir`` (module docstring); return the new record."""
    tf = require_transformers()
    run_dir = Path(run_dir)
    record = load_record(run_dir)
    encoder = TaskEncoder(record.task)
    evaluations = []
    for old in record.evaluations:
        path = checkpoint_dir(run_dir, int(old["step"]))
        if not path.is_dir():
            raise InputError(f"{path} is missing; rescoring needs every checkpoint of the run")
        with quiet_progress():
            model = tf.GPTJForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation="eager")
        new = evaluate_checkpoint(
            model.eval(), encoder, record.config, record.seed, int(old["step"]), with_dynamics
        )
        _same({k: v for k, v in old.items() if k != "step"}, new, f"step {old['step']}")
        evaluations.append(new)
    record.evaluations = evaluations
    record.save(run_dir / RECORD_FILE)
    return record
