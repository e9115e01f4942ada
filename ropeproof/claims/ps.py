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

from ropeproof.claims.registry import CheckContext, ClaimSet, Outcome
from ropeproof.theory.rope_spec import RopeSpec
from ropeproof.verify.ps.exact import ExclusionReport, exact_exclusion
from ropeproof.verify.ps.scores import ps_scores
from ropeproof.verify.runtime.attention import RopeAttention
from ropeproof.verify.subjects import index_subject, retrieval_subject
from ropeproof.verify.testing.random_heads import random_head

CLAIMS = ClaimSet("ps")
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


CLASS_THRESHOLD = 0.5
"""A score below 0.5 classifies: the row is closer to orthogonal than to the reference."""


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
        "permutations of the n-1 keys, for random RoPE heads and for T_Index and T_Retrieval."
    ),
    reference="[B] Theorem 1; THEORY.md section 2",
    params={"random_heads": 40, "quick_random_heads": 12, "n": "2..8", "inputs_per_head": 3},
)
def _exclusion(ctx: CheckContext) -> Outcome:
    rng = np.random.default_rng(20260)
    reports: list[tuple[str, ExclusionReport]] = []
    for i in range(12 if ctx.quick else 40):
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
    if which == "index":
        subj = index_subject(100, device=ctx.device, dtype=ctx.dtype)
    else:
        subj = retrieval_subject(100, 0.0, device=ctx.device, dtype=ctx.dtype)
    sc = ps_scores(subj.head, subj.inputs)
    ex = exact_exclusion(subj.head, _last(subj.inputs, N_EXACT)[:10])
    pos_name = "msd_pos_exact" if which == "index" else "msd_sym_exact"
    exact_dev = float((ex.msd_pos if which == "index" else ex.msd_sym).max())
    pure, other = (sc.S_pos, sc.S_sym) if which == "index" else (sc.S_sym, sc.S_pos)
    score_tol, dev_tol = tolerances(ctx.dtype)  # construction logits lie in [-1, 1]
    ok = exact_dev <= dev_tol and pure >= 1 - score_tol and other < CLASS_THRESHOLD
    figures = {
        "S_pos": sc.S_pos,
        "S_sym": sc.S_sym,
        "s_pos_range": [float(sc.s_pos.min()), float(sc.s_pos.max())],
        "s_sym_range": [float(sc.s_sym.min()), float(sc.s_sym.max())],
        pos_name: exact_dev,
        "n_inputs": int(subj.inputs.shape[0]),
        "exact_n": N_EXACT,
        "score_tol": score_tol,
        "deviation_tol": dev_tol,
    }
    return Outcome.judge(
        ok,
        figures,
        key_figure="S_sym" if which == "index" else "S_pos",
        counterexample={"S_pos": sc.S_pos, "S_sym": sc.S_sym, pos_name: exact_dev},
    )


@CLAIMS.claim(
    id="ps.index-positional",
    statement=(
        "T_Index (theta = 0.866) on number-task inputs of 17 tokens scores as positional: S_pos = 1 "
        "and S_sym < 0.5; under the exact definitions delta_pos = 0."
    ),
    reference="[A] Thm 3.1 and Remark 3.1; THEORY.md sections 2 and 4",
    params={"theta": 0.866, "n_inputs": 100, "length": 17, "tau": 1e-4, "tol": SCORE_TOL},
)
def _index_positional(ctx: CheckContext) -> Outcome:
    return _classify(ctx, "index")


@CLAIMS.claim(
    id="ps.retrieval-symbolic",
    statement=(
        "T_Retrieval at theta = 0 (omega = pi/4) on letter-task inputs of 17 pairs scores as symbolic: "
        "S_sym = 1 and S_pos < 0.5; under the exact definitions delta_sym = 0."
    ),
    reference="[A] Thm 3.1 and Remark 3.1; THEORY.md sections 2 and 4",
    params={"theta": 0.0, "alphabet": 8, "n_inputs": 100, "length": 17, "tau": 1e-4, "tol": SCORE_TOL},
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
    reference="[B] definitions; THEORY.md section 2",
    params={"n_exact": N_EXACT, "n_scores": 17, "inputs": "one-hot, 8 per check"},
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
