"""Judging a reported bound of Theorem 3.2 against an exact sweep, row by row: the tolerance policy,
the mpmath refinement of rows too close to call, the two readings of ``n`` (the sequence length, or the
largest key offset: :data:`CONVENTIONS`) and how the two compare over many checks, the interval-certified
alternative, and the witness input of a failure. The claims in :mod:`ropeproof.claims._thm32` state what is
judged and call these.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mpmath
import numpy as np
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.verify.kernel._devices import dtype_name
from ropeproof.verify.kernel._resolution import gap_resolution
from ropeproof.verify.measure._outcome import Outcome
from ropeproof.verify.measure.exact._bound_checks import BoundComparison, compare
from ropeproof.verify.measure.exact._certified import (
    CertifiedComparison,
    certified_index,
    certified_retrieval,
)
from ropeproof.verify.measure.exact._explain import index_explanation, index_input_tokens
from ropeproof.verify.measure.exact._index_sweep import index_sweep
from ropeproof.verify.measure.exact._sweep import SweepTable


def certified_outcome(
    comparisons: Mapping[str, CertifiedComparison],
    witness: Callable[[str, int], Any] | None = None,
    detail: str = "",
) -> Outcome:
    """One outcome for several certified comparisons, keyed by label.

    The verdict is ``violated`` if any row of any comparison is certified violated, else
    ``unresolvable`` if any row is undecided, else ``holds``. Figures: each comparison's summary,
    the total ``violated_rows`` and the smallest ``first_violation_n``. The counterexample is the
    first violated row of the first violated comparison: its ``n``, both enclosures, and
    ``witness(label, n)`` (the attaining input) when given.
    """
    figures: dict[str, Any] = {label: cmp.summary() for label, cmp in comparisons.items()}
    verdicts = [cmp.verdict() for cmp in comparisons.values()]
    cex = None
    firsts = []
    for label, cmp in comparisons.items():
        if cmp.violated_n.size:
            n = int(cmp.violated_n[0])
            firsts.append(n)
            if cex is None:
                r = int(n - cmp.n[0])
                cex = {
                    "check": label,
                    "n": n,
                    "measured": [float(cmp.measured_lo[r]), float(cmp.measured_hi[r])],
                    "bound": [float(cmp.bound_lo[r]), float(cmp.bound_hi[r])],
                }
                if witness is not None:
                    cex["input"] = witness(label, n)
    figures["violated_rows"] = sum(int(cmp.violated_n.size) for cmp in comparisons.values())
    figures["first_violation_n"] = min(firsts) if firsts else None
    figures["seconds"] = round(sum(cmp.seconds for cmp in comparisons.values()), 3)
    violated = "violated" in verdicts
    undecided = "unresolvable" in verdicts
    return Outcome.judge(
        ok=not violated,
        figures=figures,
        key_figure="first_violation_n" if violated else "violated_rows",
        counterexample=cex,
        resolvable=violated or not undecided,
        detail=detail,
        certified=True,
    )


def certified_index_outcome(theta: float, max_n: int) -> Outcome:
    """[A]'s Index bound ``min(1 - cos theta, pi^2/(2 n^2))`` at every ``n = 2 .. max_n``, each row decided
    by interval arithmetic under the worst-case margin and the largest-gap readings
    (:func:`~ropeproof.verify.measure.exact._certified.certified_index` at its default 80 bits), judged as
    one by :func:`certified_outcome` (labels ``index/<reading>``)."""
    chk = certified_index(theta, max_n)
    return certified_outcome({f"index/{q}": cmp for q, cmp in chk.comparisons.items()})


def certified_retrieval_outcome(alphabet_size: int, thetas: Sequence[float], max_n: int) -> Outcome:
    """[A]'s Retrieval bound ``1 - cos(omega - n theta)`` (``omega = 2 pi / alphabet_size``) under the
    worst-case margin reading at every ``n = 2 .. max_n`` and every angle of ``thetas``, each row decided by
    interval arithmetic (:func:`~ropeproof.verify.measure.exact._certified.certified_retrieval` at its default
    80 bits), judged as one by :func:`certified_outcome` (labels ``retrieval(theta=<theta>)/<reading>``)."""
    comparisons = {}
    for theta in thetas:
        chk = certified_retrieval(alphabet_size, theta, max_n)
        comparisons.update({f"retrieval(theta={theta:g})/{q}": cmp for q, cmp in chk.comparisons.items()})
    return certified_outcome(comparisons)


def index_witness_tokens(
    n: int, s: int, target_position: int, competitor_offset: int | None = None
) -> list[str]:
    """A concrete T_Index input for a witness
    (:func:`~ropeproof.verify.measure.exact._explain.index_input_tokens`: the query integer ``s`` last,
    letter ``A`` at the target ``n - 1 - s``, ``B`` ``competitor_offset`` positions from it, ``C``
    elsewhere)."""
    if target_position != n - 1 - s:
        raise ValueError(f"target_position={target_position} must be n - 1 - s = {n - 1 - s}")
    return index_input_tokens(n, s, competitor_offset)


def sweep_witness(table: SweepTable, n: int, reading: str) -> Any:
    """The sweep's witness at ``n`` for ``reading``: tokens, target, and its explanation (what beats the
    target: position, offset, token and both logits)."""
    return table.witness(n, reading)


def table_certified_outcome(table: SweepTable, term_index: int | None, reading: str) -> Outcome | None:
    """The interval-arithmetic verdict for one term and reading, or ``None`` where no certified check
    exists (Retrieval is certified for the ``margin_inf`` reading only)."""
    theta, big = table.params["theta"], int(table.columns["n"][-1])
    if table.construction == "index":
        term = {0: "one-minus-cos", 1: "pi2-over-2n2", None: "min"}[term_index]
        cmp = certified_index(theta, big, readings=(reading,), term=term).comparisons[reading]
    elif reading == "margin_inf":
        cmp = certified_retrieval(table.params["alphabet_size"], theta, big).comparisons[reading]
    else:
        return None
    outcome = certified_outcome(
        {reading: cmp},
        witness=lambda _label, n: sweep_witness(table, n, reading),
        detail=f"certified by interval arithmetic, reading Delta = {reading}",
    )
    if cmp.violated_n.size:  # the float path's figure name, which the pins use
        outcome = dataclasses.replace(
            outcome, figures={**outcome.figures, "violating_rows": int(cmp.violated_n.size)}
        )
    return outcome


CONVENTIONS = {
    "length": "n is the sequence length (the query at position n - 1, key offsets 0 .. n - 1)",
    "offset": "n is the largest key offset, the sequence length minus 1 (the query written at position n)",
}
"""The two readings of ``n`` in Theorems 3.1 and 3.2 (docs/theory.md section 5: the query is written at
position n, so both are possible). Every check judges the bound at ``n`` from each convention."""


def terms_at(table: SweepTable, term_index: int | None, n_bound: np.ndarray) -> np.ndarray:
    """The bound term (``None``: the min of all terms) evaluated at ``n_bound``, in float64.

    Shapes: n_bound [rows]; return [rows]
    """
    theta, omega = table.params["theta"], table.params.get("omega", 0.0)
    terms = table.bound.terms if term_index is None else (table.bound.terms[term_index],)
    values = [
        np.broadcast_to(t.numpy()(n_bound.astype(float), theta, omega), n_bound.shape).astype(float)
        for t in terms
    ]
    return np.minimum.reduce(values)


def compare_terms(
    table: SweepTable, term_index: int | None, reading: str, shift: int
) -> tuple[np.ndarray, BoundComparison]:
    """``(bound, comparison)`` of ``Delta(L) <= B(L - shift)`` at every length ``L`` of ``table``: the
    term (``None``: the min of all terms) in float64 with a tolerance of 24 ulps of ``max(1, |B|)``,
    rows too close to call refined in mpmath at 40 digits (``omega`` exactly ``2 pi / |ALPH|``, as the
    construction's exact logits use it)."""
    n = table.columns["n"]
    bound = terms_at(table, term_index, n - shift)
    theta, omega = table.params["theta"], table.params.get("omega", 0.0)
    terms = table.bound.terms if term_index is None else (table.bound.terms[term_index],)
    tol = 24 * np.finfo(np.float64).eps * np.maximum(1.0, np.abs(bound))

    def refine(n_: int) -> tuple[Any, Any]:
        with mpmath.workdps(40):
            a = table.params.get("alphabet_size")
            w = 2 * mpmath.pi / a if a else mpmath.mpf(omega)
            b = min(t.mpmath()(n_ - shift, mpmath.mpf(theta), w) for t in terms)
            return table.mp_measured(n_, reading), b

    name = " and ".join(t.name for t in terms)
    return bound, compare(name, reading, n, table.columns[reading], bound, tol, refine)


def offset_convention(
    table: SweepTable, term_index: int | None, reading: str, length: Outcome | None = None
) -> dict[str, Any]:
    """Judge ``Delta(L) <= B(L - 1)`` at every sequence length ``L`` of ``table`` (n read as the
    largest offset): the verdict, the first failing length and how many lengths fail. float64 with the
    same tolerance and mpmath refinement of close rows as the length convention. Where the bound does
    not depend on ``n`` (``1 - cos(theta)``; Retrieval at ``theta = 0``) the two conventions are the
    same check, and the ``length`` outcome (its verdict decided by identities) is returned as is."""
    n = table.columns["n"]
    bound = terms_at(table, term_index, n - 1)
    if length is not None and np.array_equal(bound, terms_at(table, term_index, n)):
        f = length.figures
        return {
            "verdict": length.verdict,
            "first_violation_n": f.get("first_violation_n"),
            "violating_rows": f.get("violating_rows", 0),
        }
    _bound, cmp = compare_terms(table, term_index, reading, shift=1)
    status = cmp.status
    violated = n[np.isin(status, ("violated", "tight-violated"))]
    undecided = bool((status == "undecided").any())
    verdict = "violated" if violated.size else ("undecided" if undecided else "holds")
    return {
        "verdict": verdict,
        "first_violation_n": int(violated[0]) if violated.size else None,
        "violating_rows": int(violated.size),
    }


def _with_offset_convention(outcome: Outcome, offset: dict[str, Any]) -> Outcome:
    figures = {
        **outcome.figures,
        "offset_convention": offset["verdict"],
        "offset_first_violation_n": offset["first_violation_n"],
        "offset_violating_rows": offset["violating_rows"],
    }
    return dataclasses.replace(outcome, figures=figures)


def bound_outcome(
    table: SweepTable,
    term_index: int | None,
    reading: str,
    dtype: torch.dtype = torch.float64,
    certified: bool = False,
) -> Outcome:
    """Judge one bound term (``None``: the min of all terms) under one reading of Delta, with ``n`` the
    sequence length (:func:`length_outcome`); the figures also carry the verdict with ``n`` the largest
    offset (:func:`offset_convention`)."""
    length = length_outcome(table, term_index, reading, dtype, certified)
    return _with_offset_convention(length, offset_convention(table, term_index, reading, length))


def length_outcome(
    table: SweepTable,
    term_index: int | None,
    reading: str,
    dtype: torch.dtype = torch.float64,
    certified: bool = False,
) -> Outcome:
    """Judge one bound term (``None``: the min of all terms) under one reading of Delta, n = length:
    in float64 by the sweep's enclosures, refined in mpmath where close (:func:`compare_terms`); in a
    lower ``dtype`` on the values it produced, rows it cannot resolve left undecided; with
    ``certified`` (float64 only), by interval arithmetic where a certified check exists."""
    if certified and dtype == torch.float64:
        outcome = table_certified_outcome(table, term_index, reading)
        if outcome is not None:
            return outcome
    cols = table.columns
    n = cols["n"]
    if term_index is None:
        bound, term_name = cols["bound"], "min of terms"
        cmp = table.comparisons[reading]
    else:
        term_name = table.bound.terms[term_index].name
        bound, cmp = compare_terms(table, term_index, reading, shift=0)
    if dtype != torch.float64 and f"measured_{reading}" in cols:
        # judged on the values the dtype produced; rows the dtype cannot resolve stay undecided
        meas = cols[f"measured_{reading}"]
        res = gap_resolution(dtype, head_dim=2)
        cmp = compare(term_name, reading, n, meas, bound, res)
    status = cmp.status
    violated = n[np.isin(status, ("violated", "tight-violated"))]
    figures: dict[str, Any] = {
        "rows": {s: int((status == s).sum()) for s in np.unique(status)},
        "max_ratio_measured_over_bound": float(np.nanmax(cmp.ratio[np.isfinite(cmp.ratio)]))
        if np.isfinite(cmp.ratio).any()
        else None,
        "lengths": f"2..{int(n[-1])}",
        "dtype": dtype_name(dtype),
    }
    cex = None
    if violated.size:
        first = int(violated[0])
        r = first - 2
        cex = {
            "n": first,
            "measured": float(cols[reading][r]),
            "bound": float(bound[r]),
            "input": sweep_witness(table, first, reading),
        }
        figures["first_violation_n"] = first
        figures["violating_rows"] = int(violated.size)
    undecided = (status == "undecided").any()
    return Outcome.judge(
        ok=not violated.size,
        figures=figures,
        key_figure="first_violation_n" if violated.size else "max_ratio_measured_over_bound",
        counterexample=cex,
        resolvable=not (undecided and not violated.size),
        detail=f"term {term_name}, reading Delta = {reading}",
    )


def best_theta_outcome(max_n: int) -> Outcome:
    """[A]'s ``pi^2/(2 n^2)`` term read as a bound for every angle: T_Index at ``theta = 2 pi / n``, every
    ``n = 3 .. max_n``, its exact worst margin
    (:func:`~ropeproof.verify.measure.exact._index_sweep.index_sweep`)
    against the term with ``n`` the length and with ``n`` the largest offset (float64, 24 ulps)."""
    big = int(max_n)
    ns = np.arange(3, big + 1)
    margins = np.array([index_sweep([2 * math.pi / n], [1.0], int(n)).margin_inf[-1] for n in ns])
    bound = math.pi**2 / (2 * ns.astype(float) ** 2)
    tol = 24 * np.finfo(np.float64).eps
    cmp = compare("pi^2/(2n^2)", "margin_inf", ns, margins, bound, tol)
    bad = cmp.violated_n
    # n read as the largest offset: the margin at length L against pi^2/(2 (L - 1)^2)
    offset_bound = math.pi**2 / (2 * (ns.astype(float) - 1) ** 2)
    offset_bad = compare("pi^2/(2n^2)", "margin_inf", ns, margins, offset_bound, tol).violated_n
    cex = None
    figures: dict[str, Any] = {
        "max_ratio": float(np.max(margins / bound)),
        "violating_lengths": int(bad.size),
        "ratio_at_max_n": float(margins[-1] / bound[-1]),
        "first_violation_n": int(bad[0]) if bad.size else None,
        "offset_first_violation_n": int(offset_bad[0]) if offset_bad.size else None,
        "offset_violating_lengths": int(offset_bad.size),
    }
    if bad.size:
        n0 = int(bad[0])
        cex = {
            "n": n0,
            "theta": 2 * math.pi / n0,
            "margin_inf": float(margins[n0 - 3]),
            "bound": float(bound[n0 - 3]),
            "input": _best_theta_input(n0, 2 * math.pi / n0),
        }
    return Outcome.judge(not bad.size, figures, key_figure="ratio_at_max_n", counterexample=cex)


def _best_theta_input(n: int, theta: float) -> dict[str, Any]:
    """The input of :func:`best_theta_outcome`'s counterexample with its explanation: query ``n - 1``,
    target at 0, the competitor one position after it."""
    tokens = index_witness_tokens(n, n - 1, 0, 1)
    explanation = index_explanation("margin_inf", [theta], [1.0], tokens, 0, tokens.index("B"))
    return {"s": n - 1, "target_position": 0, "tokens": tokens, "explanation": explanation.to_dict()}


ConventionCheck = tuple[SweepTable, int | None, str]
"""One per-reading check: the sweep table, the bound term (``None``: the min of all terms) and the reading."""


def convention_rows(checks: Mapping[str, ConventionCheck]) -> list[dict[str, Any]]:
    """Each check of ``checks`` (keyed by its label) judged by :func:`bound_outcome` in float64 under both
    conventions: ``{"claim": label, "length": (verdict, first failing n, failing lengths), "offset": (the
    same with n the largest offset)}``, in the order of ``checks``."""
    rows = []
    for label, (table, term_index, reading) in checks.items():
        out = bound_outcome(table, term_index, reading)
        f = out.figures
        rows.append(
            {
                "claim": label,
                "length": (out.verdict, f.get("first_violation_n"), f.get("violating_rows", 0)),
                "offset": (f["offset_convention"], f["offset_first_violation_n"], f["offset_violating_rows"]),
            }
        )
    return rows


def length_convention_outcome(checks: Mapping[str, ConventionCheck], listed: str) -> Outcome:
    """Whether any of ``checks`` changes its verdict when ``n`` is read as the largest offset instead of the
    sequence length (:func:`convention_rows`), and where its failures move.

    Figures: ``checks`` (how many); ``verdict_changes``, ``first_failure_changes`` and ``extent_changes``
    (how many checks change their verdict, their first failing length, their number of failing lengths),
    each with the labels (``*_ids``); for the check ``listed`` (a min-of-terms check: its term is
    ``None``), its failing lengths under both conventions as ranges (:func:`length_ranges`):
    ``retrieval_margin_failing_lengths`` from the sweep's judged comparison, ``*_offset`` from the float64
    comparison ``Delta(L) > B(L - 1)``, and ``retrieval_margin_offset_rows_agree``, whether that float64
    count equals the count the refined judging of :func:`offset_convention` found (the ranges are only
    reported, so they must be the rows the verdict counts); ``by_claim``, every row.

    ``holds`` when no verdict changes and the listed check's counts agree; the counterexample lists the
    changed checks."""
    if listed not in checks or checks[listed][1] is not None:
        raise InputError(f"listed={listed!r}: accepted, the label of a min-of-terms check in checks")
    table, _term, reading = checks[listed]
    rows = convention_rows(checks)
    changed = {
        "verdict_changes": [r["claim"] for r in rows if r["length"][0] != r["offset"][0]],
        "first_failure_changes": [r["claim"] for r in rows if r["length"][1] != r["offset"][1]],
        "extent_changes": [r["claim"] for r in rows if r["length"][2] != r["offset"][2]],
    }
    n = table.columns["n"]
    status = table.comparisons[reading].status
    length_fail = [int(v) for v in n[np.isin(status, ("violated", "tight-violated"))]]
    measured = table.columns[reading]
    offset_bound = terms_at(table, None, n - 1)
    row = next(r for r in rows if r["claim"] == listed)
    # the offset convention's failing lengths: the first failing length and the count pin them when the
    # failures are contiguous from the first, which the float64 comparison below confirms
    offset_fail = [int(v) for v in n[measured > offset_bound]]
    figures: dict[str, Any] = {
        "checks": len(rows),
        **{k: len(v) for k, v in changed.items()},
        **{f"{k}_ids": v for k, v in changed.items()},
        "retrieval_margin_failing_lengths": length_ranges(length_fail),
        "retrieval_margin_failing_lengths_offset": length_ranges(offset_fail),
        "retrieval_margin_offset_rows_agree": len(offset_fail) == row["offset"][2],
        "by_claim": {r["claim"]: {"length": list(r["length"]), "offset": list(r["offset"])} for r in rows},
    }
    ok = not changed["verdict_changes"] and figures["retrieval_margin_offset_rows_agree"]
    return Outcome.judge(ok, figures, "verdict_changes", counterexample=changed)


def length_ranges(lengths: list[int]) -> str:
    """Sorted integers as ranges, e.g. ``[2, 3, 4, 9]`` -> ``"2..4, 9"`` (``"none"`` when empty)."""
    if not lengths:
        return "none"
    parts: list[str] = []
    start = prev = lengths[0]
    for v in [*lengths[1:], None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        parts.append(f"{start}" if start == prev else f"{start}..{prev}")
        if v is not None:
            start = prev = v
    return ", ".join(parts)
