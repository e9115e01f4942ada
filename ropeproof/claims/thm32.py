"""[A] Theorem 3.2: each reported bound term under each reading of Delta, in floating point and
certified by interval arithmetic."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import mpmath
import numpy as np
import torch

from ropeproof.claims.outcomes import certified_outcome
from ropeproof.claims.registry import CheckContext, ClaimSet, Outcome
from ropeproof.constructions.paper import ALPHABET_SIZE as ALPHABET
from ropeproof.constructions.paper import (
    INDEX_THETA,
    RETRIEVAL_THETA,
)
from ropeproof.verify.exact.bound_checks import compare
from ropeproof.verify.exact.certified import certified_index, certified_retrieval
from ropeproof.verify.exact.index_sweep import index_sweep
from ropeproof.verify.exact.sweep import SweepTable, sweep_index, sweep_retrieval
from ropeproof.verify.runtime.devices import dtype_name
from ropeproof.verify.runtime.resolution import gap_resolution

CLAIMS = ClaimSet("thm3.2")
"""The thm3.2 claims, in report order."""


LENGTHS = 100  # [A]'s theory figure: lengths 1 to 100 (n = 1 has no key besides the query)


@lru_cache(maxsize=16)
def _index_table(theta: float, max_n: int, dtype: str) -> SweepTable:
    return sweep_index(theta, max_n, dtype, "cpu")


@lru_cache(maxsize=16)
def _retrieval_table(theta: float, max_n: int, dtype: str) -> SweepTable:
    return sweep_retrieval(ALPHABET, theta, max_n, dtype, "cpu")


def _table_certified_outcome(table: SweepTable, term_index: int | None, reading: str) -> Outcome | None:
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
    return certified_outcome(
        {reading: cmp},
        witness=lambda _label, n: table.witness(n, reading),
        detail=f"certified by interval arithmetic, reading Delta = {reading}",
    )


def _bound_outcome(table: SweepTable, term_index: int | None, reading: str, ctx: CheckContext) -> Outcome:
    """Judge one bound term (``None``: the min of all terms) under one reading of Delta."""
    if ctx.certified and ctx.dtype == torch.float64:
        outcome = _table_certified_outcome(table, term_index, reading)
        if outcome is not None:
            return outcome
    cols = table.columns
    n = cols["n"]
    if term_index is None:
        bound, term_name = cols["bound"], "min of terms"
        cmp = table.comparisons[reading]
    else:
        term = table.bound.terms[term_index]
        theta, omega = table.params["theta"], table.params.get("omega", 0.0)
        bound = np.broadcast_to(term.numpy()(n.astype(float), theta, omega), n.shape).astype(float)
        term_name = term.name
        measured = cols[reading]
        tol = 24 * np.finfo(np.float64).eps * np.maximum(1.0, np.abs(bound))

        def refine(n_: int) -> tuple[float, float]:
            with mpmath.workdps(40):
                return table.mp_measured(n_, reading), term.mpmath()(n_, mpmath.mpf(theta), mpmath.mpf(omega))

        cmp = compare(term.name, reading, n, measured, bound, tol, refine)
    dtype = ctx.dtype
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
            "input": table.witness(first, reading),
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


def _register_bound_claims() -> None:
    readings = {
        "gap_sup": "the largest top-1 minus top-2 gap over inputs of length n (the literal definition)",
        "gap_inf": "the smallest top-1 minus top-2 gap over inputs of length n",
        "margin_inf": "the worst-case target margin over inputs of length n",
    }
    index_terms = [(0, "1 - cos(theta)"), (1, "pi^2/(2 n^2)"), (None, "min(1 - cos(theta), pi^2/(2 n^2))")]
    for reading, meaning in readings.items():
        for term_index, term_text in index_terms:
            slug = {0: "one-minus-cos", 1: "pi2-over-2n2", None: "min"}[term_index]

            def check(ctx: CheckContext, term_index=term_index, reading=reading) -> Outcome:
                table = _index_table(INDEX_THETA, LENGTHS, dtype_name(ctx.dtype))
                return _bound_outcome(table, term_index, reading, ctx)

            CLAIMS.claim(
                id=f"thm3.2.index.{slug}.{reading}",
                statement=f"For T_Index at theta = {INDEX_THETA}, Delta(n) <= {term_text} for "
                f"n = 2..{LENGTHS}, reading Delta as {meaning}.",
                reference="[A] Theorem 3.2; THEORY.md section 5",
                params={"theta": INDEX_THETA, "lengths": f"2..{LENGTHS}", "reading": reading},
                expected="open",
            )(check)
        for theta in (RETRIEVAL_THETA, 0.0):

            def check_r(ctx: CheckContext, theta=theta, reading=reading) -> Outcome:
                table = _retrieval_table(theta, LENGTHS, dtype_name(ctx.dtype))
                return _bound_outcome(table, None, reading, ctx)

            CLAIMS.claim(
                id=f"thm3.2.retrieval.theta={theta:g}.{reading}",
                statement=f"For T_Retrieval with |ALPH| = {ALPHABET} at theta = {theta:g}, "
                f"Delta(n) <= 1 - cos(omega - n theta) for n = 2..{LENGTHS}, reading Delta as {meaning}.",
                reference="[A] Theorem 3.2; THEORY.md section 5",
                params={
                    "alphabet_size": ALPHABET,
                    "theta": theta,
                    "lengths": f"2..{LENGTHS}",
                    "reading": reading,
                },
                expected="open",
            )(check_r)


_register_bound_claims()


@CLAIMS.claim(
    id="thm3.2.index.pi2-over-2n2.best-theta",
    statement="No angle gives T_Index a worst-case margin above pi^2/(2 n^2) at length n "
    "(tested at theta = 2 pi / n, n = 3..100).",
    reference="[A] Theorem 3.2 (the 1/n^2 term read as a statement about every theta); THEORY.md section 5",
    params={"theta": "2 pi / n", "lengths": "3..100"},
    expected="open",
)
def _best_theta(ctx: CheckContext) -> Outcome:
    ns = np.arange(3, LENGTHS + 1)
    margins = np.array([index_sweep([2 * math.pi / n], [1.0], int(n)).margin_inf[-1] for n in ns])
    bound = math.pi**2 / (2 * ns.astype(float) ** 2)
    tol = 24 * np.finfo(np.float64).eps
    cmp = compare("pi^2/(2n^2)", "margin_inf", ns, margins, bound, tol)
    bad = cmp.violated_n
    cex = None
    if bad.size:
        n0 = int(bad[0])
        cex = {
            "n": n0,
            "theta": 2 * math.pi / n0,
            "margin_inf": float(margins[n0 - 3]),
            "bound": float(bound[n0 - 3]),
            "input": {"s": n0 - 1, "target_position": 0},
        }
    return Outcome.judge(
        not bad.size,
        {
            "max_ratio": float(np.max(margins / bound)),
            "violating_lengths": int(bad.size),
            "ratio_at_100": float(margins[-1] / bound[-1]),
        },
        key_figure="max_ratio",
        counterexample=cex,
        detail="margin_inf(n) at theta = 2 pi/n equals 1 - cos(2 pi/n) ~ 2 pi^2/n^2, four times the term.",
    )


@CLAIMS.claim(
    id="thm3.2.index.certified",
    statement=(
        "Delta_Index(n) <= min(1 - cos(theta), pi^2/(2 n^2)) for T_Index at theta = 0.866, every "
        "n <= 10^4, with Delta read as the worst-case margin and as the largest gap; each row is decided "
        "by interval arithmetic."
    ),
    reference="[A] Theorem 3.2 (as reported); THEORY.md section 5",
    params={"theta": 0.866, "max_n": "10^4", "readings": ["margin_inf", "gap_sup"], "prec_bits": 80},
    expected="open",
)
def _thm_index(ctx: CheckContext) -> Outcome:
    chk = certified_index(INDEX_THETA, 10**4)
    return certified_outcome({f"index/{q}": cmp for q, cmp in chk.comparisons.items()})


@CLAIMS.claim(
    id="thm3.2.retrieval.certified",
    statement=(
        "Delta_Retrieval(n) <= 1 - cos(omega - n theta) for T_Retrieval with |ALPH| = 8 at theta = 0 and "
        "theta = 0.0027, every n <= 10^4, with Delta read as the worst-case margin; each row is decided "
        "by interval arithmetic."
    ),
    reference="[A] Theorem 3.2 (as reported); THEORY.md section 5",
    params={"alphabet": 8, "theta": [0.0, 0.0027], "max_n": "10^4 (quick 2000)", "prec_bits": 80},
    expected="open",
)
def _thm_retrieval(ctx: CheckContext) -> Outcome:
    big = 2000 if ctx.quick else 10**4
    comparisons = {}
    for theta in (0.0, RETRIEVAL_THETA):
        chk = certified_retrieval(ALPHABET, theta, big)
        comparisons.update({f"retrieval(theta={theta:g})/{q}": cmp for q, cmp in chk.comparisons.items()})
    return certified_outcome(comparisons)
