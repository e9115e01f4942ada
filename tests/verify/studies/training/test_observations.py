from __future__ import annotations

import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure._statistics import proportion_interval
from ropeproof.verify.studies.training._config import SMALL
from ropeproof.verify.studies.training._observations import (
    CONTRADICTS,
    HOPS,
    SHOWS,
    UNDECIDED,
    any_of,
    best_evaluation,
    combine,
    first_learned_steps,
    head_label,
    hop_by_hop,
    interval_label,
    is_label,
    layer_depth_groups,
    layer_labels,
    learned_window,
    pure,
    simultaneous,
)
from ropeproof.verify.studies.training._trainer import TrainingRecord


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


def _counted(curves: dict[int, list[int]], n: int = 600, steps: int = 100) -> TrainingRecord:
    """A record whose checkpoint ``i`` (step ``i * steps``) answered ``curves[h][i]`` of ``n`` prompts
    right at ``h`` hops."""
    evaluations = []
    for i in range(len(curves[1])):
        counts = {str(h): [curves[h][i], n] for h in HOPS}
        counts["0"] = [sum(curves[h][i] for h in HOPS), 4 * n]
        evaluations.append({"step": i * steps, "counts": counts, "accuracy": {}})
    cfg = SMALL.with_overrides(steps=steps * (len(curves[1]) - 1), checkpoint_every=steps)
    return TrainingRecord("number", cfg, 0, [], evaluations, best_step=0)


def test_learned_windows_and_orders_under_uncertainty() -> None:
    # 600 prompts per hop: 528/600 = 0.88 has the Wilson interval [0.852, 0.903], which straddles 0.9
    assert proportion_interval(528, 600).decide(0.9) == "undecided"
    assert proportion_interval(500, 600).decide(0.9) == "below"
    assert proportion_interval(580, 600).decide(0.9) == "above"
    ordered = _counted(
        {1: [500, 580, 590, 595], 2: [0, 500, 580, 590], 3: [0, 0, 580, 590], 4: [0, 0, 0, 580]}
    )
    assert learned_window(ordered, 0.9) == {1: (100, 100), 2: (200, 200), 3: (200, 200), 4: (300, 300)}
    assert hop_by_hop(ordered, 0.9) == SHOWS
    assert simultaneous(ordered, 0.9) == CONTRADICTS  # 1 hop surely learned before 4 could have been
    reversed_ = _counted(
        {1: [0, 0, 580, 590], 2: [0, 500, 580, 590], 3: [0, 0, 580, 590], 4: [580, 590, 595, 595]}
    )
    assert hop_by_hop(reversed_, 0.9) == CONTRADICTS
    straddle = _counted({1: [528, 580], 2: [528, 580], 3: [528, 580], 4: [528, 580]})
    assert learned_window(straddle, 0.9)[1] == (0, 100)  # reached at step 0 or 100: not decided which
    assert simultaneous(straddle, 0.9) == UNDECIDED and hop_by_hop(straddle, 0.9) == UNDECIDED
    together = _counted({h: [0, 580] for h in HOPS})
    assert simultaneous(together, 0.9) == SHOWS
    assert hop_by_hop(together, 0.9) == CONTRADICTS  # 4 hops not strictly after 1 hop
    with pytest.raises(InputError, match="records no counts"):
        learned_window(_record({h: [0.5, 0.95, 0.99] for h in HOPS}), 0.9)


def test_labels_and_purity_decided_on_intervals() -> None:
    assert is_label([0.8, 0.9], [0.1, 0.2], "positional") == SHOWS
    assert is_label([0.8, 0.9], [0.1, 0.2], "symbolic") == CONTRADICTS
    assert is_label([0.45, 0.7], [0.1, 0.2], "positional") == UNDECIDED
    assert is_label(None, None, "positional") == UNDECIDED
    assert interval_label([0.8, 0.9], [0.1, 0.2]) == "positional"
    assert interval_label([0.6, 0.9], [0.6, 0.9]) == "mixed"
    assert interval_label([0.45, 0.7], [0.1, 0.2]) == "undecided"
    assert interval_label(None, [0.1, 0.2]) == "unresolved"
    assert pure([0.8, 0.9], [0.1, 0.2], 0.5) == SHOWS  # difference in [0.6, 0.8]
    assert pure([0.5, 0.6], [0.4, 0.5], 0.5) == CONTRADICTS  # difference in [0.0, 0.2]
    assert pure([0.7, 0.9], [0.1, 0.3], 0.5) == UNDECIDED  # difference in [0.4, 0.8]
    assert combine([SHOWS, UNDECIDED]) == UNDECIDED and combine([UNDECIDED, CONTRADICTS]) == CONTRADICTS
    assert any_of([CONTRADICTS, SHOWS]) == SHOWS and any_of([CONTRADICTS, CONTRADICTS]) == CONTRADICTS
