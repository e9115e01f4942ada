"""The finiteness policy: NaN/inf inputs and overflows raise a named error under check=True (the
default) in every public function of verify/kernel, and pass through silently under check=False."""

from __future__ import annotations

import math

import pytest
import torch

from ropeproof.machinery._errors import InputError, NonFiniteError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._finite import (
    all_finite,
    finite_screen,
    non_finite_input,
    overflow_error,
    passes,
)
from ropeproof.verify.kernel._rope import apply_rope, rope_logits


def ones_head(dtype: str = "float64") -> RopeAttention:
    w = torch.ones(3, 4, dtype=torch.float64)
    return RopeAttention(w, w, w, w.T, RopeSpec(4), device="cpu", dtype=dtype)


def test_screen_is_finite_exactly_when_no_entry_is_bad_or_the_sum_overflows() -> None:
    ok = finite_screen(torch.ones(3), torch.zeros(2, 2, dtype=torch.float64))
    assert ok.shape == () and bool(torch.isfinite(ok))
    for bad in (math.nan, math.inf, -math.inf):
        assert not bool(torch.isfinite(finite_screen(torch.ones(3), torch.tensor([1.0, bad]))))
    assert not bool(torch.isfinite(finite_screen(torch.tensor([math.inf, -math.inf]))))  # inf - inf
    # half precision accumulates in float32: 2000 * 100 > 65504 would overflow a float16 sum
    assert bool(torch.isfinite(finite_screen(torch.full((2000,), 100.0, dtype=torch.float16))))


def test_an_overflowing_screen_is_confirmed_entry_by_entry() -> None:
    """3e38 + 3e38 overflows float32 though both entries are finite: passes() asks all_finite()."""
    big = torch.tensor([3e38, 3e38])
    screen = finite_screen(big)
    assert torch.isinf(screen)
    assert all_finite(big) and passes(screen, lambda: all_finite(big))
    bad = torch.tensor([3e38, math.nan])
    assert not all_finite(bad) and not passes(finite_screen(bad), lambda: all_finite(bad))
    calls: list[int] = []
    assert passes(finite_screen(torch.ones(2)), lambda: calls.append(1) or False)
    assert calls == []  # a finite screen never runs the exact test


def test_non_finite_input_names_the_first_bad_one() -> None:
    err = non_finite_input({"q": torch.ones(2), "k": torch.tensor([math.nan]), "v": torch.tensor([math.inf])})
    assert isinstance(err, InputError) and str(err) == "k contains NaN or inf; k must be finite"
    assert non_finite_input({"q": torch.ones(2), "positions": None}) is None


def test_overflow_error_states_dtype_range_and_sizes() -> None:
    err = overflow_error("the logits", torch.float32, {"q": torch.tensor([1e30, -3e30])})
    assert isinstance(err, NonFiniteError) and isinstance(err, InputError)
    assert "the logits overflowed in torch.float32" in str(err)
    assert "max |q| = 3e+30" in str(err) and "3.4e+38" in str(err)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_rope_logits_non_finite_inputs(bad: float) -> None:
    """Issue 12: rope_logits with NaN/inf inputs returned NaN logits without an error."""
    spec = RopeSpec(4)
    good = torch.ones(3, 4, dtype=torch.float64)
    worse = good.clone()
    worse[1, 2] = bad
    with pytest.raises(InputError, match=r"^q contains NaN or inf; q must be finite$"):
        rope_logits(worse, good, spec)
    with pytest.raises(InputError, match=r"^k contains NaN or inf; k must be finite$"):
        rope_logits(good, worse, spec)
    with pytest.raises(InputError, match=r"^x contains NaN or inf"):
        apply_rope(worse, spec)
    with pytest.raises(InputError, match=r"^k_positions must be finite$"):
        rope_logits(good, good, spec, k_positions=[0.0, bad, 2.0])
    assert not torch.isfinite(rope_logits(worse, good, spec, check=False)).all()  # check=False: as is
    assert not torch.isfinite(apply_rope(worse, spec, check=False)).all()


def test_rope_logits_overflow_from_finite_inputs() -> None:
    q = torch.full((2, 4), 1e200, dtype=torch.float64)
    with pytest.raises(NonFiniteError, match=r"the logits overflowed in torch.float64 .*max \|q\| = 1e\+200"):
        rope_logits(q, q, RopeSpec(4))
    big = torch.full((2, 4), 3e38, dtype=torch.float32)  # the rotation itself overflows float32
    with pytest.raises(NonFiniteError, match=r"the rotated x overflowed in torch.float32"):
        apply_rope(big, RopeSpec(4, freqs=[0.7, 0.1]), [5, 6])


@pytest.mark.parametrize("need_weights", [True, False])
def test_attention_overflow_near_1e200(need_weights: bool) -> None:
    """Issue 12: inputs near 1e200 gave NaN patterns without an error (q.k ~ 1e400 overflows)."""
    head = ones_head()
    x = torch.full((1, 3, 3), 1e200, dtype=torch.float64)
    with pytest.raises(NonFiniteError, match=r"overflowed in torch.float64 .*max \|x\| = 1e\+200"):
        head(x, need_weights=need_weights)
    res = head(x, need_weights=need_weights, check=False)  # check=False: returned as computed
    assert not torch.isfinite(res.output).all()
    # the same inputs scaled into range are fine
    assert torch.isfinite(head(x * 1e-200, need_weights=need_weights).output).all()


@pytest.mark.parametrize("need_weights", [True, False])
def test_attention_float32_overflow_and_bad_inputs(need_weights: bool) -> None:
    head = ones_head("float32")
    with pytest.raises(NonFiniteError, match=r"overflowed in torch.float32"):
        head(torch.full((1, 2, 3), 1e19), need_weights=need_weights)  # q.k ~ (3e19)^2 * 4 > 3.4e38
    with pytest.raises(InputError, match=r"^x contains NaN or inf"):
        head(torch.tensor([[[0.0, math.nan, 1.0], [1.0, 1.0, 1.0]]]), need_weights=need_weights)
    with pytest.raises(InputError, match=r"^positions must be finite$"):
        head(torch.ones(1, 2, 3), positions=[0.0, math.nan], need_weights=need_weights)


def test_masked_logits_are_not_an_error() -> None:
    """The -inf above the diagonal are intended: check=True passes on a normal input."""
    res = ones_head()(torch.randn(2, 5, 3, dtype=torch.float64))
    assert torch.isneginf(res.logits[:, 0, 1:]).all()


def test_large_finite_results_whose_sum_overflows_pass() -> None:
    """Logits near 1e38 in float32 overflow the screen's sum but are all finite: no error, and the
    values are the exact ones (q = k = x = (1e19, 0, 0) rows, W = ones: q.k = 4 * 1e38 / 4)."""
    head = ones_head("float32")
    x = torch.zeros(1, 3, 3)
    x[..., 0] = 0.5e19  # q_t = 0.5e19 on each of the 4 dims; q.k = 4 * 0.25e38 = 1e38
    res = head(x)
    assert torch.isfinite(res.logits[0].tril()).all()
    assert res.logits[0, 0, 0].item() == pytest.approx(1e38, rel=1e-6)


def test_project_checks_its_outputs() -> None:
    head = ones_head()
    with pytest.raises(NonFiniteError, match=r"the projections q, k, v overflowed"):
        head.project(torch.full((1, 2, 3), 1e308, dtype=torch.float64))
    q, _, _ = head.project(torch.full((1, 2, 3), 1e308, dtype=torch.float64), check=False)
    assert torch.isinf(q).all()
