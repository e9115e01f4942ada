"""The importers' shared skeleton: dims selection and scale folding, checked against the arithmetic
written out, and the HF and TransformerLens importers' symmetric names and leading parameters."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.interop._errors import HeadImportError
from ropeproof.verify.interop._head_assembly import assemble_head, select_dims
from ropeproof.verify.interop.hf._head_import import import_hf_head
from ropeproof.verify.interop.hf._model_head import compiled_from_hf_model
from ropeproof.verify.interop.tl._head_import import import_tl_head
from ropeproof.verify.interop.tl._model_head import compiled_from_tl_model


@settings(max_examples=25, deadline=None)
@given(
    hidden=st.integers(2, 8),
    data=st.data(),
    divisor=st.floats(0.25, 16.0),
    fold=st.booleans(),
)
def test_assembly_keeps_the_selected_dims_and_folds_the_scale(
    hidden: int, data: st.DataObject, divisor: float, fold: bool
) -> None:
    rng = np.random.default_rng(hidden)
    w_q, w_k, w_v = (torch.as_tensor(rng.normal(size=(hidden, 2))) for _ in range(3))
    w_o = torch.as_tensor(rng.normal(size=(2, hidden)))
    size = data.draw(st.integers(1, hidden))
    read = data.draw(st.lists(st.integers(0, hidden - 1), min_size=size, max_size=size, unique=True))
    write = data.draw(st.lists(st.integers(0, hidden - 1), min_size=size, max_size=size, unique=True))
    head = assemble_head(
        w_q, w_k, w_v, w_o, RopeSpec(2, 2, 10000.0), divisor,
        read_dims=read, write_dims=write, fold_scale=fold, device="cpu",
    )  # fmt: skip
    want_q = w_q[read] / divisor if fold else w_q[read]
    assert torch.equal(head.W_Q, want_q) and torch.equal(head.W_K, w_k[read])
    assert torch.equal(head.W_V, w_v[read]) and torch.equal(head.W_O, w_o[:, write])
    assert head.scale == (1.0 if fold else 1.0 / divisor)


def test_select_dims_refuses_out_of_range_and_mismatched_sizes() -> None:
    assert select_dims("read_dims", slice(1, 3), 4).tolist() == [1, 2]
    with pytest.raises(HeadImportError, match=r"read_dims must select dims in 0\.\.3"):
        select_dims("read_dims", [4], 4)
    with pytest.raises(HeadImportError, match="read_dims"):
        select_dims("read_dims", [], 4)
    w = torch.zeros(4, 2, dtype=torch.float64)
    with pytest.raises(HeadImportError, match="they must match"):
        assemble_head(w, w, w, w.T, RopeSpec(2, 2, 10000.0), math.sqrt(2), read_dims=[0], write_dims=[0, 1])


def test_the_importers_are_symmetric() -> None:
    """Both ways in take ``(model, layer, head, ...)``; both compiled forms take ``(model, layer, head,
    token_ids, ...)``."""
    for fn in (import_hf_head, import_tl_head):
        assert list(inspect.signature(fn).parameters)[:3] == ["model", "layer", "head"], fn
    for fn in (compiled_from_hf_model, compiled_from_tl_model):
        assert list(inspect.signature(fn).parameters)[:4] == ["model", "layer", "head", "token_ids"], fn
