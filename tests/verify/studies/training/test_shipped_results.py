"""The shipped checkpoints' products: what the run's store hands out is what a direct computation gives."""

from __future__ import annotations

import pytest
import torch

from ropeproof.theory.result_store import ResultStore
from ropeproof.verify.studies.training.data import SCORING, TaskEncoder
from ropeproof.verify.studies.training.head_theory import frequency_profile
from ropeproof.verify.studies.training.lengths import length_accuracy
from ropeproof.verify.studies.training.shipped import load_shipped, shipped_path
from ropeproof.verify.studies.training.shipped_results import (
    DIRECTORY_LENGTH_ROW,
    FREQUENCY_PROFILE,
    LENGTH_ROW,
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


def test_one_length_row_is_the_same_in_any_list_of_lengths_and_from_the_directory() -> None:
    store = ResultStore()
    rows = length_accuracy(load_shipped("letter").model, "letter", [17, 40], count=4)
    args = {"task": "letter", "config": "small", "seed": 0, "count": 4}
    assert [store.get(LENGTH_ROW, n=n, **args) for n in (17, 40)] == rows
    path = str(shipped_path("letter"))
    assert [store.get(DIRECTORY_LENGTH_ROW, path=path, task="letter", n=n, count=4) for n in (17, 40)] == rows
    # the inputs of one task, length and build are generated once for every model that answers them
    assert sum(k.startswith("training.long-batch") for k in store.computed) == 2
