"""[A] Theorem 3.2: each reported bound term under each reading of Delta, in floating point and
certified by interval arithmetic."""

from __future__ import annotations

from typing import Any

from ropeproof.claims._corrections import Correction
from ropeproof.claims._registry import Approx, CheckContext, ClaimSet, Outcome, Quick
from ropeproof.constructions._paper import ALPHABET_SIZE as ALPHABET
from ropeproof.constructions._paper import INDEX_THETA, RETRIEVAL_THETA
from ropeproof.machinery._result_store import ResultStore
from ropeproof.verify.kernel._devices import dtype_name
from ropeproof.verify.measure.exact._bound_judging import (
    ConventionCheck,
    best_theta_outcome,
    bound_outcome,
    certified_index_outcome,
    certified_retrieval_outcome,
    length_convention_outcome,
)
from ropeproof.verify.measure.exact._closed_form_checks import retrieval_closed_form_outcome
from ropeproof.verify.measure.exact._sweep import INDEX_TABLE, RETRIEVAL_TABLE, SweepTable
from ropeproof.verify.studies.errata._index import (
    CERTIFIED_UP_TO,
    INDEX_BEST_THETA,
    INDEX_FIXED_THETA,
    INDEX_LARGEST_GAP,
)
from ropeproof.verify.studies.errata._retrieval import RETRIEVAL_LARGEST_GAP, RETRIEVAL_MARGIN

CLAIMS = ClaimSet(
    "thm3.2",
    section="Theorem 3.2 ([A]): the reported discrepancy bounds",
    report_figures=(
        "a_theory_bounds",
        "b_loglog_discrepancy",
        "d_softmax_scale",
        "errata_index_fixed_theta",
        "errata_index_best_theta",
        "errata_index_largest_gap",
        "errata_retrieval_margin",
        "errata_retrieval_largest_gap",
    ),
)
"""The thm3.2 claims, in report order."""


LENGTHS = 100  # [A]'s theory figure: lengths 1 to 100 (n = 1 has no key besides the query)


def _index_table(store: ResultStore, theta: float, max_n: int, dtype: str) -> SweepTable:
    return store.get(INDEX_TABLE, theta=theta, max_n=max_n, dtype=dtype)


def _retrieval_table(store: ResultStore, theta: float, max_n: int, dtype: str) -> SweepTable:
    return store.get(RETRIEVAL_TABLE, alphabet_size=ALPHABET, theta=theta, max_n=max_n, dtype=dtype)


READINGS = {
    "gap_sup": "the largest top-1 minus top-2 gap over inputs of length n (the literal definition)",
    "gap_inf": "the smallest top-1 minus top-2 gap over inputs of length n",
    "margin_inf": "the worst-case target margin over inputs of length n",
}
"""The three readings of Delta checked (docs/theory.md section 5: no normalisation is stated)."""

INDEX_TERMS = {
    "one-minus-cos": (0, "1 - cos(theta)"),
    "pi2-over-2n2": (1, "pi^2/(2 n^2)"),
    "min": (None, "min(1 - cos(theta), pi^2/(2 n^2))"),
}
"""Each term of the reported Index bound, and the bound itself (the minimum)."""

