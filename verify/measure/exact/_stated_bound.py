"""Check a bound you state on your own construction or head, row by row, with an exact first violation.

:func:`check_bound` judges ``reading(n) <= bound(n)`` (``relation="<="``, an upper bound such as [A]'s
Theorem 3.2) or ``reading(n) >= bound(n)`` (``relation=">="``, a guarantee such as "the margin stays
above 1.886") at *every* length from the shortest to the longest asked for, where ``reading`` is one
of the exact family extremes ``margin_inf``, ``gap_inf``, ``gap_sup``
(:mod:`ropeproof.verify.measure.exact._discrepancy`) over the subject's input family (the one it carries
or records, or ``family=``).

The bound is a sympy expression in ``n`` (or text for
:func:`~ropeproof.theory._bound_expression.parse_bound`, which may name the subject's parameters such as
``theta``), enclosed per row in Arb; or a Python callable of ``n``, whose float values are taken as
exact (a callable cannot be enclosed; say so by passing an expression instead).

Two ways to judge, both through :mod:`ropeproof.verify.measure.exact._bound_checks` (the statuses
``holds``, ``holds-equal``, ``tight-holds``, ``violated``, ``tight-violated``, ``undecided``):

- **float64** (default): the exact sweep's values with their error bounds (the logits' own bounds,
  :func:`~ropeproof.verify.measure.exact._plane_logits.distance_logits_exact`, and for a construction
  the rounding of its compiled weights) against the bound's enclosure; rows whose enclosures overlap
  are refined by re-enclosing the attaining input's value in Arb at a high precision
  (:func:`~ropeproof.verify.measure.exact._certified_family.witness_value`): a minimum is at most, a
  maximum at least, any one input's value. What float64 and the refinement cannot tell stays
  ``undecided`` (unresolved), never a pass;
- **certified** (``certified=True``): every row's reading enclosed by interval arithmetic
  (:func:`~ropeproof.verify.measure.exact._certified_family.enclose_family`), for any construction or
  head, many planes included; overlapping rows refined as above.

Where an input attains the bound identically (sympy proves the witness's value equal to the bound,
for a construction), a row that no enclosure separates is ``holds-equal``. The first violation is the
smallest violated length, with its witness input.
"""

from __future__ import annotations

import io
import math
import time
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sp
import torch
from flint import arb

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._head import CompiledHead, load_head
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.theory._bound_expression import N, bound_parameters, bound_tree, check_lengths, parse_bound
from ropeproof.theory._construction import Construction
from ropeproof.theory._family import Family
from ropeproof.verify.measure._display import TableDisplay
from ropeproof.verify.measure.exact._angles import UNIT_ROUNDOFF
from ropeproof.verify.measure.exact._bound_checks import (
    CODE,
    IDENTITY,
    REFINED,
    BoundComparison,
    judge_intervals,
    judge_rows,
)
from ropeproof.verify.measure.exact._bound_options import OFFSET_READINGS, READINGS, RELATIONS
from ropeproof.verify.measure.exact._certified import arb_ends, arb_precision, exactly_equal
from ropeproof.verify.measure.exact._certified_family import (
    PREC,
    REFINE_PREC,
    ExactLogits,
    arb_value,
    enclose_family,
    exact_logits,
    witness_value,
)
from ropeproof.verify.measure.exact._discrepancy import Witness
from ropeproof.verify.measure.exact._explain import token_excerpt
from ropeproof.verify.measure.exact._head_sweep import NO_FAMILY, HeadSweep, resolve_head_family, sweep_head
from ropeproof.verify.measure.exact._offset_extremes import LogitWitness
from ropeproof.verify.measure.exact._plane_logits import plane_coefficients
from ropeproof.verify.measure.exact._row_atoms import (
    MAX_ATOMS,
    Atom,
    Budget,
    decide_row,
    logit_atoms,
    margin_atoms,
)

