"""Example user claims, loaded without touching the package:

    ropeproof check --claims tests/data/example_claims.py --only 'example.*'

A construction of one's own (T_Index with a second, slower plane) and two claims about it, each
decided by an exact sweep over the Index input family.
"""

from __future__ import annotations

import sympy as sp

from ropeproof import Construction, Plane, Rotated, compile_construction, index_construction
from ropeproof.claims import CheckContext, Outcome, claim
from ropeproof.verify.measure.exact._discrepancy import build_tables, exact_sweep
from ropeproof.verify.measure.exact._families import index_family

THETA, THETA2, MAX_N = 0.8660, 0.05, 17


def two_plane_index(theta: float, theta2: float) -> Construction:
    """T_Index with a second plane of half the amplitude: integer s rotates its query by -s*theta_k."""
    base = index_construction(theta=theta, letters=8, max_int=MAX_N - 1)
    t1, t2 = sp.Symbol("theta", real=True), sp.Symbol("theta2", real=True)
    return Construction(
        "index",
        base.tokens,
        (Plane(t1, 1), Plane(t2, sp.Rational(1, 2))),
        {
            "letter": lambda p, k, plane: Rotated(0),
            "integer": lambda p, k, plane: Rotated(-p["s"] * plane.freq),
        },
        base.key_rules,
        base.value,
        base.generic,
        {t1: theta, t2: theta2},
    )


def _margins(theta2: float):
    c = two_plane_index(THETA, theta2)
    return exact_sweep(build_tables(compile_construction(c), index_family(c), MAX_N), MAX_N).margin_inf


@claim(
    id="example.two-plane-index-correct",
    statement="Two-plane T_Index (theta = 0.8660, theta2 = 0.05 at half amplitude) has a positive "
    "worst-case margin at every length 2..17.",
    reference="tests/data/example_claims.py",
    params={"theta": THETA, "theta2": THETA2, "lengths": f"2..{MAX_N}"},
)
def _correct(ctx: CheckContext) -> Outcome:
    m = _margins(THETA2)
    return Outcome.judge(
        ok=bool((m > 0).all()), figures={"min_margin": float(m.min())}, key_figure="min_margin"
    )


@claim(
    id="example.second-plane-widens-margin",
    statement="At every length 2..17 the second plane (theta2 = 0.05, half amplitude) gives T_Index a "
    "larger worst-case margin than theta2 = 0 gives.",
    reference="tests/data/example_claims.py",
    params={"theta": THETA, "theta2": [0.0, THETA2], "lengths": f"2..{MAX_N}"},
)
def _widens(ctx: CheckContext) -> Outcome:
    with_plane, without = _margins(THETA2), _margins(0.0)
    gain = with_plane - without
    return Outcome.judge(
        ok=bool((gain > 0).all()), figures={"min_gain": float(gain.min())}, key_figure="min_gain"
    )
