"""Claims about the previous-token head under p-RoPE: ``ropeproof check --claims THIS_FILE``.

Each claim states its reading of Barbero et al. (second-hand: ``previous_token_head.py``). Two hold and
are certified by interval arithmetic at every length; one is **deliberately false** and declared
``expected="violated"`` with its first violation pinned, so the report shows where it fails and what
wins there (the witness names the competing key).

Run it::

    ropeproof check --claims examples/previous_token/previous_token_claims.py \
        --only 'examples.previous-token.*'
"""

from __future__ import annotations

from previous_token_head import HALF, previous_token_head, two_token_margin

from ropeproof import check_bound
from ropeproof.claims import CheckContext, ClaimSet, Outcome, Quick

CLAIMS = ClaimSet("examples.previous-token", section="Previous-token head with p-RoPE (Barbero et al.)")

REFERENCE = "Barbero et al., arXiv 2410.06205 (second-hand); examples/previous_token"


def _judge_bound(check, key: str = "rows") -> Outcome:
    """The outcome of a ``check_bound`` result: holds when every row holds; else the first violation
    with its witness (target, winning competitor, both logits) as the counterexample."""
    summary = check.summary()
    figures = {"rows": check.comparison.counts(), "first_violation_n": check.first_violation}
    counterexample = None
    if check.first_violation is not None:
        first = summary["first_violation"]
        w = first["witness"]
        counterexample = {
            "n": first["n"],
            "target_offset": w["target_offset"],
            "competitor_offset": w["competitor_offset"],
            "competitor_token": w["competitor_token"],
            "competitor_logit": w["competitor_logit"],
            "target_logit": w["target_logit"],
            "witness": w["description"],
        }
    return Outcome.judge(
        ok=check.holds,
        figures=figures,
        key_figure=key,
        counterexample=counterexample,
        resolvable=check.verdict() != "unresolvable",
        certified=check.certified,
    )


@CLAIMS.claim(
    id="examples.previous-token.p075-costs-under-1e-6",
    statement=(
        "p-RoPE costs the previous-token head almost nothing: at p = 0.75 its worst margin stays within 1e-6 "
        "of full RoPE's n = 2 margin at every n <= {max_n} (certified)."
    ),
    reference=REFERENCE,
    params={"p": 0.75, "max_n": Quick(2000, 400)},
)
def _(ctx: CheckContext) -> Outcome:
    p, max_n = ctx.params["p"], ctx.params["max_n"]
    bound = two_token_margin(1.0) - 1e-6  # a sympy expression: enclosed exactly, row by row
    check = check_bound(previous_token_head(p), bound, max_n, relation=">=", certified=True)
    return _judge_bound(check)


@CLAIMS.claim(
    id="examples.previous-token.nope-cannot",
    statement=(
        "NoPE cannot build a previous-token head (our reading): with every plane at theta = 0 the head's "
        "worst margin is <= 0 at every n <= {max_n} (certified)."
    ),
    reference=REFERENCE,
    params={"p": 0.0, "max_n": Quick(200, 60)},
)
def _(ctx: CheckContext) -> Outcome:
    p, max_n = ctx.params["p"], ctx.params["max_n"]
    return _judge_bound(check_bound(previous_token_head(p), 0, max_n, relation="<=", certified=True))


@CLAIMS.claim(
    id="examples.previous-token.p025-keeps-half",
    statement=(
        "At p = 0.25 the previous-token head keeps a worst margin of at least {half}, about half of full "
        "RoPE's n = 2 margin, at every n <= {max_n}."
    ),
    meaning="Deliberately false: the check finds the first length where it fails and what wins there.",
    reference=REFERENCE,
    params={"p": 0.25, "half": HALF, "max_n": 2000},
    expected="violated",
    pins={"first_violation_n": 460},
)
def _(ctx: CheckContext) -> Outcome:
    p, max_n = ctx.params["p"], ctx.params["max_n"]
    if not float(ctx.params["half"]) <= two_token_margin(1.0) / 2:  # "about half", and never above it
        raise ValueError(f"half={ctx.params['half']} is above half of RoPE's n = 2 margin")
    check = check_bound(previous_token_head(p), ctx.params["half"], max_n, relation=">=", certified=True)
    return _judge_bound(check, key="first_violation_n")
