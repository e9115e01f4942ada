"""Per-process memos of what both the claims and the figures compute on the shipped checkpoints.

``ropeproof check`` asks the same questions of the shipped small models more than once: the claim
``training.frequencies`` and the figures ``training_frequencies`` and ``training_theory`` each profile
the layers' rotary planes on the same prompts, and the claim ``training.length`` and the figure
``training_length`` measure accuracy at mostly the same lengths. Each answer depends only on its
arguments (the shipped weights, the seeded prompts), so it is computed once per process and handed
out as a fresh copy (a caller may modify what it gets without affecting the next caller).

- :func:`shared_shipped`: one loaded :class:`~ropeproof.verify.training.shipped.ShippedModel` per task
  and process, **read-only by contract** (the memos below run it). Use
  :func:`~ropeproof.verify.training.shipped.load_shipped` for a copy of your own to modify.
- :func:`frequency_profile_rows`: :func:`~ropeproof.verify.training.head_theory.frequency_profile` of
  one layer on the task's first ``prompts`` scoring prompts.
- :func:`length_accuracy_row`: :func:`~ropeproof.verify.training.lengths.length_accuracy` at one length
  (the inputs of each length are generated independently of the other lengths, so one length's row
  is the same whichever list it was asked for in).
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from ropeproof.verify.training.shipped import ShippedModel, load_shipped


@functools.cache
def shared_shipped(task: str, config: str = "small", seed: int = 0) -> ShippedModel:
    """The shipped checkpoint of ``task`` (``config``, ``seed``), loaded once per process (read-only: do not
    train it, move it or leave hooks on it)."""
    return load_shipped(task, config=config, seed=seed)


@functools.cache
def _profile(task: str, prompts: int, layer: int, config: str, seed: int) -> tuple[dict[str, Any], ...]:
    from ropeproof.verify.training.data import SCORING, TaskEncoder
    from ropeproof.verify.training.head_theory import frequency_profile

    shipped = shared_shipped(task, config, seed)
    ids = TaskEncoder(task).draw(prompts, shipped.record.seed, SCORING, 0).input_ids
    return tuple(frequency_profile(shipped.model, ids, layer))


def frequency_profile_rows(
    task: str, prompts: int, layer: int, config: str = "small", seed: int = 0
) -> list[dict[str, Any]]:
    """``frequency_profile(model, ids, layer)`` of a shipped ``task`` model, ``ids`` the first ``prompts``
    scoring prompts of the run's seed (``TaskEncoder(task).draw(prompts, seed, SCORING, 0)``)."""
    return copy.deepcopy(list(_profile(task, prompts, layer, config, seed)))


@functools.cache
def _length_row(task: str, n: int, count: int) -> dict[str, Any]:
    from ropeproof.verify.training.lengths import length_accuracy

    (row,) = length_accuracy(shared_shipped(task).model, task, [n], count=count)
    return row


def length_accuracy_row(task: str, n: int, count: int) -> dict[str, Any]:
    """``length_accuracy(model, task, [n], count=count)[0]`` of the shipped small ``task`` model (the
    ``distractors`` build, generator seed 0)."""
    return copy.deepcopy(_length_row(task, n, count))


@functools.cache
def _decided_row(
    task: str, config: str, seed: int, n: int, threshold: float, start: int, cap: int, build: str
) -> dict[str, Any]:
    from ropeproof.verify.training.lengths import decided_accuracy

    model = shared_shipped(task, config, seed).model
    return decided_accuracy(model, task, n, threshold, start, cap, build=build)


def decided_length_row(
    task: str,
    config: str,
    seed: int,
    n: int,
    threshold: float,
    start: int,
    cap: int,
    build: str = "distractors",
) -> dict[str, Any]:
    """``decided_accuracy(model, task, n, threshold, start, cap, build)`` of a shipped model (generator
    seed 0), with ``config`` and ``seed`` added to the row."""
    row = copy.deepcopy(_decided_row(task, config, seed, n, threshold, start, cap, build))
    return {**row, "config": config, "seed": seed}
