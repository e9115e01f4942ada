"""Fuzz the public numeric entry points for silent wrong answers, not only for tracebacks.

Each example feeds extreme values (huge, tiny, subnormal, NaN, inf, negative zero, 2^53 + 1) into one
entry point. The result must either be refused with one of the project's errors
(:class:`~ropeproof.machinery._errors.RopeproofError`), or agree with an independent mpmath reference
within the error bound the toolkit states for it. A plausible wrong number fails the test.
"""

from __future__ import annotations

import math

import mpmath
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import RopeproofError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._resolution import logit_error_bound
from ropeproof.verify.kernel._rope import rope_logits

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
    from ropeproof.verify.measure.exact._sweep import sweep_index

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
    from ropeproof.verify.measure.ps._scores import ps_scores

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


# ---- issue 32: positions exact on every path; every direct sweep at every angle ------------------

EDGES = [2**24 - 1, 2**24, 2**24 + 1, 2**53 - 1, 2**53, -(2**53), -(2**24) - 1]
edge_positions = st.one_of(
    st.sampled_from(EDGES),
    st.builds(lambda e, o: e + o, st.sampled_from(EDGES), st.integers(-3, 3)),
)


@settings(max_examples=60, deadline=None)
@given(
    pq=edge_positions,
    pk=edge_positions,
    theta=st.one_of(st.sampled_from([0.866, 1.0, 1e-3, 3.0, 1e12, 1e300]), st.floats(1e-6, 1e6)),
    as_float=st.booleans(),
)
def test_list_and_tensor_positions_agree_at_the_exact_range(
    pq: int, pk: int, theta: float, as_float: bool
) -> None:
    """Positions as a Python list (of ints, or of floats) give the very logit the int64 tensor of the
    same values gives (a float list holds float(p), so 2^53 + 1 is 2^53 there), within 4e-16 of mpmath;
    past 2^53 both are refused."""
    spec = RopeSpec(2, freqs=[theta])
    v = torch.tensor([[0.6, 0.8]], dtype=torch.float64)
    if as_float:
        listed, pq, pk = ([float(pq)], [float(pk)]), int(float(pq)), int(float(pk))
    else:
        listed = ([pq], [pk])
    try:
        from_tensor = rope_logits(v, v, spec, q_positions=torch.tensor([pq]), k_positions=torch.tensor([pk]))
    except RopeproofError:
        assert max(abs(pq), abs(pk)) > 2**53
        with pytest.raises(RopeproofError, match=r"\|p\| <= 2\^53"):
            rope_logits(v, v, spec, q_positions=listed[0], k_positions=listed[1])
        return
    assert max(abs(pq), abs(pk)) <= 2**53
    from_list = rope_logits(v, v, spec, q_positions=listed[0], k_positions=listed[1])
    assert torch.equal(from_list, from_tensor)
    with mpmath.workprec(max(0, math.frexp(theta)[1]) + 200):
        want = _mp_logit([0.6, 0.8], [0.6, 0.8], theta, 1.0, pq, pk)
    assert abs(float(from_list) - want) <= 4e-16


def _angles() -> st.SearchStrategy[float]:
    """Angles from 5e-324 to 1e308 (log-uniform decades, both signs), and the edges."""
    decade = st.builds(
        lambda m, e, s: s * m * 10.0**e,
        st.floats(1.0, 9.99),
        st.integers(-323, 307),
        st.sampled_from([1, -1]),
    )
    return st.one_of(
        decade,
        st.sampled_from(
            [0.0, 5e-324, -5e-324, 1e-300, 1e-20, 0.866, math.pi, 2 * math.pi, 1e17, 1e300, 1e308]
        ),
    )


def _mp_bits(theta: float) -> int:
    """Enough bits for the references at ``theta``: twice its exponent (``1 - cos theta ~ theta^2 / 2``
    cancels that many) plus 200."""
    return 2 * abs(math.frexp(theta)[1]) + 200 if theta else 200