# The pinned findings: (construction, term or theta, reading) -> (expected verdict, first failing n),
# with n the sequence length; OFFSET_PINS: the same checks with n the largest offset (CONVENTIONS).
INDEX_FINDINGS = (
    {("one-minus-cos", r): ("holds", None) for r in READINGS}
    | {("pi2-over-2n2", r): ("violated", 4) for r in READINGS}
    | {("min", r): ("violated", 4) for r in READINGS}
)
RETRIEVAL_FINDINGS = {
    (RETRIEVAL_THETA, "gap_sup"): ("violated", 2),
    (RETRIEVAL_THETA, "gap_inf"): ("violated", 2),
    (RETRIEVAL_THETA, "margin_inf"): ("violated", 2),
    (0.0, "gap_sup"): ("violated", 2),
    (0.0, "gap_inf"): ("holds", None),
    (0.0, "margin_inf"): ("holds", None),
}
_HOLDS = {"offset_convention": "holds", "offset_first_violation_n": None}
OFFSET_PINS: dict[tuple[Any, str], dict[str, Any]] = (
    {("one-minus-cos", r): _HOLDS for r in READINGS}
    | {
        (term, r): {
            "offset_convention": "violated",
            "offset_first_violation_n": 5,
            "violating_rows": rows,
            "offset_violating_rows": rows - 2,
        }
        for term in ("pi2-over-2n2", "min")
        for r, rows in (("gap_sup", 53), ("gap_inf", 19), ("margin_inf", 19))
    }
    | {
        (theta, "gap_sup"): {
            "offset_convention": "violated",
            "offset_first_violation_n": 2,
            "violating_rows": 99,
            "offset_violating_rows": 99,
        }
        for theta in (RETRIEVAL_THETA, 0.0)
    }
    | {
        (0.0, "gap_inf"): _HOLDS,
        (0.0, "margin_inf"): _HOLDS,
    }
    | {
        (RETRIEVAL_THETA, r): {
            "offset_convention": "violated",
            "offset_first_violation_n": 2,
            "offset_violating_rows": 1,
            "violating_rows": 23,
        }
        for r in ("gap_inf", "margin_inf")
    }
)
"""Pinned figures of each per-reading claim under the offset convention (and, where the conventions
disagree on how far the failure extends, the number of failing lengths under both)."""

INDEX_MEANING = {
    "one-minus-cos": "The key adjacent to the target sets the worst margin, so this term holds (and is "
    "attained).",
    "pi2-over-2n2": "At a fixed angle the worst margin is the smallest 1 - cos(m theta) over key offsets "
    "m < n, which pi^2/(2 n^2) undercuts as it decays: the term fails at {violating_rows} of the lengths "
    "2..{max_n}, the first n = {first_violation_n}.",
    "min": "The reported bound is the minimum of its two terms, so it fails with the pi^2/(2 n^2) term: "
    "at {violating_rows} of the lengths 2..{max_n}, the first n = {first_violation_n}.",
}
RETRIEVAL_MEANING = {
    "gap_sup": "Read literally, the bound fails at {violating_rows} of the lengths 2..{max_n}, from n = "
    "{first_violation_n}: the largest gap over inputs is "
    "not small, because some inputs put the query's own logit far below the target's (counterexample).",
    "gap_inf": "Read as the smallest gap over inputs, the bound {verdict_phrase}.",
    "margin_inf": "Read as the worst-case margin, the bound {verdict_phrase}.",
}


def offset_meaning(pins: dict[str, Any]) -> str:
    """The sentence on the offset convention appended to a per-reading claim's meaning."""
    if pins["offset_convention"] == "holds":
        return " With n read as the largest offset (length - 1) it holds as well."
    return (
        " With n read as the largest offset (length - 1) it fails at {offset_violating_rows} lengths, the "
        "first {offset_first_violation_n} (against {violating_rows} with n the length)."
    )


def _index_claim(slug: str, reading: str) -> None:
    term_index, term_text = INDEX_TERMS[slug]
    expected, first = INDEX_FINDINGS[(slug, reading)]

    def check(ctx: CheckContext) -> Outcome:
        table = _index_table(ctx.store, ctx.params["theta"], ctx.params["max_n"], dtype_name(ctx.dtype))
        return bound_outcome(table, term_index, reading, ctx.dtype, ctx.certified)

    CLAIMS.claim(
        id=f"thm3.2.index.{slug}.{reading}",
        statement="For T_Index at theta = {theta}, Delta(n) <= " + term_text + " with n the sequence length, "
        "every n = 2..{max_n} (and separately with n the largest offset, length - 1), reading "
        "Delta as " + READINGS[reading] + ".",
        reference="[A] Theorem 3.2; docs/theory.md section 5",
        params={"theta": INDEX_THETA, "max_n": LENGTHS, "reading": reading},
        expected=expected,  # type: ignore[arg-type]
        pins=({} if first is None else {"first_violation_n": first}) | OFFSET_PINS[(slug, reading)],
        meaning=INDEX_MEANING[slug] + offset_meaning(OFFSET_PINS[(slug, reading)]),
    )(check)


