"""Fuzz the public numeric entry points for silent wrong answers, not only for tracebacks.

Each example feeds extreme values (huge, tiny, subnormal, NaN, inf, negative zero, 2^53 + 1) into one
entry point. The result must either be refused with one of the project's errors
(:class:`~ropeproof.theory.errors.RopeproofError`), or agree with an independent mpmath reference
within the error bound the toolkit states for it. A plausible wrong number fails the test.
"""

from __future__ import annotations

import math

import mpmath
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.theory.errors import RopeproofError
from ropeproof.theory.rope_spec import RopeSpec
from ropeproof.verify.kernel.attention import RopeAttention
from ropeproof.verify.kernel.resolution import logit_error_bound
from ropeproof.verify.kernel.rope import rope_logits

TINY = 2.0**-1074  # the smallest subnormal: results that underflow lose up to this much per operation
EXTREME = [0.0, -0.0, TINY, 1e-300, 1e-16, 0.5, 1.0, 3.0, 1e16, 1e154, 1e300, math.inf, -math.inf, math.nan]
extreme = st.sampled_from(EXTREME).flatmap(lambda v: st.sampled_from([v, -v]))
reals = st.one_of(extreme, st.floats(allow_nan=False, allow_infinity=False, width=64))
positions = st.one_of(
    st.sampled_from([0, 1, 7, 2**53 - 1, 2**53, 2**53 + 1, -(2**53), -(2**53) - 1]),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(min_value=-1e18, max_value=1e18),
    st.sampled_from([math.nan, math.inf]),
)


def _mp_logit(q: list[float], k: list[float], theta: float, scale: float, pq: float, pk: float) -> mpmath.mpf:
    """``scale * q^T rho((pk - pq) theta) k`` for one plane, exactly from the binary inputs."""
    a, b = (mpmath.mpf(v) for v in q)
    c, d = (mpmath.mpf(v) for v in k)
    t = (mpmath.mpf(pk) - mpmath.mpf(pq)) * mpmath.mpf(theta)
    return mpmath.mpf(scale) * ((a * c + b * d) * mpmath.cos(t) + (b * c - a * d) * mpmath.sin(t))


@settings(max_examples=200)
@given(
    q=st.lists(reals, min_size=2, max_size=2),
    k=st.lists(reals, min_size=2, max_size=2),
    theta=reals,
    scale=reals,
    pq=positions,
    pk=positions,
)
def test_rope_logits_are_refused_or_right(
    q: list[float], k: list[float], theta: float, scale: float, pq: float, pk: float
) -> None:
    try:
        spec = RopeSpec(2, freqs=[theta])
        got = rope_logits(
            torch.tensor([q], dtype=torch.float64),
            torch.tensor([k], dtype=torch.float64),
            spec,
            scale,
            q_positions=[pq],
            k_positions=[pk],
        )
    except RopeproofError:
        return
    value = float(got)
    assert math.isfinite(value)
    assert all(math.isfinite(v) for v in [*q, *k, theta, scale, pq, pk]), "a non-finite input was accepted"
    assert abs(pq) <= 2**53 and abs(pk) <= 2**53, "a position past 2^53 was accepted"
    with mpmath.workdps(60):
        want = _mp_logit(q, k, theta, scale, pq, pk)
        magnitude = abs(scale) * float(mpmath.norm(q)) * float(mpmath.norm(k))
        angle = abs(theta) * (abs(mpmath.mpf(pk) - mpmath.mpf(pq)) + 1)  # after the common shift
        bound = 2 * logit_error_bound("float64", 2, magnitude, float(angle)) + 16 * TINY
        assert abs(mpmath.mpf(value) - want) <= bound, (value, want, bound)


@given(head_dim=st.sampled_from([2, 8, 128]), base=reals)
def test_rope_spec_frequencies_are_refused_or_right(head_dim: int, base: float) -> None:
    try:
        spec = RopeSpec(head_dim, base=base)
    except RopeproofError:
        return
    assert math.isfinite(base) and base > 0
    with mpmath.workdps(40):
        for k, got in enumerate(spec.plane_freqs):
            want = mpmath.mpf(base) ** (-mpmath.mpf(2 * k) / head_dim)
            assert math.isfinite(got) and abs(got - want) <= 4 * 2.0**-53 * abs(want) + TINY


@settings(max_examples=30)
@given(theta=reals)
def test_index_sweep_is_refused_or_right(theta: float) -> None:
    """T_Index's worst margin at length n is min over offsets 1 <= m < n of 1 - cos(m theta) (every
    integer query s meets every competitor offset m with 1 <= |m| <= n - 1), here in mpmath."""
    from ropeproof.verify.measure.exact.sweep import sweep_index

    try:
        table = sweep_index(theta, 9)
    except RopeproofError:
        return
    assert math.isfinite(theta)
    with mpmath.workdps(60):
        th = mpmath.mpf(theta)
        for n, got in zip(table.columns["n"], table.columns["margin_inf"], strict=True):
            want = min(2 * mpmath.sin(m * th / 2) ** 2 for m in range(1, int(n)))
            assert abs(mpmath.mpf(float(got)) - want) <= 8 * 2.0**-53 * max(want, 1e-300) + 4e-16, (
                n,
                got,
                want,
            )


