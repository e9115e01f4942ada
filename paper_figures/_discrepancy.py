"""Discrepancy figures: (a) [A]'s theory figure with measured extremes, (b) log-log decay to long
lengths with fitted slopes, (d) the softmax scale needed for 99% attention on the target. Each figure's
data is a product of the run's store (:data:`THEORY_DATA`, :data:`LOGLOG_DATA`, :data:`SCALE_DATA`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ropeproof.machinery._result_store import ResultStore, data_product
from ropeproof.paper_figures._style import COLORS, FigureResult, styled, subplots
from ropeproof.theory._bounds import index_bound, retrieval_bound
from ropeproof.verify.measure.exact._index_sweep import index_sweep
from ropeproof.verify.measure.exact._sweep import INDEX_TABLE, RETRIEVAL_TABLE, sweep_retrieval

INDEX_THETA, RETRIEVAL_THETA, ALPHABET = 0.8660, 0.0027, 8
OMEGA = 2 * math.pi / ALPHABET


def fitted_slope(n: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of ``log y`` against ``log n`` over the positive entries."""
    ok = (y > 0) & np.isfinite(y)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(n[ok]), np.log(y[ok]), 1)[0])


@data_product("figure.a-theory-bounds")
def THEORY_DATA(store: ResultStore) -> dict[str, Any]:
    """The bounds at lengths 1..100 and the exact extremes at 2..100 of both constructions (the Theorem 3.2
    claims' tables)."""
    n_all = np.arange(1, 101)
    out: dict[str, Any] = {"n": n_all}
    for name, table, bound in (
        (
            "index",
            store.get(INDEX_TABLE, theta=INDEX_THETA, max_n=100),
            index_bound().evaluate(n_all, INDEX_THETA),
        ),
        (
            "retrieval",
            store.get(RETRIEVAL_TABLE, alphabet_size=ALPHABET, theta=RETRIEVAL_THETA, max_n=100),
            retrieval_bound().evaluate(n_all, RETRIEVAL_THETA, OMEGA),
        ),
    ):
        c = table.columns
        out[name] = {"bound": bound, **{k: c[k] for k in ("n", "gap_sup", "gap_inf", "margin_inf")}}
    return out


@styled
def theory_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """(a) Bounds of Theorem 3.2 vs length 1..100, with the exact gap_sup, gap_inf and margin_inf."""
    data = (ResultStore() if store is None else store).get(THEORY_DATA)
    n_all = np.array(data["n"])
    fig, axes = subplots(1, 2, figsize=(9, 3.4))
    rows = []
    for ax, name, title in (
        (axes[0], "index", f"T_Index, theta = {INDEX_THETA}"),
        (axes[1], "retrieval", f"T_Retrieval, |ALPH| = {ALPHABET}, theta = {RETRIEVAL_THETA}"),
    ):
        c = {k: np.array(v) for k, v in data[name].items()}
        bound = c["bound"]
        ax.plot(n_all, bound, color=COLORS["bound"], lw=1.5, label="reported bound (Thm 3.2)")
        ax.plot(c["n"], c["gap_sup"], color=COLORS[name], ls="-", lw=1, label="gap_sup (max gap)")
        ax.plot(c["n"], c["gap_inf"], color=COLORS[name], ls="--", lw=1, label="gap_inf (min gap)")
        ax.plot(
            c["n"], c["margin_inf"], color=COLORS[name], ls=":", lw=1.5, label="margin_inf (worst margin)"
        )
        ax.set_xlabel("sequence length n (tokens)")
        ax.set_ylabel("logit difference (unit-norm logits)")
        ax.set_title(title)
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.legend(loc="best")
        for i, n in enumerate(n_all):
            r = n - 2
            rows.append(
                {
                    "construction": name,
                    "n": int(n),
                    "bound": float(bound[i]),
                    "gap_sup": float(c["gap_sup"][r]) if r >= 0 else None,
                    "gap_inf": float(c["gap_inf"][r]) if r >= 0 else None,
                    "margin_inf": float(c["margin_inf"][r]) if r >= 0 else None,
                }
            )
    caption = (
        "Reproduction of [A]'s theory figure: the reported Theorem 3.2 bounds (black) against length for "
        f"T_Index at theta = {INDEX_THETA} (left; min(1 - cos theta, pi^2/(2n^2))) and T_Retrieval with "
        f"|ALPH| = {ALPHABET} at theta = {RETRIEVAL_THETA} (right; 1 - cos(omega - n theta)), with the exact "
        "family extremes: largest and smallest top-1 minus top-2 gap over all inputs of length n, and the "
        "worst target margin. n = 1 has no key besides the query, so only the bounds are drawn there. "
        "y axis symmetric-log (linear below 1e-3)."
    )
    return FigureResult("a_theory_bounds", fig, rows, caption)


