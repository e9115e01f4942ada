"""[A]'s constructions: closed forms, the sign convention, module vs mpmath, and task accuracy."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import (
    THETA,
    index_construction,
    reflexive_construction,
    retrieval_construction,
)
from ropeproof.theory._construction import Construction, Rotated
from ropeproof.theory._derive import OFFSET, derive
from ropeproof.verify.kernel._compiled import answer, encode, head_module
from ropeproof.verify.measure._tasks import letter_task, number_task
from ropeproof.verify.measure.exact._families import family_for
from ropeproof.verify.measure.exact._mp_reference import MpLogits
from ropeproof.verify.testing._strategies import family_inputs, index_params, retrieval_params


def _sym(expr: sp.Expr, name: str) -> sp.Symbol:
    return next(s for s in expr.free_symbols if s.name == name)


def test_index_closed_form_is_cos_of_offset_plus_s() -> None:
    rl = derive(index_construction(letters=2, max_int=2)).logit("integer", "letter")
    s = _sym(rl.closed, "s_q")
    assert sp.simplify(rl.closed - sp.cos(THETA * (OFFSET + s))) == 0


def test_retrieval_closed_form_uses_the_difference_of_codes() -> None:
    rl = derive(retrieval_construction(8, 0.0)).logit("pair_ll", "pair_ll")
    lk, rq = _sym(rl.closed, "phi_L_k"), _sym(rl.closed, "phi_R_q")
    assert sp.simplify(rl.closed - sp.cos((lk - rq) * sp.pi / 4 + OFFSET * THETA)) == 0


def _negated_retrieval(alphabet: int = 4) -> Construction:
    """The reported version: queries rotated by -phi (docs/theory.md section 4)."""
    c = retrieval_construction(alphabet, 0.0, max_int=1)
    omega = 2 * sp.pi / alphabet
    rules = {
        "pair_ll": lambda p, _k, _pl: Rotated(-p["phi_right"] * omega),
        "pair_li": lambda p, _k, _pl: Rotated(-p["phi_left"] * omega),
    }
    return Construction(c.name, c.tokens, c.planes, rules, c.key_rules, c.value, c.generic, c.parameters)


def test_reported_sign_makes_logit_depend_on_the_sum_and_fail() -> None:
    rl = derive(_negated_retrieval()).logit("pair_ll", "pair_ll")
    lk, rq = _sym(rl.closed, "phi_L_k"), _sym(rl.closed, "phi_R_q")
    assert sp.simplify(rl.closed - sp.cos((lk + rq) * sp.pi / 2 + OFFSET * THETA)) == 0
    bad = compile_construction(_negated_retrieval())
    tasks = letter_task(64, hops=(1,), alphabet_size=4, max_int=1, n_targets=3, n_pairs=2, seed=5)
    answers = answer(bad, [list(t.tokens) for t in tasks])
    wrong = sum(a != t.answer for a, t in zip(answers, tasks, strict=True))
    assert wrong > 16  # the reported convention is wrong on a large fraction


@settings(max_examples=15)
@given(params=index_params(max_int=12), n=st.integers(2, 13), data=st.data())
def test_index_module_equals_closed_form_in_mpmath(params: dict, n: int, data: st.DataObject) -> None:
    c = index_construction(**params)
    head = compile_construction(c)
    fam = family_for(c)
    if not fam.cases_at(n):
        return
    tokens, _ = data.draw(family_inputs(fam, n))
    row = head_module(head, "cpu")(encode(head, [list(tokens)])).logits[0, -1].numpy()
    exact = np.array([float(v) for v in MpLogits(c).row(tokens)])
    np.testing.assert_allclose(row, exact, rtol=0, atol=1e-12)


@settings(max_examples=15)
@given(params=retrieval_params(), n=st.integers(2, 9), data=st.data())
def test_retrieval_module_equals_closed_form_in_mpmath(params: dict, n: int, data: st.DataObject) -> None:
    c = retrieval_construction(**params)
    head = compile_construction(c, layout="half")
    tokens, _ = data.draw(family_inputs(family_for(c), n))
    row = head_module(head, "cpu")(encode(head, [list(tokens)])).logits[0, -1].numpy()
    exact = np.array([float(v) for v in MpLogits(c).row(tokens)])
    np.testing.assert_allclose(row, exact, rtol=0, atol=1e-12)


def test_index_answers_one_hop_number_tasks() -> None:
    head = compile_construction(index_construction())
    tasks = number_task(200, hops=(1,), seed=11)
    seqs = [list(t.tokens) for t in tasks]
    assert answer(head, seqs) == [t.answer for t in tasks]
    # softmax readout: at scale 30 the weight on the target is >= 1/(1 + 16 e^{-30 * 0.35}) > 0.999
    assert answer(head, seqs, mode="softmax", softmax_scale=30.0) == [t.answer for t in tasks]


def test_retrieval_answers_one_hop_letter_tasks_up_to_its_horizon() -> None:
    # theta = 0.0027, omega = pi/4: the exact horizon is n = 146 (first failure at 147)
    head = compile_construction(retrieval_construction(8, 0.0027))
    ok = letter_task(100, hops=(1,), n_targets=8, n_pairs=8, seed=3)
    assert answer(head, [list(t.tokens) for t in ok]) == [t.answer for t in ok]
    assert answer(head, [list(t.tokens) for t in ok], mode="softmax", softmax_scale=60.0) == [
        t.answer for t in ok
    ]


def test_retrieval_first_failure_length_matches_exact_horizon() -> None:
    """Closed form: margin_inf(n) = cos((n-1) theta) - cos(omega - (n-2) theta), first <= 0 at
    (2n - 3) theta >= omega, i.e. n = ceil((omega/theta + 3)/2)."""
    from ropeproof.verify.measure.exact._discrepancy import build_tables, exact_sweep

    theta, omega = 0.0027, math.pi / 4
    c = retrieval_construction(8, theta, max_int=1)
    sweep = exact_sweep(build_tables(compile_construction(c), family_for(c), 200), 200)
    first = int(sweep.n[np.argmax(sweep.margin_inf <= 0)])
    assert first == math.ceil((omega / theta + 3) / 2)
    w = sweep.witness(first, "margin_inf")
    head = compile_construction(c)
    assert answer(head, [list(w.tokens)]) != [w.tokens[w.target_position]]


def test_reflexive_copies_the_current_token() -> None:
    head = compile_construction(reflexive_construction(theta=0.5, letters=6))
    rng = np.random.default_rng(0)
    seqs = [[head.tokens[i] for i in rng.integers(0, 6, size=9)] for _ in range(50)]
    assert answer(head, seqs) == [s[-1] for s in seqs]


def test_derived_gap_is_the_stable_form() -> None:
    """logit(query 3, target 3 back) - logit(query 3, key 1 back) = 1 - cos(2 theta) = 2 sin(theta)^2,
    kept accurate where the naive difference cancels to zero.

    At theta = 1e-9 the gap is 2e-18: the compiled head's float64 logits (both within u of 1) cancel
    to 0 when subtracted, while the derived stable form matches mpmath (50 digits) to 4u relative
    (sin, the square and the product round once each)."""
    c = index_construction(theta=1e-9, letters=2, max_int=3)
    gap = derive(c).gap("3", "A", -3, "A", -1)
    assert sp.simplify(gap - 2 * sp.sin(THETA) ** 2) == 0
    value = float(gap.subs(c.parameters))
    with mpmath.workdps(50):
        truth = float(1 - mpmath.cos(2 * mpmath.mpf(1e-9)))
    assert value == pytest.approx(truth, rel=4 * 2**-53, abs=0)
    head = compile_construction(c)
    x = torch.as_tensor(head.W_E[[head.token_index(t) for t in ("A", "A", "A", "3")]])[None]
    row = head_module(head, device="cpu")(x).logits[0, -1]  # the query "3" at position 3
    assert float(row[0] - row[2]) == 0.0  # target (3 back) minus the key 1 back: all precision lost
