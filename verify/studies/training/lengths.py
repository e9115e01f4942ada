"""Length generalisation of trained models: accuracy on inputs longer than the 17 tokens they were
trained on, built by :mod:`ropeproof.verify.measure.task_lengths` (the same generators as the compiled
multi-hop
models' length study, ``docs/theory.md`` section 6).

Only builds whose tokens are in the trained vocabulary are accepted: the number task's ``window`` and
``both`` builds need integers up to ``n - 1`` (the model knows ``1 .. 16``), so the number task is
measured on ``distractors`` only; the letter task on any build. GPT-J's rotary table covers
``n_positions`` tokens, so lengths above it are refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ropeproof.theory.errors import InputError
from ropeproof.verify.measure.statistics import Side, accuracy_estimate, decide, grow_until_decided
from ropeproof.verify.measure.task_lengths import long_task, required_max_int
from ropeproof.verify.studies.training.data import Batch, TaskEncoder
from ropeproof.verify.studies.training.evaluation import accuracy_per_hop, predictions


def long_batch(task: str, count: int, n: int, build: str = "distractors", seed: int = 0) -> Batch:
    """``count`` balanced inputs of length ``n`` (``long_task(task, count, n, build=build, seed=seed)``),
    encoded for the trained models of ``task``."""
    return TaskEncoder(task).batch(long_task(task, count, n, build=build, seed=seed))


def _check_build(model: Any, task: str, n: int, build: str) -> None:
    if task == "number" and required_max_int(task, n, build) > 16:
        raise InputError(
            f"build={build!r} at n={n} needs integers up to {required_max_int(task, n, build)}, outside "
            "the number model's vocabulary (1..16); use build='distractors'"
        )
    limit = int(model.config.n_positions)
    if n > limit:
        raise InputError(f"n={n} exceeds the model's n_positions={limit}")


def decided_accuracy(
    model: Any,
    task: str,
    n: int,
    threshold: float,
    start: int = 64,
    cap: int = 1024,
    build: str = "distractors",
    seed: int = 0,
    batch: Batch | None = None,
) -> dict[str, Any]:
    """Accuracy at length ``n`` measured until its 95% Wilson interval decides ``threshold``: ``start``
    balanced inputs first, then twice as many (the first ones kept, the rest new), and so on up to
    ``cap`` inputs; the row says where it stopped. ``batch``: those inputs already encoded
    (:func:`long_batch`; models of one vocabulary share them), else they are generated here.

    Returns ``{"task", "build", "n", "count", "correct", "accuracy", "ci_low", "ci_high", "threshold",
    "side"}`` with ``side`` ``"above"`` (the interval is at or above ``threshold``), ``"below"``, or
    ``"undecided"`` when even ``cap`` inputs leave the interval straddling it. The inputs are the first
    ``count`` of ``long_task(task, cap, n, build=build, seed=seed)``, so a larger cap never changes the
    inputs a smaller one used.
    """
    _check_build(model, task, n, build)
    batch = long_batch(task, cap, n, build, seed) if batch is None else batch
    right: list[bool] = []

    def measure(done: int, count: int) -> None:
        right.extend((predictions(model, batch.input_ids[done:count]) == batch.answers[done:count]).tolist())

    grow_until_decided(
        start, cap, measure, lambda: decide(accuracy_estimate(right), threshold) != "undecided"
    )
    est = accuracy_estimate(right)
    side: Side = decide(est, threshold)
    return {
        "task": task,
        "build": build,
        "n": int(n),
        "count": est.n,
        "correct": int(sum(right)),
        "accuracy": est.value,
        "ci_low": est.low,
        "ci_high": est.high,
        "threshold": threshold,
        "side": side,
    }


def length_accuracy(
    model: Any,
    task: str,
    lengths: Sequence[int],
    build: str = "distractors",
    count: int = 64,
    seed: int = 0,
    batches: Mapping[int, Batch] | None = None,
) -> list[dict[str, Any]]:
    """One row per length: ``{"task", "build", "n", "count", "accuracy", "accuracy_<h>hop"}`` on ``count``
    balanced inputs of length ``n`` with 1-4 hops (generator seed ``seed``; ``batches``: those inputs
    already encoded per length, :func:`long_batch`)."""
    rows = []
    for n in lengths:
        _check_build(model, task, n, build)
        batch = batches[n] if batches is not None else long_batch(task, count, n, build, seed)
        acc = accuracy_per_hop(model, batch)
        row: dict[str, Any] = {"task": task, "build": build, "n": int(n), "count": count, "accuracy": acc[0]}
        row.update({f"accuracy_{h}hop": acc[h] for h in (1, 2, 3, 4) if h in acc})
        rows.append(row)
    return rows


def last_length_above(rows: Sequence[dict[str, Any]], level: float) -> int | None:
    """The largest ``n`` such that accuracy is ``>= level`` at every measured length up to it."""
    best = None
    for row in sorted(rows, key=lambda r: r["n"]):
        if row["accuracy"] < level:
            break
        best = row["n"]
    return best