LOGLOG_THETAS = {"retrieval0": 0.0, "retrieval": 1e-4}
"""The T_Retrieval angles of the log-log figure."""


@data_product("figure.b-loglog-discrepancy")
def LOGLOG_DATA(store: ResultStore, quick: bool) -> dict[str, Any]:
    """The lengths (40 log-spaced to 10^5, 10^4 when ``quick``), T_Index's worst margin at theta = 2 pi/n and
    T_Retrieval's worst margin and bound at each :data:`LOGLOG_THETAS` angle."""
    big = 10**4 if quick else 10**5
    ns = np.unique(np.round(np.logspace(np.log10(3), np.log10(big), 40)).astype(int))
    # T_Index with theta = 2 pi / n: the angle that keeps the construction working at n with the
    # largest worst-case margin (equally spaced points on the circle)
    idx_margin = np.array([index_sweep([2 * math.pi / n], [1.0], int(n)).margin_inf[-1] for n in ns])
    out: dict[str, Any] = {"big": big, "n": ns, "index_margin": idx_margin}
    for key, th in LOGLOG_THETAS.items():
        c = sweep_retrieval(ALPHABET, th, big, judge=False).columns
        out[key] = {"margin_inf": c["margin_inf"][ns - 2], "bound": c["bound"][ns - 2]}
    return out


@styled
def loglog_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """(b) Log-log discrepancy vs length to 1e5 with bounds and fitted slopes."""
    data = (ResultStore() if store is None else store).get(LOGLOG_DATA, quick=quick)
    big = data["big"]
    ns = np.array(data["n"])
    idx_margin = np.array(data["index_margin"])
    pi_term = math.pi**2 / (2 * ns.astype(float) ** 2)
    fig, ax = subplots(figsize=(6.5, 4.2))
    s_idx = fitted_slope(ns, idx_margin)
    ax.loglog(
        ns,
        idx_margin,
        "o-",
        ms=3,
        color=COLORS["index"],
        label=f"T_Index, theta = 2pi/n: margin_inf (slope {s_idx:.3f})",
    )
    ax.loglog(ns, pi_term, color=COLORS["bound"], ls="--", label="reported term pi^2/(2n^2) (slope -2)")
    rows = [
        {"series": "index_theta_2pi_over_n", "n": int(n), "margin_inf": float(m), "bound": float(b)}
        for n, m, b in zip(ns, idx_margin, pi_term, strict=True)
    ]
    for key, theta in LOGLOG_THETAS.items():
        margin = np.array(data[key]["margin_inf"])
        bound = np.array(data[key]["bound"])
        positive = margin > 0
        last = int(ns[positive][-1]) if positive.any() else None
        ax.loglog(
            ns[positive],
            margin[positive],
            "s-",
            ms=3,
            color=COLORS[key],
            label=f"T_Retrieval, theta = {theta:g}: margin_inf (positive up to n = {last})",
        )
        shown = (bound > 0) & (ns * theta <= OMEGA)  # past n theta = omega the formula means nothing
        ax.loglog(
            ns,
            np.where(shown, bound, np.nan),
            color=COLORS[key],
            ls=":",
            lw=1,
            label=f"reported bound 1 - cos(omega - n theta), theta = {theta:g}",
        )
        rows += [
            {"series": f"retrieval_theta_{theta:g}", "n": int(n), "margin_inf": float(m), "bound": float(b)}
            for n, m, b in zip(ns, margin, bound, strict=True)
        ]
    ax.set_xlabel("sequence length n (tokens)")
    ax.set_ylabel("worst-case margin (logit units)")
    ax.set_title("Discrepancy vs length (log-log)")
    ax.legend(loc="lower left")
    caption = (
        f"Worst-case target margin against length up to n = {big}. T_Index uses theta = 2 pi/n at each n "
        f"(margin 1 - cos(2 pi/n), fitted slope {s_idx:.3f}, about four times the reported pi^2/(2n^2)). "
        f"T_Retrieval (|ALPH| = {ALPHABET}) at theta = 0 keeps margin 1 - cos(pi/4) at every length; at "
        "theta = 1e-4 the margin falls to zero at its horizon (drawn only while positive). Dotted: the "
        "reported Retrieval bound."
    )
    return FigureResult("b_loglog_discrepancy", fig, rows, caption)


