"""Past the papers: letter codes for Retrieval, and horizons on slowly rotating planes."""

from __future__ import annotations

from ropeproof.claims._registry import CheckContext, ClaimSet, Outcome, Quick
from ropeproof.verify.studies.beyond._letter_code_judging import alphabet_outcome, slow_horizon_outcome

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
    p = ctx.params
    return alphabet_outcome(p["alphabets"], p["max_n"], p["cross_check"])


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
    p = ctx.params
    return slow_horizon_outcome(p["alphabet"], p["head_dim"], p["certified_head_dims"], ctx.store)
