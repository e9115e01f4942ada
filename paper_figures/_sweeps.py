"""Your own plot: exact sweeps of any heads or constructions against length, in the house style.

:func:`plot_sweeps` draws one line per sweep (a label each) of one exact family extreme, optionally
with a bound and normalised, and returns a :class:`~ropeproof.paper_figures._style.FigureResult`: the
figure, the rows plotted (the CSV) and a caption; :func:`~ropeproof.paper_figures._style.save_figure`
writes it as PNG, PDF, CSV and caption. ``ropeproof sweep --head DIR --plot FILE`` draws the same.

The logit reading (``logit_inf``, ``logit_sup``) is drawn against the offset ``m`` (rows keyed ``m``).
A sweep is a :class:`~ropeproof.verify.measure.exact._head_sweep.HeadSweep`, a direct
:class:`~ropeproof.verify.measure.exact._sweep.SweepTable`, a
:class:`~ropeproof.verify.measure.exact._stated_bound.BoundCheck` (its reading, with its own bound
and statuses), or any mapping with an ``"n"`` array and the quantity's array.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import sympy as sp

from ropeproof.machinery._errors import InputError
from ropeproof.paper_figures._style import COLORS, FigureResult, styled, subplots
from ropeproof.theory._bound_expression import N, bound_tree, check_lengths, parse_bound
from ropeproof.verify.measure.exact._stated_bound import BoundCheck

QUANTITIES = ("margin_inf", "gap_inf", "gap_sup", "logit_inf", "logit_sup")
QUANTITY_LABELS = {
    "margin_inf": "worst target margin margin_inf(n)",
    "gap_inf": "smallest top-1 minus top-2 gap gap_inf(n)",
    "gap_sup": "largest top-1 minus top-2 gap gap_sup(n) ([A]'s Delta(n))",
    "logit_inf": "least logit over the query-key pairs m apart, logit_inf(m)",
    "logit_sup": "greatest logit over the query-key pairs m apart, logit_sup(m)",
}
OFFSET_QUANTITIES = ("logit_inf", "logit_sup")
"""Quantities plotted against the offset ``m`` rather than the length ``n``."""
NORMALISATIONS = ("bound", "first", "max")
"""``normalise=``: divide by the bound at ``n``, by the series' value at its first length, or by its
largest absolute value; a callable ``f(n)`` divides by ``f(n)``."""
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
"""Series colours in order (the paper's constructions keep their own, :data:`COLORS`)."""

Normalise = str | Callable[[int], float] | None
BoundLike = Callable[[int], float] | sp.Expr | str | float | None


def _series(sweep: Any, quantity: str) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """``(n, values, info)`` of one sweep; ``info`` may hold its own bound, statuses and family."""
    if isinstance(sweep, BoundCheck):
        if sweep.reading != quantity:
            raise InputError(f"a bound check on {sweep.reading} cannot be plotted as quantity={quantity!r}")
        info = {"bound": sweep.bound, "status": sweep.status, "family": sweep.family.name}
        info["statement"] = sweep.statement()
        return sweep.n, sweep.measured, info
    columns = getattr(sweep, "columns", sweep)
    if quantity in OFFSET_QUANTITIES and hasattr(sweep, "logits"):
        offsets = sweep.logits()
        columns = {"n": offsets.m, quantity: offsets.column(quantity)}
    elif quantity in OFFSET_QUANTITIES and isinstance(columns, Mapping) and "m" in columns:
        columns = {"n": columns["m"], quantity: columns[quantity]}
    if not isinstance(columns, Mapping) or "n" not in columns or quantity not in columns:
        raise InputError(
            f"each sweep must be a HeadSweep, a SweepTable, a BoundCheck or a mapping with 'n' and "
            f"{quantity!r}; got {type(sweep).__name__}"
        )
    info: dict[str, Any] = {}
    family = getattr(sweep, "family", None)
    if family is not None:
        info["family"] = family.name
    if getattr(sweep, "family_source", None) == "all-sequences":
        info["family"] = "all token sequences"
    return np.asarray(columns["n"]), np.asarray(columns[quantity], dtype=np.float64), info


def _bound_values(bound: BoundLike, n: np.ndarray) -> tuple[np.ndarray, str] | None:
    if bound is None:
        return None
    if isinstance(bound, str):
        expr = parse_bound(bound)
        check_lengths(bound.strip(), bound_tree(bound), n.tolist())  # undefined or too large: refused
        return _lambdified(expr, n), bound.strip()
    if isinstance(bound, int | float) and not isinstance(bound, bool):
        return np.full(n.shape, float(bound)), repr(bound)
    if isinstance(bound, sp.Basic):
        expr = sp.sympify(bound)
        symbols = {s.name: s for s in expr.free_symbols}
        if set(symbols) - {"n"}:
            raise InputError(f"bound={bound} has symbols {sorted(set(symbols) - {'n'})}; accepted: n only")
        return _lambdified(expr.subs(symbols.get("n", N), N), n), str(bound)
    if callable(bound):
        return np.array([float(bound(int(k))) for k in n]), getattr(bound, "__name__", "bound")
    raise InputError(f"bound must be a callable of n, a sympy expression, text or a number; got {bound!r}")


def _lambdified(expr: sp.Expr, n: np.ndarray) -> np.ndarray:
    f = sp.lambdify([N], expr, "numpy")
    return np.broadcast_to(np.asarray(f(n.astype(np.float64)), dtype=np.float64), n.shape).copy()


def _normalised(
    values: np.ndarray, n: np.ndarray, bound: np.ndarray | None, normalise: Normalise
) -> tuple[np.ndarray, str]:
    if normalise is None:
        return values, ""
    with np.errstate(divide="ignore", invalid="ignore"):
        if normalise == "bound":
            if bound is None:
                raise InputError("normalise='bound' needs a bound (bound=..., or a BoundCheck)")
            return values / bound, " / bound(n)"
        if normalise == "first":
            finite = values[np.isfinite(values)]
            return values / (finite[0] if finite.size else np.nan), " / its value at the first length"
        if normalise == "max":
            return values / np.nanmax(np.abs(values)), " / its largest |value|"
        if callable(normalise):
            scale = np.array([float(normalise(int(k))) for k in n])
            return values / scale, f" / {getattr(normalise, '__name__', 'f')}(n)"
    raise InputError(f"normalise={normalise!r}; accepted: None, {list(NORMALISATIONS)} or a callable of n")


@styled
def plot_sweeps(
    sweeps: Mapping[str, Any],
    quantity: str = "margin_inf",
    bound: BoundLike = None,
    normalise: Normalise = None,
    name: str = "sweeps",
    title: str | None = None,
    log: bool | None = None,
) -> FigureResult:
    """``quantity`` against length for every ``{label: sweep}``, one line each, with ``bound`` dashed
    in black (a sympy expression or text in ``n``, a number, or a callable of ``n``; a
    :class:`BoundCheck` brings its own) and ``normalise`` applied (:data:`NORMALISATIONS`). Violated
    rows of a bound check are marked with crosses. ``log``: a logarithmic y axis (default: when every
    plotted value is positive and they span more than two decades). ``name`` is the file stem
    :func:`~ropeproof.paper_figures._style.save_figure` uses."""
    if quantity not in QUANTITIES:
        raise InputError(f"quantity={quantity!r}; accepted: {list(QUANTITIES)}")
    if not isinstance(sweeps, Mapping) or not sweeps:
        raise InputError("sweeps must be a non-empty mapping {label: sweep}")
    if not isinstance(name, str) or not name or any(c in name for c in "/\\\0") or name.startswith("."):
        raise InputError(f"name={name!r} must be a plain file stem (no path separators)")
    by_offset = quantity in OFFSET_QUANTITIES
    axis = "m" if by_offset else "n"  # the rows' key: offsets or lengths
    fig, ax = subplots(1, 1, figsize=(6, 3.6))
    rows: list[dict[str, Any]] = []
    plotted: list[np.ndarray] = []
    statements: list[str] = []
    families: list[str] = []
    suffix = ""
    bound_used = False
    given = None
    for i, (label, sweep) in enumerate(sweeps.items()):
        n, values, info = _series(sweep, quantity)
        color = COLORS.get(str(label), PALETTE[i % len(PALETTE)])
        given = _bound_values(bound, n)
        own = info.get("bound")
        b = given[0] if given is not None else own
        y, suffix = _normalised(values, n, b, normalise)
        ax.plot(n, y, color=color, lw=1.3, label=str(label))
        plotted.append(y[np.isfinite(y)])
        bound_used = bound_used or b is not None
        if b is not None and normalise != "bound":
            b_line = _normalised(b, n, b, normalise)[0]
            own_label = f"bound ({label})" if given is None else None
            ax.plot(n, b_line, color=COLORS["bound"], ls="--", lw=1, label=own_label)
        status = info.get("status")
        if status is not None:
            bad = np.isin(status, ("violated", "tight-violated"))
            if bad.any():
                ax.plot(n[bad], y[bad], ls="none", marker="x", ms=4, color=color, label=f"violated ({label})")
        if "statement" in info:
            statements.append(f"{label}: {info['statement']}")
        if "family" in info:
            families.append(f"{label}: {info['family']}")
        for k in range(n.size):
            row: dict[str, Any] = {"label": str(label), axis: int(n[k]), quantity: _num(values[k])}
            if b is not None:
                row["bound"] = _num(b[k])
            if normalise is not None:
                row["plotted"] = _num(y[k])
            if status is not None:
                row["status"] = str(status[k])
            rows.append(row)
    if bound_used and normalise == "bound":
        ax.axhline(1.0, color=COLORS["bound"], ls="--", lw=1, label="bound")
    elif given is not None:
        ax.plot([], [], color=COLORS["bound"], ls="--", lw=1, label=f"bound: {given[1]}")
    values_all = np.concatenate(plotted) if plotted else np.array([])
    if log is None:
        positive = values_all.size and (values_all > 0).all()
        log = bool(positive and values_all.max() / values_all.min() > 100)
    if log:
        if values_all.size and (values_all <= 0).any():
            raise InputError("log=True needs every plotted value > 0")
        ax.set_yscale("log")
    ax.set_xlabel("offset m (key positions before the query)" if by_offset else "sequence length n (tokens)")
    ax.set_ylabel(f"{quantity}{suffix}")
    ax.set_title(title if title is not None else QUANTITY_LABELS[quantity])
    ax.legend(loc="best")
    lengths = ", ".join(f"{label}: {_row_lengths(s, quantity)}" for label, s in sweeps.items())
    if by_offset:
        lengths = lengths.replace(": n = ", ": m = ").replace(
            " lengths with a value", " offsets with a value"
        )
    against = "offset" if by_offset else "length"
    caption = f"The exact {QUANTITY_LABELS[quantity]} over each input family against {against} ({lengths})"
    caption += f"; plotted as {quantity}{suffix}." if suffix else "."
    if families:
        caption += " Families: " + "; ".join(families) + "."
    if given is not None:
        caption += f" Dashed: the bound {given[1]}."
    if statements:
        caption += " Bound checks: " + "; ".join(statements) + " (crosses: violated rows)."
    caption += " y axis logarithmic." if log else ""
    return FigureResult(name, fig, rows, caption)


def _row_lengths(sweep: Any, quantity: str) -> str:
    """The lengths of ``sweep`` that have a value (a row), for the caption: ``n = A..B`` when every
    length between has one, else ``n = A..B (k lengths with a value)``; ``no length with a value``."""
    n, values, _info = _series(sweep, quantity)
    has = np.asarray(n)[np.isfinite(values)]
    if not has.size:
        return "no length with a value"
    lo, hi = int(has.min()), int(has.max())
    if has.size == hi - lo + 1:
        return f"n = {lo}..{hi}"
    return f"n = {lo}..{hi} ({has.size} lengths with a value)"


def _num(v: float) -> float | None:
    f = float(v)
    return None if math.isnan(f) else f


__all__ = ["NORMALISATIONS", "QUANTITIES", "plot_sweeps"]
