"""Past the papers: letter codes for Retrieval, and horizons on slowly rotating planes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ropeproof.claims.registry import CheckContext, ClaimSet, Outcome
from ropeproof.verify.beyond.letter_codes import (
    alphabet_comparison,
    code_margins,
    one_plane_code,
    slow_plane_horizons,
)
from ropeproof.verify.exact.certified import certified_retrieval

CLAIMS = ClaimSet("letter-codes")
"""The letter-codes claims, in report order."""


@CLAIMS.claim(
    id="letter-codes.alphabet",
    statement=(
        "At theta = 0 the one-plane letter code (angles 2 pi/|ALPH|) has Retrieval margin "
        "1 - cos(2 pi/|ALPH|) = 2 sin(pi/|ALPH|)^2 ~ 2 pi^2/|ALPH|^2 at every length, while orthogonal "
        "letter codes over ceil(|ALPH|/2) theta = 0 planes have margin 1 for every |ALPH|."
    ),
    reference="[A] Thm 3.1 (T_Retrieval); this toolkit",
    params={"alphabets": "2..64", "max_n": 64, "cross_check": "compiled T_Retrieval, |ALPH| <= 8"},
)
def _alphabet(ctx: CheckContext) -> Outcome:
    from ropeproof.verify.exact.sweep import sweep_retrieval

    alphabets = [2, 3, 4, 5, 8, 12, 16, 26, 32, 48, 64]
    rows = alphabet_comparison(alphabets, 24 if ctx.quick else 64)
    worst = max(abs(r["one_plane_margin"] / r["one_plane_closed_form"] - 1) for r in rows)
    ortho = min(r["orthogonal_margin"] for r in rows)
    cross = 0.0
    for a in (3, 8) if ctx.quick else (2, 3, 5, 8):
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
        "On the lowest planes of a standard spectrum (base 10000) Retrieval with |ALPH| = 8 has a finite "
        "horizon: the one-plane code on the lowest plane theta_min works exactly for n with "
        "(2n-3) theta_min < 2 pi/|ALPH| (n <= 2946 for head_dim 64, n <= 3402 for head_dim 128)."
    ),
    reference="[A] Thm 3.1-3.2 (T_Retrieval, theta > 0); this toolkit",
    params={"alphabet": 8, "head_dim": [64, 128], "certified_rows": "the horizon and the next length"},
)
def _slow(ctx: CheckContext) -> Outcome:
    figures: dict[str, Any] = {}
    ok = True
    for hd in (64, 128):
        h = slow_plane_horizons(hd, 8)
        cert = "skipped (quick)"
        if not ctx.quick or hd == 64:
            chk = certified_retrieval(8, h.one_plane_theta, h.one_plane_horizon + 1)
            cmp = chk.comparisons["margin_inf"]
            at_h = (float(cmp.measured_lo[-2]), float(cmp.measured_hi[-2]))
            after = (float(cmp.measured_lo[-1]), float(cmp.measured_hi[-1]))
            cert_ok = at_h[0] > 0 and after[1] <= 0
            cert = {"margin_at_horizon": at_h, "margin_after": after, "certified": cert_ok}
            ok &= cert_ok
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
    figures["horizon_128"] = figures["head_dim=128"]["one_plane_horizon"]
    return Outcome.judge(ok, figures, key_figure="horizon_128", counterexample=figures, certified=ok)