MAX_REFINE = 256
"""Default Arb re-enclosures per check (``max_refine``): each one row's witness input, or one input of
a row decided input by input."""
MAX_IDENTITIES = 16
"""Default sympy identities per check (``max_identities``; each a ``simplify``)."""

Bound = Callable[[int], float] | sp.Expr | str | float | int
Subject = Construction | CompiledHead | str | Path


@dataclass
class BoundCheck(TableDisplay):
    """The verdict of :func:`check_bound`: per length a status, both sides and their enclosures.

    ``measured``: the reading in float64 (the exact sweep); ``measured_lo``/``measured_hi``: its
    enclosure (float64 error bounds, or interval arithmetic when ``certified``); ``bound`` and its
    enclosure likewise. ``comparison`` holds the statuses
    (:mod:`~ropeproof.verify.measure.exact._bound_checks`).

    Shapes: n [rows]; measured [rows]; measured_lo [rows]; measured_hi [rows]; bound [rows];
        bound_lo [rows]; bound_hi [rows]
    """

    subject: str
    family: Family
    family_source: str
    bound_text: str
    reading: str
    relation: str
    certified: bool
    n: np.ndarray
    measured: np.ndarray
    measured_lo: np.ndarray
    measured_hi: np.ndarray
    bound: np.ndarray
    bound_lo: np.ndarray
    bound_hi: np.ndarray
    comparison: BoundComparison
    sweep: HeadSweep = field(repr=False)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def status(self) -> np.ndarray:
        """Status names per row."""
        return self.comparison.status

    @property
    def first_violation(self) -> int | None:
        """The smallest length where the bound is violated (every length checked), or ``None``."""
        return self.comparison.first_violation

    @property
    def holds(self) -> bool:
        """True when every row holds (none violated, none undecided)."""
        return self.comparison.holds

    def verdict(self) -> str:
        """``violated`` if any row is, else ``unresolvable`` if any is undecided, else ``holds``."""
        return self.comparison.verdict()

    def witness(self, n: int) -> Witness | LogitWitness:
        """The input of length ``n`` attaining the reading (the sweep's witness); for a logit reading
        the pair attaining it at offset ``n`` (a :class:`LogitWitness`)."""
        return self.sweep.witness(int(n), self.reading)

    @property
    def row_name(self) -> str:
        """``m`` (offsets) for a logit reading, else ``n`` (lengths)."""
        return "m" if self.reading in OFFSET_READINGS else "n"

    def statement(self) -> str:
        return f"{self.reading}({self.row_name}) {self.relation} {self.bound_text}"

    def title(self) -> str:
        how = "certified (interval arithmetic)" if self.certified else "float64 with error bounds"
        return f"{self.subject}: {self.statement()} over the {self.family.name} family, {how}"

    def rows(self, step: int = 1) -> list[dict[str, Any]]:
        """One dict per row (every ``step``-th from the first, and the last row always): ``n``, the
        reading and its enclosure, the bound and its enclosure, the status (``None`` for NaN values)."""
        out = []
        status = self.status
        picked = list(range(0, self.n.size, int(step)))
        if self.n.size and picked[-1] != self.n.size - 1:
            picked.append(self.n.size - 1)
        for i in picked:
            row: dict[str, Any] = {self.row_name: int(self.n[i])}
            for key, arr in (
                (self.reading, self.measured),
                ("lo", self.measured_lo),
                ("hi", self.measured_hi),
                ("bound", self.bound),
            ):
                v = float(arr[i])
                row[key] = None if math.isnan(v) else v
            row["status"] = str(status[i])
            out.append(row)
        return out

    def summary(self) -> dict[str, Any]:
        """Verdict, rows per status, the first violation with its witness, and how it was judged."""
        out: dict[str, Any] = {
            "statement": self.statement(),
            "subject": self.subject,
            "family": self.family.name,
            "family_source": self.family_source,
            "certified": self.certified,
            "lengths": [int(self.n[0]), int(self.n[-1])],
            **self.comparison.summary(),
            "notes": list(self.notes),
            "seconds": round(self.seconds, 3),
        }
        first = self.first_violation
        if first is not None:
            r = int(first - self.n[0])
            w = self.witness(first)
            out["first_violation"] = {
                self.row_name: first,
                self.reading: float(self.measured[r]),
                "enclosure": [float(self.measured_lo[r]), float(self.measured_hi[r])],
                "bound": [float(self.bound_lo[r]), float(self.bound_hi[r])],
                "witness": witness_dict(w),
            }
        return out


