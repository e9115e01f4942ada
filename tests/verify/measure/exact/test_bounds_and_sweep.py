"""Theorem 3.2 as reported: symbolic bounds, row-by-row judging, and the sweep command's JSON."""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from ropeproof.machinery._errors import InputError
from ropeproof.theory._bounds import THETA, N, index_bound, retrieval_bound, softmax_scale_needed
from ropeproof.verify.kernel._resolution import gap_resolution, logit_error_bound
from ropeproof.verify.measure.exact._bound_checks import compare
from ropeproof.verify.measure.exact._sweep import parse_lengths, sweep_index, sweep_retrieval


def test_bounds_are_stable_equivalents() -> None:
    for bound in (index_bound(), retrieval_bound()):
        for term in bound.terms:
            assert sp.simplify(term.raw - term.stable) == 0
    # the stable form keeps its relative accuracy where the raw form rounds to 0: at theta = 1e-9 the
    # toolkit's raw 1 - cos(theta), evaluated in float64, is 0, while its stable 2 sin(theta/2)^2
    # matches mpmath at 50 digits to 4u (sin, the square and the product each round once, t/2 is
    # exact: relative error <= 3u + u^2 < 4u = 4.4e-16)
    term = index_bound().terms[0]
    raw = sp.lambdify(THETA, term.raw, "numpy")
    assert raw(1e-9) == 0.0
    f = term.numpy()
    with mpmath.workdps(50):
        truth = float(1 - mpmath.cos(mpmath.mpf(1e-9)))
    assert f(10, 1e-9, 0) == pytest.approx(truth, rel=4 * 2**-53, abs=0)
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
    """T_Index at theta = 0.8660 to n = 3000 in bfloat16.

    - The exact margin_inf(3000) = min_{1 <= m <= 2999} (1 - cos(m theta)) is checked against a brute
      force in mpmath (50 digits). Tolerance: the sweep reduces m theta to ~1e-16 rad absolute
      (verify/measure/exact/_angles.py; bound it by 1e-15), and g = 2 sin^2(x/2) has dg/dx = sin x, so
      |dg| <= |x| 1e-15 + 4u g with x = sqrt(2 g) at the minimum.
    - Every measured (bfloat16) margin is within the dtype's gap resolution of the exact one: each
      logit is off by at most (h + 6) u_bf16 + 2 u_64 |n theta| (h = 2), a margin by twice that.
    - Hence a row is resolvable exactly when the measured margin clears that resolution, and the
      first rows are while the last (a 1/n^2 margin, ~1e-8) is not.
    """
    theta, n = 0.8660, 3000
    t = sweep_index(theta, n, dtype="bfloat16")
    exact = t.columns["margin_inf"]
    with mpmath.workdps(50):
        th = mpmath.mpf(theta)
        truth = min(1 - mpmath.cos(m * th) for m in range(1, n))
        x = mpmath.sqrt(2 * truth)
        tol = float(x * mpmath.mpf(1e-15) + 4 * 2**-53 * truth)
        truth = float(truth)
    assert abs(exact[-1] - truth) <= tol
    assert truth < 1e-7  # small enough that bfloat16 cannot see it
    res = gap_resolution("bfloat16", head_dim=2, magnitude=1.0)
    lerr = logit_error_bound("bfloat16", head_dim=2, magnitude=1.0, max_angle=n * theta)
    measured = t.columns["measured_margin_inf"]
    assert (np.abs(measured - exact) <= 2 * lerr).all()
    resolvable = t.columns["resolvable"]
    assert (resolvable == (np.abs(measured) > res)).all()
    assert resolvable[0] and not resolvable[-1]
    assert exact[0] == pytest.approx(1 - math.cos(theta), rel=4 * 2**-53)


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
def test_sweep_json_rows_have_the_documented_fields(argv, capsys: pytest.CaptureFixture[str]) -> None:
    from ropeproof._cli import main

    assert main(["sweep", *argv, "--json"]) == 0  # in-process: the console script is tested in test_cli
    doc = json.loads(capsys.readouterr().out)
    start, stop, step = parse_lengths(argv[argv.index("--lengths") + 1])
    assert [r["n"] for r in doc["rows"]] == sorted({*range(start, stop + 1, step), stop})  # and B itself
    for r in doc["rows"]:
        for key in ("n", "gap_sup", "gap_inf", "margin_inf", "bound", "bound_holds", "resolvable"):
            assert key in r
        assert isinstance(r["resolvable"], bool)
        assert r["bound_holds"] in (True, False, None)
        assert r["gap_sup"] >= r["margin_inf"] - 1e-15
        if "--dtype" in argv:
            # the float32 extremes are within the gap resolution of the exact float64 ones: each logit
            # is off by at most (h + 6) u_32 + 2 u_64 |n theta| (h = 2), every extreme by twice that
            theta = float(argv[argv.index("--theta") + 1])
            tol = 2 * logit_error_bound("float32", head_dim=2, magnitude=1.0, max_angle=stop * theta)
            assert tol == pytest.approx(2 * (8 * 2**-24 + 2 * 2**-53 * stop * theta))
            for q in ("gap_sup", "gap_inf", "margin_inf"):
                assert abs(r[f"measured_{q}"] - r[q]) <= tol, (r["n"], q)
    assert doc["bound"].startswith("Delta_")
    if "--dtype" in argv:
        assert doc["dtype"] == "float32"
