"""The RoPE identities: relative position and layout equivalence."""

from __future__ import annotations

from ropeproof.claims._registry import CheckContext, ClaimSet, Outcome
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.measure._rope_identities import layout_equivalence_outcome, relative_position_outcome

CLAIMS = ClaimSet("rope", section="RoPE identities")
"""The rope claims, in report order."""


_IDENTITY_SPECS = (
    RopeSpec(8, freqs=[1.0, 0.25, 0.0, 2.5]),
    RopeSpec(8, freqs=[1.0, 0.25, 0.0, 2.5], layout="half"),
    RopeSpec(12, rotary_dim=4, base=10000.0),
    RopeSpec(12, rotary_dim=4, base=10000.0, layout="half"),
    RopeSpec(64),
)


@CLAIMS.claim(
    id="rope.relative-position",
    statement="RoPE logits depend on positions only through the offset j - i: shifting both positions by "
    "{shifts} changes no logit beyond the dtype's rounding bound, for {specs} specs (both layouts, "
    "partial rotary) and n = {n}.",
    reference="docs/theory.md section 1",
    params={"specs": len(_IDENTITY_SPECS), "n": 9, "shifts": [1, 7, 1000]},
    meaning="The module's rotation is relative, as the convention requires.",
)
def _relative_position(ctx: CheckContext) -> Outcome:
    p = ctx.params
    return relative_position_outcome(_IDENTITY_SPECS, p["n"], p["shifts"], ctx.device, ctx.dtype)


@CLAIMS.claim(
    id="rope.layout-equivalence",
    statement=(
        "The interleaved and half layouts give equal logits once q/k rows are permuted, and both "
        "equal the explicit block-diagonal reference, for {specs} specs and n = {n}."
    ),
    reference="docs/theory.md section 1",
    params={"specs": len(_IDENTITY_SPECS), "n": 9},
    meaning="Both layouts implement the same rotation; a layout mix-up would show here.",
)
def _layout_equivalence(ctx: CheckContext) -> Outcome:
    return layout_equivalence_outcome(_IDENTITY_SPECS, ctx.params["n"], ctx.device, ctx.dtype)
