"""Claims about RoFormer's long-term decay (``roformer_decay.py`` says what the paper says, second-hand):
``ropeproof check --claims THIS_FILE --only 'examples.roformer.*'``.

Every claim reads the relative upper bound f(m) = (1/64) sum_j |S_j(m)| for d = 128, base 10^4, computed at
every offset with error bounds (``partial_sum_decay``); comparisons are decided only when the difference
exceeds both bounds, or by Arb enclosures (certified).
"""

from __future__ import annotations

import numpy as np
from roformer_decay import decay, first_window_rise, window_maxima

from ropeproof.claims import CheckContext, ClaimSet, Outcome

CLAIMS = ClaimSet("examples.roformer", section="RoFormer's long-term decay (Su et al.)")

REFERENCE = "Su et al., RoFormer, section 3.4.3 (second-hand); examples/roformer_decay"


@CLAIMS.claim(
    id="examples.roformer.decays-monotonically",
    statement="The relative upper bound f(m) decreases at every step m -> m + 1, m < {max_m} (certified).",
    meaning="A strict reading of 'decays': the check finds the first offset where f rises.",
    reference=REFERENCE,
    params={"max_m": 4096},
    expected="violated",
    pins={"first_rise_m": 18},
)
def _(ctx: CheckContext) -> Outcome:
    result = decay(ctx.params["max_m"])
    (lo0, hi0), (lo1, hi1) = result.rise_enclosures or ((None, None), (None, None))
    figures = {"first_rise_m": result.first_rise, "f0": float(result.values[0]), "enclosed": result.enclosed}
    counterexample = None
    if result.first_rise is not None:
        counterexample = {"m": result.first_rise, "f(m)": [lo0, hi0], "f(m + 1)": [lo1, hi1]}
    return Outcome.judge(
        ok=result.first_rise is None and result.exact_first,
        figures=figures,
        key_figure="first_rise_m",
        counterexample=counterexample,
        resolvable=result.exact_first,
        certified=True,
    )


@CLAIMS.claim(
    id="examples.roformer.halves-by-16",
    statement=(
        "The relative upper bound has fallen below half its m = 0 value, f(0) / 2 = {half}, at every "
        "16 <= m <= {max_m}, and not before (certified)."
    ),
    reference=REFERENCE,
    params={"max_m": 65536, "half": 16.25},
    pins={"last_above_half": 15},
)
def _(ctx: CheckContext) -> Outcome:
    result = decay(ctx.params["max_m"])
    half = result.values[0] / 2  # f(0) = (1 + 2 + ... + 64) / 64 = 32.5: every |S_j(0)| = j is exact
    if half != ctx.params["half"]:
        raise ValueError(f"f(0) / 2 = {half}, not the stated {ctx.params['half']}")
    above = np.nonzero(result.values - result.errors > half)[0]
    close = np.nonzero(np.abs(result.values - half) <= result.errors)[0]
    last = int(above[-1]) if above.size else None
    below_after = bool(np.all(result.values[16:] + result.errors[16:] < half))
    figures = {
        "last_above_half": last,
        "f0": float(result.values[0]),
        "max_after_16": float(result.values[16:].max()),
    }
    return Outcome.judge(
        ok=last == 15 and below_after,
        figures=figures,
        key_figure="last_above_half",
        resolvable=close.size == 0,
        certified=True,
    )


@CLAIMS.claim(
    id="examples.roformer.decay-is-long-term",
    statement=(
        "The decay is long-term: the largest f(m) over each dyadic window [2^(a-1), 2^a] decreases with a, "
        "for windows up to m = {max_m} (certified)."
    ),
    meaning="The check finds the first window whose maximum exceeds the previous one's.",
    reference=REFERENCE,
    params={"max_m": 65536},
    expected="violated",
    pins={"first_rising_window": [256, 512]},
)
def _(ctx: CheckContext) -> Outcome:
    result = decay(ctx.params["max_m"])
    maxima = window_maxima(result)
    rise = first_window_rise(maxima)
    figures = {
        "first_rising_window": None if rise is None else rise.get("window"),
        "window_maxima": {f"{w['window'][0]}-{w['window'][1]}": round(w["max"], 6) for w in maxima},
    }
    return Outcome.judge(
        ok=rise is None,
        figures=figures,
        key_figure="first_rising_window",
        counterexample=rise,
        resolvable=rise is None or "undecided" not in rise,
        certified=True,
    )
