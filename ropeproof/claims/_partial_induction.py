"""Past the papers: [B]'s partial induction, with two planes and with one."""

from __future__ import annotations

from ropeproof.claims._corrections import Correction
from ropeproof.claims._registry import Approx, CheckContext, ClaimSet, Outcome, Quick
from ropeproof.verify.studies.beyond._partial_induction_judging import (
    one_plane_fixed_length_outcome,
    two_plane_outcome,
    uniform_horizon_outcome,
)
from ropeproof.verify.studies.errata._partial_induction import PARTIAL_INDUCTION

CLAIMS = ClaimSet(
    "partial-induction",
    section="Past the papers: partial induction ([B])",
    report_figures=("partial_induction", "errata_partial_induction"),
)
"""The partial-induction claims, in report order."""


SECOND_HAND = (
    "[B]'s exact statement and its quantifiers are known here only second-hand; this claim checks "
    "one reading of it."
)


@CLAIMS.claim(
    id="partial-induction.two-plane",
    statement=(
        "[B]'s partial induction (the value of the last earlier occurrence of Y) is solved by two planes, "
        "theta = 0 carrying the letter and theta carrying position: margin_inf(n) = min(2 beta sin(theta/2) "
        "min(sin(3 theta/2), sin((2n-3) theta/2)), (1-beta)(1-cos omega) - beta(1-cos((n-1) theta))) for "
        "(2n-3) theta <= 2 pi, equal to the exact margin at every n <= n0 + 1; with theta = pi/n0 and "
        "balanced beta it solves every n <= n0, for |ALPH| in {alphabets} and n0 in {n0}."
    ),
    reference="[B] (partial induction); docs/theory.md section 4",
    params={"alphabets": [2, 4, 8], "n0": Quick([16, 64, 256], [16, 64]), "theta": "pi/n0"},
    meaning="Two planes (a NoPE letter plane and a rotating position plane) solve partial induction up to "
    "any designed length, with a margin that decays like 1/n0^2.",
)
def _two_plane(ctx: CheckContext) -> Outcome:
    return two_plane_outcome(ctx.params["alphabets"], ctx.params["n0"])


@CLAIMS.claim(
    id="partial-induction.one-plane.fixed-length",
    statement=(
        "Reading (a) of [B]'s 'one plane cannot solve partial induction': for |ALPH| = {alphabet} and "
        "length n = {length}, no one-plane RoPE head solves every input (searched: {trials} random heads "
        "plus [A]'s letter code at 24 angles; a positive margin is certified by interval arithmetic). "
        + SECOND_HAND
    ),
    reference="[B] (partial induction, as reported); docs/theory.md section 4",
    params={"alphabet": 4, "length": 16, "trials": Quick(400, 200)},
    expected="violated",
    pins={"counterexample_found": True, "counterexample_is_letter_code": True},
    meaning="Under reading (a) the statement is false: [A]'s letter code with a small rotation solves "
    "partial induction at a fixed length; at theta = 0 two occurrences of Y tie exactly, so the rotation "
    "is what breaks the tie.",
)
def _one_plane_fixed(ctx: CheckContext) -> Outcome:
    p = ctx.params
    return one_plane_fixed_length_outcome(p["alphabet"], p["length"], p["trials"])


@CLAIMS.claim(
    id="partial-induction.one-plane.uniform-horizon",
    statement=(
        "Reading (b): one plane cannot give a horizon uniform in |ALPH|. At rotation theta, the one-plane "
        "head on [A]'s letter code solves partial induction exactly up to the largest n with "
        "(2n-3) theta < 2 pi/|ALPH| (~ pi/(|ALPH| theta)), while [B]'s two-plane head (beta = {beta}) "
        "reaches the largest n with (2n-3) theta < 2 pi (~ pi/theta) for every |ALPH|; exact horizons "
        "for |ALPH| in {alphabets} and theta in {thetas}. " + SECOND_HAND
    ),
    reference="[B] (partial induction, as reported); docs/theory.md section 4",
    params={"alphabets": [2, 4, 8], "thetas": [0.003, 0.01, 0.03, 0.1], "beta": 0.1},
    meaning="What two planes buy is a horizon that does not shrink with the alphabet; this is checked "
    "for the letter-code head, not for every one-plane head.",
)
def _one_plane_uniform(ctx: CheckContext) -> Outcome:
    p = ctx.params
    return uniform_horizon_outcome(p["alphabets"], p["thetas"], p["beta"])


