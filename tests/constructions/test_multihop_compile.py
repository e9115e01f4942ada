"""Compiled multi-hop models: embeddings against independent closed forms, every layer's logits
against the symbolic program evaluated in mpmath, the value/readout maps, and validation."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.constructions._multihop_compile import ZERO_BELOW, CompiledModel, compile_program
from ropeproof.constructions._multihop_programs import letter_program, number_program
from ropeproof.machinery._errors import ConstructionError, InputError

NUMBER = number_program(index_planes=((1.0, 1.0), (0.25, 0.5)), letters=10, max_int=16)
LETTER = letter_program(alphabet=6, max_int=3, retrieval_theta=0.01)


@pytest.fixture(scope="module")
def number_model() -> CompiledModel:
    return compile_program(NUMBER)


@pytest.fixture(scope="module")
def letter_model() -> CompiledModel:
    return compile_program(LETTER)


def test_number_embedding_matches_closed_forms(number_model: CompiledModel) -> None:
    m = number_model
    ptr, one, chan = (m.feature_dims(f) for f in ("pointer", "one", "channel"))
    for s in (1, 7, 16):
        row = m.W_E[m.token_index(str(s))]
        expected = [math.cos(s * 1.0), -math.sin(s * 1.0), math.cos(s * 0.25), -math.sin(s * 0.25)]
        np.testing.assert_allclose(row[ptr], expected, rtol=0, atol=2e-16)
        assert row[one] == 1 and not row[chan].any()  # integers start with an empty channel
    for phi, name in [(0, "A"), (1, "B"), (9, "J")]:
        row = m.W_E[m.token_index(name)]
        assert list(row[ptr]) == [1.0, 0.0, 1.0, 0.0]  # a letter's pointer is s = 0
        angle = 2 * math.pi * phi / 10
        np.testing.assert_allclose(row[chan], [math.cos(angle), math.sin(angle)], atol=2e-16)
        np.testing.assert_array_equal(m.W_U[chan, m.token_index(name)], row[chan])  # readout = code
    assert not m.W_U[:, m.token_index("3")].any()
    assert m.answers == tuple("ABCDEFGHIJ")
    assert m.residual_labels[:4] == ("pointer.0.x", "pointer.0.y", "pointer.1.x", "pointer.1.y")


def _rot(a: float) -> np.ndarray:
    return np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])


def _layer_logit(model: CompiledModel, layer: int, x: str, y: str, i: int, j: int) -> float:
    """The compiled layer's logit by explicit per-position rotations (numpy, no ropeproof RoPE code)."""
    head = model.layers[layer]
    q = model.W_E[model.token_index(x)] @ head.W_Q
    k = model.W_E[model.token_index(y)] @ head.W_K
    total = 0.0
    for (a, b), f in zip(head.spec.plane_dims, head.spec.plane_freqs, strict=True):
        total += (_rot(i * f) @ q[[a, b]]) @ (_rot(j * f) @ k[[a, b]])
    return head.scale * total


def _program_logit(program, layer: int, x: str, y: str, offset: int) -> float:
    toks = {t.name: t for t in program.tokens}
    expr = program.logit(layer, toks[x], toks[y], offset).subs(program.parameters)
    with mpmath.workdps(30):
        return float(sp.N(program.logit_scale, 30)) * float(sp.N(expr, 30))


@settings(max_examples=12)
@given(data=st.data())
def test_compiled_logits_equal_the_symbolic_program(data, number_model, letter_model) -> None:
    for program, model in ((NUMBER, number_model), (LETTER, letter_model)):
        layer = data.draw(st.integers(0, model.n_layers - 1))
        x = data.draw(st.sampled_from(model.tokens))
        y = data.draw(st.sampled_from(model.tokens))
        j = data.draw(st.integers(0, 40))
        i = data.draw(st.integers(j, 60))
        got = _layer_logit(model, layer, x, y, i, j)
        want = _program_logit(program, layer, x, y, j - i)
        # logits are logit_scale * (a sum of products of unit-size entries): float64 rounding of the
        # weights (1 ulp each) and of ~8 products, times logit_scale = 1000
        assert got == pytest.approx(want, abs=1000 * 32 * 2.2e-16)


