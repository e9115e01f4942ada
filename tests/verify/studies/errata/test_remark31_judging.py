"""Judging [A] Remark 3.1: the answers each outcome reports against the tasks' definitions read off by
hand, the positional head's margins against their closed form in exact rationals, and each verdict
turning on inputs or heads that break what it needs."""

from __future__ import annotations

from fractions import Fraction

import pytest
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore
from ropeproof.verify.studies.errata._remark31_judging import (
    positional_cannot_attend_outcome,
    positional_readout_outcome,
    symbolic_cannot_index_outcome,
)

INDEX_PAIR = (("A", "B", "1"), ("B", "A", "1"))
RETRIEVAL_PAIR = (("A1", "BD", "CA"), ("BD", "A1", "CA"))


def test_symbolic_heads_answer_both_orders_alike() -> None:
    """The query 1 asks for the token at position 1: B in the first input, A in the second."""
    out = symbolic_cannot_index_outcome(INDEX_PAIR, 10, torch.float64)
    f = out.figures
    assert out.verdict == "holds" and f["pair_answers"] == ["B", "A"] and f["same_multiset"] is True
    assert (
        f["T_Index_answers"] == ["B", "A"]
        and f["theta0_T_Index_answers"][0] == f["theta0_T_Index_answers"][1]
    )
    assert f["random_heads"] == 10 and 0 <= f["max_relative_change"] <= f["tolerance"]


def test_a_pair_with_different_tokens_proves_nothing() -> None:
    out = symbolic_cannot_index_outcome((("A", "B", "1"), ("B", "B", "1")), 4, torch.float64)
    assert out.verdict == "violated" and out.figures["same_multiset"] is False


def test_positional_heads_ignore_which_pair_sits_where() -> None:
    """The query CA asks for the pair with left letter A: position 0 in the first input, 1 in the second."""
    out = positional_cannot_attend_outcome(RETRIEVAL_PAIR, 10)
    assert out.verdict == "holds" and out.figures["target_positions"] == [0, 1]
    assert out.figures["pair_answers"] == ["A1", "A1"]


def test_a_pair_whose_target_stays_put_proves_nothing() -> None:
    out = positional_cannot_attend_outcome((("A1", "BD", "CA"), ("A2", "BD", "CA")), 4)
    assert out.verdict == "violated" and out.figures["target_positions"] == [0, 0]


def test_the_positional_readout_answers_up_to_its_period() -> None:
    """Period N = 17: the worst readout margin at length n is exactly 1/(2(N - 1) + n - 1)."""
    out = positional_readout_outcome(4, 17, 10.0, "3..17", 16, torch.float64, ResultStore())
    f = out.figures
    assert out.verdict == "violated" and f["counterexample_found"] and f["margin_is_closed_form"]
    assert [r["n"] for r in f["margins"]] == list(range(3, 18))
    for r in f["margins"]:
        assert r["margin"] == pytest.approx(float(Fraction(1, 2 * 16 + r["n"] - 1)), rel=1e-12)
    assert f["min_margin"] == pytest.approx(1 / 48, rel=1e-12) and f["sampled_accuracy"] == 1.0
    assert out.counterexample["lengths"] == "3..17"


def test_a_weak_bonus_leaves_the_remark_standing() -> None:
    out = positional_readout_outcome(4, 17, 0.01, [3, 17], 8, torch.float64, ResultStore())
    assert (
        out.verdict == "holds" and out.figures["min_margin"] < 0 and not out.figures["counterexample_found"]
    )


def test_bad_lengths_name_the_parameter() -> None:
    with pytest.raises(InputError, match="lengths"):
        positional_readout_outcome(4, 17, 10.0, [], 8, torch.float64, ResultStore())
