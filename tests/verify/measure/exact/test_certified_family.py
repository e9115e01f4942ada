"""Certified family extremes of any head or construction: every enclosure contains the exact value
(mpmath at 400 bits, every input enumerated), including many planes, a frequency of 1e300 and a
family with a free target distance; the two-ended sweep equals a brute force on random intervals."""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.constructions._head import CompiledHead
from ropeproof.constructions._paper import index_construction, retrieval_construction
from ropeproof.machinery._errors import InputError
from ropeproof.theory._family import Family, FamilyCase, token_family
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.measure.exact._certified import arb_ends, arb_precision
from ropeproof.verify.measure.exact._certified_family import arb_value, enclose_family, witness_value
from ropeproof.verify.measure.exact._discrepancy import CaseTable, exact_sweep
from ropeproof.verify.measure.exact._sweep import sweep_index, sweep_retrieval


def random_head(seed: int, freqs: list[float]) -> CompiledHead:
    rng = np.random.default_rng(seed)
    v, h = 3, 2 * len(freqs)
    w = {k: rng.normal(size=s) for k, s in (("W_Q", (v, h)), ("W_K", (v, h)), ("W_V", (v, h)))}
    return CompiledHead(
        "random", ("a", "b", "c"), np.eye(v), w["W_Q"], w["W_K"], w["W_V"], rng.normal(size=(h, v)),
        np.eye(v), RopeSpec(h, freqs=freqs), 0.5,
    )  # fmt: skip


def mp_extremes(head: CompiledHead, family: Family, n: int) -> dict[str, mpmath.mpf]:
    """margin_inf, gap_sup, gap_inf at length n by enumerating every input, logits in mpmath."""

    def logit(q: str, k: str, d: int) -> mpmath.mpf:
        qv, kv = head.W_Q[head.token_index(q)], head.W_K[head.token_index(k)]
        total = mpmath.mpf(0)
        for (a, b), th in zip(head.spec.plane_dims, head.spec.plane_freqs, strict=True):
            c, s = mpmath.cos(-d * mpmath.mpf(float(th))), mpmath.sin(-d * mpmath.mpf(float(th)))
            total += mpmath.mpf(qv[a]) * (c * kv[a] - s * kv[b]) + mpmath.mpf(qv[b]) * (s * kv[a] + c * kv[b])
        return mpmath.mpf(head.scale) * total

    margins, gaps = [], []
    with mpmath.workprec(400):
        _enumerate(family, n, logit, margins, gaps)
    return {"margin_inf": min(margins), "gap_sup": max(gaps), "gap_inf": min(gaps)}


def _enumerate(family: Family, n: int, logit, margins: list, gaps: list) -> None:
    for case in family.cases:
        if not case.fits(n):
            continue
        distances = [case.target_distance] if case.target_distance is not None else range(1, n)
        for d_t in distances:
            choices = []
            for d in range(n - 1, -1, -1):
                allowed = (
                    case.query_tokens if d == 0 else case.target_tokens if d == d_t else case.other_tokens
                )
                choices.append(allowed)
            for tokens in itertools.product(*choices):
                row = [logit(tokens[-1], t, n - 1 - p) for p, t in enumerate(tokens)]
                target = n - 1 - d_t
                margins.append(row[target] - max(v for p, v in enumerate(row) if p != target))
                top = sorted(row, reverse=True)
                gaps.append(top[0] - top[1])


@pytest.mark.parametrize(("seed", "freqs"), [(0, [0.9, 0.2, 0.0]), (1, [1e300, 2.5, 1e-9]), (2, [3.0, 1.1])])
def test_enclosures_contain_the_exact_extremes(seed: int, freqs: list[float]) -> None:
    head = random_head(seed, freqs)
    families = [
        token_family(head.tokens),
        Family("any", (FamilyCase("x", ("a",), ("b",), ("a", "c"), None),), "b anywhere"),
        Family("back2", (FamilyCase("y", ("c",), ("a", "b"), ("c",), 2),), "two back"),
        # query tokens with different query vectors: enclosed as one case per vector
        Family("two-queries", (FamilyCase("z", ("a", "b"), ("c",), ("a", "b", "c"), 1),), "c one back"),
    ]
    for family in families:
        enc = enclose_family(head, 5, family)
        for n in range(family.min_length(), 6):
            truth = mp_extremes(head, family, n)
            for q in ("margin_inf", "gap_sup", "gap_inf"):
                lo, hi = (float(x[n - 2]) for x in enc.ends(q))
                if np.isnan(lo):
                    assert (
                        q == "gap_inf" and truth["margin_inf"] <= 1e-12
                    )  # only where not certified positive
                    continue
                assert lo <= truth[q] <= hi, (family.name, n, q)
                assert hi - lo < 1e-13