CLAIMS.add_correction(
    Correction(
        id="partial-induction.one-plane",
        corrects=("partial-induction.one-plane.fixed-length",),
        reading="(a): for a fixed |ALPH| and length, no one-plane head solves every input; (b): no one-plane "
        "head has a horizon uniform in |ALPH|",
        statement="Under reading (a) the opposite holds: for every |ALPH| >= 2 and every length n0 >= 3, one "
        "rotating plane solves partial induction at every length up to n0 + 1: [A]'s letter code at theta = "
        "omega/(2 n0) (any theta > 0 with (2n - 3) theta < omega = 2 pi/|ALPH|) has worst margin exactly "
        "min(2 sin(theta/2) sin(3 theta/2), margin_Retrieval(n)) > 0 at every length 3 <= n <= n0 + 1, "
        "exactly cos theta - cos omega > 0 at n = 2 (where the only other position is the query's own key; "
        "{margin_at_2} for |ALPH| = {alphabet}, n0 = {length}), and fails at the next length. What one plane "
        "lacks is reading (b), a horizon that does not shrink as |ALPH| grows at a fixed theta: the letter "
        "code's horizon is the largest n with (2n - 3) theta < 2 pi/|ALPH|; whether every one-plane head is "
        "so limited is open.",
        latex=r"\operatorname{margin}_{\inf}(n)=\min\left(2\sin\tfrac{\theta}{2}\sin\tfrac{3\theta}{2},\ "
        r"\operatorname{margin}^{\mathrm{Retrieval}}_{\inf}(n)\right)>0\quad\text{for }n\ge 3,\ (2n-3)\theta<"
        r"\frac{2\pi}{|\mathrm{ALPH}|};\qquad\operatorname{margin}_{\inf}(2)=\cos\theta-\cos\omega",
        offset_statement="With n the largest offset the horizon reads (2n - 1) theta < omega, the min form "
        "holds "
        "for n >= 2 and n = 1 has cos theta - cos omega.",
        status="proved",
        range="every |ALPH| >= 2, theta > 0 and length n >= 3 with (2n - 3) theta <= omega, and n = 2 (cos "
        "theta - cos omega) with theta <= omega; rows: |ALPH| = {alphabet}, theta = omega/{twice_length}, "
        "n = 2..{horizon}",
        tightness="Equality at every length up to the horizon {horizon}: at n >= 3 the target one position "
        "back against a later Y next to it, or the Retrieval witness; at n = 2 the target against the "
        "query's "
        "own key. The margin at n = {length} ({margin_at_length}) is also certified positive by interval "
        "arithmetic, and the next length fails.",
        sketch="Each position is chosen independently, so the worst margin is the least target logit minus "
        "one competitor: a later Y at d + 1 (cos(d theta) - cos((d + 1) theta) = 2 sin((2d + 1) theta/2) "
        "sin(theta/2), least at d = 1) or another letter, bounded by the competitor lemma as for Retrieval. "
        "Argued steps: independent-positions (that independent positions reduce the worst input to "
        "the least of the two competitors; its angle ranges are checked) and composition (how the steps "
        "combine, docs/theory.md section 9.5).",
        compute=lambda ctx: ctx.store.get(
            PARTIAL_INDUCTION, alphabet=ctx.params["alphabet"], length=ctx.params["length"]
        ),
        params={"alphabet": 4, "length": 16, "twice_length": 32},
        pins={
            "horizon": 17,
            "rows": 16,
            "margin_at_length": Approx(0.0036107295329754763, rel=1e-9),
            "margin_at_2": Approx(0.9987954562051724, rel=1e-12),
        },
    )
)
