"""What claims and figures ask of the shipped checkpoints, as products of the run's
:class:`~ropeproof.theory.result_store.ResultStore` (each computed once per run).

``ropeproof check`` asks the same questions of the shipped models more than once: the claim
``training.frequencies`` and the figures ``training_frequencies`` and ``training_theory`` profile the
layers' rotary planes on the same prompts, and every training claim and figure runs the same loaded
models. Ask the store, ``store.get(PRODUCT, **args)``:

- :data:`SHIPPED_MODEL` (object): the shipped checkpoint of ``task``, ``config``, ``seed``
  (:func:`~ropeproof.verify.studies.training.shipped.load_shipped`: float32 weights, eager attention),
  **read-only
  by contract** (the products below run it; use ``load_shipped`` for a copy of your own to modify);
- :data:`TRAINED_MODEL` (object): the model in a run directory (``ropeproof train --out DIR``), float32,
  read-only likewise;
- :data:`FREQUENCY_PROFILE` (data): :func:`~ropeproof.verify.studies.training.head_theory.frequency_profile`
of one
  layer on the first ``prompts`` scoring prompts of the run's seed;
- :data:`DECIDED_LENGTH_ROW` (data): :func:`~ropeproof.verify.studies.training.lengths.decided_accuracy` at
one
  length, with ``config`` and ``seed`` added;
- :data:`LONG_BATCH` (object): the encoded long inputs of one task, length and build, shared by every
  configuration (generating 64 letter inputs of 850 tokens takes about a second);
- :data:`LENGTH_ROW` (data): :func:`~ropeproof.verify.studies.training.lengths.length_accuracy` of a shipped
model
  at one length (the inputs of each length are generated independently of the other lengths, so one
  length's row is the same whichever list it was asked for in); :data:`DIRECTORY_LENGTH_ROW` the same for
  a run directory.
"""

from __future__ import annotations

from typing import Any

import torch

from ropeproof.theory.result_store import ResultStore, data_product, object_product
from ropeproof.verify.studies.training.shipped import ShippedModel, load_shipped


@object_product("training.shipped-model", shared=False)
def SHIPPED_MODEL(store: ResultStore, task: str, config: str = "small", seed: int = 0) -> ShippedModel:
    """The shipped checkpoint (module docstring)."""
    return load_shipped(task, config=config, seed=seed)


@object_product("training.run-directory-model", shared=False)
def TRAINED_MODEL(store: ResultStore, path: str) -> Any:
    """The model of the run directory ``path`` (float32, CPU, eager attention, eval mode)."""
    from ropeproof.verify.interop.hf.library import quiet_progress, require_transformers

    tf = require_transformers()
    with quiet_progress():
        model = tf.AutoModelForCausalLM.from_pretrained(
            path, dtype=torch.float32, attn_implementation="eager"
        )
    return model.eval()


@data_product("training.frequency-profile")
def FREQUENCY_PROFILE(
    store: ResultStore, task: str, prompts: int, layer: int, config: str = "small", seed: int = 0
) -> list[dict[str, Any]]:
    """``frequency_profile(model, ids, layer)`` of a shipped ``task`` model, ``ids`` the first ``prompts``
    scoring prompts of the run's seed (``TaskEncoder(task).draw(prompts, seed, SCORING, 0)``)."""
    from ropeproof.verify.studies.training.data import SCORING, TaskEncoder
    from ropeproof.verify.studies.training.head_theory import frequency_profile

    shipped = store.get(SHIPPED_MODEL, task=task, config=config, seed=seed)
    ids = TaskEncoder(task).draw(prompts, shipped.record.seed, SCORING, 0).input_ids
    return frequency_profile(shipped.model, ids, layer)


@data_product("training.decided-length-row")
def DECIDED_LENGTH_ROW(
    store: ResultStore,
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
    from ropeproof.verify.studies.training.lengths import decided_accuracy

    model = store.get(SHIPPED_MODEL, task=task, config=config, seed=seed).model
    batch = store.get(LONG_BATCH, task=task, count=cap, n=n, build=build)
    row = decided_accuracy(model, task, n, threshold, start, cap, build=build, batch=batch)
    return {**row, "config": config, "seed": seed}


@data_product("training.length-row")
def LENGTH_ROW(
    store: ResultStore, task: str, config: str, seed: int, n: int, count: int, build: str = "distractors"
) -> dict[str, Any]:
    """``length_accuracy(model, task, [n], build, count)[0]`` of a shipped model (generator seed 0)."""
    from ropeproof.verify.studies.training.lengths import length_accuracy

    model = store.get(SHIPPED_MODEL, task=task, config=config, seed=seed).model
    batch = store.get(LONG_BATCH, task=task, count=count, n=n, build=build)
    (row,) = length_accuracy(model, task, [n], build=build, count=count, batches={n: batch})
    return row


@data_product("training.directory-length-row")
def DIRECTORY_LENGTH_ROW(
    store: ResultStore, path: str, task: str, n: int, count: int, build: str = "distractors"
) -> dict[str, Any]:
    """``length_accuracy(model, task, [n], build, count)[0]`` of the model in the run directory ``path``."""
    from ropeproof.verify.studies.training.lengths import length_accuracy

    batch = store.get(LONG_BATCH, task=task, count=count, n=n, build=build)
    (row,) = length_accuracy(
        store.get(TRAINED_MODEL, path=path), task, [n], build=build, count=count, batches={n: batch}
    )
    return row


@object_product("training.long-batch")
def LONG_BATCH(
    store: ResultStore, task: str, count: int, n: int, build: str = "distractors", seed: int = 0
) -> Any:
    """:func:`~ropeproof.verify.studies.training.lengths.long_batch`: the long inputs every shipped
    configuration of ``task`` is measured on (one vocabulary per task), generated once per run (read-only)."""
    from ropeproof.verify.studies.training.lengths import long_batch

    return long_batch(task, count, n, build, seed)