def test_value_maps_copy_the_channel(letter_model: CompiledModel) -> None:
    chan = letter_model.feature_dims("channel")
    for head, info in zip(letter_model.layers, letter_model.layer_info, strict=True):
        ov = head.W_V @ head.W_O
        expected = np.zeros_like(ov)
        expected[chan, chan] = np.eye(2) * info.value_weight
        np.testing.assert_array_equal(ov, expected)
        assert head.scale == 1000.0 and np.array_equal(head.W_E, letter_model.W_E)
    assert [i.label for i in letter_model.layer_info] == ["retrieval"] * 4 + ["reflexive-positional"] * 8
    assert letter_model.layer_info[0].freqs == (0.01,) and letter_model.layer_info[0].code == "one-plane"
    assert letter_model.hop_layers == 4 and letter_model.chain_coefficient(4) == 256


def test_orthogonal_letter_code_is_orthonormal() -> None:
    m = compile_program(letter_program(code="orthogonal", alphabet=5, max_int=1, retrieval_theta=0.0))
    key = m.W_E[:, m.feature_dims("key")]
    lefts = sorted({t[0] for t in m.tokens})
    rows = np.array([key[m.token_index(f"{L}1")] for L in lefts])
    np.testing.assert_array_equal(rows @ rows.T, np.eye(5))
    assert m.layer_info[0].freqs == (0.0, 0.0, 0.0)


def test_zero_snapping_and_describe(letter_model: CompiledModel) -> None:
    # sin(pi) of the cyclic code (answer 9 of 18) is exactly 0, not ~1e-31
    chan = letter_model.feature_dims("channel")
    col = letter_model.W_U[chan, letter_model.token_index(letter_model.answers[9])]
    assert col[1] == 0.0 and col[0] == -1.0
    assert ZERO_BELOW < 1e-20
    text = letter_model.describe()
    assert "dim 4: one" in text and "layer 0: retrieval" in text


def test_model_lookups_and_errors(number_model: CompiledModel) -> None:
    assert number_model.ids(["A", "3"]).tolist() == [0, 12]
    assert number_model.ids([["A"], ["B"]]).shape == (2, 1)
    with pytest.raises(InputError, match="unknown token"):
        number_model.ids(["nosuch"])
    with pytest.raises(InputError, match="equal length"):
        number_model.ids([["A"], ["A", "B"]])
    with pytest.raises(InputError, match="feature"):
        number_model.feature_dims("nosuch")
    with pytest.raises(ConstructionError, match="MultiHopProgram"):
        compile_program("number")  # type: ignore[arg-type]
    assert number_model.decode(np.eye(number_model.vocab_size)[[3]]) == ["D"]


@pytest.mark.parametrize(
    "program",
    [
        number_program(hops=1, layers=2, index_planes=((1.0, 0.25), (0.0123, 0.75)), max_int=40),
        number_program(hops=1, layers=2, reflexive="symbolic", letters=7, max_int=5, channel_code="onehot"),
        letter_program(
            hops=1, layers=2, alphabet=5, max_int=3, code="orthogonal", retrieval_theta=(0.1, 0.2, 0.3)
        ),
        letter_program(hops=1, layers=2, alphabet=6, max_int=2),
    ],
    ids=["number-two-planes", "number-onehot-symbolic", "letter-orthogonal", "letter-one-plane"],
)
def test_ball_evaluation_equals_30_digit_mpmath(program) -> None:
    """The embedding's entries on Arb balls are the same float64s as the 30-digit mpmath evaluation."""
    from ropeproof.constructions._multihop_compile import _Evaluator

    balls, digits = _Evaluator(program), _Evaluator(program)
    for feature in program.features:
        for token in program.tokens:
            digits.mpmath_only.add((feature.name, token.rule))
            assert balls(feature, token) == digits(feature, token), (feature.name, token.name)
    assert not balls.mpmath_only  # every expression of these programs ran on balls


def test_expressions_the_balls_cannot_run_fall_back_to_mpmath() -> None:
    from ropeproof.constructions._multihop_compile import _Evaluator
    from ropeproof.theory._multihop import Feature

    program = number_program(hops=1, layers=2, letters=2, max_int=3)
    odd = Feature("odd", ("odd",), "content", {"integer": lambda p: [sp.tanh(p["s"] / 7)]})
    evaluate = _Evaluator(program)
    token = next(t for t in program.tokens if t.rule == "integer")
    assert evaluate(odd, token) == [float(mpmath.tanh(mpmath.mpf(token.params["s"]) / 7))]
    assert ("odd", "integer") in evaluate.mpmath_only
