"""Row functions: the row kind is explicit, and attention rows are checked to be probability vectors
(issue 12: a logit row passed as an attention row gave a plausible wrong score)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._random_heads import random_head
from ropeproof.verify.measure.ps._exact import exact_exclusion, logit_row_fn, sampled_exclusion
from ropeproof.verify.measure.ps._row_functions import (
    RowFunction,
    attention_rows,
    check_probability_rows,
    require_kind,
    row_kind,
    softmax_tolerance,
)
from ropeproof.verify.measure.ps._scores import attention_row_fn, last_row_fn

FORMATS = [
    (torch.float64, torch.float64),
    (torch.float32, torch.float32),
    (torch.float32, torch.bfloat16),  # HF eager: softmax in float32, cast to the model's dtype
    (torch.float32, torch.float64),  # HF eager in a float64 model (GPT-J, LLaMA)
    (torch.float16, torch.float16),
    (torch.bfloat16, torch.bfloat16),
]


@given(n=st.integers(2, 3000), spread=st.floats(0.0, 30.0), seed=st.integers(0, 2**31 - 1))
def test_real_softmax_rows_are_within_the_derived_tolerance(n: int, spread: float, seed: int) -> None:
    """torch's softmax, in each format and cast, sums to 1 within softmax_tolerance."""
    logits = spread * torch.randn(4, n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    for compute, returned in FORMATS:
        rows = torch.softmax(logits.to(compute), -1).to(returned)
        gap = float((rows.double().sum(-1) - 1).abs().max())
        declared = None if compute == torch.float32 or compute == returned else compute
        assert gap <= softmax_tolerance(n, returned, declared), (compute, returned, gap)
        check_probability_rows(rows, n, declared)


def test_tolerance_formula() -> None:
    """2 n u_c + u_r + n u_64, with u = eps / 2 and u_c defaulting to float32 or the row's format."""
    u64, u32, ubf = 2.0**-53, 2.0**-24, 2.0**-8
    assert softmax_tolerance(10, torch.float64, torch.float64) == pytest.approx(20 * u64 + u64 + 10 * u64)
    assert softmax_tolerance(10, torch.float64) == pytest.approx(20 * u32 + u64 + 10 * u64)
    assert softmax_tolerance(10, torch.bfloat16) == pytest.approx(20 * ubf + ubf + 10 * u64)


def test_check_probability_rows_rejects_what_is_not_a_softmax() -> None:
    ok = torch.full((3, 5), 0.2, dtype=torch.float64)
    check_probability_rows(ok, 5)
    check_probability_rows(ok[:, :4], 5)  # non-query entries: sum 0.8 <= 1
    bad = ok.clone()
    bad[1, 2] = -1e-300
    with pytest.raises(InputError, match="negative entry"):
        check_probability_rows(bad, 5)
    with pytest.raises(InputError, match="not 1"):
        check_probability_rows(ok * (1 + 1e-6), 5)  # above the float32 default (2 * 5 * 2^-24 = 6e-7)
    check_probability_rows(ok * (1 + 1e-7), 5)  # within it
    with pytest.raises(InputError, match="> 1"):
        check_probability_rows(torch.full((1, 4), 0.3, dtype=torch.float64), 5)
    with pytest.raises(InputError, match="NaN or inf"):
        check_probability_rows(torch.full((1, 5), float("inf")), 5)


def test_row_function_kind_is_checked_before_calling() -> None:
    head = random_head(RopeSpec(4), 3, seed=0)
    calls = []

    def spy(x: torch.Tensor) -> torch.Tensor:
        calls.append(x)
        return head(x).logits[:, -1, :]

    fn = RowFunction(spy, "logit", name="spy")
    assert row_kind(fn) == "logit" and row_kind(spy) is None
    with pytest.raises(InputError, match=r"kind='logit'.*attention_row_fn"):
        require_kind(fn, "attention", "ps_scores")
    require_kind(spy, "attention", "ps_scores")  # a plain callable passes; its rows are checked instead
    assert not calls
    assert row_kind(attention_row_fn(head)) == row_kind(last_row_fn(head)) == "attention"
    assert row_kind(logit_row_fn(head)) == "logit"


def test_exact_deviations_refuse_attention_rows() -> None:
    """The mirror image: [B]'s exact deviations are defined on logits, not probabilities."""
    head = random_head(RopeSpec(4), 3, seed=0)
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    for fn in (attention_row_fn(head), last_row_fn(head)):
        with pytest.raises(InputError, match="logit row"):
            exact_exclusion(fn, x)
        with pytest.raises(InputError, match="logit row"):
            sampled_exclusion(fn, x, n_samples=3)
    assert exact_exclusion(logit_row_fn(head), x).all_hold


def test_attention_rows_shapes_and_heads() -> None:
    x = torch.zeros(2, 4, 3)
    uniform = RowFunction(lambda t: torch.full((t.shape[0], 3, 4), 0.25), "attention", n_heads=3)
    rows = attention_rows(uniform, x, 3)
    assert rows.shape == (2, 3, 3) and rows.dtype == torch.float64
    one = attention_rows(lambda t: torch.full((t.shape[0], 3), 0.25), x)  # n - 1 entries, one head
    assert one.shape == (2, 1, 3)
    with pytest.raises(InputError, match=r"heads=3, n=4"):
        attention_rows(lambda t: torch.full((2, 4), 0.25), x, 3)
    with pytest.raises(InputError, match=r"\[batch=2, n=4\]"):
        attention_rows(lambda t: torch.full((2, 2, 4), 0.25), x)
    with pytest.raises(InputError, match="dtype"):
        attention_rows(lambda t: torch.ones(2, 4, dtype=torch.int64), x)
    with pytest.raises(InputError, match="not a tensor"):
        attention_rows(lambda t: object(), x)


def test_row_function_validates_its_fields() -> None:
    with pytest.raises(InputError, match="callable"):
        RowFunction(3, "attention")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="kind"):
        RowFunction(lambda t: t, "probabilities")  # type: ignore[arg-type]
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InputError, match="n_heads"):
            RowFunction(lambda t: t, "attention", n_heads=bad)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="softmax_dtype"):
        RowFunction(lambda t: t, "attention", softmax_dtype=torch.int32)
