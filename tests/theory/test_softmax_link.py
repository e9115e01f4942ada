"""The softmax link: the target-weight bound against the softmax itself (it is attained when every other
key sits exactly the margin below) and the required scale against mpmath (at that scale the bound is
exactly 1 - eps, and no smaller scale reaches it); the numbers the docstring states; bad input refused."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof import required_logit_scale
from ropeproof.machinery._errors import InputError
from ropeproof.theory._softmax_link import top_weight_bound

margins = st.floats(min_value=1e-9, max_value=10.0)
lengths = st.integers(min_value=2, max_value=10**7)
epsilons = st.floats(min_value=1e-12, max_value=0.999)


@settings(max_examples=200, deadline=None)
@given(margin=margins, n=lengths, eps=epsilons)
def test_the_required_scale_gives_exactly_the_weight(margin: float, n: int, eps: float) -> None:
    scale = required_logit_scale(margin, n, eps)
    with mpmath.workdps(40):
        weight = 1 / (1 + (n - 1) * mpmath.exp(-mpmath.mpf(margin) * mpmath.mpf(scale)))
        if scale > 0:
            assert abs(weight - (1 - mpmath.mpf(eps))) <= 1e-12
            smaller = 1 / (1 + (n - 1) * mpmath.exp(-mpmath.mpf(margin) * mpmath.mpf(scale) * (1 - 1e-6)))
            assert smaller < 1 - mpmath.mpf(eps)  # the least such scale
        else:
            assert mpmath.mpf(1) / n >= 1 - mpmath.mpf(eps)  # uniform weight already suffices


@settings(max_examples=100, deadline=None)
@given(margin=st.floats(min_value=-5, max_value=5), n=st.integers(2, 5000), scale=st.floats(0, 1e4))
def test_the_bound_is_the_softmax_of_the_worst_row(margin: float, n: int, scale: float) -> None:
    """Every other key exactly ``margin`` below the target: the softmax weight is the bound; any row whose
    others are at least ``margin`` below gives at least it."""
    row = torch.full((n,), -margin, dtype=torch.float64)
    row[0] = 0.0
    worst = float(torch.softmax(scale * row, 0)[0])
    assert worst == pytest.approx(top_weight_bound(margin, n, scale), rel=1e-9, abs=1e-300)
    rng = np.random.default_rng(n)
    lower = row.clone()
    lower[1:] -= torch.as_tensor(rng.uniform(0, 3, n - 1))
    assert float(torch.softmax(scale * lower, 0)[0]) >= worst * (1 - 1e-12)


def test_the_numbers_the_docstring_states() -> None:
    """D = 1.2e-5, n = 3402, scale 1000: the target is guaranteed 2.98e-4 of the weight (about 1/n); weight
    1/2 needs scale 6.8e5."""
    assert top_weight_bound(1.2e-5, 3402, 1000) == pytest.approx(2.98e-4, rel=2e-3)
    assert 1 < top_weight_bound(1.2e-5, 3402, 1000) * 3402 < 1.02
    assert required_logit_scale(1.2e-5, 3402, 0.5) == pytest.approx(math.log(3401) / 1.2e-5)
    assert required_logit_scale(1.2e-5, 3402, 0.5) == pytest.approx(6.8e5, rel=5e-3)


def test_limits() -> None:
    assert required_logit_scale(1.0, 2, 0.5) == 0.0  # two keys: scale 0 gives 1/2
    assert required_logit_scale(1.0, 2, 0.4) == pytest.approx(math.log(1.5))
    assert top_weight_bound(1.0, 1, 0.0) == 1.0
    assert top_weight_bound(1.0, 10, 1e6) == 1.0 and top_weight_bound(-1.0, 10, 1e6) == 0.0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: required_logit_scale(0.0, 10, 0.1), "margin=0.0 is out of range.*> 0"),
        (lambda: required_logit_scale(-1e-3, 10, 0.1), "no scale helps"),
        (lambda: required_logit_scale(float("nan"), 10, 0.1), "margin=nan must be finite"),
        (lambda: required_logit_scale(1.0, 1, 0.1), "n=1 is out of range"),
        (lambda: required_logit_scale(1.0, 2.5, 0.1), "n=2.5"),
        (lambda: required_logit_scale(1.0, 10, 0.0), "eps=0.0 is out of range"),
        (lambda: required_logit_scale(1.0, 10, 1.0), "eps=1.0 is out of range"),
        (lambda: top_weight_bound(1.0, 10, -1.0), "scale=-1.0 is out of range"),
    ],
)
def test_bad_input_is_refused(call, match: str) -> None:
    with pytest.raises(InputError, match=match):
        call()
