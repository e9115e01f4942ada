"""The per-process memos hand out what a direct computation gives, as copies."""

from __future__ import annotations

import pytest

from ropeproof.verify.training.data import SCORING, TaskEncoder
from ropeproof.verify.training.head_theory import frequency_profile
from ropeproof.verify.training.lengths import length_accuracy
from ropeproof.verify.training.shipped import load_shipped
from ropeproof.verify.training.shipped_memo import (
    frequency_profile_rows,
    length_accuracy_row,
    shared_shipped,
)

pytest.importorskip("transformers")


def test_the_shared_model_is_loaded_once_and_equals_a_fresh_load() -> None:
    assert shared_shipped("letter") is shared_shipped("letter")
    fresh = load_shipped("letter").model.state_dict()
    shared = shared_shipped("letter").model.state_dict()
    assert fresh.keys() == shared.keys()
    assert all(bool((fresh[k] == shared[k]).all()) for k in fresh)


def test_a_memoised_profile_equals_the_direct_one_and_is_a_copy() -> None:
    model = load_shipped("number").model
    ids = TaskEncoder("number").draw(3, shared_shipped("number").record.seed, SCORING, 0).input_ids
    direct = frequency_profile(model, ids, 0)
    memo = frequency_profile_rows("number", 3, 0)
    assert memo == direct
    memo[0]["share"] = -1.0  # the caller's copy: the next caller still gets the computed value
    assert frequency_profile_rows("number", 3, 0) == direct


def test_one_length_row_is_the_same_in_any_list_of_lengths() -> None:
    model = load_shipped("letter").model
    rows = length_accuracy(model, "letter", [17, 40], count=4)
    assert [length_accuracy_row("letter", n, 4) for n in (17, 40)] == rows
    length_accuracy_row("letter", 40, 4)["accuracy"] = 2.0
    assert length_accuracy_row("letter", 40, 4) == rows[1]
