"""Every documented bad input raises a specific error that names the parameter and the range."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ropeproof.machinery._errors import InputError, RopeSpecError, WeightError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._rope import apply_rope, rope_logits


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"head_dim": 8, "rotary_dim": 3},
            r"rotary_dim=3 is out of range; accepted: an even integer >= 0 and <= 8 \(head_dim=8\)",
        ),
        ({"head_dim": 8, "rotary_dim": 10}, r"rotary_dim=10 is out of range.*head_dim=8"),
        ({"head_dim": 8, "rotary_dim": -2}, r"rotary_dim=-2 is out of range"),
        ({"head_dim": 7}, r"head_dim=7 is out of range; accepted: an even integer >= 2"),
        ({"head_dim": 0}, r"head_dim=0 is out of range; accepted: an even integer >= 2"),
        ({"head_dim": 8, "freqs": [1.0, 2.0]}, r"freqs has 2 entries.*rotary_dim/2=4"),
        ({"head_dim": 4, "freqs": [1.0, math.nan]}, r"freqs must all be finite"),
        ({"head_dim": 4, "freqs": [math.inf, 1.0]}, r"freqs must all be finite"),
        ({"head_dim": 4, "layout": "neox"}, r"layout='neox' is unknown.*interleaved.*half"),
        ({"head_dim": 4, "base": -1.0}, r"base=-1.0 is out of range; accepted: a finite real number > 0"),
        ({"head_dim": 4, "base": math.nan}, r"base=nan must be finite; accepted: a finite real number > 0"),
    ],
)
def test_spec_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(RopeSpecError, match=match):
        RopeSpec(**kwargs)


def test_spec_error_is_value_error() -> None:
    assert issubclass(RopeSpecError, ValueError)


def _weights(d_model=3, h=4):
    return [np.ones((d_model, h)), np.ones((d_model, h)), np.ones((d_model, h)), np.ones((h, d_model))]


@pytest.mark.parametrize(
    ("index", "bad", "match"),
    [
        (1, np.ones((3, 6)), r"W_K has shape \(3, 6\); expected \(3, 4\)"),
        (2, np.ones((2, 4)), r"W_V has shape \(2, 4\); expected \(3, 4\)"),
        (3, np.ones((3, 4)), r"W_O has shape \(3, 4\); expected \(4, 3\)"),
        (0, np.ones((3, 6)), r"W_Q has shape \(3, 6\); expected \[d_model, spec.head_dim=4\]"),
        (0, np.ones(4), r"W_Q must be 2-D"),
    ],
)
def test_weight_shape_errors(index: int, bad, match: str) -> None:
    w = _weights()
    w[index] = bad
    with pytest.raises(WeightError, match=match):
        RopeAttention(*w, RopeSpec(4), device="cpu")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_non_finite_weights(index: int, value: float) -> None:
    w = _weights()
    w[index] = w[index].copy()
    w[index][1, 2] = value
    name = ["W_Q", "W_K", "W_V", "W_O"][index]
    with pytest.raises(WeightError, match=rf"{name} contains NaN or inf \(first at index \(1, 2\)\)"):
        RopeAttention(*w, RopeSpec(4), device="cpu")


def test_bad_scale_dtype_device() -> None:
    with pytest.raises(WeightError, match=r"scale=nan must be finite"):
        RopeAttention(*_weights(), RopeSpec(4), scale=math.nan, device="cpu")
    with pytest.raises(InputError, match=r"dtype='float8'.*accepted"):
        RopeAttention(*_weights(), RopeSpec(4), dtype="float8")
    with pytest.raises(InputError, match=r"device='banana' is not a device"):
        RopeAttention(*_weights(), RopeSpec(4), device="banana")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match=r"CUDA is not available"):
            RopeAttention(*_weights(), RopeSpec(4), device="cuda")


def test_input_errors() -> None:
    head = RopeAttention(*_weights(), RopeSpec(4), device="cpu")
    with pytest.raises(InputError, match=r"the sequence is empty; n must be >= 1"):
        head(torch.zeros(1, 0, 3))
    with pytest.raises(InputError, match=r"x must have shape \[batch, n, d_model\]"):
        head(torch.zeros(4, 3))
    with pytest.raises(InputError, match=r"x has d_model=5; this head expects d_model=3"):
        head(torch.zeros(1, 4, 5))
    with pytest.raises(InputError, match=r"x contains NaN or inf"):
        head(torch.full((1, 2, 3), math.nan))
    spec = RopeSpec(4)
    with pytest.raises(InputError, match=r"the sequence is empty"):
        apply_rope(torch.zeros(0, 4), spec)
    with pytest.raises(InputError, match=r"x has last dimension 6, but spec.head_dim=4"):
        apply_rope(torch.zeros(2, 6), spec)
    with pytest.raises(InputError, match=r"positions must have last dimension n=2"):
        apply_rope(torch.zeros(2, 4), spec, positions=[0, 1, 2])
    with pytest.raises(InputError, match=r"positions must be finite"):
        apply_rope(torch.zeros(2, 4), spec, positions=[0.0, math.inf])
    with pytest.raises(InputError, match=r"q and k must share dtype"):
        rope_logits(torch.zeros(2, 4), torch.zeros(2, 4, dtype=torch.float64), spec)