def _retrieval_claim(theta: float, reading: str) -> None:
    expected, first = RETRIEVAL_FINDINGS[(theta, reading)]
    phrase = (
        "holds with equality: at theta = 0 the worst margin is 1 - cos(omega) at every length"
        if expected == "holds"
        else "fails at this angle at {violating_rows} of the lengths 2..{max_n}, the first n = "
        "{first_violation_n}"
    )

    def check(ctx: CheckContext) -> Outcome:
        table = _retrieval_table(ctx.store, ctx.params["theta"], ctx.params["max_n"], dtype_name(ctx.dtype))
        return bound_outcome(table, None, reading, ctx.dtype, ctx.certified)

    CLAIMS.claim(
        id=f"thm3.2.retrieval.theta={theta:g}.{reading}",
        statement="For T_Retrieval with |ALPH| = {alphabet_size} at theta = {theta}, Delta(n) <= 1 - "
        "cos(omega - n theta) with n the sequence length, every n = 2..{max_n} (and separately with n the "
        "largest offset, length - 1), reading Delta as " + READINGS[reading] + ".",
        reference="[A] Theorem 3.2; docs/theory.md section 5",
        params={"alphabet_size": ALPHABET, "theta": theta, "max_n": LENGTHS, "reading": reading},
        expected=expected,  # type: ignore[arg-type]
        pins=({} if first is None else {"first_violation_n": first}) | OFFSET_PINS[(theta, reading)],
        meaning=RETRIEVAL_MEANING[reading].replace("{verdict_phrase}", phrase)
        + offset_meaning(OFFSET_PINS[(theta, reading)]),
    )(check)


for _reading in READINGS:
    for _slug in INDEX_TERMS:
        _index_claim(_slug, _reading)
    for _theta in (RETRIEVAL_THETA, 0.0):
        _retrieval_claim(_theta, _reading)


@CLAIMS.claim(
    id="thm3.2.index.pi2-over-2n2.best-theta",
    statement="No angle gives T_Index a worst-case margin above pi^2/(2 n^2) at length n (tested at "
    "theta = 2 pi / n, n = 3..{max_n}).",
    reference="[A] Theorem 3.2 (the 1/n^2 term read as a statement about every theta); docs/theory.md "
    "section 5",
    params={"theta": "2 pi / n", "max_n": LENGTHS},
    expected="violated",
    pins={
        "first_violation_n": 3,
        "ratio_at_max_n": Approx(3.9986842259059934, rel=1e-9),
        "offset_first_violation_n": 3,
    },
    meaning="Read as a statement about the best angle at each length, the term fails too: theta = 2 pi / n "
    "gives the margin 1 - cos(2 pi / n) ~ 2 pi^2 / n^2, {ratio_at_max_n} times the term at n = {max_n}; "
    "with n the largest offset (the term at length - 1) it also fails from length "
    "{offset_first_violation_n}.",
)
def _best_theta(ctx: CheckContext) -> Outcome:
    return best_theta_outcome(int(ctx.params["max_n"]))


def _convention_checks(store: ResultStore) -> dict[str, ConventionCheck]:
    """Every per-reading Theorem 3.2 check above, by claim id: its float64 table, term and reading."""
    checks: dict[str, ConventionCheck] = {}
    for reading in READINGS:
        for slug, (term_index, _text) in INDEX_TERMS.items():
            checks[f"thm3.2.index.{slug}.{reading}"] = (
                _index_table(store, INDEX_THETA, LENGTHS, "float64"),
                term_index,
                reading,
            )
        for theta in (RETRIEVAL_THETA, 0.0):
            checks[f"thm3.2.retrieval.theta={theta:g}.{reading}"] = (
                _retrieval_table(store, theta, LENGTHS, "float64"),
                None,
                reading,
            )
    return checks