def _mp_index(theta: float, max_n: int) -> tuple[list[mpmath.mpf], list[mpmath.mpf], list[mpmath.mpf]]:
    """margin_inf, gap_sup and Theorem 3.2's bound of T_Index for n = 2 .. max_n, from the definitions."""
    th = mpmath.mpf(theta)
    g = [2 * mpmath.sin(m * th / 2) ** 2 for m in range(1, max_n)]
    margin = [min(g[: n - 1]) for n in range(2, max_n + 1)]
    sup = [min(g[: (n - 1 + 1) // 2]) for n in range(2, max_n + 1)]
    term1 = 2 * mpmath.sin(th / 2) ** 2  # 1 - cos(theta), without the cancellation
    bound = [min(term1, mpmath.pi**2 / (2 * mpmath.mpf(n) ** 2)) for n in range(2, max_n + 1)]
    return margin, sup, bound


def _mp_retrieval(alphabet: int, theta: float, max_n: int) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    """margin_inf and the bound 1 - cos(omega - n theta) of T_Retrieval, n = 2 .. max_n, brute force."""
    w, th = 2 * mpmath.pi / alphabet, mpmath.mpf(theta)
    s = max(mpmath.cos(c * w) for c in range(1, alphabet))
    h = {d: max(mpmath.cos(c * w - d * th) for c in range(1, alphabet)) for d in range(1, max_n)}
    margin = [
        min(mpmath.cos(t * th) - max([s] + [h[d] for d in range(1, n) if d != t]) for t in range(1, n))
        for n in range(2, max_n + 1)
    ]
    return margin, [2 * mpmath.sin((w - n * th) / 2) ** 2 for n in range(2, max_n + 1)]


def _status_agrees(status: str, measured: mpmath.mpf, bound: mpmath.mpf) -> bool:
    """A decided status must be the truth (equality within the reference's own precision counts as
    holding); undecided is never wrong, only unhelpful."""
    from ropeproof.verify.measure.exact._bound_checks import HOLDS, VIOLATED

    tie = abs(bound) * mpmath.mpf(2) ** (-mpmath.mp.prec + 40) + mpmath.mpf(2) ** (-mpmath.mp.prec)
    if status in HOLDS or status == "holds":
        return measured - bound <= tie
    if status in VIOLATED:
        return measured - bound > -tie
    return status == "undecided"


@settings(max_examples=40, deadline=None)
@given(theta=_angles(), max_n=st.integers(2, 9))
def test_every_direct_index_sweep_is_refused_or_right_at_any_angle(theta: float, max_n: int) -> None:
    """sweep_index, index_sweep and certified_index, theta from 5e-324 to 1e308: values within their
    error of mpmath (enclosures containing it), and every decided status the truth."""
    from ropeproof.verify.measure.exact._certified import certified_index
    from ropeproof.verify.measure.exact._index_sweep import index_sweep
    from ropeproof.verify.measure.exact._sweep import sweep_index

    try:
        table = sweep_index(theta, max_n)
        fast = index_sweep([theta], [1.0], max_n)
        cert = certified_index(theta, max_n)
    except RopeproofError:
        assert not math.isfinite(theta)
        return
    with mpmath.workprec(_mp_bits(theta)):
        margin, sup, bound = _mp_index(theta, max_n)
        for got in (table.columns["margin_inf"], fast.margin_inf):
            for g, w in zip(got, margin, strict=True):
                assert abs(mpmath.mpf(float(g)) - w) <= 8 * 2.0**-53 * w + 4e-16, (g, w)
        for g, w in zip(table.columns["gap_sup"], sup, strict=True):
            assert abs(mpmath.mpf(float(g)) - w) <= 8 * 2.0**-53 * w + 4e-16, (g, w)
        for q, truth in (("margin_inf", margin), ("gap_inf", margin), ("gap_sup", sup)):
            for st_, m, b in zip(table.comparisons[q].status, truth, bound, strict=True):
                assert _status_agrees(str(st_), m, b), (q, st_, m, b)
        for q, truth in (("margin_inf", margin), ("gap_sup", sup)):
            c = cert.comparisons[q]
            for r, (m, b) in enumerate(zip(truth, bound, strict=True)):
                assert c.measured_lo[r] <= m <= c.measured_hi[r] and c.bound_lo[r] <= b <= c.bound_hi[r]
                assert _status_agrees(str(c.status[r]), m, b), (q, c.status[r], m, b)


@settings(max_examples=30, deadline=None)
@given(theta=_angles(), max_n=st.integers(2, 7), alphabet=st.integers(2, 6))
def test_every_direct_retrieval_sweep_is_refused_or_right_at_any_angle(
    theta: float, max_n: int, alphabet: int
) -> None:
    """sweep_retrieval, retrieval_sweep, certified_retrieval and the explicit formula, theta from 5e-324 to
    1e308: margin_inf within its stated error of a brute-force mpmath reference (enclosures containing it)
    and every decided status the truth (theta = 1e-20 was 'tight-holds' where the truth is violated)."""
    from ropeproof.verify.measure.exact._certified import certified_retrieval
    from ropeproof.verify.measure.exact._retrieval_margin import retrieval_margin_explicit
    from ropeproof.verify.measure.exact._retrieval_sweep import retrieval_sweep
    from ropeproof.verify.measure.exact._sweep import sweep_retrieval

    try:
        table = sweep_retrieval(alphabet, theta, max_n)
        fast = retrieval_sweep(alphabet, theta, max_n)
        cert = certified_retrieval(alphabet, theta, max_n)
        explicit = retrieval_margin_explicit(max_n, theta, alphabet)
    except RopeproofError:
        assert not math.isfinite(theta)
        return
    with mpmath.workprec(_mp_bits(theta)):
        margin, bound = _mp_retrieval(alphabet, theta, max_n)
        for r, w in enumerate(margin):
            assert abs(mpmath.mpf(float(fast.margin_inf[r])) - w) <= fast.err[r], (r, fast.margin_inf[r], w)
            assert abs(mpmath.mpf(float(table.columns["margin_inf"][r])) - w) <= fast.err[r]
            assert abs(mpmath.mpf(float(explicit[r])) - w) <= 1e-14
            c = cert.comparisons["margin_inf"]
            assert c.measured_lo[r] <= w <= c.measured_hi[r] and c.bound_lo[r] <= bound[r] <= c.bound_hi[r]
            assert _status_agrees(str(c.status[r]), w, bound[r])
        for q in ("margin_inf", "gap_inf"):
            for r, st_ in enumerate(table.comparisons[q].status):
                if q == "gap_inf" and not margin[r] > 0:
                    continue  # gap_inf is margin_inf only where that is positive
                assert _status_agrees(str(st_), margin[r], bound[r]), (q, r, st_, margin[r], bound[r])


@settings(max_examples=30, deadline=None)
@given(
    exponent=st.integers(-323, -8),
    mantissa=st.floats(1.0, 9.99),
    alphabet=st.integers(3, 8),
)
def test_tiny_angles_against_mpmath_at_high_precision(exponent: int, mantissa: float, alphabet: int) -> None:
    """Tiny angles: T_Index's margin 2 sin(theta/2)^2 ~ theta^2 / 2 to a few ulps (0 only where it
    underflows below the smallest subnormal), and T_Retrieval's margin against its bound at n = 2, where
    the truth (2 theta sin(omega) - theta^2/2 above the bound) is decided, not guessed, at any theta."""
    from ropeproof.verify.measure.exact._sweep import sweep_index, sweep_retrieval

    theta = mantissa * 10.0**exponent
    if theta == 0.0:
        return
    index = sweep_index(theta, 4)
    retrieval = sweep_retrieval(alphabet, theta, 3)
    with mpmath.workprec(_mp_bits(theta) + 200):
        want = 2 * mpmath.sin(mpmath.mpf(theta) / 2) ** 2
        got = mpmath.mpf(float(index.columns["margin_inf"][0]))
        assert abs(got - want) <= 8 * 2.0**-53 * want + 2.0**-1074
        margin, bound = _mp_retrieval(alphabet, theta, 3)
        assert margin[0] > bound[0]  # the reference itself: the margin exceeds the bound at n = 2
        assert retrieval.comparisons["margin_inf"].status[0] in ("violated", "tight-violated")
