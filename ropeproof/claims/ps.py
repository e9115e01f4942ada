"""Claims about positional and symbolic heads ([B]'s framework as used by [A]).

Importing this module registers:

- ``ps.exclusion-principle``: [B] Theorem 1 on random heads and on the constructions, exactly;
- ``ps.index-positional``: T_Index scores as positional;
- ``ps.retrieval-symbolic``: T_Retrieval at ``theta = 0`` scores as symbolic;
- ``ps.reference-heads``: constant logits score (1, 1); NoPE is exactly symbolic and a constant-key
  head exactly positional under the exact definitions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ropeproof.claims.registry import Approx, CheckContext, ClaimSet, Outcome, Quick
from ropeproof.constructions.paper import ALPHABET_SIZE, INDEX_THETA
from ropeproof.theory.rope_spec import RopeSpec
from ropeproof.verify.kernel.attention import RopeAttention
from ropeproof.verify.kernel.devices import dtype_name
from ropeproof.verify.kernel.random_heads import random_head
from ropeproof.verify.measure.exact.index_sweep import index_sweep
from ropeproof.verify.measure.exact.sweep import sweep_retrieval
from ropeproof.verify.measure.ps.exact import ExclusionReport, exact_exclusion
from ropeproof.verify.measure.ps.scale_sweep import scores_over_scales, working_scale
from ropeproof.verify.measure.ps.scores import ps_scores
from ropeproof.verify.measure.subjects import CONSTRUCTION_SUBJECT, index_subject, retrieval_subject

CLAIMS = ClaimSet(
    "ps",
    section="Positional and symbolic heads ([B], [A])",
    report_figures=("ps_plane", "per_frequency", "ps_scale"),
)
"""The ps claims, in report order."""


SCORE_TOL = 1e-12
"""Float64 tolerance for a score that is exactly 1: the swapped row equals the unswapped (or
exchanged) row bit for bit, so only the float64 rounding of one cosine similarity (a few ulp)
remains. See :func:`tolerances` for other dtypes."""


def tolerances(dtype: torch.dtype, max_abs_logit: float = 1.0) -> tuple[float, float]:
    """``(score_tol, deviation_tol)`` for checks run in ``dtype``.

    A score that is exactly 1 in exact arithmetic can be off by one rounding of the attention row
    in ``dtype`` (relative ``eps``, e.g. from a softmax summed in another order); a cosine moves by
    at most ``eps^2`` then, so ``score_tol = max(1e-12, 4 eps^2)``. A deviation that is exactly 0
    (``delta_pos`` of a constant-key head, ``delta_sym`` of a NoPE head) is computed from logits that
    agree up to one rounding, so ``deviation_tol = (4 eps max|L|)^2`` on a mean square; on the CPU in
    float64 the deviations come out exactly 0.
    """
    eps = torch.finfo(dtype).eps
    return max(SCORE_TOL, 4 * eps**2), (4 * eps * max_abs_logit) ** 2


CLASS_THRESHOLD = 0.1
"""Purity threshold: a head is classified positional (symbolic) when S_pos = 1 (S_sym = 1) and the
other score is below this, judged at the head's working logit scale."""


N_EXACT = 8
"""Inputs of 8 tokens: 7 keys, all 5040 permutations."""


