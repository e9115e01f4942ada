"""Claims about a semantic channel (a symbolic head on the lowest RoPE planes) and about Du et al.'s
token consistency: ``ropeproof check --claims THIS_FILE``.

Each claim states its reading (Barbero et al. and Du et al. are known here second-hand:
``semantic_head.py``, ``token_consistency.py``). The exact claims are certified by interval arithmetic at
every length; the sampled one is decided by Clopper-Pearson intervals and says so. One claim is
**deliberately false** and declared ``expected="violated"`` with its first violation pinned: the report
shows where it fails and which word wins there.

Run it::

    ropeproof check --claims examples/semantic_channel/semantic_claims.py --only 'examples.semantic.*'
"""

from __future__ import annotations

import itertools

from semantic_head import BASE, semantic_head
from semantic_spectrum import base_scan, signal_spectrum, signal_sweep
from token_consistency import flip_probability, spectrum

from ropeproof import check_bound, sweep_spectrum
from ropeproof.claims import CheckContext, ClaimSet, Outcome, Quick

CLAIMS = ClaimSet(
    "examples.semantic", section="A semantic channel on the lowest planes (Barbero et al., Du et al.)"
)

BARBERO = "Barbero et al., arXiv 2410.06205 (second-hand); examples/semantic_channel"
DU = "Du et al., arXiv 2605.15514 (second-hand); examples/semantic_channel/token_consistency.py"


def _judge_bound(check, key: str = "rows") -> Outcome:
    """The outcome of a ``check_bound`` result: holds when every row holds; else the first violation
    with its witness (target, winning competitor, both logits) as the counterexample."""
    figures = {"rows": check.comparison.counts(), "first_violation_n": check.first_violation}
    counterexample = None
    if check.first_violation is not None:
        first = check.summary()["first_violation"]
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
    id="examples.semantic.p-rope-is-robust",
    statement=(
        "Under p-RoPE (its four planes at theta = 0) the find-the-word head keeps a worst margin of at "
        "least {bound} at every n <= {max_n} (certified): the semantic channel does not decay."
    ),
    reference=BARBERO,
    params={"variant": "p-RoPE", "bound": "1.17", "max_n": 4000},
)
def _(ctx: CheckContext) -> Outcome:
    p = ctx.params
    check = check_bound(semantic_head(p["variant"]), p["bound"], p["max_n"], relation=">=", certified=True)
    return _judge_bound(check)


@CLAIMS.claim(
    id="examples.semantic.lowest-planes-horizon",
    statement=(
        "On RoPE's lowest four planes the find-the-word head keeps a worst margin of at least {bound} at "
        "every n <= {max_n} (certified)."
    ),
    reference=BARBERO,
    params={"variant": "lowest", "bound": "0.001", "max_n": 767},
)
def _(ctx: CheckContext) -> Outcome:
    p = ctx.params
    check = check_bound(semantic_head(p["variant"]), p["bound"], p["max_n"], relation=">=", certified=True)
    return _judge_bound(check)


@CLAIMS.claim(
    id="examples.semantic.lowest-planes-never-fail",
    statement=(
        "RoPE's lowest planes are a robust semantic channel: on them the find-the-word head's worst margin "
        "stays >= 0 at every n <= {max_n}."
    ),
    meaning="Deliberately false: the check finds the first length where it fails and which word wins there.",
    reference=BARBERO,
    params={"variant": "lowest", "max_n": 2000},
    expected="violated",
    pins={"first_violation_n": 768},
)
def _(ctx: CheckContext) -> Outcome:
    p = ctx.params
    check = check_bound(semantic_head(p["variant"]), 0, p["max_n"], relation=">=", certified=True)
    return _judge_bound(check, key="first_violation_n")


@CLAIMS.claim(
    id="examples.semantic.du-token-consistency",
    statement=(
        "Du et al.'s token consistency, sampled (our reading): with 16 RoPE planes the probability that two "
        "random keys swap order between two random positions rises over n = {lengths} and lies in "
        "[{low}, {high}] at n = {last}; with p-RoPE (p = 0.75) it stays below {p_rope_below} at n = {last} "
        "({confidence} Clopper-Pearson intervals, {samples} samples each)."
    ),
    reference=DU,
    params={
        "lengths": [16, 256, 4096, 65536],
        "last": 65536,
        "low": 0.48,
        "high": 0.52,
        "p_rope_below": 0.45,
        "samples": 40000,
        "confidence": 0.999,
    },
)
def _(ctx: CheckContext) -> Outcome:
    p = ctx.params
    samples, confidence = p["samples"], p["confidence"]
    rope = [flip_probability(spectrum(1.0), n, samples, seed=n, confidence=confidence) for n in p["lengths"]]
    prope = flip_probability(spectrum(0.75), p["last"], samples, seed=1, confidence=confidence)
    # each comparison is True or False only when the intervals lie on one side; None when they overlap
    decided = {
        **{f"rises to n = {b.n}": _ordered(a, b) for a, b in itertools.pairwise(rope)},
        f"above {p['low']}": rope[-1].above(p["low"]),
        f"below {p['high']}": _negated(rope[-1].above(p["high"])),
        f"p-RoPE below {p['p_rope_below']}": _negated(prope.above(p["p_rope_below"])),
        # the independent reference (conditional-exact, no sampling of q) inside every interval
        "reference inside": all(e.low <= e.reference <= e.high for e in [*rope, prope]),
    }
    failed = [name for name, d in decided.items() if d is False]
    return Outcome.judge(
        ok=all(d is True for d in decided.values()),
        figures={"rope": [e.describe() for e in rope], "p_rope": prope.describe(), "decided": decided},
        key_figure="p_rope",
        counterexample={"failed": failed} if failed else None,
        resolvable=bool(failed) or None not in decided.values(),
        detail="sampled: Clopper-Pearson intervals, not certified",
    )