def witness_dict(w: Witness | LogitWitness) -> dict[str, Any]:
    """A witness as JSON-ready data, with its explanation (target and winning competitor) and a bounded
    excerpt of its tokens (:func:`~ropeproof.verify.measure.exact._explain.token_excerpt`: the target,
    the competitor and the query with their neighbours; the whole input from :meth:`BoundCheck.witness`).
    A logit reading's witness: its pair (offset, query and key tokens, value) and its input's excerpt."""
    if isinstance(w, LogitWitness):
        return {**w.to_dict(), "excerpt": token_excerpt(w.tokens, [w.key_position])}
    named = [w.target_position]
    if w.explanation is not None:
        named.append(w.explanation.competitor_position)
    out: dict[str, Any] = {
        "n": w.n,
        "case": w.case,
        "target_position": w.target_position,
        "excerpt": token_excerpt(w.tokens, named),
    }
    if w.explanation is not None:
        out.update(w.explanation.to_dict())
    return out


# ------------------------------------------------------------------------------------ the subject


def _subject(subject: Subject) -> tuple[CompiledHead, Construction | None]:
    if isinstance(subject, str | Path):
        return load_head(subject), None
    if isinstance(subject, Construction):
        return compile_construction(subject), subject
    if isinstance(subject, CompiledHead):
        return subject, None
    raise InputError(
        f"subject must be a Construction, a CompiledHead or a head directory, got {type(subject).__name__}"
    )


def _lengths(lengths: int | Iterable[int], family: Family, offsets: bool = False) -> tuple[int, int]:
    """``(first, last)`` row: lengths ``n >= 2`` (from the family's shortest input), or for a logit
    reading offsets ``m >= 0`` (``M``: every ``m = 0 .. M``)."""
    low = 0 if offsets else 2
    if isinstance(lengths, int | np.integer):
        start, stop = low, integer(lengths, "lengths", low=max(low, 1))
    else:
        values = sorted({integer(v, "lengths", low=low) for v in lengths})
        if not values:
            what = "offsets >= 0" if offsets else "lengths >= 2"
            raise InputError(f"lengths must be a count or a non-empty list of {what}")
        start, stop = values[0], values[-1]
    if offsets:
        return start, stop
    start = max(start, family.min_length())
    if start > stop:
        raise InputError(f"the {family.name} family has no input of length <= {stop}")
    return start, stop


def _parameters(head: CompiledHead, construction: Construction | None) -> dict[str, object]:
    """The subject's parameters as a bound may name them (checked by the bound's parser: a reserved
    name, a non-finite or non-numeric value is refused there)."""
    if construction is not None:
        return {s.name: v for s, v in construction.parameters.items()}
    params = head.metadata.get("parameters")
    return {str(k): v for k, v in params.items()} if isinstance(params, dict) else {}


@dataclass
class _StatedBound:
    text: str
    expr: sp.Expr | None
    fn: Callable[[int], float] | None
    tree: sp.Expr | None = None
    """The bound as written, unevaluated (text), checked at every length before it is enclosed."""


