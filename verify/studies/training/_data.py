"""Balanced task batches for training and evaluation, drawn on the fly and reproducible from a seed.

Batch ``k`` of stream ``s`` for run seed ``r`` is ``number_task`` / ``letter_task``
(:mod:`ropeproof.verify.measure._tasks`, [A]'s 17-token defaults) with the generator seed derived from
``(r, s, k)`` by ``numpy.random.SeedSequence``; the generators cycle through shuffled lists of hop
counts (1-4), target positions and answers, so every batch is balanced over them. Streams:
:data:`TRAIN` (one batch per step), :data:`VALIDATION` (accuracy), :data:`SCORING` (the layer-swap
prompts), :data:`TRAINING_SET` (the chunks of a fixed training set, :func:`fixed_training_set`) and
:data:`SHUFFLE` (its per-epoch orders, :class:`TrainingBatches`). Token ids are positions in
:func:`ropeproof.verify.measure._tokenizer.task_vocabulary`, the ids of the word-level tokenizer that
checkpoints
carry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ropeproof.constructions._paper import check_task
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.verify.measure._tasks import TaskInstance, letter_task, number_task
from ropeproof.verify.measure._tokenizer import task_vocabulary

# the stream numbers of the seed derivation (module docstring), one per line so that each is an object
# of its own for the API reference
TRAIN = 0
"""The stream of the training batches (one per step)."""
VALIDATION = 1
"""The stream of the validation batches (accuracy)."""
SCORING = 2
"""The stream of the layer-swap scoring prompts."""
TRAINING_SET = 3
"""The stream of a fixed training set's chunks."""
SHUFFLE = 4
"""The stream of a fixed training set's per-epoch orders."""

TRAINING_SET_CHUNK = 64
"""Sequences per chunk of a fixed training set (each chunk is balanced on its own and generated only
when a batch first needs one of its sequences)."""


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


def concatenate(batches: Sequence[Batch]) -> Batch:
    """The batches one after the other."""
    return Batch(
        torch.cat([b.input_ids for b in batches]),
        torch.cat([b.answers for b in batches]),
        torch.cat([b.hops for b in batches]),
    )


def training_set_chunk(encoder: TaskEncoder, size: int, seed: int, chunk: int) -> Batch:
    """Chunk ``chunk`` of the fixed training set of ``size`` sequences for run seed ``seed``: sequences
    ``chunk * TRAINING_SET_CHUNK`` onwards, ``encoder.draw(count, seed, TRAINING_SET, chunk)`` with
    ``count`` = :data:`TRAINING_SET_CHUNK` (fewer in the last chunk)."""
    first = chunk * TRAINING_SET_CHUNK
    if not 0 <= first < size:
        last = (size - 1) // TRAINING_SET_CHUNK
        raise InputError(f"chunk={chunk} is outside a training set of {size}; accepted: 0 .. {last}")
    return encoder.draw(min(TRAINING_SET_CHUNK, size - first), seed, TRAINING_SET, chunk)


def fixed_training_set(encoder: TaskEncoder, size: int, seed: int) -> Batch:
    """The whole fixed training set of ``size`` sequences for run seed ``seed``, its chunks
    (:func:`training_set_chunk`) one after the other."""
    size = integer(size, "training_set", low=1)
    chunks = range((size + TRAINING_SET_CHUNK - 1) // TRAINING_SET_CHUNK)
    return concatenate([training_set_chunk(encoder, size, seed, c) for c in chunks])


class TrainingBatches:
    """The training batch of each step. Without a fixed set (``size`` None), step ``k``'s batch is
    ``encoder.draw(batch_size, seed, TRAIN, k)``, a fresh balanced batch. With one, sequence ``i`` of the
    run (``i = k * batch_size + r``) is element ``order(e)[i mod size]`` of :func:`fixed_training_set`,
    ``e = i // size`` its epoch and ``order(e)`` a permutation of the set drawn from
    ``stream_seed(seed, SHUFFLE, e)``: every epoch visits every sequence once, in a new order. Chunks of
    the set are generated when first needed and kept."""

    def __init__(self, encoder: TaskEncoder, batch_size: int, seed: int, size: int | None) -> None:
        self.encoder, self.batch_size, self.seed, self.size = encoder, batch_size, seed, size
        self._chunks: dict[int, Batch] = {}
        self._orders: dict[int, np.ndarray] = {}

    def _order(self, epoch: int) -> np.ndarray:
        if epoch not in self._orders:
            assert self.size is not None
            gen = np.random.default_rng(stream_seed(self.seed, SHUFFLE, epoch))
            self._orders = {epoch: gen.permutation(self.size)}  # one epoch at a time in memory
        return self._orders[epoch]

    def _row(self, index: int) -> tuple[Batch, int]:
        chunk, row = divmod(index, TRAINING_SET_CHUNK)
        if chunk not in self._chunks:
            assert self.size is not None
            self._chunks[chunk] = training_set_chunk(self.encoder, self.size, self.seed, chunk)
        return self._chunks[chunk], row

    def batch(self, step: int) -> Batch:
        """The batch of step ``step`` (0-based: the batch the ``step + 1``-th optimiser step uses)."""
        if self.size is None:
            return self.encoder.draw(self.batch_size, self.seed, TRAIN, step)
        first = step * self.batch_size
        rows = [
            self._row(int(self._order(i // self.size)[i % self.size]))
            for i in range(first, first + self.batch_size)
        ]
        return Batch(
            torch.stack([c.input_ids[r] for c, r in rows]),
            torch.stack([c.answers[r] for c, r in rows]),
            torch.stack([c.hops[r] for c, r in rows]),
        )
