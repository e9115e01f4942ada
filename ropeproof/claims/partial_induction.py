"""Past the papers: [B]'s partial induction, with two planes and with one."""

from __future__ import annotations

import numpy as np

from ropeproof.claims.registry import CheckContext, ClaimSet, Outcome
from ropeproof.verify.beyond.partial_induction import (
    design_two_plane,
    one_plane_code_horizon,
    search_one_plane,
    two_plane_horizon,
    two_plane_logit_expr,
    two_plane_margin_formula,
    two_plane_margins,
    zero_frequency_tie,
)

CLAIMS = ClaimSet("partial-induction")
"""The partial-induction claims, in report order."""


@CLAIMS.claim(
    id="partial-induction.two-plane",
    statement=(
        "[B]'s partial induction (the value of the last earlier occurrence of Y) is solved by two planes, "
        "theta = 0 carrying the letter and theta carrying position: margin_inf(n) = min(2 beta sin(theta/2) "
        "min(sin(3 theta/2), sin((2n-3) theta/2)), (1-beta)(1-cos omega) - beta(1-cos((n-1) theta))) for "
        "(2n-3) theta <= 2 pi; with theta = pi/n0 and balanced beta it solves every n <= n0."
    ),
    reference="[B] (partial induction); docs/theory.md section 4",
    params={"alphabets": [2, 4, 8], "n0": [16, 64, 256], "theta": "pi/n0"},
)
def _two_plane(ctx: CheckContext) -> Outcome:
    expr = str(two_plane_logit_expr())
    worst, rows, ok = 0.0, [], True
    for a in (2, 4, 8):
        for n0 in (16, 64) if ctx.quick else (16, 64, 256):
            d = design_two_plane(a, n0)
            m = two_plane_margins(a, d.theta, d.beta, n0 + 8)
            formula = np.array([two_plane_margin_formula(a, d.theta, d.beta, n) for n in range(2, n0 + 2)])
            worst = max(worst, float(np.abs(m[:n0] - formula).max()))
            h = two_plane_horizon(a, d.theta, d.beta)
            rows.append(
                {
                    "alphabet": a,
                    "n0": n0,
                    "theta": d.theta,
                    "beta": d.beta,
                    "margin_at_n0": d.margin,
                    "horizon": h,
                    "n0^2 * margin": d.margin * n0**2,
                }
            )
            ok &= h >= n0 and d.margin > 0
    tol = 1e-14
    return Outcome.judge(
        ok and worst <= tol,
        {"derived_logit": expr, "designs": rows, "max_diff_vs_closed_form": worst, "tolerance": tol},
        key_figure="max_diff_vs_closed_form",
        counterexample=rows,
    )


@CLAIMS.claim(
    id="partial-induction.one-plane",
    statement=(
        "(As reported by [B]) no single RoPE plane solves partial induction: every one-plane head fails "
        "on some input of length n."
    ),
    reference="[B] (partial induction); docs/theory.md section 4",
    params={
        "alphabet": 4,
        "length": 16,
        "trials": "400 random + 24 code heads (full: also |ALPH| = 8, n = 48)",
    },
    expected="open",
)
def _one_plane(ctx: CheckContext) -> Outcome:
    tie = zero_frequency_tie()
    searches = [(4, 16)] if ctx.quick else [(4, 16), (8, 48)]
    found, results = None, {}
    for a, n in searches:
        s = search_one_plane(a, n, trials=200 if ctx.quick else 400, seed=5)
        results[f"|ALPH|={a},n={n}"] = {
            "tried": s.tried,
            "solved": s.solved,
            "by_kind": s.by_kind,
            "best_margin": s.best_margin,
            "certified_margin": s.certified_margin,
        }
        if s.counterexample_found and found is None:
            found = {"alphabet": a, "length": n, "certified_margin": s.certified_margin, **s.best.as_dict()}
    theta = 0.01
    horizons = {
        f"|ALPH|={a}": {
            "one_plane_code": one_plane_code_horizon(a, theta),
            "two_plane_beta=0.1": two_plane_horizon(a, theta, 0.1),
        }
        for a in (2, 4, 8)
    }
    figures = {
        "theta0_tie_f(Y,1)-f(Y,2)": str(tie),
        "search": results,
        "horizons_at_theta_0.01": horizons,
        "counterexample_found": found is not None,
    }
    return Outcome.judge(
        found is None and tie == 0,
        figures,
        key_figure="counterexample_found",
        counterexample=found,
        certified=found is not None,
        detail="theta = 0 fails exactly (two occurrences of Y tie); one rotating plane solves the task up to "
        "a horizon ~ pi / (|ALPH| theta) (the T_Retrieval code with small theta), whereas the two-plane "
        "head's horizon ~ pi / theta does not depend on |ALPH|.",
    )