SCALE_SERIES = {
    "index": f"T_Index, theta = {INDEX_THETA}",
    "retrieval": f"T_Retrieval, theta = {RETRIEVAL_THETA:g}",
    "retrieval0": f"T_Retrieval, theta = {0.0:g}",
}
"""The constructions of the softmax-scale figure and their legends."""


@data_product("figure.d-softmax-scale")
def SCALE_DATA(store: ResultStore, quick: bool) -> dict[str, Any]:
    """Worst margins at every length up to 10^4 (2000 when ``quick``; T_Retrieval at theta = 0.0027 only
    up to 400): ``{construction: {"n", "margin_inf"}}``."""
    big = 2000 if quick else 10**4
    idx = index_sweep([INDEX_THETA], [1.0], big)
    out: dict[str, Any] = {"index": {"n": idx.n, "margin_inf": idx.margin_inf}}
    for key, theta in (("retrieval", RETRIEVAL_THETA), ("retrieval0", 0.0)):
        t = sweep_retrieval(ALPHABET, theta, min(big, 400) if theta else big, judge=False)
        out[key] = {"n": t.columns["n"], "margin_inf": t.columns["margin_inf"]}
    return out


@styled
def softmax_scale_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """(d) Logit scale for 99% attention on the correct key: ln((n-1) * 99) / margin_inf(n)."""
    data = (ResultStore() if store is None else store).get(SCALE_DATA, quick=quick)
    series = {
        key: (np.array(data[key]["n"]), np.array(data[key]["margin_inf"]), label)
        for key, label in SCALE_SERIES.items()
    }
    fig, ax = subplots(figsize=(6.5, 4.0))
    rows = []
    n_ret, m_ret = series["retrieval"][0], series["retrieval"][1]
    last_positive = int(n_ret[m_ret > 0][-1])
    for key, (n, margin, label) in series.items():
        need = np.where(margin > 0, np.log((n - 1) * 99.0) / np.where(margin > 0, margin, 1.0), np.nan)
        ax.loglog(n, need, color=COLORS[key], label=label)
        rows += [
            {"construction": key, "n": int(a), "margin_inf": float(m), "scale_needed": float(s)}
            for a, m, s in zip(n, margin, need, strict=True)
        ]
    ax.set_xlabel("sequence length n (tokens)")
    ax.set_ylabel("logit scale for 99% attention (dimensionless)")
    ax.set_title("Softmax scale needed: ln((n-1) 99) / margin_inf(n)")
    ax.legend(loc="upper left")
    caption = (
        "Multiplier on unit-norm logits that guarantees weight >= 0.99 on the correct key for every input "
        "of length n: ln((n - 1) * 99) / margin_inf(n) (docs/theory.md section 5, softmax link), from the "
        f"exact worst-case margins. Retrieval at theta = {RETRIEVAL_THETA} is drawn up to its horizon "
        f"(n = {last_positive})."
    )
    return FigureResult("d_softmax_scale", fig, rows, caption)
