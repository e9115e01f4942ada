"""The symbolic construction API: declare, derive, compile, save/load, and its errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch

from ropeproof import constructions
from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._head import load_head
from ropeproof.constructions._paper import index_construction, retrieval_construction
from ropeproof.machinery._errors import ConstructionError, InputError
from ropeproof.theory._construction import Construction, Plane, Rotated, Token, letter_tokens
from ropeproof.theory._derive import OFFSET, derive
from ropeproof.verify.kernel._compiled import encode, head_module


def two_plane_toy() -> Construction:
    """A user construction: letters look back by their own code in plane 0; plane 1 is NoPE with a
    general (non-rotation) key vector."""
    t0, t1 = sp.symbols("t0 t1", real=True)
    phi = sp.Symbol("phi", integer=True, nonnegative=True)
    return Construction(
        name="toy",
        tokens=tuple(letter_tokens(3)),
        planes=(Plane(t0, 1), Plane(t1, sp.Rational(1, 2))),
        query_rules={"letter": lambda p, k, plane: Rotated(-p["phi"] * plane.freq) if k == 0 else Rotated(0)},
        key_rules={"letter": lambda p, k, plane: Rotated(0) if k == 0 else sp.Matrix([1, p["phi"]])},
        value=lambda t: {t.name: 1},
        generic={"letter": Token("X", "letter", {"phi": phi})},
        parameters={t0: 0.7, t1: 0.0},
    )


def test_derive_closed_form_and_latex() -> None:
    c = two_plane_toy()
    d = derive(c)
    rl = d.logit("letter", "letter")
    t0, t1 = sp.symbols("t0 t1", real=True)
    phi_q = next(s for s in rl.closed.free_symbols if s.name == "phi_q")
    phi_k = next(s for s in rl.closed.free_symbols if s.name == "phi_k")
    # plane 0: cos(t0 (u + phi_q)); plane 1 (amplitude 1/2): 1/2 * (1, 0) . rho(u t1) (1, phi_k)
    u = OFFSET
    expected = sp.cos(t0 * (u + phi_q)) + sp.Rational(1, 2) * (sp.cos(u * t1) - phi_k * sp.sin(u * t1))
    vals = {t0: 0.7, t1: 0.3, phi_q: 2, phi_k: 1, u: -3}
    assert float(rl.closed.subs(vals)) == pytest.approx(float(expected.subs(vals)), abs=1e-14)
    assert r"\ell_" in rl.latex()


def test_compiled_matrices_come_from_the_symbols() -> None:
    head = compile_construction(two_plane_toy())
    assert head.spec.rotary_dim == 4 and head.spec.plane_freqs[:2].tolist() == [0.7, 0.0]
    (a0, b0), (a1, b1) = head.spec.plane_dims[:2]
    for i in range(3):  # letter i: query plane 0 = rho(-0.7 i) e1; key plane 1 = (1, i)
        assert head.W_Q[i, a0] == pytest.approx(math.cos(-0.7 * i), abs=1e-16)
        assert head.W_Q[i, b0] == pytest.approx(math.sin(-0.7 * i), abs=1e-16)
        assert head.W_Q[i, a1] == pytest.approx(0.5) and head.W_Q[i, b1] == 0.0
        assert (head.W_K[i, a1], head.W_K[i, b1]) == (1.0, float(i))
    np.testing.assert_array_equal(head.W_V[:, :3], np.eye(3))


def test_module_equals_derived_closed_form() -> None:
    c = two_plane_toy()
    head = compile_construction(c)
    d = derive(c)
    seq = ["C", "A", "B", "B", "C"]
    logits = head_module(head, device="cpu")(encode(head, [seq])).logits[0]
    for i in range(5):
        for j in range(i + 1):
            f = d.numeric_logit_fn(seq[i], seq[j])
            assert logits[i, j].item() == pytest.approx(float(f(j - i)), abs=1e-13)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_save_load_round_trip(tmp_path, layout: str) -> None:
    head = compile_construction(index_construction(letters=5, max_int=4), layout=layout)
    head.save(tmp_path / "h")
    back = load_head(tmp_path / "h")

    assert constructions.load_head(tmp_path / "h").tokens == head.tokens  # the public name
    assert back.tokens == head.tokens and back.spec == head.spec
    for m in ("W_E", "W_Q", "W_K", "W_V", "W_O", "W_U"):
        np.testing.assert_array_equal(getattr(back, m), getattr(head, m))
    x = encode(head, ["A", "B", "3"])
    torch.testing.assert_close(
        head_module(back, "cpu")(x[None]).output, head_module(head, "cpu")(x[None]).output
    )


def test_encode_and_errors(tmp_path) -> None:
    head = compile_construction(retrieval_construction(4, 0.0, max_int=2))
    x = encode(head, ["AB", "C2", "DA"])
    assert x.shape == (3, head.d_model) and x.dtype == torch.float64
    assert x.sum().item() == 3.0
    with pytest.raises(InputError, match="unknown token 'ZZ'"):
        encode(head, ["AB", "ZZ"])
    with pytest.raises(InputError, match="sequence is empty"):
        encode(head, [])
    with pytest.raises(InputError, match=r"head\.json and weights\.safetensors"):
        load_head(tmp_path)


def test_construction_errors() -> None:
    base = two_plane_toy()
    with pytest.raises(ConstructionError, match="duplicate token names"):
        Construction(
            "x",
            (Token("A", "letter"), Token("A", "letter")),
            base.planes,
            base.query_rules,
            base.key_rules,
            base.value,
            base.generic,
        )
    with pytest.raises(ConstructionError, match="no query rule for rule='integer'"):
        Construction(
            "x",
            (Token("1", "integer"),),
            base.planes,
            base.query_rules,
            base.key_rules,
            base.value,
            base.generic,
        )
    with pytest.raises(ConstructionError, match="amplitude=-1 must be >= 0"):
        Plane(0.3, -1)
    with pytest.raises(ConstructionError, match="kind='two words'"):
        Token("w", "two words")
    assert Token("w", "word").rule == "word"  # kinds are open: a kind of the user's own
    unbound = Construction(
        "x",
        base.tokens,
        (Plane(sp.Symbol("free"), 1),),
        base.query_rules,
        base.key_rules,
        base.value,
        base.generic,
    )
    with pytest.raises(ConstructionError, match=r"parameters \['free'\] have no value"):
        compile_construction(unbound)
    with pytest.raises(
        ConstructionError, match=r"value_weight=1\.0 is out of range; accepted: a finite real number > 1"
    ):
        index_construction(value_weight=1.0)
    with pytest.raises(
        ConstructionError, match=r"alphabet_size=1 is out of range; accepted: an integer >= 2"
    ):
        retrieval_construction(1)
    with pytest.raises(ConstructionError, match="theta=nan must be finite"):
        index_construction(theta=float("nan"))
