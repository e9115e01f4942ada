"""What claims and figures ask of the shipped checkpoints, as products of the run's
:class:`~ropeproof.machinery._result_store.ResultStore` (each computed once per run).

``ropeproof check`` asks the same questions of the shipped models more than once: the claim
``training.frequencies`` and the figures ``training_frequencies`` and ``training_theory`` profile the
layers' rotary planes on the same prompts, and every training claim and figure runs the same loaded
models. Ask the store, ``store.get(PRODUCT, **args)``:

- :data:`SHIPPED_MODEL` (object): the shipped checkpoint of ``task``, ``config``, ``seed``
  (:func:`~ropeproof.verify.studies.training._shipped.load_shipped`: float32 weights, eager attention),
  **read-only
  by contract** (the products below run it; use ``load_shipped`` for a copy of your own to modify);
- :data:`TRAINED_MODEL` (object): the model in a run directory (``ropeproof train --out DIR``), float32,
  read-only likewise;
- :data:`FREQUENCY_PROFILE` (data): :func:`~ropeproof.verify.studies.training._head_theory.frequency_profile`
of one
  layer on the first ``prompts`` scoring prompts of the run's seed;
- :data:`LENGTH_MODEL` (object): the shipped checkpoint loaded for the length study (SDPA attention, the
  sin/cos table rebuilt long enough, :func:`~ropeproof.verify.studies.training._lengths.length_model`);
  :data:`DIRECTORY_LENGTH_MODEL` the same for a run directory;
- :data:`DECIDED_LENGTH_ROW` (data):
  :func:`~ropeproof.verify.studies.training._lengths.decided_length_row` of one model at one length under
  one reading, sampled until decided: the claim ``training.length`` and the figure ``training_length``
  read the same rows, so each input is answered once per run; :data:`DIRECTORY_DECIDED_LENGTH_ROW` the
  same for a run directory;
- :data:`DECIDED_ACCURACY` (data): a shipped model's accuracy per hop count on held-out prompts, sampled
  until decided against a threshold (what the accuracy claims judge);
- :data:`PROMPT_SCORES` (data): per-prompt layer-swap scores of one layer on one chunk of scoring prompts,
  and :data:`ABLATED_ACCURACY` (data): accuracy per hop count with some layers' attention zeroed, decided
  against a threshold (on :data:`VALIDATION_CHUNK`, each drawn once per run): what the readings of the head
  observations read (:mod:`~ropeproof.verify.studies.training._readings`); :data:`VALIDATION_STATES`
  (object): the hidden states entering every block on one validation chunk, from which the ablations
  start at their lowest zeroed block.
"""

from __future__ import annotations

from typing import Any

import torch

from ropeproof.machinery._result_store import ResultStore, data_product, object_product
from ropeproof.verify.studies.training._shipped import ShippedModel, load_shipped


@object_product("training.shipped-model", shared=False)
def SHIPPED_MODEL(store: ResultStore, task: str, config: str = "small", seed: int = 0) -> ShippedModel:
    """The shipped checkpoint (module docstring)."""
    return load_shipped(task, config=config, seed=seed)


@object_product("training.run-directory-model", shared=False)
def TRAINED_MODEL(store: ResultStore, path: str) -> Any:
    """The model of the run directory ``path`` (float32, CPU, eager attention, eval mode)."""
    from ropeproof.verify.interop.hf._library import quiet_progress, require_transformers

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
    from ropeproof.verify.studies.training._data import SCORING, TaskEncoder
    from ropeproof.verify.studies.training._head_theory import frequency_profile

    shipped = store.get(SHIPPED_MODEL, task=task, config=config, seed=seed)
    ids = TaskEncoder(task).draw(prompts, shipped.record.seed, SCORING, 0).input_ids
    return frequency_profile(shipped.model, ids, layer)


@object_product("training.length-model")
def LENGTH_MODEL(store: ResultStore, task: str, config: str = "small", seed: int = 0) -> Any:
    """The shipped checkpoint loaded for the length study
    (:func:`~ropeproof.verify.studies.training._lengths.length_model`: SDPA attention, the sin/cos table
    rebuilt to at least 2,048 rows), read-only."""
    from ropeproof.verify.studies.training._lengths import length_model
    from ropeproof.verify.studies.training._shipped import shipped_path

    return length_model(shipped_path(task, config, seed))


