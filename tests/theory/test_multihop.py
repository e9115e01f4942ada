"""Multi-hop programs: the chain recursion against its closed form and a brute-force chain simulation,
code margins against brute force, the symbolic logits, and validation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.constructions._multihop_programs import letter_program, number_program
from ropeproof.machinery._errors import ConstructionError
from ropeproof.theory._construction import Plane, Token
from ropeproof.theory._multihop import (
    Feature,
    MultiHopProgram,
    ProgramLayer,
    Reader,
    chain_coefficient,
    code_dims,
    code_margin,
    cyclic_code,
    onehot_code,
    standard_chain_coefficient,
)


def _simulate(hop_pattern: list[bool], hops: int) -> int:
    """Hard attention on an explicit chain, with position indices: position i holds hop i of the chain,
    position `hops` the answer (channel 1), others 0; a hop layer adds the target's channel."""
    channel = [0] * hops + [1]
    target = [min(i + 1, hops) for i in range(hops + 1)]
    for hop in hop_pattern:
        channel = [channel[i] + channel[target[i] if hop else i] for i in range(hops + 1)]
    return channel[0]


@given(hop_layers=st.integers(0, 8), extra=st.integers(0, 6), hops=st.integers(0, 9))
def test_standard_coefficient_matches_the_recursion_and_the_simulation(hop_layers, extra, hops) -> None:
    pattern = [True] * hop_layers + [False] * extra
    c = chain_coefficient(pattern, hops)
    assert c == _simulate(pattern, hops)
    assert c == standard_chain_coefficient(hop_layers, hop_layers + extra, hops)
    assert (c > 0) == (hops <= hop_layers)


@given(st.lists(st.booleans(), min_size=0, max_size=10), st.integers(0, 6))
def test_any_layer_order_solves_a_chain_iff_enough_hop_layers(pattern, hops) -> None:
    c = chain_coefficient(pattern, hops)
    assert c == _simulate(pattern, hops)
    assert (c > 0) == (sum(pattern) >= hops)


def test_twelve_layers_four_hops() -> None:
    # Index^4 Reflexive^8: c = 2^8 * sum_{k=h}^4 binom(4, k)
    expected = {1: 256 * 15, 2: 256 * 11, 3: 256 * 5, 4: 256 * 1}
    for h, c in expected.items():
        assert chain_coefficient([True] * 4 + [False] * 8, h) == c
    assert chain_coefficient([True] * 4 + [False] * 8, 5) == 0
    with pytest.raises(ConstructionError, match="hops"):
        chain_coefficient([True], -1)


@pytest.mark.parametrize("size", [2, 3, 8, 64, 120])
def test_cyclic_code_margin_is_the_closest_pair(size: int) -> None:
    codes = np.array([[float(x) for x in cyclic_code(i, size)] for i in range(size)])
    gram = codes @ codes.T
    brute = min(gram[i, i] - max(max(np.delete(gram[i], i)), 0.0) for i in range(size))
    closed = float(code_margin("cyclic", size))
    assert brute == pytest.approx(closed, rel=1e-12)
    assert closed == pytest.approx(min(2 * math.sin(math.pi / size) ** 2, 1.0), rel=1e-15)
    assert code_dims("cyclic", size) == 2


def test_onehot_code() -> None:
    assert [int(x) for x in onehot_code(2, 4)] == [0, 0, 1, 0]
    assert code_margin("onehot", 5) == 1 and code_dims("onehot", 5) == 5
    with pytest.raises(ConstructionError, match="size"):
        code_margin("cyclic", 1)
    with pytest.raises(ConstructionError, match="code"):
        code_margin("gray", 4)


def _sym(expr: sp.Expr, name: str) -> sp.Symbol:
    return next(s for s in expr.free_symbols if s.name == name)


def test_index_layer_logit_is_cos_of_s_minus_distance() -> None:
    prog = number_program(hops=1, layers=2, letters=3, max_int=3)
    u = sp.Symbol("u", integer=True)
    s_tok, letter = prog.tokens[3 + 1], prog.tokens[0]  # integer 2 against a letter
    theta = _sym(prog.logit(0, s_tok, letter, u), "theta_I0")
    assert sp.simplify(prog.logit(0, s_tok, letter, u) - sp.cos((2 + u) * theta)) == 0
    # a letter's query is the s = 0 pointer: it peaks on itself, and so does the Reflexive layer
    assert sp.simplify(prog.logit(0, letter, s_tok, u) - sp.cos(u * theta)) == 0
    assert (
        sp.simplify(
            prog.logit(1, s_tok, letter, u) - sp.cos(u * _sym(prog.logit(1, s_tok, letter, u), "theta_F0"))
        )
        == 0
    )


