from __future__ import annotations

import pytest

from ropeproof.theory.errors import InputError
from ropeproof.verify.training.config import SMALL
from ropeproof.verify.training.observations import (
    best_evaluation,
    first_learned_steps,
    head_label,
    layer_depth_groups,
    layer_labels,
)
from ropeproof.verify.training.trainer import TrainingRecord


def _record(curves: dict[int, list[float]], best: int | None = 200) -> TrainingRecord:
    evals = []
    for k, step in enumerate((0, 100, 200)):
        acc = {str(h): curves[h][k] for h in curves}
        acc["0"] = sum(curves[h][k] for h in curves) / len(curves)
        evals.append(
            {
                "step": step,
                "accuracy": acc,
                "dynamics": {"S_pos": [0.95, 0.9, 0.1], "S_sym": [0.95, 0.1, 0.9]},
            }
        )
    return TrainingRecord("number", SMALL, 0, [], evals, best)


def test_first_learned_steps_reads_the_first_crossing() -> None:
    rec = _record({1: [0.0, 0.95, 1.0], 2: [0.0, 0.5, 0.9], 3: [0.0, 0.2, 0.89], 4: [0.1, 0.2, 0.3]})
    assert first_learned_steps(rec, 0.9) == {1: 100, 2: 200, 3: None, 4: None}
    assert first_learned_steps(rec, 0.05) == {1: 100, 2: 100, 3: 100, 4: 0}
    with pytest.raises(InputError, match="threshold"):
        first_learned_steps(rec, 0.0)


def test_labels_follow_the_half_rule_and_uniform_level() -> None:
    assert head_label(0.95, 0.92) == "uniform"
    assert head_label(0.8, 0.2) == "positional"
    assert head_label(0.2, 0.8) == "symbolic"
    assert head_label(0.6, 0.7) == "mixed"
    rec = _record({h: [0.0, 0.0, 1.0] for h in (1, 2, 3, 4)})
    assert layer_labels(best_evaluation(rec)) == ["uniform", "positional", "symbolic"]
    with pytest.raises(InputError, match="not finished"):
        best_evaluation(_record({1: [0, 0, 0]}, best=None))


def test_depth_groups_are_the_paper_layers_at_12() -> None:
    assert layer_depth_groups(12) == {"middle": [3, 4, 5, 6], "deep": [9, 10, 11]}
    groups = layer_depth_groups(6)
    assert groups["deep"][-1] == 5 and set(groups["middle"]) <= set(range(6))
    with pytest.raises(InputError):
        layer_depth_groups(1)