# ------------------------------------------------------------------ the same head through the spectrum API


@CLAIMS.claim(
    id="examples.semantic.spectrum-signal-bound",
    statement=(
        "Through the spectrum API: on RoPE's lowest four planes the target's logit sum_k cos(d theta_k) "
        "first falls below that of a word one code away at distance 1 at d = 1348 (certified), so the head "
        "is wrong by n = 1349 at the latest; the exact sweep's first violation comes earlier, at n = 768."
    ),
    meaning="The signal's decay bounds the horizon; a competitor rotated toward the target ends it first.",
    reference=BARBERO,
    params={"variant": "lowest", "max_n": 2000},
    pins={"signal_lost_at_d": 1348, "wrong_by_n": 1349, "check_bound_first_violation_n": 768},
)
def _(ctx: CheckContext) -> Outcome:
    p = ctx.params
    swept = signal_sweep(p["variant"], p["max_n"])
    d = swept.first_violation
    by = None if d is None else d + 1
    check = check_bound(semantic_head(p["variant"]), 0, by or p["max_n"], relation=">=", certified=True)
    figures = {
        "signal_lost_at_d": d,
        "wrong_by_n": by,
        "check_bound_first_violation_n": check.first_violation,
        "lead_enclosure": None if swept.witness is None else list(swept.witness),
    }
    ok = (
        by is not None
        and swept.exact_first
        and check.first_violation is not None
        and check.first_violation <= by
    )
    return Outcome.judge(
        ok=ok,
        figures=figures,
        key_figure="wrong_by_n",
        counterexample=None if ok else figures,
        resolvable=swept.exact_first and check.verdict() != "unresolvable",
        certified=True,
    )


@CLAIMS.claim(
    id="examples.semantic.spectrum-p-rope-flat",
    statement=(
        "Through the spectrum API: under p-RoPE the target's logit is exactly 4 at every distance "
        "d <= {max_m} (certified): the channel's signal does not decay, at distances beyond the lengths "
        "check_bound covers."
    ),
    reference=BARBERO,
    params={"variant": "p-RoPE", "max_m": Quick(65535, 4095)},
)
def _(ctx: CheckContext) -> Outcome:
    p = ctx.params
    swept = sweep_spectrum(signal_spectrum(p["variant"]), p["max_m"], ">=", 4.0)
    below = sweep_spectrum(signal_spectrum(p["variant"]), p["max_m"], "<=", 4.0)
    figures = {"at_least_4": swept.verdict(), "at_most_4": below.verdict(), "enclosed": swept.enclosed}
    return Outcome.judge(
        ok=swept.holds and below.holds,
        figures=figures,
        key_figure="at_least_4",
        counterexample=None if swept.holds and below.holds else figures,
        resolvable=swept.verdict() != "undecided" and below.verdict() != "undecided",
        certified=True,
    )


@CLAIMS.claim(
    id="examples.semantic.spectrum-base-scan",
    statement=(
        "Scanning the base b of the lowest four planes (grid of ratio 1.01 over [10^4, 10^6]): the bases "
        "whose target logit stays at least the near rival's at every distance 2 <= d < {max_n} form one run, "
        "from b = 1.7e4 (two significant figures) up; the example's base 10^4 loses at d = 1348 (certified)."
    ),
    reference=BARBERO,
    params={"max_n": 2000},
    pins={"good_runs": 1, "smallest_good_2sf": 1.7e4, "example_base_lost_at_d": 1348},
)
def _(ctx: CheckContext) -> Outcome:
    scan = base_scan(ctx.params["max_n"])
    runs = [[r.lo, r.hi] for r in scan.intervals]
    smallest = scan.smallest_good
    figures = {
        "good_runs": len(runs),
        "runs": runs,
        "smallest_good": None if smallest is None else list(smallest),
        "smallest_good_2sf": None if smallest is None else float(f"{smallest[1]:.1e}"),
        "example_base_lost_at_d": scan.first_violations[0] if scan.values[0] == BASE else None,
        "counts": scan.counts(),
    }
    return Outcome.judge(
        ok=bool(scan.is_interval),
        figures=figures,
        key_figure="good_runs",
        counterexample=None if scan.is_interval else {"good_runs": runs},
        resolvable=scan.counts()["undecided"] == 0,
        certified=True,
    )


def _ordered(a, b) -> bool | None:
    """``b`` above ``a``: True/False when their intervals do not overlap, None when they do."""
    return True if b.low > a.high else False if b.high < a.low else None


def _negated(side: bool | None) -> bool | None:
    return None if side is None else not side
