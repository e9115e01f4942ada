"""Facts for any number of terms by checked induction (ropeproof.theory._counting_induction): every
reviewed definition has a base and a step that hold, a false step is refused, and the sums and the linear
map hold as stated (compared with direct computation on random families)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.theory._counting_induction import (
    INDUCTIONS,
    holds_for_any_count,
    linear_map_of_sum,
    sum_beyond_count_times_bound,
)
from ropeproof.theory._order_facts import DEFINITIONS, Restatement


def test_every_reviewed_definition_holds_for_any_number_of_terms() -> None:
    assert sorted(INDUCTIONS) == sorted(DEFINITIONS)
    assert all(holds_for_any_count(name) for name in DEFINITIONS)
    with pytest.raises(ValueError, match="accepted"):
        holds_for_any_count("nosuch")


def test_a_false_step_is_refused() -> None:
    m, x, a = sp.symbols("m x a", real=True)
    # "the least value only grows as terms are added" is false, and its check says so
    assert not Restatement("step", sp.Min(m, x), ">=", a, (sp.Ge(m, a),)).holds()
    assert not Restatement("step", sp.Max(m, x), "<=", a, (sp.Le(m, a),)).holds()


def test_sums_and_linear_maps_for_any_count() -> None:
    assert sum_beyond_count_times_bound() and linear_map_of_sum()


@settings(deadline=None, max_examples=50)
@given(st.lists(st.floats(min_value=-5, max_value=5), min_size=1, max_size=30), st.floats(-5, 5))
def test_what_the_inductions_state_on_random_families(values: list[float], c: float) -> None:
    v = np.array(values)
    if (v > c).all():
        assert v.sum() > len(v) * c - 1e-9 * (1 + abs(c)) * len(v)
    assert v.min() <= v[0] <= v.max()
    t = v.max() + 1.0  # a target on top: gap (top minus second largest) = margin (t minus the best other)
    ordered = np.sort(np.append(v, t))
    assert ordered[-1] - ordered[-2] == pytest.approx(t - v.max())