@CLAIMS.claim(
    id="thm3.2.length-convention",
    statement="Each of the {checks} per-reading Theorem 3.2 checks above, judged with n the largest offset "
    "(length - 1) instead of the sequence length, keeps its verdict (verdicts that change: "
    "{verdict_changes}); the first failing length moves in {first_failure_changes} and the number of "
    "failing lengths in {extent_changes}.",
    reference="[A] Theorem 3.2 (the query written at position n); docs/theory.md section 5",
    params={"theta_index": INDEX_THETA, "theta_retrieval": RETRIEVAL_THETA, "max_n": LENGTHS},
    pins={
        "checks": 15,
        "verdict_changes": 0,
        "first_failure_changes": 6,
        "extent_changes": 8,
        "retrieval_margin_failing_lengths": "2..24",
        "retrieval_margin_failing_lengths_offset": "2",
    },
    meaning="No conclusion depends on the convention; where a failure starts and how far it extends do: "
    "the Retrieval margin bound at theta = {theta_retrieval} fails at lengths "
    "{retrieval_margin_failing_lengths} with n the length and only at "
    "{retrieval_margin_failing_lengths_offset} with n the largest offset.",
)
def _length_convention(ctx: CheckContext) -> Outcome:
    listed = f"thm3.2.retrieval.theta={RETRIEVAL_THETA:g}.margin_inf"
    return length_convention_outcome(_convention_checks(ctx.store), listed)


@CLAIMS.claim(
    id="thm3.2.index.certified",
    statement="Delta_Index(n) <= min(1 - cos(theta), pi^2/(2 n^2)) for T_Index at theta = {theta}, every "
    "n <= {max_n}, with Delta read as the worst-case margin and as the largest gap; each row is decided by "
    "interval arithmetic.",
    reference="[A] Theorem 3.2 (as reported); docs/theory.md section 5",
    params={"theta": INDEX_THETA, "max_n": 10**4, "readings": ["margin_inf", "gap_sup"], "prec_bits": 80},
    expected="violated",
    pins={"first_violation_n": 4},
    meaning="Interval arithmetic confirms the floating-point finding row by row: the bound fails, first "
    "at n = {first_violation_n}.",
)
def _thm_index(ctx: CheckContext) -> Outcome:
    return certified_index_outcome(ctx.params["theta"], ctx.params["max_n"])


@CLAIMS.claim(
    id="thm3.2.retrieval.certified",
    statement="Delta_Retrieval(n) <= 1 - cos(omega - n theta) for T_Retrieval with |ALPH| = "
    "{alphabet_size} at "
    "theta = 0 and theta = {theta}, every n <= {max_n}, with Delta read as the worst-case margin; each "
    "row is "
    "decided by interval arithmetic.",
    reference="[A] Theorem 3.2 (as reported); docs/theory.md section 5",
    params={
        "alphabet_size": ALPHABET,
        "theta": RETRIEVAL_THETA,
        "max_n": Quick(10**4, 2000),
        "prec_bits": 80,
    },
    expected="violated",
    pins={"first_violation_n": 2},
    meaning="Interval arithmetic confirms the margin reading row by row: equality at theta = 0, failure at "
    "theta = {theta} first at n = {first_violation_n}.",
)
def _thm_retrieval(ctx: CheckContext) -> Outcome:
    p = ctx.params
    return certified_retrieval_outcome(p["alphabet_size"], (0.0, p["theta"]), p["max_n"])


