"""Trained heads against the theory: which RoPE frequencies carry each trained layer's attention, and
how each frequency behaves on its own ([B]'s per-frequency scores; ``docs/theory.md`` sections 2 and 6).

For layer ``l`` of a GPT-J model, the head is imported in float64
(:func:`ropeproof.verify.interop.hf._head_import.import_model_head`) and run on its real inputs: the
hidden states entering block ``l`` on the given prompts, through the block's ``ln_1`` in float64. The
head splits exactly into one 2-D head per rotary plane
(:func:`ropeproof.verify.measure.ps._per_frequency.split_planes`, logits add up). Per plane ``k`` (frequency
``theta_k = 10000^(-2k/d)``, [A]'s frequency id ``k + 1``,
so that id 2 of a 128-dim head is ``0.8660`` and id 42 is ``0.0027``):

- ``spread_k``: the standard deviation of the plane's last-token logit row over the positions it sees,
  averaged over prompts; ``share_k = spread_k / sum_j spread_j`` (which planes move the logits);
- ``S_pos_k``, ``S_sym_k``: [A]'s swap scores of the plane on its own (``tau = 1e-4``);
- ``dominant_stability``: how often the plane with the largest share keeps it when the prompts are
  resampled (:func:`dominant_stability`; the same for every row of a layer).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import torch

from ropeproof.verify.interop.hf._head_import import import_model_head
from ropeproof.verify.interop.hf._layer_swap import HFLayerSwap
from ropeproof.verify.measure.ps._per_frequency import per_frequency_scores


def layer_head_inputs(model: Any, input_ids: torch.Tensor, layer: int) -> torch.Tensor:
    """``ln_1`` (in float64) of the hidden states entering block ``layer``: ``[batch, n, n_embd]``."""
    adapter = HFLayerSwap(model)
    hidden = adapter.layer_inputs(input_ids, layer).to("cpu", torch.float64)
    with torch.no_grad():
        return adapter.converter.evaluate_norm(adapter.input_norm(layer), hidden)


def frequency_profile(
    model: Any, input_ids: torch.Tensor, layer: int, tau: float = 1e-4
) -> list[dict[str, Any]]:
    """One row per rotary plane of layer ``layer`` (module docstring): ``plane``, ``freq_id``, ``theta``,
    ``share``, ``S_pos``, ``S_sym``."""
    head = import_model_head(model, layer=layer, device="cpu", dtype=torch.float64)
    x = layer_head_inputs(model, input_ids, layer)
    profile = per_frequency_scores(head, x, tau=tau)
    spread_table = profile.row_spread.T.numpy()  # [prompts, planes]: each plane's last-token row's spread
    spreads = [float(v) for v in spread_table.mean(0)]
    stability = dominant_stability(spread_table)
    total = sum(spreads)
    return [
        {
            "layer": layer,
            "plane": k,
            "freq_id": k + 1,
            "theta": float(profile.freqs[k]),
            "share": spreads[k] / total if total > 0 else math.nan,
            "S_pos": float(profile.S_pos[k]),
            "S_sym": float(profile.S_sym[k]),
            "dominant_stability": stability,
        }
        for k in range(len(spreads))
    ]


def dominant_stability(spreads: np.ndarray, resamples: int = 2000, seed: int = 0) -> float:
    """How often the plane with the largest share stays the largest when the prompts are resampled with
    replacement (``resamples`` bootstrap draws, seeded): a dominant plane is taken as decided at ``>= 0.95``.

    Shapes: spreads [prompts, planes]
    """
    top = int(np.argmax(spreads.mean(0)))
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, spreads.shape[0], size=(resamples, spreads.shape[0]))
    means = spreads[draws].mean(1)  # [resamples, planes]
    return float((means.argmax(1) == top).mean())


def dominant_plane(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The plane with the largest logit share."""
    return max(rows, key=lambda r: r["share"])