def _offset_text(text: str) -> str:
    """A bound on a logit reading is stated in the offset ``m``: ``m`` read as :data:`N` (the row
    symbol), ``n`` refused (its rows are offsets, not lengths)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return text  # parse_bound names the error
    names = {t.string for t in tokens if t.type == tokenize.NAME}
    if "n" in names:
        raise InputError(f"bound={text!r}: a logit reading's rows are offsets; state the bound in m, not n")
    out = [(t.type, "n" if t.type == tokenize.NAME and t.string == "m" else t.string) for t in tokens]
    return tokenize.untokenize(out)


def _bound(bound: Bound, parameters: dict[str, object], variable: str = "n") -> _StatedBound:
    """The stated bound as an expression in the row symbol :data:`N` (``variable``: ``n`` for lengths,
    ``m`` for offsets), or a callable."""
    if variable == "m" and "m" in parameters:
        raise InputError("the subject has a parameter named 'm', the offset of a logit reading")
    if isinstance(bound, str):
        text = _offset_text(bound) if variable == "m" else bound
        expr = parse_bound(text, parameters)
        return _StatedBound(bound.strip(), expr, None, bound_tree(text, bound_parameters(parameters)))
    if isinstance(bound, int | float) and not isinstance(bound, bool):
        if not math.isfinite(float(bound)):
            raise InputError(f"bound={bound!r} must be finite")
        return _StatedBound(repr(bound), sp.Rational(float(bound)), None)
    if isinstance(bound, sp.Basic):
        expr = sp.sympify(bound)
        symbols = {s.name: s for s in expr.free_symbols}
        if set(symbols) - {variable}:
            extra = sorted(set(symbols) - {variable})
            raise InputError(f"bound={bound} has symbols {extra}; accepted: {variable} only")
        if variable in symbols:
            expr = expr.subs(symbols[variable], N)
        return _StatedBound(str(bound), expr, None)
    if callable(bound):
        return _StatedBound(getattr(bound, "__name__", "bound"), None, bound)
    raise InputError(
        f"bound must be a sympy expression in n, text, a number or a callable of n; got {bound!r}"
    )


def _bound_enclosure(stated: _StatedBound, n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(value, lo, hi)`` per row: a callable's float values (taken as exact), or an expression
    enclosed in Arb at 128 bits (once if it does not depend on ``n``)."""
    if stated.fn is not None:
        values = np.empty(n.size)
        for i, v in enumerate(n.tolist()):
            try:
                values[i] = float(stated.fn(int(v)))
            except (TypeError, ValueError, OverflowError) as exc:
                raise InputError(f"bound({v}) did not return a number: {exc}") from None
            if not math.isfinite(values[i]):
                raise InputError(
                    f"bound({v}) = {float(values[i])!r}; the bound must be finite at every length"
                )
        return values, values.copy(), values.copy()
    expr = stated.expr
    assert expr is not None
    # every node defined and of bounded size at every length, before anything is evaluated
    check_lengths(stated.text, stated.tree if stated.tree is not None else expr, n.tolist())
    lo, hi = np.empty(n.size), np.empty(n.size)
    with arb_precision(128):
        if N not in expr.free_symbols:
            ends = arb_ends(arb_value(expr))
            lo[:], hi[:] = ends
        else:
            for i, v in enumerate(n.tolist()):
                lo[i], hi[i] = arb_ends(arb_value(expr, {N: arb(int(v))}))
    if np.isinf(lo).any() or np.isinf(hi).any():
        bad = int(n[np.nonzero(np.isinf(lo) | np.isinf(hi))[0][0]])
        raise InputError(
            f"bound={stated.text!r} is not finite in float64 at n={bad} (beyond its range, about 1.8e308, "
            "or not enclosed)"
        )
    return lo / 2 + hi / 2, lo, hi


def _weight_rounding(head: CompiledHead, family: Family) -> float:
    """A bound on the logit change from rounding a construction's exact weights to float64 (every
    entry of ``W_Q``, ``W_K`` within ``u (1 + 1e-29)`` of its value): ``2.01 u sum_k P_k``, maximised
    over the family's query and key tokens (:func:`plane_coefficients`)."""
    keys = np.stack([head.W_E[head.token_index(t)] @ head.W_K for t in family.tokens])
    worst = 0.0
    for case in family.cases:
        q = head.W_E[head.token_index(case.query_tokens[0])] @ head.W_Q
        worst = max(worst, float(plane_coefficients(q, keys, head.spec)[2].sum(1).max()))
    return abs(head.scale) * 2.01 * UNIT_ROUNDOFF * worst * (1 + 1e-12)