def test_retrieval_layer_logit_uses_the_difference_of_codes() -> None:
    prog = letter_program(hops=1, layers=1, alphabet=4, max_int=1)
    names = {t.name: t for t in prog.tokens}
    u = sp.Symbol("u", integer=True)
    q, k = names["BD"], names["CA"]  # query looks up D (phi 3); key has left letter C (phi 2)
    closed = prog.logit(0, q, k, u)
    theta = _sym(closed, "theta_R")
    assert sp.simplify(closed - sp.cos((2 - 3) * sp.pi / 2 + u * theta)) == 0
    # a (letter, integer) pair finds itself
    assert sp.simplify(prog.logit(0, names["C1"], names["C1"], 0) - 1) == 0


def test_program_validation() -> None:
    one = Feature("one", ("one",), "constant", {"letter": lambda p: [1]})
    chan = Feature("channel", ("c.x", "c.y"), "channel", {"letter": lambda p: cyclic_code(p["phi"], 2)})
    toks = (Token("A", "letter", {"phi": 0}), Token("B", "letter", {"phi": 1}))
    good_layer = ProgramLayer(
        "reflexive",
        (Plane(1),),
        (Reader("one", sp.Matrix([[1], [0]])),),
        (Reader("one", sp.Matrix([[1], [0]])),),
        variant="positional",
    )
    kwargs = dict(
        name="p",
        task="number",
        tokens=toks,
        generic={},
        features=(one, chan),
        channel="channel",
        readout=chan.rules,
        channel_code="cyclic",
        answer_count=2,
        logit_scale=1,
    )
    prog = MultiHopProgram(layers=(good_layer,), **kwargs)
    assert prog.residual_labels == ("one", "c.x", "c.y") and prog.d_model == 3
    assert prog.feature_slice("channel") == slice(1, 3)
    bad = ProgramLayer(
        "reflexive",
        (Plane(1),),
        (Reader("channel", sp.eye(2)),),
        (Reader("channel", sp.eye(2)),),
        variant="positional",
    )
    with pytest.raises(ConstructionError, match="original content"):
        MultiHopProgram(layers=(bad,), **kwargs)
    with pytest.raises(ConstructionError, match="variant"):
        ProgramLayer("reflexive", (Plane(1),), good_layer.query, good_layer.key, variant="sideways")
    with pytest.raises(ConstructionError, match="kind"):
        ProgramLayer("copy", (Plane(1),), good_layer.query, good_layer.key)
    with pytest.raises(ConstructionError, match="value_weight"):
        ProgramLayer("index", (Plane(1),), good_layer.query, good_layer.key, value_weight=0)
    with pytest.raises(ConstructionError, match="role"):
        Feature("x", ("x",), "scratch")
    with pytest.raises(ConstructionError, match="unique"):
        MultiHopProgram(
            layers=(good_layer,), **{**kwargs, "features": (one, Feature("o2", ("one",), "content"), chan)}
        )
    with pytest.raises(ConstructionError, match="hops"):
        number_program(hops=0)
    with pytest.raises(ConstructionError, match="layers"):
        number_program(hops=4, layers=3)
    with pytest.raises(ConstructionError, match="reflexive"):
        letter_program(reflexive="both")
    with pytest.raises(ConstructionError, match="code"):
        letter_program(code="gray")
    with pytest.raises(ConstructionError, match="amplitude"):
        number_program(index_planes=((1.0, 0.0),))


def test_residual_layouts_are_labelled() -> None:
    assert number_program().residual_labels == ("pointer.0.x", "pointer.0.y", "one", "letter.x", "letter.y")
    lab = letter_program().residual_labels
    assert lab == ("key.0.x", "key.0.y", "query.0.x", "query.0.y", "one", "answer.x", "answer.y")
    assert len(number_program(channel_code="onehot", letters=5).residual_labels) == 2 + 1 + 5
    assert "self.x" in number_program(reflexive="symbolic").residual_labels
    assert len(list(itertools.chain(letter_program(code="orthogonal").residual_labels))) == 8 + 8 + 1 + 2