@CLAIMS.claim(
    id="thm3.2.retrieval.closed-form",
    statement="For T_Retrieval (|ALPH| = {alphabet_size}) at theta in {thetas}, the exact worst-case margin "
    "equals 2 sin((omega - theta)/2) sin((omega - (2n-3) theta)/2) for 3 <= n < n* and "
    "2 sin((omega + theta)/2) sin((omega - (2n-3) theta)/2) for n = 2 or n >= n*, n* = (omega/theta + 3)/2 "
    "(identities and switch point proved by sympy), at every n <= {max_n} with (n-1) theta <= omega; and "
    "an explicit finite min/max formula at every n <= {max_n}.",
    reference="this toolkit (theory/_retrieval_margin.py); [A] Theorem 3.2; docs/theory.md section 5",
    params={"alphabet_size": ALPHABET, "thetas": [RETRIEVAL_THETA, 0.01, 0.05], "max_n": Quick(300, 160)},
    pins={"first_failure_n_at_0.0027": 147, "proofs": True},
    meaning="The worst Retrieval input puts the target and its strongest competitor at the two farthest "
    "positions; which of the two is farther switches at n*, where the margin crosses zero.",
)
def _retrieval_closed_form(ctx: CheckContext) -> Outcome:
    p = ctx.params
    return retrieval_closed_form_outcome(p["alphabet_size"], p["thetas"], p["max_n"])


# ------------------------------------------------------------------------------------------ corrections
# What is true instead of each refuted Theorem 3.2 statement (docs/theory.md section 9): the data and the
# proofs are computed by ropeproof.verify.studies.errata and ropeproof.theory; these entries state and
# pin them.

_INDEX_PI2 = "thm3.2.index.pi2-over-2n2"
_INDEX_MIN = "thm3.2.index.min"
_RETRIEVAL = f"thm3.2.retrieval.theta={RETRIEVAL_THETA:g}"

CLAIMS.add_correction(
    Correction(
        id="thm3.2.index.fixed-theta",
        corrects=(
            f"{_INDEX_PI2}.margin_inf",
            f"{_INDEX_MIN}.margin_inf",
            f"{_INDEX_PI2}.gap_inf",
            f"{_INDEX_MIN}.gap_inf",
            "thm3.2.index.certified",
        ),
        reading="Delta as the worst-case margin or the smallest gap (equal for T_Index)",
        statement="For one-plane T_Index at any angle theta and every length n >= 2, Delta(n) = min over "
        "offsets 1 <= m <= n - 1 of (1 - cos(m theta)) <= min(1 - cos theta, 1 - cos(2 pi/n)): "
        "1 - cos(2 pi/n) = 2 sin(pi/n)^2 replaces pi^2/(2 n^2), and theta = 2 pi/n attains both terms.",
        latex=r"\Delta(n)=\min_{1\le m\le n-1}\left(1-\cos m\theta\right)\le"
        r"\min\left(1-\cos\theta,\ 1-\cos\frac{2\pi}{n}\right)",
        offset_statement="With n the largest offset (the length minus 1): Delta(n) <= min(1 - cos theta, "
        "1 - cos(2 pi/(n + 1))), attained at theta = 2 pi/(n + 1).",
        status="proved",
        range="every theta and every length n >= 2; rows: theta = {theta}, n = 2..{max_n}",
        tightness="For every n the angle theta = 2 pi/n attains both terms (query s = n - 1, target at "
        "position "
        "0, the key next to it); at theta = {theta} the bound is attained up to n = "
        "{attained_at_theta_up_to_n} "
        "(by the adjacent key), and at n = {max_n} it is {ratio_to_reported_at_max_n} times [A]'s.",
        sketch="The n points m theta mod 2 pi (m = 0 .. n - 1) cut the circle into n arcs summing to 2 pi, "
        "so "
        "one arc is at most 2 pi/n; its ends differ by an offset 1 <= m <= n - 1 whose gap is at most "
        "1 - cos(2 pi/n), since 1 - cos increases on [0, pi]. At theta = 2 pi/n every gap is "
        "2 sin(pi m/n)^2 >= 2 sin(pi/n)^2. Argued step: composition (how the checked steps combine, "
        "docs/theory.md section 9.1).",
        compute=lambda ctx: ctx.store.get(
            INDEX_FIXED_THETA, theta=ctx.params["theta"], max_n=ctx.params["max_n"]
        ),
        params={"theta": INDEX_THETA, "max_n": LENGTHS},
        pins={
            "rows": 99,
            "reported_fails_at": 19,
            "reported_first_failure_n": 4,
            "reported_fails_at_offset": 17,
            "reported_first_failure_n_offset": 5,
            "attained_at_theta_up_to_n": 7,
            "ratio_to_reported_at_max_n": Approx(3.998684225906031, rel=1e-9),
            "exact_at_max_n": Approx(0.00017561168678521057, rel=1e-9),
        },
    )
)