# ------------------------------------------------------------------------------------- witnesses


def _witness_positions(w: Witness, reading: str) -> tuple[int, int]:
    """``(first, second)`` positions whose logit difference is the witness's value: the target and
    its winning competitor (margin), or the two largest logits (gaps), from its explanation."""
    e = w.explanation
    if e is None:
        raise InputError("the witness carries no explanation (internal)")
    if reading == "margin_inf" or e.top_positions is None:
        return e.target_position, e.competitor_position
    return e.top_positions


def _logit_expr(construction: Construction, tokens: tuple[str, ...], position: int) -> sp.Expr:
    """The logit of the query (``tokens[-1]``) against ``position`` as an exact sympy expression (a
    construction's plane vectors with exact parameters)."""
    params = construction.exact_parameters()
    d = len(tokens) - 1 - position
    q = construction.token(tokens[-1])
    k = construction.token(tokens[position])
    total = sp.Integer(0)
    for plane, qv, kv in zip(
        construction.planes,
        construction.plane_vectors(q, "query"),
        construction.plane_vectors(k, "key"),
        strict=True,
    ):
        a = qv[0] * kv[0] + qv[1] * kv[1]
        b = qv[1] * kv[0] - qv[0] * kv[1]
        total += a * sp.cos(d * plane.freq) - b * sp.sin(d * plane.freq)
    return total.subs(params)


def _witness_expr(construction: Construction, tokens: tuple[str, ...], first: int, second: int) -> sp.Expr:
    """The witness value ``l(first) - l(second)`` as an exact sympy expression (a construction's
    plane vectors with exact parameters)."""
    return _logit_expr(construction, tokens, first) - _logit_expr(construction, tokens, second)


# ---------------------------------------------------------------------------------------- the check


