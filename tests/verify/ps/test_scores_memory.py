"""ps_scores refuses input sizes over the memory limit before building the swaps."""

from __future__ import annotations

import pytest
import torch

from ropeproof.theory.errors import MemoryBudgetError
from ropeproof.theory.memory_budget import ENV_VAR
from ropeproof.verify.ps.scores import attention_row_fn, ps_scores, swap_plan, swapped_rows
from ropeproof.verify.subjects import random_subject


@pytest.mark.parametrize("callable_head", [False, True])
def test_refusal_threshold_is_the_estimate(callable_head: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused one byte below the estimate, run at the estimate. The estimate is six float64 copies of
    the swapped rows ``[batch, S, n]`` (plus, for a callable, the swapped inputs ``[batch, S, n, d]``)."""
    batch, n, d = 6, 24, 8
    subj = random_subject(n_inputs=batch, length=n, head_dim=8, d_model=d, seed=0)
    head = attention_row_fn(subj.head) if callable_head else subj.head
    perms, _, _ = swap_plan(n)
    _, rows = swapped_rows(subj.head, subj.inputs, perms)
    rows_bytes = batch * perms.shape[0] * n * 8  # the rows with the query's own logit, in float64
    assert rows.numel() * rows.element_size() == rows_bytes
    estimate = 6 * rows_bytes + (batch * perms.shape[0] * n * d * 8 if callable_head else 0)
    monkeypatch.setenv(ENV_VAR, str(estimate - 1))
    with pytest.raises(MemoryBudgetError, match="ps_scores of 6 inputs of length 24"):
        ps_scores(head, subj.inputs)
    monkeypatch.setenv(ENV_VAR, str(estimate))
    assert ps_scores(head, subj.inputs).s_pos.shape == (batch,)


def test_long_inputs_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "1GiB")
    x = torch.zeros(2, 5000, 4, dtype=torch.float64)
    subj = random_subject(n_inputs=1, length=3, head_dim=4, d_model=4, seed=0)
    with pytest.raises(MemoryBudgetError, match="length 5000"):
        ps_scores(subj.head, x)
