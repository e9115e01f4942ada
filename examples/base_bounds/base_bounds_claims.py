"""Claims about Men et al.'s table (``base_bounds.py`` says what the paper says, second-hand):
``ropeproof check --claims THIS_FILE --only 'examples.base-bounds.*'``.

- Each row of the table, read with "1k" = 1024 (and, where the verdict depends on it, 1000): does the
  paper's own base keep B_m(b) >= 0 at every 0 <= m <= L? Where it does not, the first negative m is
  pinned and its enclosure is the counterexample (certified).
- The set of good bases at L = 1,024 is not an interval (pinned: how many runs of good bases on the grid).
- The smallest good base reproduces the paper's first row at two significant figures under "1k" = 1024,
  not under 1000, and the second row under neither reading.
- ``base_bounds_table.json`` (written by ``base_bounds_table.py``, minutes) holds every row's two
  thresholds; the check does not trust it: it sweeps both ends of every bracket again (certified) and
  recomputes which rows reproduce.
"""

from __future__ import annotations

import json
from pathlib import Path

from base_bounds import (
    PAPER_TABLE,
    RESOLUTION,
    base_scan,
    context_length,
    men_spectrum,
    two_figures,
)

from ropeproof import sweep_spectrum
from ropeproof.claims import CheckContext, ClaimSet, Outcome

CLAIMS = ClaimSet("examples.base-bounds", section="Base of RoPE bounds context length (Men et al.)")

REFERENCE = "Men et al., Base of RoPE Bounds Context Length, NeurIPS 2024 (second-hand); examples/base_bounds"
TABLE = Path(__file__).with_name("base_bounds_table.json")

FAILING_ROWS: dict[tuple[str, str], int] = {
    ("4k", "1024"): 4079,
    ("16k", "1000"): 12223,
    ("32k", "1000"): 27685,
    ("128k", "1024"): 128915,
    ("256k", "1000"): 207455,
    ("512k", "1000"): 511210,
    ("1M", "1000"): 874868,
}
"""Rows whose paper base fails, at the reading under which it already fails: the pinned first negative m."""
REPRODUCED: tuple[str, ...] = (
    "1k/1024",
    "4k/1000",
    "4k/1024",
    "8k/1000",
    "8k/1024",
    "64k/1000",
    "64k/1024",
    "512k/1000",
    "512k/1024",
)
"""The rows (label/reading) whose recomputed smallest good base rounds to the paper's, as pinned."""
HOLDING_ROWS: tuple[tuple[str, str], ...] = (
    ("1k", "1024"),
    ("2k", "1024"),
    ("4k", "1000"),
    ("8k", "1024"),
    ("64k", "1024"),
    ("128k", "1000"),
)
"""Rows whose paper base is good at the reading given (the longer reading for 1k, 2k, 8k and 64k)."""


def _row_outcome(ctx: CheckContext) -> Outcome:
    base, length = ctx.params["base"], ctx.params["length"]
    sweep = sweep_spectrum(men_spectrum(base), length)  # stops at the first negative B_m, certified
    figures = {"first_negative_m": sweep.first_violation, "enclosed_rows": sweep.enclosed}
    counterexample = None
    if sweep.first_violation is not None:
        counterexample = {
            "m": sweep.first_violation,
            "B_m": list(sweep.witness),
            "exact_first": sweep.exact_first,
        }
    return Outcome.judge(
        ok=sweep.holds,
        figures=figures,
        key_figure="first_negative_m",
        counterexample=counterexample,
        resolvable=sweep.verdict() != "undecided",
        certified=True,
    )


def _add_row(label: str, reading: str, first: int | None) -> None:
    @CLAIMS.claim(
        id=f"examples.base-bounds.row-{label}-{reading}",
        statement=(
            "The paper's {label} base b = {base:g} keeps B_m(b) = sum_i cos(m b^(-i/64)) >= 0 at every "
            "0 <= m <= {length} (1k read as {reading}), certified."
        ),
        reference=REFERENCE,
        params={
            "label": label,
            "reading": reading,
            "base": PAPER_TABLE[label],
            "length": context_length(label, reading),
        },
        expected="holds" if first is None else "violated",
        pins={} if first is None else {"first_negative_m": first},
    )
    def _(ctx: CheckContext) -> Outcome:
        return _row_outcome(ctx)


for (_label, _reading), _first in FAILING_ROWS.items():
    _add_row(_label, _reading, _first)
for _label, _reading in HOLDING_ROWS:
    _add_row(_label, _reading, None)


