"""Positional-symbolic plane and per-frequency profile figures, and the heads they score.

Subjects (:mod:`ropeproof.verify.measure._subjects`, also used by ``ropeproof ps-score`` and the ``ps.*``
claims):

- :func:`~ropeproof.verify.measure._subjects.index_subject`: T_Index ([A] Thm 3.1) on number-task inputs of 17
  tokens;
- :func:`~ropeproof.verify.measure._subjects.retrieval_subject`: T_Retrieval on letter-task inputs of 17 pairs
  (``theta = 0`` default);
- :func:`~ropeproof.verify.measure._subjects.random_subject`: a head with random ``W_Q``/``W_K`` on random
inputs.

The construction heads are compiled by the ``constructions`` package
(``compile_construction(index_construction(...))``): one RoPE plane, one-hot tokens, ``scale = 1``,
so logits lie in ``[-1, 1]``.

Figures (:func:`ps_plane_figure`, :func:`per_frequency_figure`, :func:`ps_scale_figure`) are saved as
PNG and PDF with a CSV of the plotted data and a ``<name>.caption.txt``; fixed seeds and metadata make
the files reproducible byte for byte. Their data are products of the run's store (:data:`PS_PLANE_DATA`,
:data:`PER_FREQUENCY_DATA`, :data:`PS_SCALE_DATA`), and the construction heads come from it
(:data:`~ropeproof.verify.measure._subjects.CONSTRUCTION_SUBJECT`), shared with the ``ps`` claims.
"""

from __future__ import annotations

import numpy as np

from ropeproof.constructions._paper import ALPHABET_SIZE, INDEX_THETA
from ropeproof.machinery._result_store import ResultStore, data_product
from ropeproof.paper_figures._style import FigureResult, styled, subplots
from ropeproof.verify.measure._subjects import CONSTRUCTION_SUBJECT, Subject, random_subject

# ----------------------------------------------------------------------------------------- figures


def ps_plane_points(n_inputs: int = 100, n_random: int = 24, store: ResultStore | None = None) -> list[dict]:
    """The scored points of the plane figure: constructions (from ``store``, default a fresh one), then
    random heads (deterministic)."""
    from ropeproof.verify.measure.ps._scores import ps_scores

    store = ResultStore() if store is None else store
    rows = []
    subjects = [
        ("construction", store.get(CONSTRUCTION_SUBJECT, kind="index", n_inputs=n_inputs)),
        ("construction", store.get(CONSTRUCTION_SUBJECT, kind="retrieval", n_inputs=n_inputs, theta=0.0)),
        ("construction", store.get(CONSTRUCTION_SUBJECT, kind="retrieval", n_inputs=n_inputs, theta=0.0027)),
    ]
    rng = np.random.default_rng(2026)
    for i in range(n_random):
        head_dim = int(rng.choice([2, 8, 32, 64]))
        if head_dim == 2:
            freqs: list[float] | None = [float(rng.choice([0.0, 10 ** rng.uniform(-4, 0.5)]))]
        else:
            freqs = None
        shared = float(rng.choice([0.0, 3.0]))
        subj = random_subject(n_inputs, 17, head_dim, 10000.0, 32, freqs=freqs, shared=shared, seed=100 + i)
        label = f"{subj.name}, shared={shared:g}"
        subjects.append(("random", Subject(label, subj.head, subj.inputs, subj.source)))
    for kind, subj in subjects:
        sc = ps_scores(subj.head, subj.inputs)
        rows.append(
            {
                "kind": kind,
                "label": subj.name,
                "source": subj.source,
                "S_pos": sc.S_pos,
                "S_sym": sc.S_sym,
                "n_inputs": int(subj.inputs.shape[0]),
                "length": int(subj.inputs.shape[1]),
                "tau": sc.tau,
                "block_size": sc.block_size,
            }
        )
    return rows


@data_product("figure.ps-plane")
def PS_PLANE_DATA(store: ResultStore) -> list[dict]:
    """:func:`ps_plane_points` as a product of the run's store."""
    return ps_plane_points(store=store)