CLAIMS.add_correction(
    Correction(
        id="thm3.2.index.best-theta",
        corrects=("thm3.2.index.pi2-over-2n2.best-theta",),
        reading="Delta as the worst-case margin, maximised over the angle",
        statement="The best worst-case margin of one-plane T_Index at length n >= 2, over every angle, is "
        "exactly 1 - cos(2 pi/n) = 2 sin(pi/n)^2, attained exactly at theta = 2 pi k/n with gcd(k, n) = 1; "
        "it is 4 (sin(pi/n)/(pi/n))^2 times pi^2/(2 n^2), which increases with n from 16/pi^2 at n = 2 "
        "towards 4 ({ratio_at_max_n} at n = {max_n}).",
        latex=r"\max_{\theta}\,\Delta_\theta(n)=1-\cos\frac{2\pi}{n}=2\sin^2\frac{\pi}{n}"
        r"=4\left(\frac{\sin(\pi/n)}{\pi/n}\right)^{2}\frac{\pi^2}{2n^2}",
        offset_statement="With n the largest offset: exactly 2 sin(pi/(n + 1))^2, attained at theta = "
        "2 pi k/(n + 1) with gcd(k, n + 1) = 1; against pi^2/(2 n^2) the ratio also tends to 4 "
        "({ratio_at_max_n_offset} at length {max_n}) and exceeds 1 from n = 2 (length 3).",
        status="proved",
        range="every length n >= 2; rows: n = 2..{max_n}",
        tightness="Equality: theta = 2 pi/n attains the value at every n (query s = n - 1, target at "
        "position 0, the key next to it ties with the farthest one). The exact column maximises over every "
        "angle without the lemma: exactly over the candidate angles pi j/q, q <= 2(n - 1), at every row "
        "(the reduction to those candidates is argued in docs/theory.md), and by interval branch-and-bound "
        "over theta in [0, pi] for n <= {certified_up_to}; both find 1 - cos(2 pi/n), and the candidates' "
        "maximisers are exactly 2 pi k/n with gcd(k, n) = 1 at every row.",
        sketch="Upper bound as for a fixed angle (n points on the circle, an arc of at most 2 pi/n); at "
        "theta = 2 pi/n every gap is 2 sin(pi m/n)^2 >= 2 sin(pi/n)^2. Equality forces all n arcs to be 2 "
        "pi/n: the points are the regular n-gon, so theta = 2 pi k/n, and a common factor of k and n would "
        "repeat a point. That every unit k attains is Euclid's lemma (argued; checked exhaustively for n <= "
        "256). Argued steps: attaining-angles (Euclid's lemma, above) and composition (how the steps "
        "combine, "
        "docs/theory.md section 9.1).",
        compute=lambda ctx: ctx.store.get(
            INDEX_BEST_THETA, max_n=ctx.params["max_n"], certified_up_to=ctx.params["certified_up_to"]
        ),
        params={"max_n": LENGTHS, "certified_up_to": CERTIFIED_UP_TO},
        pins={
            "rows": 99,
            "reported_first_failure_n": 2,
            "reported_first_failure_n_offset": 3,
            "ratio_at_max_n": Approx(3.9986842259059934, rel=1e-9),
            "ratio_at_max_n_offset": Approx(3.9191104098105014, rel=1e-9),
            "exact_at_max_n": Approx(0.0019732715717284193, rel=1e-9),
        },
    )
)

