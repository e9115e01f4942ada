"""Claims from [A]: Theorem 3.1 (the constructions work up to their horizon), Theorem 3.2 (each
reported bound under each reading of Delta) and Remark 3.1 (both impossibilities)."""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache
from typing import Any

import mpmath
import numpy as np
import torch

from constructions.compile import compile_construction
from constructions.paper import index_construction, retrieval_construction
from ropeproof.claims import CheckContext, Outcome, claim
from verify.bound_checks import compare
from verify.certified import certified_index, certified_retrieval
from verify.devices import dtype_name
from verify.discrepancy import build_tables, exact_sweep
from verify.families import family_for
from verify.impossibility import find_failure_pair
from verify.index_sweep import index_sweep
from verify.mp_reference import MpLogits
from verify.resolution import gap_resolution
from verify.sweep import SweepTable, sweep_index, sweep_retrieval
from verify.tasks import letter_task, number_task

INDEX_THETA = 0.8660
RETRIEVAL_THETA = 0.0027
ALPHABET = 8
OMEGA = 2 * math.pi / ALPHABET
LENGTHS = 100  # [A]'s theory figure: lengths 1 to 100 (n = 1 has no key besides the query)


@lru_cache(maxsize=16)
def _index_table(theta: float, max_n: int, dtype: str) -> SweepTable:
    return sweep_index(theta, max_n, dtype, "cpu")


@lru_cache(maxsize=16)
def _retrieval_table(theta: float, max_n: int, dtype: str) -> SweepTable:
    return sweep_retrieval(ALPHABET, theta, max_n, dtype, "cpu")


def _mp_measured(table: SweepTable, n: int, reading: str) -> Any:
    """The attaining input's value of ``reading`` at 40 digits (ground truth for tight rows)."""
    w = table.witness(n, reading)
    theta = mpmath.mpf(table.params["theta"])
    if table.construction == "index":
        return 2 * mpmath.sin(w["competitor_offset"] * theta / 2) ** 2
    c = retrieval_construction(table.params["alphabet_size"], table.params["theta"], max_int=1)
    gap, margin = MpLogits(c).gap_and_margin(w["tokens"], w["target_position"])
    return margin if reading == "margin_inf" else gap


def _certified_outcome(table: SweepTable, term_index: int | None, reading: str) -> Outcome | None:
    """The interval-arithmetic verdict (:mod:`verify.certified`), or ``None`` where none exists
    (Retrieval is certified for the ``margin_inf`` reading only)."""
    theta, big = table.params["theta"], int(table.columns["n"][-1])
    if table.construction == "index":
        term = {0: "one-minus-cos", 1: "pi2-over-2n2", None: "min"}[term_index]
        cmp = certified_index(theta, big, readings=(reading,), term=term).comparisons[reading]
    elif reading == "margin_inf":
        cmp = certified_retrieval(table.params["alphabet_size"], theta, big).comparisons[reading]
    else:
        return None
    summary = cmp.summary()
    first = summary["first_violation_n"]
    cex = None
    if first is not None:
        r = first - 2
        cex = {
            "n": first,
            "measured": [float(cmp.measured_lo[r]), float(cmp.measured_hi[r])],
            "bound": [float(cmp.bound_lo[r]), float(cmp.bound_hi[r])],
            "input": table.witness(first, reading),
        }
    verdict = cmp.verdict()
    figures = {
        "rows": summary["rows"],
        "first_violation_n": first,
        "lengths": f"2..{big}",
        "max_relative_width": summary["max_relative_width"],
    }
    return Outcome.judge(
        ok=verdict != "violated",
        figures=figures,
        key_figure="first_violation_n" if first is not None else "rows",
        counterexample=cex,
        resolvable=verdict != "unresolvable",
        detail=f"certified by interval arithmetic, reading Delta = {reading}",
        certified=True,
    )