@CLAIMS.claim(
    id="examples.base-bounds.good-bases-form-an-interval-1k",
    statement=(
        "The bases b with B_m(b) >= 0 at every 0 <= m <= {length} form one interval b >= b* (read on the "
        "grid of ratio 1 + {resolution} over [{lo:g}, {hi:g}], every verdict certified)."
    ),
    meaning="The paper's reading of its table needs this; the check finds separate runs of good bases.",
    reference=REFERENCE,
    params={"length": 1024, "lo": 4000.0, "hi": 7000.0, "resolution": RESOLUTION},
    expected="violated",
    pins={"good_runs": 3},
)
def _(ctx: CheckContext) -> Outcome:
    p = ctx.params
    scan = base_scan(p["length"], p["lo"], p["hi"])
    runs = [[r.lo, r.hi] for r in scan.intervals]
    figures = {
        "good_runs": len(runs),
        "runs": runs,
        "smallest_good": list(scan.smallest_good or ()),
        "sup_bad": list(scan.sup_bad or ()),
        "counts": scan.counts(),
    }
    return Outcome.judge(
        ok=bool(scan.is_interval),
        figures=figures,
        key_figure="good_runs",
        counterexample={"good_runs": runs},
        resolvable=scan.counts()["undecided"] == 0,
        certified=True,
    )


def _add_smallest(label: str, reading: str, lo: float, hi: float, rounded: float | None) -> None:
    @CLAIMS.claim(
        id=f"examples.base-bounds.smallest-good-{label}-{reading}",
        statement=(
            "The smallest good base for L = {length} (1k read as {reading}) on the grid of ratio 1 + "
            "{resolution} over [{lo:g}, {hi:g}] rounds to the paper's {paper:g} at two significant figures."
        ),
        reference=REFERENCE,
        params={
            "length": context_length(label, reading),
            "reading": reading,
            "paper": PAPER_TABLE[label],
            "lo": lo,
            "hi": hi,
            "resolution": RESOLUTION,
        },
        expected="holds" if rounded is None else "violated",
        pins={} if rounded is None else {"smallest_good_2sf": rounded},
    )
    def _(ctx: CheckContext) -> Outcome:
        p = ctx.params
        scan = base_scan(p["length"], p["lo"], p["hi"], scope="smallest")
        below, good = scan.smallest_good  # type: ignore[misc]
        figures = {"smallest_good_2sf": two_figures(good), "bracket": [below, good]}
        return Outcome.judge(
            ok=two_figures(good) == p["paper"],
            figures=figures,
            key_figure="smallest_good_2sf",
            counterexample={"bracket": [below, good]},
            resolvable=below is not None and scan.counts()["undecided"] == 0,
            certified=True,
        )


_add_smallest("1k", "1024", 2150.0, 8600.0, None)
_add_smallest("1k", "1000", 2150.0, 8600.0, 4200.0)
_add_smallest("2k", "1024", 8000.0, 32000.0, 12000.0)


@CLAIMS.claim(
    id="examples.base-bounds.table-brackets",
    statement=(
        "Every recomputed row of base_bounds_table.json has certified brackets: the base below each "
        "threshold is bad and the base at it good (B_m >= 0 at every m <= L), one grid step of ratio "
        "1 + {resolution} apart; the rows whose smallest good base rounds to the paper's at two "
        "significant figures are {reproduced_rows}."
    ),
    meaning=(
        "The thresholds were found by base_bounds_table.py's scans (minutes); this check re-sweeps both ends "
        "of every bracket, so a wrong bracket fails it. That no smaller grid base is good rests on that scan."
    ),
    reference=REFERENCE,
    params={"resolution": RESOLUTION, "reproduced_rows": ", ".join(REPRODUCED)},
    pins={"reproduced": list(REPRODUCED)},
)
def _(ctx: CheckContext) -> Outcome:
    rows = json.loads(TABLE.read_text())
    wrong, reproduced, ratios = [], [], {}
    for key, row in sorted(rows.items(), key=lambda kv: kv[1]["length"]):
        length = row["length"]
        factor = 12 if length < 128000 else 2  # the ranges base_bounds_table.py was run with
        if row["range"] != [row["paper_base"] / 4, row["paper_base"] * factor]:
            wrong.append(f"{key}: range {row['range']} is not [paper / 4, {factor} paper]")
        checks = [(row["smallest_good"], "smallest_good")]
        top = row["range"][1]
        if row["sup_bad"][1] is not None:
            checks.append(([row["sup_bad"][0], row["sup_bad"][1]], "sup_bad"))
        for (bad, good), what in checks:
            if bad is None:
                wrong.append(f"{key} {what}: no bad base below")
                continue
            if good / bad > (1 + ctx.params["resolution"]) * (1 + 1e-12):
                wrong.append(f"{key} {what}: bracket wider than one step")
            if (
                sweep_spectrum(men_spectrum(bad), length).holds
                or not sweep_spectrum(men_spectrum(good), length).holds
            ):
                wrong.append(f"{key} {what}: [{bad}, {good}] is not bad then good")
        if two_figures(row["smallest_good"][1]) == row["paper_base"]:
            reproduced.append(key)
        sup = row["sup_bad"][1]
        ratio = round((top if sup is None else sup) / row["smallest_good"][1], 2)
        ratios[key] = ratio if sup not in (None, top) else f">= {ratio}"  # the grid's top: a lower bound
    figures = {"reproduced": reproduced, "wrong": wrong, "every_above_over_smallest": ratios}
    return Outcome.judge(ok=not wrong, figures=figures, key_figure="reproduced", certified=True)