CLAIMS.add_correction(
    Correction(
        id="thm3.2.index.largest-gap",
        corrects=(f"{_INDEX_PI2}.gap_sup", f"{_INDEX_MIN}.gap_sup", "thm3.2.index.certified"),
        reading="Delta read literally: the largest top-1 minus top-2 gap over inputs",
        statement="Read literally, one-plane T_Index at any angle theta has Delta(n) = min over 1 <= m <= M "
        "of "
        "(1 - cos(m theta)) <= min(1 - cos theta, 1 - cos(2 pi/(M + 1))) with M = ceil((n - 1)/2) (the "
        "target "
        "in the middle of the input), attained at theta = 2 pi/(M + 1); the second term is about 16 times "
        "pi^2/(2 n^2) for large n.",
        latex=r"\Delta(n)=\min_{1\le m\le M}\left(1-\cos m\theta\right)\le\min\left(1-\cos\theta,\ "
        r"1-\cos\frac{2\pi}{M+1}\right),\quad M=\left\lceil\frac{n-1}{2}\right\rceil",
        offset_statement="With n the largest offset: the same with M = ceil(n/2).",
        status="proved",
        range="every theta and every length n >= 2; rows: theta = {theta}, n = 2..{max_n}",
        tightness="theta = 2 pi/(M + 1) attains both terms (query s = M, target at n - 1 - M); at theta = "
        "{theta} "
        "the bound is attained up to n = {attained_at_theta_up_to_n}, and at n = {max_n} it is "
        "{ratio_to_reported_at_max_n} times [A]'s.",
        sketch="The largest gap puts the target where its farthest key is closest, M = ceil((n - 1)/2) "
        "offsets "
        "away; the M + 1 points m theta (m = 0 .. M) leave an arc of at most 2 pi/(M + 1), as for the "
        "margin. Argued step: composition (how the checked steps combine, docs/theory.md section 9.1).",
        compute=lambda ctx: ctx.store.get(
            INDEX_LARGEST_GAP, theta=ctx.params["theta"], max_n=ctx.params["max_n"]
        ),
        params={"theta": INDEX_THETA, "max_n": LENGTHS},
        pins={
            "rows": 99,
            "reported_fails_at": 53,
            "reported_first_failure_n": 4,
            "reported_fails_at_offset": 51,
            "reported_first_failure_n_offset": 5,
            "attained_at_theta_up_to_n": 13,
            "ratio_to_reported_at_max_n": Approx(15.359258628902397, rel=1e-9),
        },
    )
)

CLAIMS.add_correction(
    Correction(
        id="thm3.2.retrieval.margin",
        corrects=(f"{_RETRIEVAL}.margin_inf", f"{_RETRIEVAL}.gap_inf", "thm3.2.retrieval.certified"),
        reading="Delta as the worst-case margin, or the smallest gap where the construction works",
        statement="For T_Retrieval at any theta >= 0 and every length n >= 3, the worst-case margin is at "
        "most "
        "1 - cos(omega - (n - 1) theta), and at n = 2 it is cos theta - cos omega <= 1 - cos omega; exactly, "
        "while (n - 1) theta <= omega it is 2 sin((omega - theta)/2) sin((omega - (2n - 3) theta)/2) for "
        "3 <= n < n* = (omega/theta + 3)/2 and 2 sin((omega + theta)/2) sin((omega - (2n - 3) theta)/2) at "
        "n = 2 and from n*, and the smallest gap equals it wherever it is positive.",
        latex=r"\Delta(n)\le 1-\cos\bigl(\omega-(n-1)\theta\bigr)\ (n\ge 3),\qquad "
        r"\Delta(2)=\cos\theta-\cos\omega\le 1-\cos\omega",
        offset_statement="With n the largest offset, [A]'s bound 1 - cos(omega - n theta) holds as stated "
        "for "
        "every n >= 2; only n = 1, where the query's own key is the only competitor, needs 1 - cos omega.",
        status="proved",
        range="every theta >= 0 and every length n >= 2 (the smallest gap: lengths below n*); rows: "
        "|ALPH| = {alphabet}, theta = {theta} and theta = 0, n = 2..{max_n}",
        tightness="theta = 0 attains the bound at every length; for 3 <= n < n* the bound exceeds the exact "
        "margin by exactly 2 sin((n - 2) theta/2)^2 <= (n - 2)^2 theta^2/2 ({max_bound_minus_margin} at most "
        "for n <= {max_n} at theta = {theta}), the worst input putting the target at distance n - 2 and the "
        "letter phi(Y) + 1 at n - 1.",
        sketch="A minimum over inputs is at most one input's margin: the target at distance n - 2 against "
        "the "
        "letter phi(Y) + 1 at n - 1 gives cos((n - 2) theta) - cos(omega - (n - 1) theta) = "
        "[1 - cos(omega - (n - 1) theta)] - 2 sin((n - 2) theta/2)^2. Every competitor scores at most "
        "cos(omega - d theta) at distance d while d theta <= omega, which gives the exact value. Argued "
        "step: composition (how the checked steps combine, docs/theory.md section 9.2).",
        compute=lambda ctx: ctx.store.get(RETRIEVAL_MARGIN, **ctx.params),
        params={"alphabet": ALPHABET, "theta": RETRIEVAL_THETA, "max_n": LENGTHS},
        pins={
            "rows": 99,
            "reported_fails_at": 23,
            "reported_first_failure_n": 2,
            "reported_fails_at_offset": 1,
            "reported_first_failure_n_offset": 2,
            "max_bound_minus_margin": Approx(0.03480281262160273, rel=1e-9),
        },
    )
)

