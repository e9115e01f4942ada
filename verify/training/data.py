"""Balanced task batches for training and evaluation, drawn on the fly and reproducible from a seed.

Batch ``k`` of stream ``s`` for run seed ``r`` is ``number_task`` / ``letter_task``
(:mod:`ropeproof.verify.tasks`, [A]'s 17-token defaults) with the generator seed derived from
``(r, s, k)`` by ``numpy.random.SeedSequence``; the generators cycle through shuffled lists of hop
counts (1-4), target positions and answers, so every batch is balanced over them. Streams:
:data:`TRAIN` (one batch per step), :data:`VALIDATION` (accuracy), :data:`SCORING` (the layer-swap
prompts). Token ids are positions in :func:`ropeproof.verify.tokenizer.task_vocabulary`, the ids of
the word-level tokenizer that checkpoints carry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ropeproof.constructions.paper import check_task
from ropeproof.theory.errors import InputError
from ropeproof.theory.validate import integer
from ropeproof.verify.tasks import TaskInstance, letter_task, number_task
from ropeproof.verify.tokenizer import task_vocabulary

TRAIN, VALIDATION, SCORING = 0, 1, 2
"""Stream numbers of the seed derivation (module docstring)."""


def stream_seed(seed: int, stream: int, index: int) -> int:
    """The generator seed of batch ``index`` of ``stream`` for run seed ``seed``."""
    for name, value in (("seed", seed), ("stream", stream), ("index", index)):
        integer(value, name, low=0)
    return int(np.random.SeedSequence([seed, stream, index]).generate_state(1)[0])


def task_instances(
    task: str, count: int, seed: int, hops: Sequence[int] = (1, 2, 3, 4)
) -> list[TaskInstance]:
    """``count`` balanced 17-token instances of ``task`` from generator seed ``seed``."""
    gen = number_task if check_task(task) == "number" else letter_task
    return gen(count, hops=hops, seed=seed)


@dataclass(frozen=True)
class Batch:
    """Token ids ``[batch, n]``, answer ids ``[batch]`` and hop counts ``[batch]``."""

    input_ids: torch.Tensor
    answers: torch.Tensor
    hops: torch.Tensor


class TaskEncoder:
    """Maps task instances to token ids of ``task``'s vocabulary ([UNK] is the last id)."""

    def __init__(self, task: str) -> None:
        self.task = check_task(task)
        self.tokens = task_vocabulary(task)
        self.index = {t: i for i, t in enumerate(self.tokens)}
        self.vocab_size = len(self.tokens) + 1  # + [UNK]

    def batch(self, instances: Sequence[TaskInstance]) -> Batch:
        if not instances:
            raise InputError("instances is empty")
        ids = torch.tensor([[self.index[t] for t in inst.tokens] for inst in instances], dtype=torch.long)
        answers = torch.tensor([self.index[inst.answer] for inst in instances], dtype=torch.long)
        hops = torch.tensor([inst.hops for inst in instances], dtype=torch.long)
        return Batch(ids, answers, hops)

    def draw(self, count: int, seed: int, stream: int, index: int) -> Batch:
        """Batch ``index`` of ``stream`` (module docstring)."""
        return self.batch(task_instances(self.task, count, stream_seed(seed, stream, index)))
