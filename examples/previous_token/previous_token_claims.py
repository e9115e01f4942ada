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

from previous_token_head import HALF, VARIANTS, previous_token_head, two_token_margin
from previous_token_spectrum import agreement, first_failing_length, fraction_scan, margin_sweep

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


# ------------------------------------------------------------------ the same head through the spectrum API


@CLAIMS.claim(
    id="examples.previous-token.spectrum-first-violation",
    statement=(
        "Through the spectrum API, 0.25-RoPE's lead L(m) = sum_k (1 - cos(m theta_k)) first falls below "
        "{half} at offset m = 458 (certified), which is length n = 460: the first violation check_bound "
        "finds for 'worst margin >= {half} at every n <= {max_n}'."
    ),
    reference=REFERENCE,
    params={"p": 0.25, "half": HALF, "max_n": 2000},
    pins={"first_violation_m": 458, "first_violation_n": 460},
)
def _(ctx: CheckContext) -> Outcome:
    p, half, max_n = ctx.params["p"], ctx.params["half"], ctx.params["max_n"]
    swept = margin_sweep(p, half, max_n)
    check = check_bound(previous_token_head(p), half, max_n, relation=">=", certified=True)
    n = first_failing_length(swept.first_violation)
    figures = {
        "first_violation_m": swept.first_violation,
        "first_violation_n": n,
        "check_bound_first_violation_n": check.first_violation,
        "witness": None if swept.witness is None else list(swept.witness),
        "enclosed": swept.enclosed,
    }
    return Outcome.judge(
        ok=n is not None and n == check.first_violation and swept.exact_first,
        figures=figures,
        key_figure="first_violation_n",
        counterexample=None if n == check.first_violation else figures,
        resolvable=swept.exact_first and check.verdict() != "unresolvable",
        certified=True,
    )


@CLAIMS.claim(
    id="examples.previous-token.spectrum-margins-agree",
    statement=(
        "For every p-RoPE variant, the worst margins read from the spectrum (running minima of L(m)) equal "
        "the example's exact sweep's margin_inf at every n <= {max_n}, to within the spectrum sweep's error "
        "bound."
    ),
    reference=REFERENCE,
    params={"max_n": Quick(2000, 400)},
)
def _(ctx: CheckContext) -> Outcome:
    rows = [agreement(p, ctx.params["max_n"]) for p in VARIANTS]
    apart = [r for r in rows if not r["max_difference"] <= r["max_error_bound"]]
    return Outcome.judge(
        ok=not apart,
        figures={"variants": rows},
        key_figure="variants",
        counterexample={"apart": apart} if apart else None,
    )


@CLAIMS.claim(
    id="examples.previous-token.fraction-scan",
    statement=(
        "Scanning the p-RoPE fraction p = k/16: the fractions keeping a worst margin >= {half} at every "
        "n <= {max_n} form one run, from p = 5/16 to p = 1 (every verdict certified); each bad "
        "fraction fails first at the length check_bound finds."
    ),
    reference=REFERENCE,
    params={"half": HALF, "max_n": 2000},
    pins={"smallest_good": 0.3125, "good_runs": 1},
)
def _(ctx: CheckContext) -> Outcome:
    scan = fraction_scan(ctx.params["half"], ctx.params["max_n"])
    runs = [[r.lo, r.hi] for r in scan.intervals]
    smallest = scan.smallest_good
    figures = {
        "good_runs": len(runs),
        "runs": runs,
        "smallest_good": None if smallest is None else smallest[1],
        "first_failing_n": {
            f"{p:g}": first_failing_length(m) for p, m in zip(scan.values, scan.first_violations, strict=True)
        },
        "counts": scan.counts(),
    }
    bound = ctx.params["half"]
    disagree = {}  # each bad fraction's first failing length against check_bound's first violation
    for p, m in zip(scan.values, scan.first_violations, strict=True):
        if m is not None:
            check = check_bound(previous_token_head(p), bound, ctx.params["max_n"], relation=">=")
            if check.first_violation != first_failing_length(m):
                disagree[f"{p:g}"] = check.first_violation
    figures["check_bound_disagrees"] = disagree
    return Outcome.judge(
        ok=bool(scan.is_interval) and runs[-1:] == [[0.3125, 1.0]] and not disagree,
        figures=figures,
        key_figure="smallest_good",
        counterexample=None if scan.is_interval and not disagree else {"good_runs": runs, **disagree},
        resolvable=scan.counts()["undecided"] == 0,
        certified=True,
    )
