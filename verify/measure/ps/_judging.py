"""Judging the positional/symbolic statements ([B]'s framework as used by [A]): the exclusion principle
on random heads and the constructions, every permutation enumerated; T_Index positional and
T_Retrieval at ``theta = 0`` symbolic at their working logit scale; and three reference heads whose scores
and exact deviations are known. The tolerances per dtype are :func:`tolerances`. The claims in
:mod:`ropeproof.claims._ps` state what is judged and call these.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ropeproof.constructions._paper import ALPHABET_SIZE
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._devices import dtype_name
from ropeproof.verify.kernel._random_heads import random_head
from ropeproof.verify.measure._outcome import Outcome
from ropeproof.verify.measure._subjects import CONSTRUCTION_SUBJECT, index_subject, retrieval_subject
from ropeproof.verify.measure.exact._index_sweep import index_sweep
from ropeproof.verify.measure.exact._sweep import sweep_retrieval
from ropeproof.verify.measure.ps._exact import ExclusionReport, exact_exclusion
from ropeproof.verify.measure.ps._scale_sweep import scores_over_scales, working_scale
from ropeproof.verify.measure.ps._scores import ps_scores

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


def random_ps_spec(rng: np.random.Generator) -> RopeSpec:
    """A random RoPE spec: head_dim 2..16, rotary_dim 0..head_dim, either layout; with probability 0.3
    a standard spectrum of random base in ``[10^0.5, 10^5)``, else each plane frequency 0 with probability
    0.3 and uniform in ``[-4, 4)`` otherwise."""
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


def exclusion_summary(reports: list[tuple[str, ExclusionReport]]) -> tuple[bool, dict[str, Any], Any]:
    """``(every inequality holds, figures, worst)`` over named exclusion reports.

    Figures: the number of heads and inputs; the largest, median and least tightness ``Var / bound``
    over every input (NaN tightness, where the bound is 0, left out; NaN when none is left);
    ``identity_rel_err``, the largest ``|Var - mean (delta_pos - delta_sym)^2 / 2|`` relative to each
    report's largest ``|Var|``. ``worst`` is the input with the largest ``(Var - bound) / bound``: head,
    ``n``, variance and bound."""
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


def exclusion_outcome(random_heads: int, device: torch.device, dtype: torch.dtype) -> Outcome:
    """[B] Theorem 1, ``Var <= (||delta_pos||^2 + ||delta_sym||^2) / ((n-1)! (n-1))``, with every permutation
    of the keys enumerated (:func:`~ropeproof.verify.measure.ps._exact.exact_exclusion`, its float64
    allowance), on ``random_heads`` random heads (``numpy`` seed 20260: :func:`random_ps_spec`, d_model
    1..8, ``n`` 2..8, 3 Gaussian inputs each) and on T_Index and T_Retrieval at ``theta = 0`` and
    ``0.0027`` (6 inputs each, their last :data:`N_EXACT` tokens), in ``dtype`` on ``device``. Figures and
    counterexample: :func:`exclusion_summary`."""
    rng = np.random.default_rng(20260)
    reports: list[tuple[str, ExclusionReport]] = []
    for i in range(random_heads):
        spec = random_ps_spec(rng)
        d_model = int(rng.integers(1, 9))
        head = random_head(spec, d_model, seed=i, scale=1.0, init="fan_in", device=device, dtype=dtype)
        n = int(rng.integers(2, N_EXACT + 1))
        x = torch.as_tensor(rng.standard_normal((3, n, d_model)))
        reports.append((repr(spec), exact_exclusion(head, x)))
    kw: dict[str, Any] = {"device": device, "dtype": dtype}
    for subj in (index_subject(6, **kw), retrieval_subject(6, 0.0, **kw), retrieval_subject(6, 0.0027, **kw)):
        reports.append((subj.name, exact_exclusion(subj.head, _last(subj.inputs, N_EXACT))))
    ok, figures, worst = exclusion_summary(reports)
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


def construction_class_outcome(
    kind: str,
    theta: float,
    length: int,
    n_inputs: int,
    scales: list[float],
    threshold: float,
    device: torch.device,
    dtype: torch.dtype,
    store: ResultStore,
    alphabet: int = ALPHABET_SIZE,
) -> Outcome:
    """A construction classified at its working logit scale: ``kind="index"``, T_Index at ``theta``, is
    positional (``S_pos = 1``, ``S_sym < threshold``, the exact ``delta_pos`` 0); ``kind="retrieval"``,
    T_Retrieval at ``theta`` with ``alphabet`` letters, is symbolic (``S_sym = 1``, ``S_pos < threshold``,
    the exact ``delta_sym`` 0).

    The working scale puts weight 99% on the target of every input of length ``length``
    (:func:`~ropeproof.verify.measure.ps._scale_sweep.working_scale` of the exact worst margin there: the
    one-plane sweep :func:`~ropeproof.verify.measure.exact._index_sweep.index_sweep` for T_Index, the
    Retrieval sweep :func:`~ropeproof.verify.measure.exact._sweep.sweep_retrieval` for T_Retrieval). The
    scores are measured on ``n_inputs`` task inputs
    (:data:`~ropeproof.verify.measure._subjects.CONSTRUCTION_SUBJECT`, from ``store``) at each of ``scales``
    and at the working scale, in ``dtype`` on ``device``; the exact deviation on the first 10 inputs' last
    :data:`N_EXACT` tokens, every permutation enumerated. ``holds`` when that deviation is at most the
    deviation tolerance, the pure score at least ``1 -`` the score tolerance (:func:`tolerances`, logits
    in ``[-1, 1]``) and the other score below ``threshold``, all at the working scale.

    Figures: the worst margin, the working scale, the other score there and at the first scale of
    ``scales`` (named ``*_at_scale_1`` for the claims' first scale), the scores at every scale, the exact
    deviation, the sizes and both tolerances."""
    if kind not in ("index", "retrieval"):
        raise InputError(f"kind={kind!r}; accepted: 'index', 'retrieval'")
    where = {"device": str(device), "dtype": dtype_name(dtype)}
    if kind == "index":
        subj = store.get(CONSTRUCTION_SUBJECT, kind="index", n_inputs=n_inputs, **where)
        margin = float(index_sweep([theta], [1.0], length).margin_inf[-1])
    else:
        subj = store.get(CONSTRUCTION_SUBJECT, kind="retrieval", n_inputs=n_inputs, theta=theta, **where)
        margin = float(sweep_retrieval(alphabet, theta, length, judge=False).columns["margin_inf"][-1])
    s_star = working_scale(margin, length)
    sweep = scores_over_scales(subj.head, subj.inputs, [*scales, s_star])
    at_work = sweep[-1]
    ex = exact_exclusion(subj.head, _last(subj.inputs, N_EXACT)[:10])
    dev_name = "msd_pos_exact" if kind == "index" else "msd_sym_exact"
    exact_dev = float((ex.msd_pos if kind == "index" else ex.msd_sym).max())
    pure, other = (at_work.S_pos, at_work.S_sym) if kind == "index" else (at_work.S_sym, at_work.S_pos)
    score_tol, dev_tol = tolerances(dtype)  # construction logits lie in [-1, 1]
    ok = exact_dev <= dev_tol and pure >= 1 - score_tol and other < threshold
    other_name = "S_sym" if kind == "index" else "S_pos"
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


def reference_heads(device: torch.device, dtype: torch.dtype) -> dict[str, RopeAttention]:
    """Three heads of d_model 6 and head_dim 8 with Gaussian weights (``torch`` seed 5, float64 before
    the cast to ``dtype``): ``constant`` (``W_Q = 0``: every logit 0), ``nope`` (no rotary planes) and
    ``constant_key`` (every ``W_K`` row the same vector), the latter two on planes at ``1.3, 0.4, 0, 2.9``
    where they rotate."""
    gen = torch.Generator().manual_seed(5)
    d, h = 6, 8

    def w(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    spec = RopeSpec(h, freqs=[1.3, 0.4, 0.0, 2.9])
    kw: dict[str, Any] = {"device": device, "dtype": dtype}
    return {
        "constant": RopeAttention(torch.zeros(d, h), w(d, h), w(d, h), w(h, d), spec, **kw),
        "nope": RopeAttention(w(d, h), w(d, h), w(d, h), w(h, d), RopeSpec(h, rotary_dim=0), **kw),
        "constant_key": RopeAttention(w(d, h), w(1, h).expand(d, h), w(d, h), w(h, d), spec, **kw),
    }


def reference_heads_outcome(device: torch.device, dtype: torch.dtype) -> Outcome:
    """On 8 one-hot inputs of 17 tokens (``torch`` seed 6) and the :data:`N_EXACT`-token ends of them, the
    :func:`reference_heads`: the constant head scores ``S_pos = S_sym = 1``; the NoPE head has exact
    ``delta_sym = 0`` and the constant-key head exact ``delta_pos = 0``, every permutation enumerated.
    ``holds`` within :func:`tolerances` for ``dtype``, with the largest logit of the two rotating heads as
    the logit size. Figures: both scores, the exact deviations of each head (the one that must vanish and
    the other), and both tolerances; the counterexample is the figures."""
    heads = reference_heads(device, dtype)
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
    score_tol, dev_tol = tolerances(dtype, max_logit)
    figures["score_tol"], figures["deviation_tol"] = score_tol, dev_tol
    ok = (
        abs(sc.S_pos - 1) <= score_tol
        and abs(sc.S_sym - 1) <= score_tol
        and figures["nope_max_msd_sym"] <= dev_tol
        and figures["constant_key_max_msd_pos"] <= dev_tol
    )
    return Outcome.judge(ok, figures, key_figure="nope_max_msd_sym", counterexample=figures)
