"""Past the papers: letter codes for Retrieval, and horizons on slowly rotating planes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ropeproof.claims.registry import CheckContext, ClaimSet, Outcome, Quick
from ropeproof.verify.measure.exact.certified import certified_retrieval
from ropeproof.verify.studies.beyond.letter_codes import (
    SLOW_HORIZONS,
    alphabet_comparison,
    code_margins,
    one_plane_code,
    slow_horizon_of,
)

CLAIMS = ClaimSet(
    "letter-codes",
    section="Past the papers: letter codes",
    report_figures=("letter_codes",),
)
"""The letter-codes claims, in report order."""


@CLAIMS.claim(
    id="letter-codes.alphabet",
    statement=(
        "At theta = 0 the one-plane letter code (angles 2 pi/|ALPH|) has Retrieval margin "
        "1 - cos(2 pi/|ALPH|) = 2 sin(pi/|ALPH|)^2 ~ 2 pi^2/|ALPH|^2 at every length, while orthogonal "
        "letter codes over ceil(|ALPH|/2) theta = 0 planes have margin 1 for every |ALPH|; checked for "
        "|ALPH| in {alphabets} at every n <= {max_n}, cross-checked against the compiled T_Retrieval "
        "engine for |ALPH| in {cross_check}."
    ),
    reference="[A] Thm 3.1 (T_Retrieval); this toolkit",
    params={
        "alphabets": [2, 3, 4, 5, 8, 12, 16, 26, 32, 48, 64],
        "max_n": Quick(64, 24),
        "cross_check": Quick([2, 3, 5, 8], [3, 8]),
    },
    meaning="[A]'s one-plane letter code loses margin like 1/|ALPH|^2; orthogonal codes do not.",
)
def _alphabet(ctx: CheckContext) -> Outcome:
    from ropeproof.verify.measure.exact.sweep import sweep_retrieval

    rows = alphabet_comparison(ctx.params["alphabets"], ctx.params["max_n"])
    worst = max(abs(r["one_plane_margin"] / r["one_plane_closed_form"] - 1) for r in rows)
    ortho = min(r["orthogonal_margin"] for r in rows)
    cross = 0.0
    for a in ctx.params["cross_check"]:
        engine = sweep_retrieval(a, 0.0, 24).columns["margin_inf"]
        cross = max(cross, float(np.abs(engine - code_margins(one_plane_code(a), 24)).max()))
    ok = worst <= 1e-13 and ortho == 1.0 and cross <= 1e-15
    return Outcome.judge(
        ok,
        {
            "rows": rows,
            "max_rel_err_one_plane": worst,
            "min_orthogonal_margin": ortho,
            "engine_cross_check_max_diff": cross,
            "one_plane_margin_at_64": rows[-1]["one_plane_margin"],
        },
        key_figure="one_plane_margin_at_64",
        counterexample=rows,
    )


@CLAIMS.claim(
    id="letter-codes.slow-horizon",
    statement=(
        "On the lowest planes of a standard spectrum (base 10000) Retrieval with |ALPH| = {alphabet} has "
        "a finite horizon: the one-plane code on the lowest plane theta_min works exactly for n with "
        "(2n-3) theta_min < 2 pi/|ALPH| (n <= {horizon_64} for head_dim 64, n <= {horizon_128} for "
        "head_dim 128); the two rows at each horizon are certified by interval arithmetic for head_dim "
        "in {certified_head_dims}, the rows below it are exact float64."
    ),
    reference="[A] Thm 3.1-3.2 (T_Retrieval, theta > 0); this toolkit",
    params={"alphabet": 8, "head_dim": [64, 128], "certified_head_dims": Quick([64, 128], [64])},
    pins={"horizon_64": 2946, "horizon_128": 3402},
    meaning="Retrieval on the slowest standard plane has a horizon in the thousands, set by "
    "(2n-3) theta_min = 2 pi/|ALPH|.",
)
def _slow(ctx: CheckContext) -> Outcome:
    figures: dict[str, Any] = {}
    ok, all_certified = True, True
    a = ctx.params["alphabet"]
    for hd in ctx.params["head_dim"]:
        h = slow_horizon_of(ctx.store.get(SLOW_HORIZONS, head_dim=hd, alphabet=a))
        cert: Any = "not run (quick)"
        if hd in ctx.params["certified_head_dims"]:
            chk = certified_retrieval(a, h.one_plane_theta, h.one_plane_horizon + 1)
            cmp = chk.comparisons["margin_inf"]
            at_h = (float(cmp.measured_lo[-2]), float(cmp.measured_hi[-2]))
            after = (float(cmp.measured_lo[-1]), float(cmp.measured_hi[-1]))
            cert_ok = at_h[0] > 0 and after[1] <= 0
            cert = {"margin_at_horizon": at_h, "margin_after": after, "certified": cert_ok}
            ok &= cert_ok
        else:
            all_certified = False
        ok &= h.one_plane_horizon == h.one_plane_formula
        figures[f"head_dim={hd}"] = {
            "theta_min": h.one_plane_theta,
            "one_plane_horizon": h.one_plane_horizon,
            "formula": h.one_plane_formula,
            "orthogonal_planes": h.orthogonal_thetas,
            "orthogonal_horizon": h.orthogonal_horizon,
            "margin_at_16": {"one_plane": h.one_plane_margin_at_16, "orthogonal": h.orthogonal_margin_at_16},
            "certified_boundary": cert,
        }
        figures[f"horizon_{hd}"] = h.one_plane_horizon
    # the boundary rows are certified; the rows below a horizon come from the float64 sweep, so the
    # verdict as a whole is not
    figures["boundaries_certified"] = all_certified
    return Outcome.judge(ok, figures, key_figure="horizon_128", counterexample=figures)