@object_product("training.directory-length-model")
def DIRECTORY_LENGTH_MODEL(store: ResultStore, path: str) -> Any:
    """The model of the run directory ``path`` loaded for the length study (as :data:`LENGTH_MODEL`)."""
    from ropeproof.verify.studies.training._lengths import length_model

    return length_model(path)


def _decided_row(model: Any, n: int, reading: str, first: int, cap: int) -> dict[str, Any]:
    from ropeproof.verify.studies.training._lengths import decided_length_row
    from ropeproof.verify.studies.training._lengths import reading as reading_of

    r = reading_of(reading)
    row = decided_length_row(model, r.task, n, r.threshold, first, cap, r.build, r.hops, 0, r.positions)
    return {**row, "reading": reading}


@data_product("training.decided-length-row")
def DECIDED_LENGTH_ROW(
    store: ResultStore, task: str, config: str, seed: int, n: int, reading: str, first: int, cap: int
) -> dict[str, Any]:
    """``decided_length_row`` of a shipped model at length ``n`` under ``reading`` (its task, build, hops
    and threshold, :data:`~ropeproof.verify.studies.training._lengths.READINGS`; generator seed 0), with
    ``reading``, ``config`` and ``seed`` added: the one computation per model, reading, length and input
    that the claim ``training.length`` and the figure ``training_length`` share."""
    model = store.get(LENGTH_MODEL, task=task, config=config, seed=seed)
    return {**_decided_row(model, n, reading, first, cap), "config": config, "seed": seed}


@data_product("training.directory-decided-length-row")
def DIRECTORY_DECIDED_LENGTH_ROW(
    store: ResultStore, path: str, n: int, reading: str, first: int, cap: int
) -> dict[str, Any]:
    """:data:`DECIDED_LENGTH_ROW` of the model in the run directory ``path``."""
    return _decided_row(store.get(DIRECTORY_LENGTH_MODEL, path=path), n, reading, first, cap)


PROMPT_CHUNK = 50
"""Scoring prompts per chunk of :data:`PROMPT_SCORES` (chunk ``k``: ``TaskEncoder(task).draw(50, run seed,
SCORING, k)``)."""


@data_product("training.prompt-scores")
def PROMPT_SCORES(
    store: ResultStore, task: str, config: str, seed: int, layer: int, chunk: int
) -> dict[str, Any]:
    """[A]'s layer-swap scores of ``layer`` of a shipped model per prompt, on chunk ``chunk`` of scoring
    prompts (``TaskEncoder(task).draw(50, run seed, SCORING, chunk)``,
    :data:`PROMPT_CHUNK`): ``{"resolved", "s_pos", "s_sym",
    "hops"}`` (``resolved`` false, no scores, when the float32 model's rows underflow)."""
    from ropeproof.machinery._errors import UnderflowError
    from ropeproof.verify.interop.hf._layer_swap import hf_layer_swap_scores

    shipped = store.get(SHIPPED_MODEL, task=task, config=config, seed=seed)
    scoring = store.get(SCORING_STATES, task=task, config=config, seed=seed, chunk=chunk)
    batch = scoring["batch"]
    hops = batch.hops.tolist()
    try:
        with torch.no_grad():
            scores = hf_layer_swap_scores(
                shipped.model, batch.input_ids, layer, inputs=scoring["states"][layer]
            )
    except UnderflowError:
        return {"resolved": False, "s_pos": [], "s_sym": [], "hops": hops}
    return {
        "resolved": True,
        "s_pos": scores.s_pos[0].double().tolist(),
        "s_sym": scores.s_sym[0].double().tolist(),
        "hops": hops,
    }


@object_product("training.scoring-states", shared=False)
def SCORING_STATES(store: ResultStore, task: str, config: str, seed: int, chunk: int) -> dict[str, Any]:
    """Chunk ``chunk`` of a shipped model's scoring prompts (``TaskEncoder(task).draw(50, run seed,
    SCORING, chunk)``, :data:`PROMPT_CHUNK`) and the hidden states entering each of its blocks on them:
    ``{"batch", "states": [entering block 0, .., entering block n_layer - 1]}``
    (:meth:`~ropeproof.verify.studies.training._last_token.LastToken.states`, HF's forward bit for bit),
    what :data:`PROMPT_SCORES` swaps at every layer (read-only)."""
    from ropeproof.verify.studies.training._data import SCORING, TaskEncoder

    shipped = store.get(SHIPPED_MODEL, task=task, config=config, seed=seed)
    batch = TaskEncoder(task).draw(PROMPT_CHUNK, shipped.record.seed, SCORING, chunk)
    return {"batch": batch, "states": _states(shipped.model, batch.input_ids)}


