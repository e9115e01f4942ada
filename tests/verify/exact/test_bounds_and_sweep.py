"""Theorem 3.2 as reported: symbolic bounds, row-by-row judging, and the sweep command's JSON."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

from ropeproof.theory.bounds import N, index_bound, retrieval_bound, softmax_scale_needed
from ropeproof.theory.errors import InputError
from ropeproof.verify.exact.bound_checks import compare
from ropeproof.verify.exact.sweep import parse_lengths, sweep_index, sweep_retrieval


def test_bounds_are_stable_equivalents() -> None:
    for bound in (index_bound(), retrieval_bound()):
        for term in bound.terms:
            assert sp.simplify(term.raw - term.stable) == 0
    # the stable form keeps its relative accuracy where 1 - cos(t) rounds to 0
    f = index_bound().terms[0].numpy()
    assert f(10, 1e-9, 0) == pytest.approx(0.5e-18, rel=1e-12)
    assert 1 - math.cos(1e-9) == 0.0
    assert "\\min" in index_bound().latex() or "Min" in str(index_bound().expression())


def test_softmax_scale_formula() -> None:
    expr = softmax_scale_needed(margin=sp.Rational(1, 2))
    assert float(expr.subs(N, 17)) == pytest.approx(math.log(16 * 99) / 0.5)


def test_compare_judges_tight_rows_only_with_refinement() -> None:
    n = np.array([2, 3, 4])
    measured, bound = np.array([0.5, 1.0, 2.0]), np.array([1.0, 1.0, 1.0])
    cmp = compare("t", "r", n, measured, bound, tol=1e-12)
    assert cmp.status.tolist() == ["holds", "undecided", "violated"] and not cmp.holds
    cmp = compare("t", "r", n, measured, bound, tol=1e-12, refine=lambda _n: (1.0, 1.0))
    assert cmp.status.tolist() == ["holds", "tight-equal", "violated"]
    assert cmp.first_violation == 4 and cmp.verdict() == "violated"


def test_index_reading_findings() -> None:
    """T_Index at theta = 0.8660: at n = 2, 3 the gap equals 1 - cos(theta) = the bound (equal by the
    identity g(1) = 2 sin(theta/2)^2 = 1 - cos(theta), since (M + 1) theta <= 2 pi); from n = 4 the
    literal reading (gap_sup) breaks pi^2/(2 n^2), while the worst-case
    readings hold at n = 8..12 (hand check: margin_inf(8) = 1 - cos(7 theta) = 0.02436)."""
    t = sweep_index(0.8660, 12)
    c = t.columns
    assert c["bound_holds"][:2].tolist() == [True, True]
    assert t.comparisons["gap_sup"].status[:2].tolist() == ["holds-equal", "holds-equal"]
    assert c["bound_status"][:2].tolist() == ["holds-equal", "holds-equal"]
    assert c["bound_holds"][2] is False
    assert c["margin_inf"][6] == pytest.approx(1 - math.cos(7 * 0.8660), rel=1e-12)
    assert all(c["bound_holds_margin_inf"][6:])


def test_retrieval_theta_zero_holds_with_equality_and_theta_positive_violates_at_n2() -> None:
    t0 = sweep_retrieval(8, 0.0, 6)
    assert np.allclose(t0.columns["margin_inf"], 1 - math.cos(math.pi / 4), rtol=1e-14)
    assert set(t0.comparisons["margin_inf"].status) == {"holds-equal"}
    t = sweep_retrieval(8, 0.0027, 4)
    # margin_inf(2) = cos(theta) - cos(omega) > 1 - cos(omega - 2 theta): the reported bound is broken
    assert t.columns["margin_inf"][0] == pytest.approx(math.cos(0.0027) - math.cos(math.pi / 4), rel=1e-13)
    assert t.columns["bound_holds_margin_inf"][0] is False


def test_low_precision_rows_are_marked_unresolvable() -> None:
    t = sweep_index(0.8660, 3000, dtype="bfloat16")
    res = t.columns["resolvable"]
    assert res[0] and not res[-1]  # the 1/n^2 margin sinks below bfloat16's resolution
    exact = t.columns["margin_inf"]
    assert exact[-1] < 4e-3 * 2


def test_parse_lengths() -> None:
    assert parse_lengths("2:10") == (2, 10, 1) and parse_lengths("5:50:5") == (5, 50, 5)
    for bad in ("1:10", "10:5", "a:b", "3", "2:10:0"):
        with pytest.raises(InputError):
            parse_lengths(bad)


@pytest.mark.parametrize(
    "argv",
    [
        ["index", "--theta", "0.866", "--lengths", "2:40:3"],
        ["retrieval", "--alphabet", "8", "--theta", "0.0027", "--lengths", "2:200:20"],
        ["index", "--theta", "0.866", "--lengths", "2:50", "--dtype", "float32"],
    ],
)
def test_sweep_json_rows_have_the_documented_fields(argv) -> None:
    out = subprocess.run([sys.executable, "-m", "ropeproof", "sweep", *argv, "--json"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    doc = json.loads(out)
    start, stop, step = parse_lengths(argv[argv.index("--lengths") + 1])
    assert [r["n"] for r in doc["rows"]] == list(range(start, stop + 1, step))
    for r in doc["rows"]:
        for key in ("n", "gap_sup", "gap_inf", "margin_inf", "bound", "bound_holds", "resolvable"):
            assert key in r
        assert isinstance(r["resolvable"], bool)
        assert r["bound_holds"] in (True, False, None)
        assert r["gap_sup"] >= r["margin_inf"] - 1e-15
    assert doc["bound"].startswith("Delta_")
