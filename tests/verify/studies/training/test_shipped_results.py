"""The shipped checkpoints' products: what the run's store hands out is what a direct computation gives."""

from __future__ import annotations

import pytest
import torch

from ropeproof.machinery._result_store import ResultStore
from ropeproof.verify.studies.training._data import SCORING, TaskEncoder
from ropeproof.verify.studies.training._head_theory import frequency_profile
from ropeproof.verify.studies.training._shipped import load_shipped, shipped_path
from ropeproof.verify.studies.training._shipped_results import (
    DECIDED_LENGTH_ROW,
    DIRECTORY_DECIDED_LENGTH_ROW,
    FREQUENCY_PROFILE,
    LENGTH_MODEL,
    SHIPPED_MODEL,
    TRAINED_MODEL,
)

pytest.importorskip("transformers")


def test_the_store_loads_a_model_once_and_equals_a_fresh_load() -> None:
    store = ResultStore()
    shared = store.get(SHIPPED_MODEL, task="letter")
    assert store.get(SHIPPED_MODEL, task="letter", config="small", seed=0) is shared
    fresh = load_shipped("letter").model.state_dict()
    state = shared.model.state_dict()
    assert fresh.keys() == state.keys() and all(bool((fresh[k] == state[k]).all()) for k in fresh)
    # a run directory is loaded in float32 too, whatever dtype its config records (the shipped weights
    # are stored in float16): the figures measure the model the claims judge
    directory = store.get(TRAINED_MODEL, path=str(shipped_path("letter")))
    assert all(p.dtype == torch.float32 for p in directory.parameters())
    assert all(bool((directory.state_dict()[k] == state[k]).all()) for k in state)


def test_a_stored_profile_equals_the_direct_one_and_is_a_copy() -> None:
    store = ResultStore()
    model = load_shipped("number").model
    ids = (
        TaskEncoder("number")
        .draw(3, store.get(SHIPPED_MODEL, task="number").record.seed, SCORING, 0)
        .input_ids
    )
    direct = frequency_profile(model, ids, 0)
    stored = store.get(FREQUENCY_PROFILE, task="number", prompts=3, layer=0)
    assert stored == direct
    stored[0]["share"] = -1.0  # the caller's copy: the next caller still gets the computed value
    assert store.get(FREQUENCY_PROFILE, task="number", prompts=3, layer=0) == direct
    assert sum(k.startswith(FREQUENCY_PROFILE.name) for k in store.computed) == 1


def test_a_stored_length_row_is_the_direct_one_and_the_directory_gives_the_same() -> None:
    """The store's decided row of a shipped model is what :func:`decided_length_row` gives on the length
    model, and the run-directory product gives the same row for the same checkpoint."""
    from ropeproof.verify.studies.training._lengths import decided_length_row, length_model

    store = ResultStore()
    args = {"n": 40, "reading": "letter-distractors", "first": 8, "cap": 8}
    stored = store.get(DECIDED_LENGTH_ROW, task="letter", config="small", seed=0, **args)
    direct = decided_length_row(length_model(shipped_path("letter")), "letter", 40, 0.9, 8, 8)
    assert stored == {**direct, "reading": "letter-distractors", "config": "small", "seed": 0}
    path = str(shipped_path("letter"))
    assert store.get(DIRECTORY_DECIDED_LENGTH_ROW, path=path, **args) == {
        **direct,
        "reading": args["reading"],
    }
    assert store.get(LENGTH_MODEL, task="letter") is store.get(LENGTH_MODEL, task="letter", config="small")