def test_constructions_are_enclosed_from_their_exact_parameters() -> None:
    """T_Index and T_Retrieval against the direct sweeps' values, from theta = 1e300 to tiny angles."""
    for theta in (0.866, 1e300, 1e-7):
        c = index_construction(theta=theta, letters=2, max_int=24)
        enc, ref = enclose_family(c, 25), sweep_index(theta, 25)
        for q in ("margin_inf", "gap_sup"):
            lo, hi = enc.ends(q)
            assert ((lo <= ref.columns[q] + 1e-15) & (ref.columns[q] - 1e-15 <= hi)).all()
    c = retrieval_construction(3, 0.4, max_int=1)
    enc, ref = enclose_family(c, 20), sweep_retrieval(3, 0.4, 20)
    lo, hi = enc.ends("margin_inf")
    assert ((lo <= ref.columns["margin_inf"] + 1e-15) & (ref.columns["margin_inf"] - 1e-15 <= hi)).all()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**20), kind=st.sampled_from([None, 0, 1, 3]))
def test_two_ended_sweeps_equal_a_brute_force_on_random_intervals(seed: int, kind: int | None) -> None:
    """Minima read one array, maxima the other: the one-pass sweep equals the enumerated formulas."""
    rng = np.random.default_rng(seed)
    big = 7
    case = FamilyCase("c", ("q",), ("t1", "t2"), ("o1", "o2", "o3"), kind)
    lo_t, lo_o, lo_s = rng.normal(size=(2, big)), rng.normal(size=(3, big)), rng.normal(size=1)
    hi_t, hi_o, hi_s = lo_t + rng.random((2, big)), lo_o + rng.random((3, big)), lo_s + rng.random(1)
    groups = ([["t1"], ["t2"]], [["o1"], ["o2"], ["o3"]], [["q"]])
    for mins, maxs in (((lo_t, lo_o, lo_s), (hi_t, hi_o, hi_s)), ((hi_t, hi_o, hi_s), (lo_t, lo_o, lo_s))):
        table = CaseTable(case, *groups, *mins, None, *maxs)
        got = exact_sweep([table], big, gap_inf_limit=0)
        for n in range(case.min_length, big + 1):
            margin, sup = np.inf, -np.inf
            for d_t in [kind] if kind is not None else range(1, n):
                sets_min = [
                    mins[2] if d == 0 else mins[0][:, d] if d == d_t else mins[1][:, d] for d in range(n)
                ]
                sets_max = [
                    maxs[2] if d == 0 else maxs[0][:, d] if d == d_t else maxs[1][:, d] for d in range(n)
                ]
                hi_other = max(sets_max[d].max() for d in range(n) if d != d_t)
                margin = min(margin, sets_min[d_t].min() - hi_other)
                for a in range(n):
                    rest = max(sets_min[p].min() for p in range(n) if p != a)
                    sup = max(sup, sets_max[a].max() - rest)
            assert got.margin_inf[n - 2] == margin and got.gap_sup[n - 2] == sup


def _at(arrays: tuple, d: int, d_t: int) -> np.ndarray:
    target, other, own = arrays
    return own if d == 0 else target[:, d] if d == d_t else other[:, d]


def test_witness_values_and_arb_values() -> None:
    c = index_construction(theta=1e-9, letters=2, max_int=3)
    # query 3 with its target 3 back and a competitor 4 back: 1 - cos(theta) ~ 5e-19, kept by the
    # difference of balls although both logits round to 1 in float64
    lo, hi = witness_value(c, ("A", "A", "A", "B", "3"), 1, 0)
    with mpmath.workprec(300):
        assert lo <= 1 - mpmath.cos(mpmath.mpf(1e-9)) <= hi and lo > 0
    with arb_precision(100):
        ends = arb_ends(arb_value(sp.pi**2 / 2))
        with pytest.raises(InputError, match="cannot enclose"):
            arb_value(sp.gamma(sp.Rational(1, 3)))
    with mpmath.workprec(300):
        assert ends[0] <= mpmath.pi**2 / 2 <= ends[1]
    with pytest.raises(InputError, match="carries no input family"):
        enclose_family(c.with_family(None), 4)