def _mp_row(x: list[list[float]], w: list[list[float]], theta: float) -> list[mpmath.mpf]:
    """Last token's attention row of a one-plane head with W_Q = W_K = w (2 x 2), scale 1, in mpmath."""
    n = len(x)
    vecs = [
        [sum(mpmath.mpf(x[p][i]) * mpmath.mpf(w[i][j]) for i in range(2)) for j in range(2)] for p in range(n)
    ]
    q = vecs[-1]
    logits = []
    for p, v in enumerate(vecs):
        t = mpmath.mpf(p - (n - 1)) * mpmath.mpf(theta)
        logits.append(
            (q[0] * v[0] + q[1] * v[1]) * mpmath.cos(t) + (q[1] * v[0] - q[0] * v[1]) * mpmath.sin(t)
        )
    top = max(logits)
    e = [mpmath.exp(v - top) for v in logits]
    total = sum(e)
    return [v / total for v in e]


def _mp_scores(x: list[list[float]], w: list[list[float]], theta: float, tau: float) -> tuple[float, float]:
    """[A]'s S_pos and S_sym of one input (block size 1), straight from the definition in mpmath."""
    n = len(x)
    d = _mp_row(x, w, theta)
    pos_terms, sym_terms, gaps = [], [], []
    for i in range(n - 1):
        for j in range(i + 1, n - 1):
            swapped = [list(r) for r in x]
            swapped[i], swapped[j] = x[j], x[i]
            e = _mp_row(swapped, w, theta)
            new, same, moved = (e[i], e[j]), (d[i], d[j]), (d[j], d[i])

            def cos_sim(u: tuple, v: tuple) -> mpmath.mpf:
                nu, nv = mpmath.sqrt(u[0] ** 2 + u[1] ** 2), mpmath.sqrt(v[0] ** 2 + v[1] ** 2)
                if nu == 0 and nv == 0:
                    return mpmath.mpf(1)
                if nu == 0 or nv == 0:
                    return mpmath.mpf(0)
                return (u[0] * v[0] + u[1] * v[1]) / (nu * nv)

            pos_terms.append(cos_sim(new, same))
            sym_terms.append(cos_sim(new, moved))
            gaps.append(abs(d[i] - d[j]) / tau)
    top = max(gaps)
    weights = [mpmath.exp(g - top) for g in gaps]
    total = sum(weights)
    return (
        float(sum(wt * p for wt, p in zip(weights, pos_terms, strict=True)) / total),
        float(sum(wt * s for wt, s in zip(weights, sym_terms, strict=True)) / total),
    )


@settings(max_examples=20)
@given(
    x=st.lists(
        st.lists(st.floats(min_value=-2, max_value=2), min_size=2, max_size=2), min_size=4, max_size=4
    ),
    w=st.lists(
        st.lists(st.floats(min_value=-2, max_value=2), min_size=2, max_size=2), min_size=2, max_size=2
    ),
    factor=st.sampled_from([0.0, TINY, 1e-300, 1e-150, 1.0, 1e100, 1e150, 1e160, 1e300]),
    theta=st.sampled_from([0.0, 0.3, 0.866, 3.0]),
)
def test_ps_scores_are_refused_or_right(
    x: list[list[float]], w: list[list[float]], factor: float, theta: float
) -> None:
    """Inputs scaled by extreme factors (x * 1e160 overflows every logit; it used to score (0, 0)); tau = 1
    keeps the swap weights well conditioned, so float64 and mpmath agree closely."""
    from ropeproof.verify.measure.ps.scores import ps_scores

    wt = torch.tensor(w, dtype=torch.float64)
    head = RopeAttention(wt, wt, torch.eye(2, dtype=torch.float64), torch.eye(2, dtype=torch.float64),
                         RopeSpec(2, freqs=[theta]))  # fmt: skip
    scaled = [[v * factor for v in row] for row in x]
    try:
        got = ps_scores(head, torch.tensor(scaled, dtype=torch.float64), tau=1.0)
    except RopeproofError:
        return
    s_pos, s_sym = float(got.s_pos.mean()), float(got.s_sym.mean())
    assert math.isfinite(s_pos) and math.isfinite(s_sym)
    with mpmath.workdps(60):
        want = _mp_scores(scaled, w, theta, 1.0)
    assert s_pos == pytest.approx(want[0], abs=1e-9) and s_sym == pytest.approx(want[1], abs=1e-9), (
        got,
        want,
    )
