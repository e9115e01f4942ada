"""Exact family extremes: one-pass sweep == per-n enumeration == brute force through the module,
and golden values computed independently in mpmath."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction, reflexive_construction, retrieval_construction
from ropeproof.verify.kernel._compiled import encode, head_module
from ropeproof.verify.measure.exact._angles import reduced_angles
from ropeproof.verify.measure.exact._discrepancy import build_tables, exact_sweep, reference_extremes
from ropeproof.verify.measure.exact._families import family_for
from ropeproof.verify.measure.exact._index_sweep import (
    index_gap_expression,
    index_sweep,
    planes_of,
    stable_gaps,
)
from ropeproof.verify.measure.exact._prefix_topk import prefix_topk

CASES = [
    index_construction(theta=0.866, max_int=24, letters=3),
    index_construction(theta=2 * math.pi / 7, max_int=24, letters=2, extra_planes=[(0.3, 0.5)]),
    retrieval_construction(4, 0.3, max_int=2),
    retrieval_construction(3, 1.1, max_int=1),
    retrieval_construction(8, 0.0, max_int=1),
    reflexive_construction(0.9, letters=3, max_int=2),
]


@pytest.mark.parametrize("c", CASES, ids=lambda c: f"{c.name}-{c.parameters}")
def test_sweep_equals_per_n_enumeration_exactly(c) -> None:
    head, fam = compile_construction(c), family_for(c)
    tables = build_tables(head, fam, 25)
    sweep = exact_sweep(tables, 25, gap_inf_limit=25)
    for n in range(2, 26):
        ref = reference_extremes(tables, n)
        for q in ("gap_sup", "gap_inf", "margin_inf"):
            assert getattr(sweep, q)[n - 2] == getattr(ref, q), (n, q)


def _module_gap_margin(head, tokens, target):
    row = head_module(head, "cpu")(encode(head, [list(tokens)])).logits[0, -1].numpy()
    ordered = np.sort(row)[::-1]
    return ordered[0] - ordered[1], row[target] - np.delete(row, target).max()


@pytest.mark.parametrize(
    "c",
    [retrieval_construction(3, 0.7, max_int=1), index_construction(0.866, 4, 2)],
    ids=["retrieval", "index"],
)
def test_brute_force_enumeration_through_the_module(c) -> None:
    """Every input of the family at small n, run through RopeAttention: the extremes match."""
    head, fam = compile_construction(c), family_for(c)
    tables = build_tables(head, fam, 5)
    for n in (2, 3, 4):
        gaps, margins = [], []
        for ci in fam.cases_at(n):
            case = fam.cases[ci]
            dts = [case.target_distance] if case.target_distance else range(1, n)
            for d_t in dts:
                sets = [
                    case.query_tokens if d == 0 else case.target_tokens if d == d_t else case.other_tokens
                    for d in range(n - 1, -1, -1)
                ]
                seqs = [list(s) for s in itertools.product(*sets)]
                rows = head_module(head, "cpu")(encode(head, seqs)).logits[:, -1].numpy()
                srt = np.sort(rows, axis=1)
                gaps += list(srt[:, -1] - srt[:, -2])
                t = n - 1 - d_t
                margins += list(rows[:, t] - np.delete(rows, t, axis=1).max(1))
        ref = reference_extremes(tables, n)
        assert ref.gap_sup == pytest.approx(max(gaps), abs=1e-12)
        assert ref.gap_inf == pytest.approx(min(gaps), abs=1e-12)
        assert ref.margin_inf == pytest.approx(min(margins), abs=1e-12)


@pytest.mark.parametrize("c", CASES[2:5], ids=["ret-a", "ret-b", "ret-c"])
def test_witnesses_attain_their_values_in_the_module(c) -> None:
    head, fam = compile_construction(c), family_for(c)
    sweep = exact_sweep(build_tables(head, fam, 30), 30, gap_inf_limit=30)
    for n in (2, 3, 7, 18, 30):
        for q in ("gap_sup", "gap_inf", "margin_inf"):
            w = sweep.witness(n, q)
            assert len(w.tokens) == n
            gap, margin = _module_gap_margin(head, w.tokens, w.target_position)
            assert (margin if q == "margin_inf" else gap) == pytest.approx(w.value, abs=1e-12), (n, q)


def test_index_fast_sweep_equals_the_generic_engine() -> None:
    c = index_construction(theta=0.866, max_int=60, letters=2, extra_planes=[(0.05, 0.3)])
    fast = index_sweep(*planes_of(c), 61)
    generic = exact_sweep(build_tables(compile_construction(c), family_for(c), 61), 61)
    for q in ("gap_sup", "gap_inf", "margin_inf"):
        np.testing.assert_allclose(getattr(fast, q), getattr(generic, q), rtol=0, atol=1e-13)


def test_index_fast_sweep_equals_its_straightforward_definition_exactly() -> None:
    freqs, amps, big = [0.866, 0.01], [1.0, 0.25], 300
    fast = index_sweep(freqs, amps, big, chunk=37)  # odd chunk to exercise the carry
    g = stable_gaps(freqs, amps, np.arange(1, big, dtype=np.float64))
    for n in range(2, big + 1):
        per_s = [min(g[: max(s, n - 1 - s)]) for s in range(1, n)]
        assert fast.margin_inf[n - 2] == min(per_s)
        assert fast.gap_sup[n - 2] == max(per_s)
        m = fast.closest[n - 2]
        assert g[m - 1] == fast.margin_inf[n - 2]


@pytest.mark.parametrize(("theta", "n"), [(0.8660, 10), (0.8660, 100), (0.8660, 1000), (0.1, 64), (2.5, 333)])
def test_index_margin_inf_golden_values_in_mpmath(theta: float, n: int) -> None:
    """Independent: margin_inf(n) = 1 - max_{1<=m<=n-1} cos(m theta), with theta the float's exact
    value, at 50 digits."""
    with mpmath.workdps(50):
        th = mpmath.mpf(theta)
        golden = 1 - max(mpmath.cos(m * th) for m in range(1, n))
    got = index_sweep([theta], [1.0], n).margin_inf[-1]
    assert got == pytest.approx(float(golden), rel=1e-13, abs=0)


def test_stable_gap_matches_the_derived_expression() -> None:
    c = index_construction(theta=0.866, max_int=2, letters=2, extra_planes=[(0.1, 0.5)])
    expr = index_gap_expression(c)
    import sympy as sp

    f = sp.lambdify(sp.Symbol("m", integer=True, positive=True), expr.subs(c.parameters), "mpmath")
    ms = np.array([1, 2, 7, 50, 1234])
    ours = stable_gaps(*planes_of(c), ms)
    with mpmath.workdps(40):
        want = [float(f(mpmath.mpf(int(m)))) for m in ms]
    np.testing.assert_allclose(ours, want, rtol=1e-13)


def test_angle_reduction_is_accurate() -> None:
    ms = np.array([1, 3, 1000, 123457, 2**25 - 1])
    with mpmath.workdps(50):
        for theta in (0.866, 0.0027, 3.0):
            got = reduced_angles(ms, theta)
            for m, r in zip(ms, got, strict=True):
                x = mpmath.mpf(theta) * int(m)
                x -= 2 * mpmath.pi * mpmath.nint(x / (2 * mpmath.pi))
                assert abs(float(x) - r) < 1e-15


@settings(max_examples=40)
@given(
    values=st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=300),
    k=st.integers(1, 5),
    largest=st.booleans(),
    chunk=st.integers(1, 64),
)
def test_prefix_topk_against_sorting(values, k, largest, chunk) -> None:
    top, idx = prefix_topk(np.array(values), k, largest=largest, chunk=chunk)
    for m in range(len(values)):
        pref = np.array(values[: m + 1])
        want = np.sort(pref)[::-1][:k] if largest else np.sort(pref)[:k]
        np.testing.assert_array_equal(top[m, : want.size], want)
        assert all(values[i] == v for i, v in zip(idx[m, : want.size], want, strict=True))
        assert (idx[m, want.size :] == -1).all()
