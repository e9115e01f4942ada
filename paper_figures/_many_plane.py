"""Figures for the many-plane theory: Index margins against length, letter codes, partial induction.

- :func:`many_plane_figure` (``many_plane_margin``): log-log normalised T_Index margin against
  length for K = 1, 2, 4, 8 planes (mixed radix, searched optimum, Dirichlet bound, fitted slopes) with
  the standard RoPE spectrum (head_dim 64 and 128, base 10000) overlaid;
- :func:`letter_codes_figure` (``letter_codes``): Retrieval margin of the one-plane and orthogonal
  letter codes against ``|ALPH|``, and against length on the slowest standard planes;
- :func:`partial_induction_figure` (``partial_induction``): horizon against rotation for the
  two-plane head and one-plane heads, and margin against length.

Each writes PNG, PDF, a CSV of the plotted data and ``<name>.caption.txt`` (deterministic: Agg,
fixed metadata, no randomness); their data are products of the run's store (:data:`MANY_PLANE_DATA`,
:data:`LETTER_CODES_DATA`, :data:`PARTIAL_INDUCTION_DATA`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ropeproof.machinery._result_store import ResultStore, data_product
from ropeproof.paper_figures._style import FigureResult, styled, subplots
from ropeproof.verify.studies.beyond._index_search import TABLE_LENGTHS, best_known
from ropeproof.verify.studies.beyond._letter_codes import (
    SLOW_HORIZONS,
    code_margins,
    one_plane_code,
    orthogonal_code,
    slow_horizon_of,
)
from ropeproof.verify.studies.beyond._many_plane import (
    STANDARD_MARGIN_RECORDS,
    MarginRecords,
    dirichlet_normalised,
    fit_slope,
    log_lengths,
    mixed_radix_curve,
    standard_frequencies,
)
from ropeproof.verify.studies.beyond._partial_induction import (
    design_two_plane,
    one_plane_code_horizon,
    retrieval_code_head,
    two_plane_horizon,
    two_plane_margins,
)

PLANES = (1, 2, 4, 8)
COLORS = {1: "tab:blue", 2: "tab:orange", 3: "tab:purple", 4: "tab:green", 8: "tab:red"}
STANDARD_MAX_N = 10**7


def many_plane_rows(max_n: int = STANDARD_MAX_N, store: ResultStore | None = None) -> list[dict]:
    """The plotted series of :func:`many_plane_figure`, one row per point, up to ``max_n`` (the standard
    spectrum's records from ``store``, default a fresh one)."""
    store = ResultStore() if store is None else store
    rows: list[dict] = []
    n = log_lengths(2, max_n, 24)
    for k in PLANES:
        for series, values in (
            ("mixed_radix", mixed_radix_curve(n, k)),
            ("dirichlet", dirichlet_normalised(n, k)),
        ):
            rows += [
                {"series": series, "K": k, "n": int(x), "normalised_margin": float(v)}
                for x, v in zip(n, values, strict=True)
            ]
        for n0 in TABLE_LENGTHS:
            rows.append(
                {"series": "optimised", "K": k, "n": n0, "normalised_margin": best_known(k, n0).margin}
            )
    for hd in (64, 128):
        rec = MarginRecords.from_json(store.get(STANDARD_MARGIN_RECORDS, head_dim=hd, max_n=max_n))
        for x, v in zip(n, rec.normalised(n), strict=True):
            rows.append(
                {
                    "series": f"standard_head_dim_{hd}",
                    "K": hd // 2,
                    "n": int(x),
                    "normalised_margin": float(v),
                }
            )
    return rows


@data_product("figure.many-plane-margin")
def MANY_PLANE_DATA(store: ResultStore, max_n: int) -> list[dict]:
    """:func:`many_plane_rows` as a product of the run's store."""
    return many_plane_rows(max_n, store)


@styled
def many_plane_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """Log-log normalised ``margin_inf(n)`` against ``n`` for K = 1, 2, 4, 8 and the standard spectrum
    (to ``n = 10^7``; ``10^6`` when ``quick``)."""
    max_n = 10**6 if quick else STANDARD_MAX_N
    rows = (ResultStore() if store is None else store).get(MANY_PLANE_DATA, max_n=max_n)
    fig, ax = subplots(figsize=(10.0, 5.2))

    def series(name: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        sel = [r for r in rows if r["series"] == name and r["K"] == k]
        return np.array([r["n"] for r in sel]), np.array([r["normalised_margin"] for r in sel])

    for k in PLANES:
        c = COLORS[k]
        n, mr = series("mixed_radix", k)
        s_mr = fit_slope(n, mr, 10**4).slope
        ax.step(
            n,
            mr,
            where="post",
            c=c,
            lw=1.4,
            label=f"K={k} mixed radix (slope {s_mr:.2f} on 1e4..{max_n:.0e})",
        )
        n, di = series("dirichlet", k)
        s_di = fit_slope(n, di, 10**4).slope
        ax.step(n, di, where="post", c=c, lw=1.0, ls="--", label=f"K={k} Dirichlet bound (slope {s_di:.2f})")
        n, op = series("optimised", k)
        s_op = fit_slope(n, op, 256).slope
        ax.plot(n, op, "o", c=c, ms=5, mfc="white", label=f"K={k} optimised (slope {s_op:.2f} on 256..4096)")
    flat = {}
    for hd, ls in ((64, "-"), (128, ":")):
        n, st = series(f"standard_head_dim_{hd}", hd // 2)
        flat[hd] = float(st[-1])
        ax.plot(n, st, c="k", ls=ls, lw=1.6, label=f"standard spectrum, head_dim {hd} (K={hd // 2})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("sequence length n (tokens)")
    ax.set_ylabel(r"normalised worst-case margin $\mathrm{margin_{inf}}(n)\,/\,\Sigma_k a_k$")
    ax.set_ylim(1e-14, 5)
    ax.set_title("Many-plane T_Index: margin against length (expected slope -2/K)", fontsize=10)
    ax.legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.grid(True, which="major", lw=0.3)
    caption = (
        "Normalised worst-case margin of many-plane T_Index (logit of the target minus the best other key, "
        "divided by the sum of plane amplitudes) against sequence length, log-log. Solid steps: the mixed "
        "radix theta_k = 2 pi / b^k designed for each length (b = ceil(n^(1/K)); margin (2/K) sin(pi/b)^2, "
        "Theorem R). Dashed: the Dirichlet upper bound 2 sin(pi / max(2, floor((n-1)^(1/K))))^2 valid for "
        "every "
        "K-plane head (Theorem D). Circles: the best construction found by search at n0 = 16..4096. "
        f"Fitted slopes approach -2/K (K = 8 is still pre-asymptotic below {max_n:.0e}). Black: the "
        f"standard RoPE spectrum (base 10000, equal amplitudes), streamed exactly to n = {max_n:.0e}: "
        f"flat, equal to its adjacent-key gap g(1)/K ({flat[64]:.4f} for head_dim 64, {flat[128]:.4f} for "
        "head_dim 128)."
    )
    return FigureResult("many_plane_margin", fig, rows, caption)


def letter_code_rows(store: ResultStore | None = None) -> list[dict]:
    """Plotted data of :func:`letter_codes_figure` (the slow-plane horizons from ``store``, default a fresh
    one)."""
    store = ResultStore() if store is None else store
    rows: list[dict] = []
    for a in (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 26, 32, 40, 48, 64):
        one = float(code_margins(one_plane_code(a), 16).min())
        ortho = float(code_margins(orthogonal_code(a), 16).min())
        rows.append(
            {
                "panel": "alphabet",
                "x": a,
                "one_plane": one,
                "orthogonal": ortho,
                "closed_form": 2 * math.sin(math.pi / a) ** 2,
                "asymptotic": 2 * math.pi**2 / a**2,
            }
        )
    h = slow_horizon_of(store.get(SLOW_HORIZONS, head_dim=128, alphabet=8))
    big = max(h.one_plane_horizon, h.orthogonal_horizon) + 400
    f = standard_frequencies(128)
    m1 = code_margins(one_plane_code(8, float(f[-1])), big)
    m2 = code_margins(orthogonal_code(8, f[-4:][::-1].copy()), big)
    for n in log_lengths(2, big, 40):
        rows.append(
            {
                "panel": "slow",
                "x": int(n),
                "one_plane": float(m1[n - 2]),
                "orthogonal": float(m2[n - 2]),
                "closed_form": float("nan"),
                "asymptotic": float("nan"),
            }
        )
    return rows


@data_product("figure.letter-codes")
def LETTER_CODES_DATA(store: ResultStore) -> dict[str, Any]:
    """:func:`letter_code_rows` and the slow-plane horizons (``horizons``) of the figure."""
    return {"rows": letter_code_rows(store), "horizons": store.get(SLOW_HORIZONS, head_dim=128, alphabet=8)}


@styled
def letter_codes_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """Retrieval margin of the two letter codes against ``|ALPH|`` and, on slow planes, against length."""
    data = (ResultStore() if store is None else store).get(LETTER_CODES_DATA)
    rows, h = data["rows"], slow_horizon_of(data["horizons"])
    fig, (left, right) = subplots(1, 2, figsize=(9.0, 3.8))
    sel = [r for r in rows if r["panel"] == "alphabet"]
    a = np.array([r["x"] for r in sel])
    left.plot(
        a, [r["one_plane"] for r in sel], "o", c="tab:blue", label="one plane, angles 2 pi/|ALPH| (exact)"
    )
    left.plot(a, [r["closed_form"] for r in sel], "-", c="tab:blue", lw=0.8, label="2 sin(pi/|ALPH|)^2")
    left.plot(a, [r["asymptotic"] for r in sel], ":", c="0.4", label="2 pi^2 / |ALPH|^2")
    left.plot(
        a,
        [r["orthogonal"] for r in sel],
        "s-",
        c="tab:green",
        ms=4,
        label="orthogonal codes, ceil(|ALPH|/2) planes",
    )
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xticks([2, 4, 8, 16, 32, 64], labels=["2", "4", "8", "16", "32", "64"])
    left.minorticks_off()
    left.set_xlabel("alphabet size |ALPH| (letters)")
    left.set_ylabel("worst-case Retrieval margin (logit units)")
    left.set_title("theta = 0: margin against alphabet", fontsize=9)
    left.legend(fontsize=7)
    sel = [r for r in rows if r["panel"] == "slow"]
    n = np.array([r["x"] for r in sel])
    right.plot(n, [r["one_plane"] for r in sel], "-", c="tab:blue", label="one plane at theta_min")
    right.plot(n, [r["orthogonal"] for r in sel], "-", c="tab:green", label="orthogonal, 4 lowest planes")
    right.axhline(0, c="k", lw=0.5)
    right.axvline(h.one_plane_horizon, c="tab:blue", ls=":", lw=0.8)
    right.axvline(h.orthogonal_horizon, c="tab:green", ls=":", lw=0.8)
    right.set_xscale("log")
    right.set_xlabel("sequence length n (tokens)")
    right.set_ylabel("worst-case Retrieval margin (logit units)")
    right.set_title("|ALPH| = 8 on the slowest planes, head_dim 128", fontsize=9)
    right.legend(fontsize=7, loc="lower left")
    caption = (
        "Left: worst-case Retrieval margin at theta = 0 (every length) of the one-plane letter code "
        "(letters at angles 2 pi c / |ALPH|, [A]'s T_Retrieval; margin 2 sin(pi/|ALPH|)^2 ~ 2 pi^2/|ALPH|^2) "
        "and of orthogonal letter codes spread over ceil(|ALPH|/2) NoPE planes (margin 1 for every |ALPH|). "
        f"Right: |ALPH| = 8 when the code planes rotate slowly, at the lowest frequencies of a head_dim 128, "
        f"base 10000 spectrum: the one-plane code (theta_min = {h.one_plane_theta:.3g}) works up to "
        f"n = {h.one_plane_horizon} = max{{n : (2n-3) theta_min < 2 pi/8}}; the orthogonal code on the 4 "
        f"lowest planes keeps a margin near 1 far longer but ends at n = {h.orthogonal_horizon} "
        "(dotted lines: horizons)."
    )
    return FigureResult("letter_codes", fig, rows, caption)


def partial_induction_rows() -> list[dict]:
    """Plotted data of :func:`partial_induction_figure`."""
    rows: list[dict] = []
    for theta in np.geomspace(2e-3, 0.3, 9):
        th = float(theta)
        for a in (2, 4, 8):
            rows.append(
                {
                    "panel": "horizon",
                    "series": f"one plane, |ALPH|={a}",
                    "x": th,
                    "y": one_plane_code_horizon(a, th),
                }
            )
        rows.append(
            {
                "panel": "horizon",
                "series": "two planes, |ALPH|=8, beta=0.1",
                "x": th,
                "y": two_plane_horizon(8, th, 0.1),
            }
        )
    n0 = 64
    for a in (4, 8):
        d = design_two_plane(a, n0)
        m = two_plane_margins(a, d.theta, d.beta, 2 * n0)
        rows += _margin_rows(f"two planes, |ALPH|={a}, designed for n0={n0}", m)
        theta1 = 2 * math.pi / a / (2 * n0 - 3) * 0.999
        m1 = retrieval_code_head(a, theta1).margins(2 * n0, cyclic=True)
        rows += _margin_rows(f"one plane, |ALPH|={a}, theta={theta1:.4g}", m1)
    return rows


def _margin_rows(series: str, margins: np.ndarray) -> list[dict]:
    """The ``margin`` panel's rows of ``series``: ``margins[n - 2]`` at every length ``n = 2 ..
    len(margins) + 1``."""
    return [
        {"panel": "margin", "series": series, "x": n, "y": float(y)} for n, y in enumerate(margins, start=2)
    ]


@data_product("figure.partial-induction")
def PARTIAL_INDUCTION_DATA(store: ResultStore) -> list[dict]:
    """:func:`partial_induction_rows` as a product of the run's store."""
    return partial_induction_rows()


@styled
def partial_induction_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """Partial-induction horizon against rotation, and margin against length."""
    rows = (ResultStore() if store is None else store).get(PARTIAL_INDUCTION_DATA)
    fig, (left, right) = subplots(1, 2, figsize=(9.0, 3.8))
    hz = [r for r in rows if r["panel"] == "horizon"]
    for name, style in (
        ("one plane, |ALPH|=2", "o-"),
        ("one plane, |ALPH|=4", "s-"),
        ("one plane, |ALPH|=8", "^-"),
        ("two planes, |ALPH|=8, beta=0.1", "k*-"),
    ):
        sel = [r for r in hz if r["series"] == name]
        left.plot([r["x"] for r in sel], [r["y"] for r in sel], style, ms=4, label=name)
    th = np.geomspace(2e-3, 0.3, 50)
    left.plot(th, math.pi / th, ":", c="0.4", lw=0.8, label="pi / theta")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("rotation of the positional plane theta (rad / position)")
    left.set_ylabel("horizon (largest solved length n)")
    left.set_title("Partial induction: horizon", fontsize=9)
    left.legend(fontsize=7)
    mg = [r for r in rows if r["panel"] == "margin"]
    for name in dict.fromkeys(r["series"] for r in mg):
        sel = [r for r in mg if r["series"] == name]
        ys = np.array([r["y"] for r in sel])
        right.plot(
            [r["x"] for r in sel], np.where(ys > 0, ys, np.nan), "-" if "two" in name else "--", label=name
        )
    right.set_yscale("log")
    right.set_xlabel("sequence length n (tokens)")
    right.set_ylabel("worst-case margin (logit units; positive part)")
    right.set_title("Margin against length (n0 = 64)", fontsize=9)
    right.legend(fontsize=6)
    caption = (
        "[B]'s partial induction (return the value of the last earlier occurrence of a letter). Left: "
        "exact horizon against the rotation theta of the positional plane. Two planes (theta = 0 letter "
        "code with amplitude 1 - beta, positional plane with amplitude beta = 0.1) solve every n with "
        "(2n - 3) theta < 2 pi, independent of |ALPH|; one rotating plane carrying [A]'s letter code solves "
        "it only while (2n - 3) theta < 2 pi / |ALPH|. Right: worst-case margin against length for the "
        "two-plane head designed for n0 = 64 (theta = pi/64, balanced beta) and for one-plane heads whose "
        "horizon is n0; both margins scale like 1/n0^2 (the positional part of the task)."
    )
    return FigureResult("partial_induction", fig, rows, caption)