def _bound_outcome(table: SweepTable, term_index: int | None, reading: str, ctx: CheckContext) -> Outcome:
    """Judge one bound term (``None``: the min of all terms) under one reading of Delta."""
    if ctx.certified and ctx.dtype == torch.float64:
        outcome = _certified_outcome(table, term_index, reading)
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
                return _mp_measured(table, n_, reading), term.mpmath()(
                    n_, mpmath.mpf(theta), mpmath.mpf(omega)
                )

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

            claim(
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

            claim(
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


@claim(
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


# ---------------------------------------------------------------------------------------------
# Theorem 3.1: the constructions compute their function up to their horizon


@claim(
    id="thm3.1.index",
    statement="T_Index (theta = 0.8660, 120 letters, integers 1..16) attends to the key s positions back "
    "for every input of the Index family up to length 17, and answers 1-hop number tasks correctly "
    "(argmax and softmax readouts).",
    reference="[A] Theorem 3.1; THEORY.md section 4",
    params={"theta": INDEX_THETA, "max_int": 16, "lengths": "2..17", "tasks": 200, "softmax_scale": 30},
)
def _thm31_index(ctx: CheckContext) -> Outcome:
    c = index_construction(INDEX_THETA, max_int=16, letters=120)
    head = compile_construction(c)
    sweep = exact_sweep(build_tables(head, family_for(c), 17, ctx.dtype), 17)
    res = gap_resolution(ctx.dtype, head_dim=2)
    tasks = number_task(200, hops=(1,), seed=0)
    seqs = [t.tokens for t in tasks]
    hard = head.answer(seqs, dtype=ctx.dtype)
    soft = head.answer(seqs, mode="softmax", softmax_scale=30.0, dtype=ctx.dtype)
    acc_hard = float(np.mean([a == t.answer for a, t in zip(hard, tasks, strict=True)]))
    acc_soft = float(np.mean([a == t.answer for a, t in zip(soft, tasks, strict=True)]))
    m = float(sweep.margin_inf.min())
    # beyond the vocabulary: the exact margin stays positive but sinks below the dtype's resolution
    long = index_sweep([INDEX_THETA], [1.0], 10**5)
    unresolvable = np.nonzero(long.margin_inf <= res)[0]
    figures = {
        "min_margin_inf_2..17": m,
        "accuracy_argmax": acc_hard,
        "accuracy_softmax": acc_soft,
        "first_n_margin_below_dtype_resolution": int(long.n[unresolvable[0]]) if unresolvable.size else None,
    }
    ok = m > 0 and acc_hard == 1.0 and acc_soft == 1.0
    cex = None if ok else sweep.witness(int(sweep.n[np.argmin(sweep.margin_inf)]), "margin_inf")
    return Outcome.judge(ok, figures, "min_margin_inf_2..17", cex, resolvable=m > res)


@claim(
    id="thm3.1.retrieval",
    statement="T_Retrieval (|ALPH| = 8, theta = 0.0027) answers every Retrieval input correctly for every "
    "length n0 with theta < omega/(2 n0) (n0 <= 145), and 1-hop letter tasks correctly.",
    reference="[A] Theorem 3.1; THEORY.md section 4",
    params={"alphabet_size": ALPHABET, "theta": RETRIEVAL_THETA, "lengths": "2..200", "tasks": 200},
)
def _thm31_retrieval(ctx: CheckContext) -> Outcome:
    c = retrieval_construction(ALPHABET, RETRIEVAL_THETA, max_int=8)
    head = compile_construction(c)
    big = 200
    sweep = exact_sweep(build_tables(head, family_for(c), big, ctx.dtype), big)
    horizon_claimed = math.ceil(OMEGA / (2 * RETRIEVAL_THETA)) - 1
    bad = np.nonzero(sweep.margin_inf <= 0)[0]
    first_failure = int(sweep.n[bad[0]]) if bad.size else None
    tasks = letter_task(200, hops=(1,), seed=0)
    answers = head.answer([t.tokens for t in tasks], dtype=ctx.dtype)
    acc = float(np.mean([a == t.answer for a, t in zip(answers, tasks, strict=True)]))
    within = sweep.margin_inf[: horizon_claimed - 1]
    ok = bool((within > 0).all()) and acc == 1.0
    figures = {
        "claimed_horizon": horizon_claimed,
        "exact_first_failure_n": first_failure,
        "min_margin_within_horizon": float(within.min()),
        "task_accuracy": acc,
    }
    cex = None
    if not ok:
        n0 = int(sweep.n[np.argmin(within)])
        cex = dataclasses.asdict(sweep.witness(n0, "margin_inf"))
    res = gap_resolution(ctx.dtype, head_dim=2)
    return Outcome.judge(ok, figures, "exact_first_failure_n", cex, resolvable=float(within.min()) > res)


# ---------------------------------------------------------------------------------------------
# Remark 3.1: impossibilities


def _target(tokens: tuple[str, ...], t: int) -> str:
    return tokens[t]


@claim(
    id="remark3.1.symbolic-cannot-index",
    statement="A purely symbolic head (every plane at theta = 0; also a random NoPE head) cannot implement "
    "Index: a search finds two inputs it does not both answer, while T_Index has none.",
    reference="[A] Remark 3.1; THEORY.md section 4",
    params={"n": 6, "letters": 4, "max_int": 8, "search_examples": 2000},
)
def _remark_symbolic(ctx: CheckContext) -> Outcome:
    c = index_construction(theta=0.0, letters=4, max_int=8)
    head = compile_construction(c)
    rng = np.random.default_rng(0)
    random_nope = dataclasses.replace(
        head,
        W_Q=rng.standard_normal(head.W_Q.shape) * (head.W_Q != 0),
        W_K=rng.standard_normal(head.W_K.shape) * (head.W_K != 0),
    )
    fam = family_for(c)
    found = {}
    for name, h in (("theta=0 T_Index", head), ("random NoPE", random_nope)):
        fp = find_failure_pair(
            lambda b, h=h: h.answer(b, mode="softmax", dtype=ctx.dtype), fam, 6, _target, "content"
        )
        found[name] = fp
    working = index_construction(theta=INDEX_THETA, letters=4, max_int=8)
    wh = compile_construction(working)
    control = find_failure_pair(
        lambda b: wh.answer(b, dtype=ctx.dtype), family_for(working), 6, _target, "content", 500
    )
    ok = all(fp is not None for fp in found.values()) and control is None
    figures = {f"failure_found[{k}]": v is not None for k, v in found.items()}
    figures["control_T_Index_failure_found"] = control is not None
    example = next((dataclasses.asdict(v) for v in found.values() if v is not None), None)
    figures["example_pair"] = example
    return Outcome.judge(
        ok,
        figures,
        "example_pair",
        counterexample={"not found for": [k for k, v in found.items() if v is None]},
    )


@claim(
    id="remark3.1.positional-cannot-retrieve",
    statement="A purely positional head (every key the same vector) cannot implement Retrieval: a search "
    "finds two inputs it does not both answer, while T_Retrieval has none.",
    reference="[A] Remark 3.1; THEORY.md section 4",
    params={"n": 6, "alphabet_size": 4, "search_examples": 2000},
)
def _remark_positional(ctx: CheckContext) -> Outcome:
    c = retrieval_construction(4, 0.01, max_int=2)
    head = compile_construction(c)
    fam = family_for(c)
    found = {}
    for theta in (0.01, 0.3, 1.0):
        h = compile_construction(retrieval_construction(4, theta, max_int=2))
        positional = dataclasses.replace(h, W_K=np.tile(h.W_K[:1], (h.W_K.shape[0], 1)))
        fp = find_failure_pair(
            lambda b, p=positional: p.answer(b, dtype=ctx.dtype), fam, 6, _target, "target"
        )
        found[f"constant keys, theta={theta}"] = fp
    control = find_failure_pair(lambda b: head.answer(b, dtype=ctx.dtype), fam, 6, _target, "target", 500)
    ok = all(fp is not None for fp in found.values()) and control is None
    figures: dict[str, Any] = {f"failure_found[{k}]": v is not None for k, v in found.items()}
    figures["control_T_Retrieval_failure_found"] = control is not None
    figures["example_pair"] = next((dataclasses.asdict(v) for v in found.values() if v is not None), None)
    return Outcome.judge(
        ok,
        figures,
        "example_pair",
        counterexample={"not found for": [k for k, v in found.items() if v is None]},
    )