@styled
def ps_plane_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """Scatter of the constructions and of random heads in the positional-symbolic plane."""
    rows = (ResultStore() if store is None else store).get(PS_PLANE_DATA)
    fig, ax = subplots(figsize=(5.2, 4.6))
    rnd = [r for r in rows if r["kind"] == "random"]
    ax.scatter([r["S_pos"] for r in rnd], [r["S_sym"] for r in rnd], s=18, c="0.55", label="random heads")
    markers = {"T_Index": ("s", "tab:red"), "T_Retrieval(theta=0)": ("o", "tab:blue")}
    for r in rows:
        if r["kind"] != "construction":
            continue
        marker, color = markers.get(r["label"].split("(")[0], ("^", "tab:green"))
        if r["label"] == "T_Retrieval(theta=0)":
            marker, color = markers["T_Retrieval(theta=0)"]
        ax.scatter([r["S_pos"]], [r["S_sym"]], s=60, marker=marker, c=color, label=r["label"], zorder=3)
    ax.scatter([1], [1], s=80, marker="*", facecolors="none", edgecolors="k", label="uniform (1, 1)")
    ax.set_xlabel("positional score $S_{pos}$")
    ax.set_ylabel("symbolic score $S_{sym}$")
    ax.set_xlim(-0.02, 1.05)
    ax.set_ylim(-0.02, 1.05)
    ax.set_aspect("equal")
    ax.legend(fontsize=7, loc="lower left")
    ax.set_title("Positional-symbolic plane (17 tokens, tau = 1e-4)", fontsize=9)
    caption = (
        "Positional-symbolic plane. Each point is one head's mean (S_pos, S_sym) over 100 inputs of 17 "
        "tokens ([A]'s score: swap every pair of non-query inputs, cosine similarity of the swapped "
        "attention entries with the unswapped (pos) and the exchanged (sym) ones, weighted by "
        "softmax(|d_i - d_j| / 1e-4)). T_Index (theta = 0.866) on number-task inputs is positional; "
        "T_Retrieval (omega = pi/4) on letter-task inputs at theta = 0 is symbolic, at theta = 0.0027 "
        "nearly so. Grey: random heads (head_dim 2, 8, 32 or 64, N(0, 1/d) weights) on i.i.d. or "
        "shared-component inputs. The star is a uniform head."
    )
    return FigureResult("ps_plane", fig, rows, caption)


def per_frequency_rows(n_inputs: int = 100, n_samples: int = 200) -> list[dict]:
    """Per-plane scores of a random head_dim-64, base-10000 head on two input distributions."""
    from ropeproof.verify.measure.ps._per_frequency import per_frequency_scores

    rows = []
    for shared in (0.0, 3.0):
        subj = random_subject(n_inputs, 17, 64, 10000.0, 64, shared=shared, seed=0)
        prof = per_frequency_scores(subj.head, subj.inputs, n_samples=n_samples, seed=1)
        for k in range(len(prof.freqs)):
            rows.append(
                {
                    "inputs": "iid" if shared == 0 else f"shared={shared:g}",
                    "plane": k,
                    "theta": float(prof.freqs[k]),
                    "S_pos": float(prof.S_pos[k]),
                    "S_sym": float(prof.S_sym[k]),
                    "rel_pos": float(prof.rel_pos[k]),
                    "rel_sym": float(prof.rel_sym[k]),
                    "n_inputs": n_inputs,
                    "n_samples": n_samples,
                }
            )
    return rows


PER_FREQUENCY_QUICK = {"n_inputs": 32, "n_samples": 64}
"""The quick preview's inputs and permutations (:func:`per_frequency_rows`'s arguments)."""


@data_product("figure.per-frequency")
def PER_FREQUENCY_DATA(store: ResultStore, quick: bool = False) -> list[dict]:
    """:func:`per_frequency_rows` as a product of the run's store (:data:`PER_FREQUENCY_QUICK` under
    ``quick``, else the defaults)."""
    return per_frequency_rows(**PER_FREQUENCY_QUICK) if quick else per_frequency_rows()


@styled
def per_frequency_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """Per-frequency profile of a random head with the standard spectrum (head_dim 64, base 10000)."""
    rows = (ResultStore() if store is None else store).get(PER_FREQUENCY_DATA, quick=quick)
    fig, axes = subplots(2, 2, figsize=(8.4, 5.6), sharex=True)
    for col, inputs in enumerate(("iid", "shared=3")):
        sel = [r for r in rows if r["inputs"] == inputs]
        theta = [r["theta"] for r in sel]
        top, bottom = axes[0, col], axes[1, col]
        top.plot(theta, [r["S_pos"] for r in sel], "s-", ms=3, c="tab:red", label="$S_{pos}$")
        top.plot(theta, [r["S_sym"] for r in sel], "o-", ms=3, c="tab:blue", label="$S_{sym}$")
        top.set_ylabel("score")
        top.set_title(f"inputs: {inputs}", fontsize=9)
        top.legend(fontsize=7)
        bottom.plot(theta, [r["rel_pos"] for r in sel], "s-", ms=3, c="tab:red", label="$msd_{pos}/Var$")
        bottom.plot(theta, [r["rel_sym"] for r in sel], "o-", ms=3, c="tab:blue", label="$msd_{sym}/Var$")
        bottom.set_yscale("symlog", linthresh=1e-3)
        bottom.set_xscale("log")
        bottom.set_xlabel(r"plane frequency $\theta_k$ (rad / position)")
        bottom.set_ylabel("deviation / row variance")
        bottom.legend(fontsize=7)
    fig.suptitle("Per-frequency profile: random head, head_dim 64, base 10000, 17 tokens", fontsize=10)
    caption = (
        "Per-frequency profile of one random RoPE head (head_dim 64, base 10000, N(0, 1/64) weights, "
        "scale 1/8). Each of the 32 planes is cut out as a 2-D head (its slice of W_Q and W_K, its "
        f"frequency) and scored alone on {rows[0]['n_inputs']} inputs of 17 tokens. Top: [A]'s scores "
        f"(tau = 1e-4). Bottom: exact deviations from positional and symbolic behaviour over "
        f"{rows[0]['n_samples']} random key permutations, divided by the logit-row variance (the "
        "exclusion principle says their sum is at least 1). Left: i.i.d. Gaussian tokens; right: tokens "
        "sharing a common component (x = 3 mu + eps). Low frequencies are symbolic in both; with a shared "
        "component the high frequencies become positional."
    )
    return FigureResult("per_frequency", fig, rows, caption)