CONSTRUCTION_OF_TASK = {"number": "index", "letter": "retrieval"}
"""The single-plane construction whose task family a trained layer is swept over."""


def construction_comparison(
    model: Any, task: str, layer: int, theta: float, max_n: int = 17
) -> list[dict[str, Any]]:
    """Exact extremes over the task's construction family (T_Index for the number task, T_Retrieval for
    the letter task, [A]'s sizes, ``n = 2 .. max_n``; the families cover ``n <= 17``) of

    - the trained head of ``layer`` (over the same inputs, each case split by query token, since a
      trained head gives every query token its own query vector): its effective logit function with
      token embeddings through the block's ``ln_1``
      (:func:`ropeproof.verify.interop.hf._model_head.compiled_from_hf_model`; exact for layer 0, a
      proxy deeper, where the real inputs also carry earlier layers' writes);
    - the single-plane construction at frequency ``theta`` (unit vectors, logit scale 1);
    - Theorem 3.2's reported bound at ``theta`` (``docs/theory.md`` section 5; ``omega = 2 pi / 8``).

    Rows: ``n``, ``trained_gap_sup`` (Delta(n)), ``trained_margin_inf`` (worst target margin),
    ``construction_gap_sup``, ``construction_margin_inf``, ``bound``. No normalisation of Delta is stated
    (section 5, open), so the trained head's values are in its own logit units.
    """
    import dataclasses

    import numpy as np

    from ropeproof.constructions._compile import compile_construction
    from ropeproof.constructions._paper import ALPHABET_SIZE, index_construction, retrieval_construction
    from ropeproof.theory._bounds import index_bound, retrieval_bound
    from ropeproof.verify.interop.hf._model_head import compiled_from_hf_model
    from ropeproof.verify.measure._tokenizer import task_vocabulary
    from ropeproof.verify.measure.exact._families import family_for
    from ropeproof.verify.measure.exact._head_sweep import sweep_head

    kind = CONSTRUCTION_OF_TASK[task]
    construction = index_construction(theta=theta) if kind == "index" else retrieval_construction(theta=theta)
    family = family_for(construction)
    vocab = task_vocabulary(task)
    m64 = copy.deepcopy(model).to(torch.float64)
    trained = compiled_from_hf_model(m64, layer, 0, token_ids=list(range(len(vocab))))
    trained = dataclasses.replace(trained, tokens=tuple(vocab))  # token id i is vocabulary entry i
    built = compile_construction(construction)
    # gap_sup and margin_inf only: the gap_inf enumeration (most of the cost) is not reported here
    ours = sweep_head(trained, max_n, family=per_query_token(family), gap_inf_limit=0)
    ref = sweep_head(built, max_n, family=family, gap_inf_limit=0)
    n = np.asarray(ours.columns["n"])
    if kind == "index":
        bound = index_bound().evaluate(n, theta)
    else:
        bound = retrieval_bound().evaluate(n, theta, 2 * math.pi / ALPHABET_SIZE)
    return [
        {
            "task": task,
            "layer": layer,
            "theta": theta,
            "n": int(n[i]),
            "trained_gap_sup": float(ours.columns["gap_sup"][i]),
            "trained_margin_inf": float(ours.columns["margin_inf"][i]),
            "construction_gap_sup": float(ref.columns["gap_sup"][i]),
            "construction_margin_inf": float(ref.columns["margin_inf"][i]),
            "bound": float(bound[i]),
        }
        for i in range(len(n))
    ]


def per_query_token(family: Any) -> Any:
    """``family`` with every case split into one case per query token (same targets and others): the
    same set of inputs, for heads whose query tokens of one case have different query vectors."""
    import dataclasses

    cases = tuple(
        dataclasses.replace(case, label=f"{case.label}/{token}", query_tokens=(token,))
        for case in family.cases
        for token in case.query_tokens
    )
    return dataclasses.replace(family, name=f"{family.name}, per query token", cases=cases)