CLAIMS.add_correction(
    Correction(
        id="thm3.2.retrieval.largest-gap",
        corrects=(f"{_RETRIEVAL}.gap_sup", "thm3.2.retrieval.theta=0.gap_sup"),
        reading="Delta read literally: the largest top-1 minus top-2 gap over inputs",
        statement="Read literally, T_Retrieval's Delta(n) is cos theta + cos((n - 1) theta) = 2 cos(n "
        "theta/2) "
        "cos((n - 2) theta/2) for 3 <= n <= 1 + omega/(2 theta), and 1 + cos theta at n = 2 (|ALPH| even, at "
        "least 4); at theta = 0 it is 2 at every length. It is at least 2 cos(omega/2) > 1, above any bound "
        "of "
        "[A]'s shape (at most 1 - cos omega), because it measures the logits' range: the query's own key "
        "points away from it (logit -1) while the target sits next to the query.",
        latex=r"\Delta(n)=\cos\theta+\cos\bigl((n-1)\theta\bigr)=2\cos\frac{n\theta}{2}\cos\frac{(n-2)\theta}{2}"
        r"\ \ (n\ge 3),\qquad \Delta(2)=1+\cos\theta",
        offset_statement="With n the largest offset the same values sit at length n + 1; neither reading of "
        "n "
        "brings them under [A]'s bound.",
        status="proved",
        range="even |ALPH| >= 4, theta >= 0 and (n - 1) theta <= omega/2; rows: |ALPH| = {alphabet}, "
        "theta = {theta} and theta = 0, n = 2..{max_n}",
        tightness="Equality at every length: the input with the target at distance 1 and the opposite letter "
        "everywhere else, the query's own key included (gap {min_gap} at n = {max_n}, against at most "
        "{max_reported} for [A]'s bound).",
        sketch="The opposite letter scores cos(pi - d theta) = -cos(d theta), the least a competitor can "
        "score "
        "while d theta <= omega/2; the target, at least cos(omega/2), stays on top; so the largest gap puts "
        "the "
        "target at distance 1 and the opposite letter everywhere else, the farthest at n - 1. Argued step: "
        "composition (how the checked steps combine, docs/theory.md section 9.3).",
        compute=lambda ctx: ctx.store.get(RETRIEVAL_LARGEST_GAP, **ctx.params),
        params={"alphabet": ALPHABET, "theta": RETRIEVAL_THETA, "max_n": LENGTHS},
        pins={
            "rows": 99,
            "reported_fails_at": 99,
            "reported_fails_at_offset": 99,
            "min_gap": Approx(1.9644839124293694, rel=1e-9),
            "max_reported": Approx(0.29098661022656336, rel=1e-9),
            "gap_at_theta_0": Approx(2.0, rel=1e-12),
        },
    )
)
