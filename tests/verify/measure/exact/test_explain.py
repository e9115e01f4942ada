"""Witnesses that explain: the target and the winning competitor, checked against the head's own
logits (the torch module) and against mpmath, for head sweeps and the direct sweeps."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction, retrieval_construction
from ropeproof.machinery._errors import InputError
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.measure.exact._explain import (
    explain_input,
    explain_row,
    index_explanation,
    index_input_tokens,
)
from ropeproof.verify.measure.exact._head_sweep import sweep_head
from ropeproof.verify.measure.exact._sweep import sweep_index, sweep_retrieval


def module_row(head, tokens) -> np.ndarray:
    module = RopeAttention.from_head(head, "cpu")
    return module(torch.as_tensor(head.embed(list(tokens))[None])).logits[0, -1].double().numpy()


@pytest.mark.parametrize("quantity", ["margin_inf", "gap_sup", "gap_inf"])
def test_head_sweep_witnesses_name_what_beats_the_target(quantity: str) -> None:
    head = compile_construction(retrieval_construction(3, 0.4, max_int=1))
    table = sweep_head(head, 9)
    for n in (3, 6, 9):
        w = table.witness(n, quantity)
        e = w.explanation
        row = module_row(head, w.tokens)
        assert e.target_position == w.target_position and e.target_token == w.tokens[e.target_position]
        assert e.target_logit == pytest.approx(row[e.target_position], abs=1e-13)
        others = np.delete(row, e.target_position)
        assert e.competitor_logit == pytest.approx(others.max(), abs=1e-13)
        assert (
            e.competitor_token == w.tokens[e.competitor_position]
            and e.competitor_position != e.target_position
        )
        assert e.competitor_offset == e.competitor_position - (n - 1) <= 0
        if quantity == "margin_inf":
            assert e.margin == pytest.approx(w.value, abs=1e-13)  # the witness attains the extreme
        else:
            top = sorted(row, reverse=True)
            assert top[0] - top[1] == pytest.approx(w.value, abs=1e-13)
            assert set(e.top_positions) <= set(range(n))
        assert "winning competitor" in w.describe()


def test_direct_sweep_witnesses_explain() -> None:
    """sweep_index: the target scores 1 and the competitor m from it cos(m theta) (mpmath); the margin
    is the stable 2 sin(m theta / 2)^2 even at theta = 1e-9 where cos rounds to 1."""
    for theta in (0.866, 1e-9):
        w = sweep_index(theta, 30).witness(30, "margin_inf")
        e = w["explanation"]
        m = abs(e["competitor_position"] - e["target_position"])
        with mpmath.workprec(200):
            exact = 2 * mpmath.sin(m * mpmath.mpf(theta) / 2) ** 2
        assert e["target_logit"] == 1.0 and w["tokens"][e["target_position"]] == "A"
        assert e["margin"] == pytest.approx(float(exact), rel=1e-14) and e["margin"] == pytest.approx(
            w["value"]
        )
    w = sweep_retrieval(3, 0.4, 12).witness(12, "margin_inf")
    e = w["explanation"]
    head = compile_construction(retrieval_construction(3, 0.4, max_int=1))
    row = module_row(head, w["tokens"])
    assert e["competitor_logit"] == pytest.approx(np.delete(row, e["target_position"]).max(), abs=1e-13)
    assert "winning competitor" in e["description"]


def test_explanations_check_their_input() -> None:
    with pytest.raises(InputError, match="one entry per token"):
        explain_row("margin_inf", ["a", "b"], [1.0], 0)
    with pytest.raises(InputError, match="another position"):
        index_explanation("margin_inf", [0.5], [1.0], index_input_tokens(4, 2), 1, 1)
    tokens = index_input_tokens(5, 3, 1)
    assert tokens == ["B", "A", "C", "C", "3"]
    head = compile_construction(index_construction(theta=0.5, letters=3, max_int=4))
    e = explain_input(head, tokens, 1)
    assert e.competitor_position in (0, 2) and e.margin == pytest.approx(1 - math.cos(0.5), abs=1e-15)
