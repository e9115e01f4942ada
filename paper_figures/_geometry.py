"""(e) The geometry of the constructions: query/key vectors in the rotation plane, and the logit as a
function of the offset."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction, retrieval_construction
from ropeproof.machinery._result_store import ResultStore, data_product
from ropeproof.paper_figures._style import COLORS, FigureResult, styled, subplots
from ropeproof.theory._derive import derive

INDEX_THETA, RETRIEVAL_THETA = 0.8660, 0.0027


def _plane_vectors(head, names: list[str], which: str) -> np.ndarray:
    a, b = head.spec.plane_dims[0]
    w = head.W_Q if which == "query" else head.W_K
    return np.array([[w[head.token_index(t), a], w[head.token_index(t), b]] for t in names])


INTEGERS = [str(s) for s in range(1, 7)]
LETTERS = [chr(ord("A") + i) for i in range(8)]
INDEX_QUERIES = (1, 3, 5)
RETRIEVAL_KEYS = ("C", "B", "D", "G")


@data_product("figure.e-geometry")
def GEOMETRY_DATA(store: ResultStore) -> dict[str, Any]:
    """The compiled heads' plane vectors and the derived closed-form logits against the offset."""
    ic = index_construction(INDEX_THETA, max_int=6, letters=2)
    rc = retrieval_construction(8, RETRIEVAL_THETA, max_int=1)
    ih, rh = compile_construction(ic), compile_construction(rc)
    index_logit, retrieval_logit = derive(ic), derive(rc)
    return {
        "index_queries": _plane_vectors(ih, INTEGERS, "query"),
        "index_key": _plane_vectors(ih, ["A"], "key")[0],
        "retrieval_keys": _plane_vectors(rh, [f"{x}A" for x in LETTERS], "key"),
        "retrieval_query": _plane_vectors(rh, ["AC"], "query")[0],
        "index_logit": {
            str(s): _on_offsets(index_logit.numeric_logit_fn(str(s), "A"), np.arange(-12, 1))
            for s in INDEX_QUERIES
        },
        "retrieval_logit": {
            x: _on_offsets(retrieval_logit.numeric_logit_fn("AC", f"{x}A"), np.arange(-300, 1))
            for x in RETRIEVAL_KEYS
        },
    }


def _on_offsets(logit: Any, offsets: np.ndarray) -> list[float]:
    """``logit(u)`` at every offset ``u`` (one vectorised call; a logit constant in ``u`` is repeated)."""
    return [float(v) for v in np.broadcast_to(np.asarray(logit(offsets), dtype=np.float64), offsets.shape)]


@styled
def geometry_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """(e) The constructions' rotation planes and their logits against the offset."""
    data = (ResultStore() if store is None else store).get(GEOMETRY_DATA)
    fig, axes = subplots(2, 2, figsize=(9.5, 8.5), layout="constrained")
    rows = []
    # Index: every key is v; integer s's query is rho(-s theta) v
    ax = axes[0, 0]
    ints = INTEGERS
    q = np.array(data["index_queries"])
    k = np.array(data["index_key"])
    ax.arrow(0, 0, *k, color=COLORS["bound"], width=0.01, length_includes_head=True)
    ax.annotate("key v (all tokens)", k, fontsize=7)
    for s, vec in zip(ints, q, strict=True):
        ax.arrow(0, 0, *vec, color=COLORS["index"], width=0.006, length_includes_head=True, alpha=0.8)
        ax.annotate(f"q(s={s})", vec * 1.08, fontsize=7)
        rows.append({"panel": "index_vectors", "token": s, "role": "query", "x": vec[0], "y": vec[1]})
    rows.append({"panel": "index_vectors", "token": "*", "role": "key", "x": k[0], "y": k[1]})
    ax.set_title(f"T_Index plane (theta = {INDEX_THETA})")
    # Retrieval: keys rho(phi omega) v; the query (X, Y) is rho(phi(Y) omega) v
    ax = axes[0, 1]
    letters = LETTERS
    keys = np.array(data["retrieval_keys"])
    for x, vec in zip(letters, keys, strict=True):
        ax.arrow(0, 0, *vec, color=COLORS["bound"], width=0.006, length_includes_head=True, alpha=0.7)
        ax.annotate(f"key ({x}, .)", vec * 1.1, fontsize=7)
        rows.append({"panel": "retrieval_vectors", "token": f"{x}*", "role": "key", "x": vec[0], "y": vec[1]})
    qv = np.array(data["retrieval_query"])
    ax.arrow(0, 0, *qv, color=COLORS["retrieval"], width=0.012, length_includes_head=True)
    ax.annotate("query (A, C)", qv * 0.6, fontsize=7, color=COLORS["retrieval"])
    rows.append({"panel": "retrieval_vectors", "token": "AC", "role": "query", "x": qv[0], "y": qv[1]})
    ax.set_title("T_Retrieval plane (|ALPH| = 8, omega = pi/4)")
    for ax in axes[0]:
        ax.set_aspect("equal")
        ax.set_xlim(-1.35, 1.35)
        ax.set_ylim(-1.35, 1.35)
        ax.set_xlabel("plane coordinate 1 (unit vectors)")
        ax.set_ylabel("plane coordinate 2 (unit vectors)")
    # logits against offset, from the derived closed forms
    ax = axes[1, 0]
    u = np.arange(-12, 1)
    for s in INDEX_QUERIES:
        vals = np.array(data["index_logit"][str(s)])
        ax.plot(u, vals, "o-", ms=3, label=f"query s = {s} (peak at u = -{s})")
        rows += [
            {"panel": "index_logit", "token": str(s), "u": int(x), "logit": float(v)}
            for x, v in zip(u, vals, strict=True)
        ]
    ax.set_xlabel("offset u = j - i (positions)")
    ax.set_ylabel("logit cos((u + s) theta)")
    ax.set_title("T_Index logit by offset")
    ax.legend(loc="lower left")
    ax = axes[1, 1]
    u = np.arange(-300, 1)
    for x in RETRIEVAL_KEYS:
        vals = np.array(data["retrieval_logit"][x])
        ax.plot(u, vals, lw=1.2, label=f"key ({x}, .){' = target' if x == 'C' else ''}")
        rows += [
            {"panel": "retrieval_logit", "token": f"{x}*", "u": int(a), "logit": float(v)}
            for a, v in zip(u[::10], vals[::10], strict=True)
        ]
    horizon = math.ceil((math.pi / 4 / RETRIEVAL_THETA + 3) / 2)
    ax.axvline(-(horizon - 1), color=COLORS["bound"], ls=":", lw=0.8)
    ax.set_xlabel("offset u = j - i (positions)")
    ax.set_ylabel("logit cos(c omega + u theta)")
    ax.set_title("T_Retrieval logit by offset (query (A, C))")
    ax.legend(loc="lower left")
    caption = (
        "Top: the rotation plane of each construction. T_Index: every key is v; integer s's query "
        "is rho(theta)^(-s) v, so it lines up with a key s positions back. T_Retrieval: a pair's key "
        "encodes its first letter as rho(omega)^phi(L) v; the query (A, C) points at letter C's key. "
        "Bottom: the logit against the offset u = j - i from the derived closed forms; the dotted "
        f"line marks where a distractor can first overtake the target (first failing length {horizon})."
    )
    return FigureResult("e_geometry", fig, rows, caption)