def _random_spec(rng: np.random.Generator) -> RopeSpec:
    head_dim = 2 * int(rng.integers(1, 9))
    rotary_dim = 2 * int(rng.integers(0, head_dim // 2 + 1))
    layout = str(rng.choice(["interleaved", "half"]))
    if rng.random() < 0.3:
        return RopeSpec(head_dim, rotary_dim, base=float(10 ** rng.uniform(0.5, 5)), layout=layout)  # type: ignore[arg-type]
    freqs = np.where(rng.random(rotary_dim // 2) < 0.3, 0.0, rng.uniform(-4, 4, rotary_dim // 2))
    return RopeSpec(head_dim, rotary_dim, freqs=freqs.tolist(), layout=layout)  # type: ignore[arg-type]


def _last(inputs: torch.Tensor, n: int) -> torch.Tensor:
    """The last ``n`` tokens of every input (the query stays last)."""
    return inputs[:, -n:, :]


def _summary(reports: list[tuple[str, ExclusionReport]]) -> tuple[bool, dict[str, Any], Any]:
    tight = torch.cat([r.tightness for _, r in reports])
    tight = tight[~torch.isnan(tight)]
    ok, worst = True, None
    worst_excess = -math.inf
    ident = 0.0
    for name, r in reports:
        excess = (r.variance - r.bound) / r.bound.clamp_min(1e-300)
        i = int(torch.argmax(excess))
        if float(excess[i]) > worst_excess:
            worst_excess = float(excess[i])
            worst = {"head": name, "n": r.n, "variance": float(r.variance[i]), "bound": float(r.bound[i])}
        ok &= r.all_hold
        scale = float(r.variance.abs().max().clamp_min(1e-300))
        ident = max(ident, float((r.variance - r.half_msd_diff).abs().max()) / scale)
    figures = {
        "heads": len(reports),
        "inputs": sum(int(r.variance.shape[0]) for _, r in reports),
        "max_tightness": float(tight.max()) if tight.numel() else math.nan,
        "median_tightness": float(tight.median()) if tight.numel() else math.nan,
        "min_tightness": float(tight.min()) if tight.numel() else math.nan,
        "identity_rel_err": ident,
    }
    return ok, figures, worst


@CLAIMS.claim(
    id="ps.exclusion-principle",
    statement=(
        "Var of the key-logit row <= (||delta_pos||^2 + ||delta_sym||^2) / ((n-1)! (n-1)) over all "
        "permutations of the n-1 keys, for {random_heads} random RoPE heads (n = 2..8, 3 inputs each) and "
        "for T_Index and T_Retrieval, every permutation enumerated."
    ),
    reference="[B] Theorem 1; docs/theory.md section 2",
    params={"random_heads": Quick(40, 12), "n": "2..8", "inputs_per_head": 3},
    meaning="The inequality holds for every function of the key contents (it is an identity plus "
    "(a - b)^2 <= 2 (a^2 + b^2)); its tightness is what describes a head.",
)
def _exclusion(ctx: CheckContext) -> Outcome:
    rng = np.random.default_rng(20260)
    reports: list[tuple[str, ExclusionReport]] = []
    for i in range(ctx.params["random_heads"]):
        spec = _random_spec(rng)
        d_model = int(rng.integers(1, 9))
        head = random_head(
            spec, d_model, seed=i, scale=1.0, init="fan_in", device=ctx.device, dtype=ctx.dtype
        )
        n = int(rng.integers(2, N_EXACT + 1))
        x = torch.as_tensor(rng.standard_normal((3, n, d_model)))
        reports.append((repr(spec), exact_exclusion(head, x)))
    kw: dict[str, Any] = {"device": ctx.device, "dtype": ctx.dtype}
    for subj in (index_subject(6, **kw), retrieval_subject(6, 0.0, **kw), retrieval_subject(6, 0.0027, **kw)):
        reports.append((subj.name, exact_exclusion(subj.head, _last(subj.inputs, N_EXACT))))
    ok, figures, worst = _summary(reports)
    return Outcome.judge(
        ok,
        figures,
        key_figure="max_tightness",
        counterexample=worst,
        detail=(
            "Var = mean (delta_pos - delta_sym)^2 / 2 exactly (identity_rel_err), so Var / bound "
            "(tightness) is at most 1; equality needs delta_pos = -delta_sym everywhere."
        ),
    )


def _classify(ctx: CheckContext, which: str) -> Outcome:
    p = ctx.params
    where = {"device": str(ctx.device), "dtype": dtype_name(ctx.dtype)}
    if which == "index":
        subj = ctx.store.get(CONSTRUCTION_SUBJECT, kind="index", n_inputs=p["n_inputs"], **where)
        margin = float(index_sweep([p["theta"]], [1.0], p["length"]).margin_inf[-1])
    else:
        subj = ctx.store.get(
            CONSTRUCTION_SUBJECT, kind="retrieval", n_inputs=p["n_inputs"], theta=p["theta"], **where
        )
        margin = float(
            sweep_retrieval(p["alphabet"], p["theta"], p["length"], judge=False).columns["margin_inf"][-1]
        )
    s_star = working_scale(margin, p["length"])
    sweep = scores_over_scales(subj.head, subj.inputs, [*p["scales"], s_star])
    at_work = sweep[-1]
    ex = exact_exclusion(subj.head, _last(subj.inputs, N_EXACT)[:10])
    dev_name = "msd_pos_exact" if which == "index" else "msd_sym_exact"
    exact_dev = float((ex.msd_pos if which == "index" else ex.msd_sym).max())
    pure, other = (at_work.S_pos, at_work.S_sym) if which == "index" else (at_work.S_sym, at_work.S_pos)
    score_tol, dev_tol = tolerances(ctx.dtype)  # construction logits lie in [-1, 1]
    ok = exact_dev <= dev_tol and pure >= 1 - score_tol and other < p["threshold"]
    other_name = "S_sym" if which == "index" else "S_pos"
    figures = {
        "worst_margin": margin,
        "working_scale": s_star,
        f"{other_name}_at_working_scale": other,
        f"{other_name}_at_scale_1": getattr(sweep[0], other_name),
        "scores_by_scale": [{"scale": r.scale, "S_pos": r.S_pos, "S_sym": r.S_sym} for r in sweep],
        dev_name: exact_dev,
        "n_inputs": int(subj.inputs.shape[0]),
        "exact_n": N_EXACT,
        "score_tol": score_tol,
        "deviation_tol": dev_tol,
    }
    return Outcome.judge(
        ok,
        figures,
        key_figure=f"{other_name}_at_working_scale",
        counterexample={"scores_by_scale": figures["scores_by_scale"], dev_name: exact_dev},
    )


SCALES = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
"""Logit scales (multiples of the construction's unit-norm logits) the classification is shown at."""


@CLAIMS.claim(
    id="ps.index-positional",
    statement=(
        "T_Index (theta = {theta}) on {n_inputs} number-task inputs of {length} tokens is positional at its "
        "working logit scale s* = ln((n-1) 99) / margin_inf(n) = {working_scale} (99% attention on the "
        "target): S_pos = 1 and S_sym < {threshold}; under the exact definitions delta_pos = 0. Scores "
        "are also reported at scales {scales}."
    ),
    reference="[A] Thm 3.1 and Remark 3.1; docs/theory.md sections 2 and 4",
    params={
        "theta": INDEX_THETA,
        "n_inputs": 100,
        "length": 17,
        "tau": 1e-4,
        "threshold": CLASS_THRESHOLD,
        "scales": SCALES,
    },
    pins={
        "working_scale": Approx(302.4274367626738, rel=1e-9),
        "S_sym_at_scale_1": Approx(0.27016880576948843, rel=1e-9),
    },
    meaning="At scale 1 the same head scores S_sym = {S_sym_at_scale_1}: with tau = 1e-4 the score is "
    "an argmax over swaps, so on nearly uniform attention it measures the logit range, not the head.",
)
def _index_positional(ctx: CheckContext) -> Outcome:
    return _classify(ctx, "index")


@CLAIMS.claim(
    id="ps.retrieval-symbolic",
    statement=(
        "T_Retrieval at theta = {theta} (|ALPH| = {alphabet}) on {n_inputs} letter-task inputs of {length} "
        "pairs is symbolic at its working logit scale s* = {working_scale}: S_sym = 1 and S_pos < "
        "{threshold}; under the exact definitions delta_sym = 0. Scores are also reported at scales "
        "{scales}."
    ),
    reference="[A] Thm 3.1 and Remark 3.1; docs/theory.md sections 2 and 4",
    params={
        "theta": 0.0,
        "alphabet": ALPHABET_SIZE,
        "n_inputs": 100,
        "length": 17,
        "tau": 1e-4,
        "threshold": CLASS_THRESHOLD,
        "scales": SCALES,
    },
    pins={
        "working_scale": Approx(25.154930531413097, rel=1e-9),
        "S_pos_at_scale_1": Approx(0.2683648704000495, rel=1e-9),
    },
    meaning="At scale 1 the same head scores S_pos = {S_pos_at_scale_1}, for the same reason as T_Index.",
)
def _retrieval_symbolic(ctx: CheckContext) -> Outcome:
    return _classify(ctx, "retrieval")


def _reference_heads(ctx: CheckContext) -> dict[str, RopeAttention]:
    gen = torch.Generator().manual_seed(5)
    d, h = 6, 8

    def w(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    spec = RopeSpec(h, freqs=[1.3, 0.4, 0.0, 2.9])
    kw: dict[str, Any] = {"device": ctx.device, "dtype": ctx.dtype}
    return {
        "constant": RopeAttention(torch.zeros(d, h), w(d, h), w(d, h), w(h, d), spec, **kw),
        "nope": RopeAttention(w(d, h), w(d, h), w(d, h), w(h, d), RopeSpec(h, rotary_dim=0), **kw),
        "constant_key": RopeAttention(w(d, h), w(1, h).expand(d, h), w(d, h), w(h, d), spec, **kw),
    }


@CLAIMS.claim(
    id="ps.reference-heads",
    statement=(
        "A head with constant logits scores (1, 1); a NoPE head has delta_sym = 0 and a constant-key head "
        "delta_pos = 0 exactly, over all key permutations."
    ),
    reference="[B] definitions; docs/theory.md section 2",
    params={"n_exact": N_EXACT, "n_scores": 17, "inputs": "one-hot, 8 per check"},
    meaning="The scores and the exact definitions agree on the three reference heads.",
)
def _reference(ctx: CheckContext) -> Outcome:
    heads = _reference_heads(ctx)
    gen = torch.Generator().manual_seed(6)
    onehot = torch.nn.functional.one_hot(torch.randint(0, 6, (8, 17), generator=gen), 6).double()
    sc = ps_scores(heads["constant"], onehot)
    nope = exact_exclusion(heads["nope"], onehot[:, -N_EXACT:])
    ckey = exact_exclusion(heads["constant_key"], onehot[:, -N_EXACT:])
    figures = {
        "constant_S_pos": sc.S_pos,
        "constant_S_sym": sc.S_sym,
        "nope_max_msd_sym": float(nope.msd_sym.max()),
        "nope_min_msd_pos": float(nope.msd_pos.min()),
        "constant_key_max_msd_pos": float(ckey.msd_pos.max()),
        "constant_key_min_msd_sym": float(ckey.msd_sym.min()),
    }
    rows = [heads[k](onehot[:, -N_EXACT:]).logits[:, -1].double() for k in ("nope", "constant_key")]
    max_logit = max(float(r.abs().max()) for r in rows)
    score_tol, dev_tol = tolerances(ctx.dtype, max_logit)
    figures["score_tol"], figures["deviation_tol"] = score_tol, dev_tol
    ok = (
        abs(sc.S_pos - 1) <= score_tol
        and abs(sc.S_sym - 1) <= score_tol
        and figures["nope_max_msd_sym"] <= dev_tol
        and figures["constant_key_max_msd_pos"] <= dev_tol
    )
    return Outcome.judge(ok, figures, key_figure="nope_max_msd_sym", counterexample=figures)
