"""[A]'s reported observations (``docs/theory.md`` section 6) as functions of a training record, so
claims and figures read verdicts off the same numbers.

- :func:`first_learned_steps`: per hop count, the first checkpoint step whose validation accuracy is
  at least ``threshold`` (``None`` if never);
- :func:`head_label`: ``positional`` when ``S_pos > 0.5 > S_sym``, ``symbolic`` when
  ``S_sym > 0.5 > S_pos``, ``uniform`` when both exceed ``uniform_level``, else ``mixed``;
- :func:`layer_depth_groups`: [A]'s "middle" (layers 3-6 of 12) and "deep" (9-11 of 12) layers, mapped
  to a model of ``L`` layers by relative depth ``l / (L - 1)``: middle ``[3/11, 6/11]``, deep
  ``[9/11, 1]``, rounded outward to whole layers.
"""

from __future__ import annotations

import math
from typing import Any

from ropeproof.theory.errors import InputError
from ropeproof.verify.training.trainer import TrainingRecord

HOPS = (1, 2, 3, 4)


def first_learned_steps(record: TrainingRecord, threshold: float) -> dict[int, int | None]:
    """``{hops: first checkpoint step with accuracy >= threshold, or None}``."""
    if not 0 < threshold <= 1:
        raise InputError(f"threshold={threshold} must be in (0, 1]")
    out: dict[int, int | None] = {}
    for h in HOPS:
        steps = [e["step"] for e in record.evaluations if e["accuracy"].get(str(h), 0.0) >= threshold]
        out[h] = min(steps) if steps else None
    return out


def head_label(s_pos: float, s_sym: float, uniform_level: float = 0.9) -> str:
    """``positional``, ``symbolic``, ``uniform`` or ``mixed`` (module docstring)."""
    if s_pos >= uniform_level and s_sym >= uniform_level:
        return "uniform"
    if s_pos > 0.5 > s_sym:
        return "positional"
    if s_sym > 0.5 > s_pos:
        return "symbolic"
    return "mixed"


def layer_depth_groups(n_layers: int) -> dict[str, list[int]]:
    """``{"middle": [...], "deep": [...]}``: [A]'s layer ranges by relative depth (module docstring)."""
    if n_layers < 2:
        raise InputError(f"n_layers={n_layers} must be >= 2")
    top = n_layers - 1
    middle = list(range(math.floor(3 / 11 * top), math.ceil(6 / 11 * top) + 1))
    deep = list(range(math.floor(9 / 11 * top), top + 1))
    return {"middle": middle, "deep": deep}


def evaluation_at(record: TrainingRecord, step: int) -> dict[str, Any]:
    """The record's evaluation of checkpoint ``step``."""
    for e in record.evaluations:
        if e["step"] == step:
            return e
    raise InputError(f"the record has no checkpoint at step {step}")


def best_evaluation(record: TrainingRecord) -> dict[str, Any]:
    """The evaluation of the best checkpoint (the shipped weights)."""
    if record.best_step is None:
        raise InputError("the run has not finished (no best_step)")
    return evaluation_at(record, record.best_step)


def layer_labels(evaluation: dict[str, Any], uniform_level: float = 0.9) -> list[str]:
    """:func:`head_label` of every layer of one evaluation's dynamics."""
    dyn = evaluation.get("dynamics")
    if dyn is None:
        raise InputError(f"checkpoint {evaluation['step']} has no dynamics record")
    return [head_label(p, s, uniform_level) for p, s in zip(dyn["S_pos"], dyn["S_sym"], strict=True)]