def check_bound(
    subject: Subject,
    bound: Bound,
    lengths: int | Iterable[int],
    reading: str = "margin_inf",
    relation: str = "<=",
    family: Family | None = None,
    certified: bool = False,
    prec: int = PREC,
    max_refine: int = MAX_REFINE,
    max_identities: int = MAX_IDENTITIES,
) -> BoundCheck:
    """Judge ``reading(n) relation bound(n)`` at every length (see the module docstring).

    ``subject``: a construction, a compiled head, or a head directory. ``lengths``: ``N`` (every
    ``n = 2 .. N``) or any lengths (every ``n`` from the smallest to the largest is judged, not only
    those given; lengths below the family's shortest input are skipped). For a logit reading
    (``logit_inf``, ``logit_sup``) the rows are offsets and the bound is stated in ``m``: ``M`` (every
    ``m = 0 .. M``) or any offsets (every one from the smallest to the largest). ``relation``: ``<=``,
    ``>=``, or strictly ``<``, ``>``. ``prec``: bits of the certified enclosures. ``max_refine``: Arb
    re-enclosures per check (rows, then single inputs); ``max_identities``: sympy identities per check;
    rows they leave open are ``undecided`` and say which budget stopped them.
    """
    start_time = time.perf_counter()
    if not isinstance(certified, bool | np.bool_):
        raise InputError(f"certified={certified!r}; accepted: True or False")
    if reading not in READINGS:
        raise InputError(f"reading={reading!r}; accepted: {list(READINGS)}")
    if relation not in RELATIONS:
        raise InputError(f"relation={relation!r}; accepted: {list(RELATIONS)}")
    max_refine = integer(max_refine, "max_refine", low=0)
    max_identities = integer(max_identities, "max_identities", low=0)
    offsets = reading in OFFSET_READINGS
    head, construction = _subject(subject)
    if construction is not None and family is None and construction.family is None:
        raise InputError(
            f"construction {construction.name!r} carries no input family; give it one with "
            "construction.with_family(family) or pass family="
        )
    stated = _bound(bound, _parameters(head, construction), "m" if offsets else "n")
    notes: list[str] = []
    if stated.fn is not None:
        notes.append("the bound is a Python callable: its float64 values are taken as exact")
    fam, family_source = resolve_head_family(head, family)
    if family_source == "all-sequences":
        notes.append(NO_FAMILY)
    start, stop = _lengths(lengths, fam, offsets)
    max_n = stop + 1 if offsets else stop
    # gap_inf is enumerated (costly where the margin is not positive) only when it is the reading judged
    limit = 96 if reading == "gap_inf" else 0
    sweep = sweep_head(head, max_n, family=fam, dtype=torch.float64, gap_inf_limit=limit, logits_only=offsets)
    sweep.family_source = family_source
    if offsets:
        rows = slice(start, stop + 1)
        n = sweep.logits().m[rows]
        values = np.asarray(sweep.logits().column(reading), dtype=np.float64)
    else:
        rows = slice(start - 2, stop - 1)
        n = sweep.result.n[rows]
        values = np.asarray(sweep.columns[reading], dtype=np.float64)
    extra = _weight_rounding(head, fam) if construction is not None else 0.0
    errors = sweep.error_bounds(reading, extra)
    b_val, b_lo, b_hi = _bound_enclosure(stated, n)
    source = exact_logits(construction if construction is not None else head)
    minimum = reading not in ("gap_sup", "logit_sup")  # the others are minima over inputs or pairs
    strict = relation in ("<", ">")
    upper = relation in ("<=", "<")  # the relation bounds the reading from above

    if certified:
        subject_ = construction if construction is not None else head
        enclosure = enclose_family(subject_, max_n, fam, prec, logits_only=offsets)
        m_lo, m_hi = (e[rows] for e in enclosure.ends(reading))
        notes.append(f"certified: interval arithmetic at {prec} bits ({enclosure.seconds:.2f} s)")
    else:
        m_lo, m_hi = values[rows] - errors[rows], values[rows] + errors[rows]
    meas = values[rows]

    def refine(n_: int) -> tuple[tuple[float, float], tuple[float, float]]:
        r = n_ - start
        try:
            w = sweep.witness(n_, reading)
        except InputError:
            return _oriented((float(m_lo[r]), float(m_hi[r])), (float(b_lo[r]), float(b_hi[r])), relation)
        if offsets:
            with arb_precision(REFINE_PREC):
                w_lo, w_hi = arb_ends(source.logit(w.query_token, w.key_token, n_, REFINE_PREC))
        else:
            first, second = _witness_positions(w, reading)
            w_lo, w_hi = witness_value(source, w.tokens, first, second, REFINE_PREC)
        lo, hi = float(m_lo[r]), float(m_hi[r])
        lo, hi = (lo, min(hi, w_hi)) if minimum else (max(lo, w_lo), hi)
        return _oriented((lo, hi), (float(b_lo[r]), float(b_hi[r])), relation)

    (x_lo, x_hi), (y_lo, y_hi) = _oriented((m_lo, m_hi), (b_lo, b_hi), relation)
    term = stated.text
    what = "offset" if offsets else "length"
    why = f"{reading} not computed at this {what} (no input, or not enclosed)"
    if certified:
        cmp = judge_intervals(
            term, reading, n, (x_lo, x_hi), (y_lo, y_hi), refine, max_refine, why, strict=strict
        )
    else:
        sign = 1.0 if upper else -1.0
        b_err = np.maximum(b_hi - b_val, b_val - b_lo)
        cmp = judge_rows(
            term,
            reading,
            n,
            sign * meas,
            errors[rows],
            sign * b_val,
            b_err,
            None,
            refine,
            max_refine,
            why,
            strict=strict,
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        cmp.ratio = meas / b_val
    budget = Budget(max_refine, max_identities, refined=int(((cmp.flags & REFINED) > 0).sum()))
    easy = minimum == upper and not strict  # the witness's identity alone proves the row
    if construction is not None and stated.expr is not None and easy:
        _apply_identities(cmp, construction, stated.expr, sweep, source, reading, budget)  # type: ignore[arg-type]
    if reading in ("margin_inf", "logit_inf", "logit_sup") and not easy:
        args = (construction, stated.expr, source, extra, budget, (b_lo, b_hi))
        _decide_by_inputs(cmp, sweep, reading, relation, *args)
        cmp.detail["inputs"] = "rows touching the bound decided input by input (refined, or by identity)"
    cmp.detail["refinements"] = f"{budget.refined} of max_refine={max_refine}"
    cmp.detail["identities_tried"] = f"{budget.proved} of max_identities={max_identities}"
    return BoundCheck(
        subject=head.name,
        family=fam,
        family_source=family_source,
        bound_text=stated.text,
        reading=reading,
        relation=relation,
        certified=certified,
        n=n,
        measured=meas,
        measured_lo=np.asarray(m_lo, dtype=np.float64),
        measured_hi=np.asarray(m_hi, dtype=np.float64),
        bound=b_val,
        bound_lo=b_lo,
        bound_hi=b_hi,
        comparison=cmp,
        sweep=sweep,
        notes=notes,
        seconds=time.perf_counter() - start_time,
    )


_VERDICTS = {
    # (relation, how the extreme compares with the bound) -> status
    ("<=", "<"): "tight-holds",
    ("<=", "="): "holds-equal",
    ("<=", ">"): "tight-violated",
    ("<", "<"): "tight-holds",
    ("<", "="): "tight-violated",
    ("<", ">"): "tight-violated",
    (">=", ">"): "tight-holds",
    (">=", "="): "holds-equal",
    (">=", "<"): "tight-violated",
    (">", ">"): "tight-holds",
    (">", "="): "tight-violated",
    (">", "<"): "tight-violated",
}
"""A row decided input by input: ``holds-equal`` where the extreme equals the bound and the relation
allows it; a strict relation's equal row is violated."""


def _decide_by_inputs(
    cmp: BoundComparison,
    sweep: HeadSweep,
    reading: str,
    relation: str,
    construction: Construction | None,
    expr: sp.Expr | None,
    source: ExactLogits,
    extra: float,
    budget: Budget,
    bounds: tuple[np.ndarray, np.ndarray],
) -> None:
    """Rows still undecided, decided by comparing every input's value with the bound
    (:func:`~ropeproof.verify.measure.exact._row_atoms.decide_row`): refined in Arb, then proved equal by
    sympy (a construction and a stated expression only). In place; reasons kept honest."""
    minimum = reading != "logit_sup"
    offsets = reading in OFFSET_READINGS
    table = [str(x) for x in cmp.reason_table]
    rows = np.nonzero(cmp.codes == CODE["undecided"])[0]
    b_lo, b_hi = bounds
    identical_at = None
    if construction is not None and expr is not None:

        def identical_at(k: int) -> Callable[[Atom], bool]:
            target = expr.subs(N, k)
            return lambda a: exactly_equal(_atom_expr(construction, a), target)

    for r in rows:
        k = int(cmp.n[r])
        if not offsets and np.isnan(sweep.columns["margin_inf"][k - 2]):
            continue
        if budget.refined >= budget.refine and budget.proved >= budget.identities:
            # nothing left to decide a touching row with (a row with an input proved beyond the bound
            # by float64 alone was decided by its enclosure already)
            outcome, why = None, "refinement and identity budgets spent "
            why += f"(max_refine={budget.refine}, max_identities={budget.identities})"
        else:
            if offsets:
                atoms = logit_atoms(sweep.logits(), k, extra)
            else:
                atoms = margin_atoms(sweep.result.tables, k, extra, upper=float(b_hi[r]))
            if atoms is None:
                outcome, why = None, f"more than {MAX_ATOMS} inputs' values to compare one by one"
            else:
                identical = identical_at(k) if identical_at is not None else None
                enclose = lambda a: _atom_value(source, a)  # noqa: E731
                outcome, why = decide_row(atoms, minimum, (b_lo[r], b_hi[r]), enclose, identical, budget)
        if outcome is None:
            if why not in table:
                table.append(why)
            if cmp.reason_codes is not None:
                cmp.reason_codes[r] = table.index(why)
            continue
        status = _VERDICTS[(relation, outcome)]
        cmp.codes[r] = CODE[status]
        if cmp.reason_codes is not None:
            cmp.reason_codes[r] = 0
        if cmp.flags is not None:
            cmp.flags[r] |= IDENTITY if outcome == "=" else REFINED
    cmp.reason_table = table
    if cmp.flags is not None:
        cmp.detail["identity_rows"] = int(((cmp.flags & IDENTITY) > 0).sum())
        cmp.detail["refined_rows"] = int(((cmp.flags & REFINED) > 0).sum())


def _atom_value(source: ExactLogits, atom: Atom) -> tuple[float, float]:
    """An Arb enclosure of one input's value (a logit, or a difference of two) at ``REFINE_PREC``."""
    if atom.second is None:
        n = len(atom.tokens)
        with arb_precision(REFINE_PREC):
            ball = source.logit(atom.tokens[-1], atom.tokens[atom.first], n - 1 - atom.first, REFINE_PREC)
            return arb_ends(ball)
    return witness_value(source, atom.tokens, atom.first, atom.second, REFINE_PREC)


def _atom_expr(construction: Construction, atom: Atom) -> sp.Expr:
    if atom.second is None:
        return _logit_expr(construction, atom.tokens, atom.first)
    return _witness_expr(construction, atom.tokens, atom.first, atom.second)


def _oriented(measured: tuple, bound: tuple, relation: str) -> tuple[tuple, tuple]:
    """``measured <= bound`` (or ``<``) as is; ``measured >= bound`` (or ``>``) as ``-measured <= -bound``
    (ends swapped)."""
    if relation in ("<=", "<"):
        return measured, bound
    (m_lo, m_hi), (b_lo, b_hi) = measured, bound
    return (-m_hi, -m_lo), (-b_hi, -b_lo)


def _apply_identities(
    cmp: BoundComparison,
    construction: Construction,
    expr: sp.Expr,
    sweep: HeadSweep,
    source: ExactLogits,
    reading: str,
    budget: Budget,
) -> None:
    """Rows still undecided where sympy proves the witness's value equal to the bound: ``holds-equal``
    (a minimum is at most, a maximum at least, the witness's value), one identity each from
    ``budget``; rows past it say so."""
    tried = 0
    table = [str(x) for x in cmp.reason_table]
    for r in np.nonzero(cmp.codes == CODE["undecided"])[0]:
        n_ = int(cmp.n[r])
        try:
            w = sweep.witness(n_, reading)
        except InputError:
            continue
        if not budget.take_identity():
            why = f"identity budget reached (max_identities={budget.identities})"
            if why not in table:
                table.append(why)
            if cmp.reason_codes is not None:
                cmp.reason_codes[r] = table.index(why)
            continue
        tried += 1
        if reading in OFFSET_READINGS:
            value = _logit_expr(construction, w.tokens, w.key_position)
        else:
            value = _witness_expr(construction, w.tokens, *_witness_positions(w, reading))
        if exactly_equal(value, expr.subs(N, n_)):
            cmp.codes[r] = CODE["holds-equal"]
            if cmp.reason_codes is not None:
                cmp.reason_codes[r] = 0
            if cmp.flags is not None:
                cmp.flags[r] |= IDENTITY
    cmp.reason_table = table
    if tried:
        cmp.detail["identity"] = "the witness input's value equals the bound (sympy, exact parameters)"
        cmp.detail["identity_rows"] = int(((cmp.flags & IDENTITY) > 0).sum()) if cmp.flags is not None else 0


__all__ = ["READINGS", "RELATIONS", "BoundCheck", "check_bound"]