def ps_scale_rows(n_inputs: int = 100, store: ResultStore | None = None) -> list[dict]:
    """S_pos and S_sym of T_Index and T_Retrieval (theta = 0) against the logit scale, with each
    construction's working scale (99% attention on the target at 17 tokens); the heads come from
    ``store`` (default a fresh one)."""
    from ropeproof.verify.measure.exact._index_sweep import index_sweep
    from ropeproof.verify.measure.exact._sweep import sweep_retrieval
    from ropeproof.verify.measure.ps._scale_sweep import scores_over_scales, working_scale

    store = ResultStore() if store is None else store
    scales = np.geomspace(1.0, 1000.0, 16).tolist()
    rows = []
    for name, subj, margin in (
        (
            "T_Index(theta=0.866)",
            store.get(CONSTRUCTION_SUBJECT, kind="index", n_inputs=n_inputs),
            float(index_sweep([INDEX_THETA], [1.0], 17).margin_inf[-1]),
        ),
        (
            "T_Retrieval(theta=0)",
            store.get(CONSTRUCTION_SUBJECT, kind="retrieval", n_inputs=n_inputs, theta=0.0),
            float(sweep_retrieval(ALPHABET_SIZE, 0.0, 17, judge=False).columns["margin_inf"][-1]),
        ),
    ):
        s_star = working_scale(margin, 17)
        for r in scores_over_scales(subj.head, subj.inputs, [*scales, s_star]):
            rows.append(
                {"head": name, "scale": r.scale, "S_pos": r.S_pos, "S_sym": r.S_sym,
                 "working_scale": s_star, "is_working_scale": r.scale == s_star}
            )  # fmt: skip
    return rows


@data_product("figure.ps-scale")
def PS_SCALE_DATA(store: ResultStore) -> list[dict]:
    """:func:`ps_scale_rows` as a product of the run's store."""
    return ps_scale_rows(store=store)


@styled
def ps_scale_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """S_pos and S_sym of the two constructions against the logit scale (log x axis)."""
    rows = (ResultStore() if store is None else store).get(PS_SCALE_DATA)
    fig, axes = subplots(1, 2, figsize=(9.0, 3.6), sharey=True)
    for ax, name in zip(axes, ("T_Index(theta=0.866)", "T_Retrieval(theta=0)"), strict=True):
        sel = [r for r in rows if r["head"] == name and not r["is_working_scale"]]
        ax.semilogx(
            [r["scale"] for r in sel], [r["S_pos"] for r in sel], "s-", ms=3, c="tab:red", label="$S_{pos}$"
        )
        ax.semilogx(
            [r["scale"] for r in sel], [r["S_sym"] for r in sel], "o-", ms=3, c="tab:blue", label="$S_{sym}$"
        )
        s_star = next(r["working_scale"] for r in rows if r["head"] == name)
        ax.axvline(s_star, c="k", ls=":", lw=0.8, label=f"working scale {s_star:.4g}")
        ax.axhline(0.1, c="0.5", ls="--", lw=0.6, label="purity threshold 0.1")
        ax.set_xlabel("logit scale (multiple of unit-norm logits)")
        ax.set_title(name, fontsize=9)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("score")
    index_at_1 = next(r for r in rows if r["head"].startswith("T_Index") and r["scale"] == 1.0)
    caption = (
        "[A]'s positional and symbolic scores (tau = 1e-4, 100 inputs of 17 tokens) against the logit "
        "scale. At scale 1 the constructions' logits lie in [-1, 1], attention is nearly uniform and the "
        f"swap weighting (an argmax over swaps) picks the largest attention difference: T_Index scores "
        f"S_sym = {index_at_1['S_sym']:.3g} there. At the working scale (dotted: 99% of the attention on "
        "the target for every input) each construction is pure."
    )
    return FigureResult("ps_scale", fig, rows, caption)