def _states(model: Any, input_ids: torch.Tensor) -> list[torch.Tensor]:
    from ropeproof.verify.studies.training._last_token import LastToken

    forward = LastToken(model)
    out = [forward.states(input_ids, 0)]
    for layer in range(1, forward.layers):
        out.append(forward.states_after(out[-1], layer - 1))
    return out


@data_product("training.ablated-accuracy")
def ABLATED_ACCURACY(
    store: ResultStore, task: str, config: str, seed: int, layers: list[int], threshold: float,
    start: int = 400, cap: int = 2400,
) -> dict[str, Any]:  # fmt: skip
    """:func:`~ropeproof.verify.studies.training._evaluation.decided_accuracy_per_hop` of a shipped model
    with the attention outputs of ``layers`` zeroed together, decided against ``threshold``."""
    from ropeproof.verify.studies.training._evaluation import decided_accuracy_per_hop

    shipped = store.get(SHIPPED_MODEL, task=task, config=config, seed=seed)
    chunks = validation_chunks(store, task, shipped.record.seed)

    def states(chunk: int, layer: int) -> torch.Tensor:
        return store.get(VALIDATION_STATES, task=task, config=config, seed=seed, chunk=chunk)[layer]

    return decided_accuracy_per_hop(
        shipped.model, task, shipped.record.seed, threshold, start, cap, ablate=list(layers), chunks=chunks,
        states=states,
    )  # fmt: skip


@data_product("training.decided-accuracy")
def DECIDED_ACCURACY(
    store: ResultStore, task: str, config: str, seed: int, threshold: float, start: int = 400, cap: int = 2400
) -> dict[str, Any]:
    """:func:`~ropeproof.verify.studies.training._evaluation.decided_accuracy_per_hop` of a shipped model
    (no layer ablated) on its run seed's held-out prompts (:data:`VALIDATION_CHUNK`), decided against
    ``threshold``: what the accuracy claims judge
    (:func:`~ropeproof.verify.studies.training._judging.accuracy_outcome`)."""
    from ropeproof.verify.studies.training._evaluation import decided_accuracy_per_hop

    shipped = store.get(SHIPPED_MODEL, task=task, config=config, seed=seed)
    chunks = validation_chunks(store, task, shipped.record.seed)
    return decided_accuracy_per_hop(
        shipped.model, task, shipped.record.seed, threshold, start, cap, chunks=chunks
    )


@object_product("training.validation-states", shared=False)
def VALIDATION_STATES(
    store: ResultStore, task: str, config: str, seed: int, chunk: int
) -> list[torch.Tensor]:
    """The hidden states entering every block of a shipped model (no block ablated) on
    :data:`VALIDATION_CHUNK` ``chunk`` of its run seed's held-out prompts, ``[states entering block 0,
    .., entering block n_layer - 1]``
    (:meth:`~ropeproof.verify.studies.training._last_token.LastToken.states`): every ablation of
    :data:`ABLATED_ACCURACY` on those prompts starts from them at its lowest zeroed block (read-only)."""
    shipped = store.get(SHIPPED_MODEL, task=task, config=config, seed=seed)
    batch = store.get(VALIDATION_CHUNK, task=task, seed=shipped.record.seed, chunk=chunk)
    return _states(shipped.model, batch.input_ids)


@object_product("training.validation-chunk")
def VALIDATION_CHUNK(store: ResultStore, task: str, seed: int, chunk: int) -> Any:
    """:func:`~ropeproof.verify.studies.training._evaluation.validation_chunk`, drawn once per run
    (read-only)."""
    from ropeproof.verify.studies.training._evaluation import validation_chunk

    return validation_chunk(task, seed, chunk)


def validation_chunks(store: ResultStore, task: str, seed: int) -> Any:
    """``chunk -> VALIDATION_CHUNK`` of ``task`` and run seed ``seed`` from ``store``."""
    return lambda chunk: store.get(VALIDATION_CHUNK, task=task, seed=seed, chunk=chunk)
