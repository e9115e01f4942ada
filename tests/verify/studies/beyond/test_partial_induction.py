"""Partial induction: exact margins against brute-force enumeration through explicit RoPE vectors,
the two-plane closed form and horizon, the theta = 0 tie, and the one-plane counterexample search."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._rope import rope_logits
from ropeproof.verify.studies.beyond._letter_codes import horizon
from ropeproof.verify.studies.beyond._partial_induction import (
    BETA,
    THETA,
    OnePlaneHead,
    certified_one_plane_margin,
    design_two_plane,
    one_plane_code_horizon,
    retrieval_code_head,
    search_one_plane,
    two_plane_horizon,
    two_plane_logit_expr,
    two_plane_margin_formula,
    two_plane_margins,
    zero_frequency_tie,
)


def brute_margin(queries: np.ndarray, keys: np.ndarray, freqs: list[float], n: int) -> float:
    """margin_inf(n) over every partial-induction input: query (X, Y) at n - 1; the last earlier Y at
    d_t; letters != Y between; anything before. Logits from explicit vectors through rope_logits."""
    alphabet = keys.shape[0]
    spec = RopeSpec(2 * len(freqs), freqs=freqs)
    kt = torch.as_tensor(keys).repeat(n, 1)
    pos = np.repeat(np.arange(n), alphabet)
    worst = math.inf
    for y in range(alphabet):
        table = rope_logits(torch.as_tensor(queries[y])[None], kt, spec, q_positions=[n - 1], k_positions=pos)
        table = table.reshape(n, alphabet).numpy()
        for x in (c for c in range(alphabet) if c != y):
            for d_t in range(1, n):
                between = [c for c in range(alphabet) if c != y]
                for later in itertools.product(between, repeat=d_t - 1):
                    for earlier in itertools.product(range(alphabet), repeat=n - 1 - d_t):
                        comp = [table[n - 1, x]]
                        comp += [table[n - 1 - d, c] for d, c in zip(range(1, d_t), later, strict=True)]
                        comp += [table[n - 1 - d, c] for d, c in zip(range(d_t + 1, n), earlier, strict=True)]
                        worst = min(worst, table[n - 1 - d_t, y] - max(comp))
    return worst


def two_plane_vectors(alphabet: int, beta: float) -> tuple[np.ndarray, np.ndarray]:
    omega = 2 * math.pi / alphabet
    c = np.arange(alphabet) * omega
    keys = np.stack([np.cos(c), np.sin(c), np.ones(alphabet), np.zeros(alphabet)], 1)
    queries = np.stack(
        [(1 - beta) * np.cos(c), (1 - beta) * np.sin(c), np.full(alphabet, beta), np.zeros(alphabet)], 1
    )
    return queries, keys


@pytest.mark.parametrize(
    ("alphabet", "theta", "beta", "n"), [(3, 0.4, 0.2, 5), (2, 1.0, 0.3, 6), (4, 0.2, 0.1, 4)]
)
def test_two_plane_margins_equal_brute_force(alphabet, theta, beta, n) -> None:
    q, k = two_plane_vectors(alphabet, beta)
    want = brute_margin(q, k, [0.0, theta], n)
    assert two_plane_margins(alphabet, theta, beta, n)[-1] == pytest.approx(want, abs=1e-14)


@settings(max_examples=6)
@given(seed=st.integers(0, 2**16), theta=st.floats(0.01, 3.0), n=st.integers(2, 5))
def test_one_plane_margins_equal_brute_force(seed, theta, n) -> None:
    rng = np.random.default_rng(seed)
    head = OnePlaneHead(theta, rng.standard_normal((3, 2)), rng.standard_normal((3, 2)))
    want = brute_margin(head.queries, head.keys, [theta], n)
    assert head.margins(n)[-1] == pytest.approx(want, abs=1e-13)


def test_closed_form_and_horizon() -> None:
    for alphabet in (2, 5, 8):
        for theta, beta in ((0.05, 0.1), (0.2, 0.05), (0.01, 0.12)):
            m = two_plane_margins(alphabet, theta, beta, int(2 * math.pi / theta / 2) + 2)
            for n in range(2, m.size + 2):
                if (2 * n - 3) * theta <= 2 * math.pi:
                    assert m[n - 2] == pytest.approx(
                        two_plane_margin_formula(alphabet, theta, beta, n), abs=1e-14
                    )
            omega = 2 * math.pi / alphabet
            want = max(
                n
                for n in range(2, m.size + 2)
                if (n < 3 or (2 * n - 3) * theta < 2 * math.pi)
                and (1 - beta) * (1 - math.cos(omega)) > beta * (1 - math.cos((n - 1) * theta))
            )
            assert two_plane_horizon(alphabet, theta, beta) == want


def test_derived_logit_is_the_two_plane_form() -> None:
    expr = two_plane_logit_expr(4)
    u = sp.Symbol("u", integer=True)
    syms = {s.name: s for s in expr.free_symbols}
    want = (1 - BETA) * sp.cos(sp.pi * (syms["phi_L_k"] - syms["phi_R_q"]) / 2) + BETA * sp.cos(THETA * u)
    assert sp.simplify(expr - want) == 0


def test_design_solves_every_length_up_to_n0() -> None:
    for alphabet, n0 in ((4, 32), (8, 100)):
        d = design_two_plane(alphabet, n0)
        m = two_plane_margins(alphabet, d.theta, d.beta, n0 + 5)
        assert (m[: n0 - 1] > 0).all() and m[n0 - 2] == pytest.approx(d.margin, rel=1e-12)
        assert d.margin * n0**2 == pytest.approx(1.5 * math.pi**2 * d.beta, rel=0.02)


def test_theta_zero_ties_and_fails_at_three() -> None:
    assert zero_frequency_tie() == 0
    rng = np.random.default_rng(1)
    head = OnePlaneHead(0.0, rng.standard_normal((3, 2)), rng.standard_normal((3, 2)))
    assert head.margins(3)[-1] <= 0


def test_one_plane_code_solves_short_lengths_with_a_certified_margin() -> None:
    s = search_one_plane(4, 12, trials=50, seed=2)
    assert s.counterexample_found and s.solved >= 1
    lo, hi = s.certified_margin
    assert 0 < lo <= s.best_margin <= hi and hi - lo < 1e-14
    # horizon of the T_Retrieval code on partial induction: (2n - 3) theta < 2 pi / |ALPH|
    for alphabet, theta in ((4, 0.01), (8, 0.003)):
        want = max(n for n in range(2, 5000) if (2 * n - 3) * theta < 2 * math.pi / alphabet)
        assert one_plane_code_horizon(alphabet, theta) == want


def test_certified_margin_encloses_a_negative_margin_too() -> None:
    head = retrieval_code_head(4, 0.3)
    lo, hi = certified_one_plane_margin(head, 12)
    assert lo <= head.margins(12, cyclic=True)[-1] <= hi < 0


def test_validation() -> None:
    with pytest.raises(InputError):
        design_two_plane(8, 2)
    with pytest.raises(InputError):
        two_plane_margins(8, 0.1, 1.5, 10)
    with pytest.raises(InputError):
        horizon(np.array([0.1, 0.2]))
    with pytest.raises(InputError):
        two_plane_margin_formula(4, 1.0, 0.1, 10)
