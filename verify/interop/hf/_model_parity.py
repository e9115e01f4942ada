"""Per-layer parity of an exported multi-hop checkpoint with the ropeproof module.

For token sequences, the HF model (eager attention) and the ropeproof module
(:class:`~ropeproof.verify.kernel._multilayer.MultiLayerRopeModel`, float64) are run side by side; per
layer the pre-softmax scores HF feeds to softmax and its attention weights are compared with the module's
logits and pattern on the causal triangle, and the last-position LM logits with the module's readout.

Tolerances, derived for unit codes (every score is ``beta`` times a sum of products of coordinates of
size <= 1, ``beta`` the logit scale, ``A`` the layer's amplitude sum, ``h`` its head dim, ``n`` positions,
``theta_max`` its largest frequency, ``u`` the float32 unit roundoff ``2^-24``; HF computes rotary tables,
``q . k`` and the softmax in float32 even in a float64 model, GPT-J's eager path and LLaMA's rotary alike):

- scores: ``delta = beta A ((4 n theta_max + 2 h + 16) u + 16 X_l u_N)``. The float32 angle ``p theta`` is
  off by up to ``2 p theta u``; weights, sin/cos and the ``h``-term dot product add a few ``u`` each,
  doubled for safety. The last term is GPT-J's LayerNorm bypass: ``x - mean(x)`` of a stream whose
  entries reach ``X_l`` (measured on the module) is off by up to ``4 X_l u_N`` per coordinate
  (``u_N`` the model dtype's unit roundoff), and the spare-column compensation reads it with weights of
  l1 norm up to ``4 A beta``; LLaMA's RMSNorm only rescales (no such term);
- weights: an entry ``p`` moves by at most ``min(p, 1 - p) (e^{2 delta} - 1)`` when every score moves by at
  most ``delta`` (ratios of softmax entries change by at most ``e^{2 delta}``), plus ``8 u`` of rounding;
- LM logits: ``2^L (n sum_l w_l + 8 L u) + 16 X_L u_N`` with ``w_l`` the measured weight difference of
  layer ``l`` (channels at most double per layer and a row's weights differ by at most ``n w_l`` in l1)
  plus the final norm's bypass as above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from ropeproof.constructions._multihop_compile import CompiledModel
from ropeproof.machinery._errors import InputError
from ropeproof.theory._architectures import architecture
from ropeproof.verify.interop.hf._model_export import ModelExport
from ropeproof.verify.interop.hf._run import capture_softmax_inputs
from ropeproof.verify.kernel._multilayer import model_module

FLOAT32_UNIT = 2.0**-24
"""The float32 unit roundoff ``u``."""


@dataclass(frozen=True)
class LayerParity:
    """Measured and allowed differences of one layer on the causal triangle. ``weight_tol`` is the allowed
    difference at the entry closest to its own allowance (the weight allowance is per entry)."""

    layer: int
    score_diff: float
    score_tol: float
    weight_diff: float
    weight_tol: float

    @property
    def ok(self) -> bool:
        return self.score_diff <= self.score_tol and self.weight_diff <= self.weight_tol


@dataclass(frozen=True)
class ModelParity:
    """Per-layer parity, the LM logits' parity, and whether HF's greedy answers equal the module's."""

    dtype: str
    layers: tuple[LayerParity, ...]
    logit_diff: float
    logit_tol: float
    answers_agree: bool

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.layers) and self.logit_diff <= self.logit_tol and self.answers_agree

    def summary(self) -> dict[str, Any]:
        return {
            "dtype": self.dtype,
            "ok": self.ok,
            "max_score_diff": max(p.score_diff for p in self.layers),
            "max_score_tol": max(p.score_tol for p in self.layers),
            "max_weight_diff": max(p.weight_diff for p in self.layers),
            "max_weight_tol": max(p.weight_tol for p in self.layers),
            "logit_diff": self.logit_diff,
            "logit_tol": self.logit_tol,
            "answers_agree": self.answers_agree,
        }


def model_parity(export: ModelExport, compiled: CompiledModel, sequences: Any) -> ModelParity:
    """Run both models on equal-length token-name ``sequences`` and compare (module docstring). The export
    must use eager attention (HF returns no weights otherwise)."""
    seqs = [list(s) for s in sequences]
    if not seqs:
        raise InputError("sequences is empty")
    enc = export.tokenizer(export.prompts(seqs), return_tensors="pt")
    with torch.no_grad(), capture_softmax_inputs() as scores:
        out = export.model(input_ids=enc["input_ids"], output_attentions=True)
    weights = [w for w in (out.attentions or ()) if w is not None]
    if len(weights) != compiled.n_layers or len(scores) != compiled.n_layers:
        raise InputError(
            "the export returned no per-layer attention weights; build it with attn_implementation='eager'"
        )
    ours = model_module(compiled, device="cpu").run(seqs)
    model_dtype = next(export.model.parameters()).dtype
    # the LayerNorm bypass (x - mean(x)) rounds in the model's dtype; an RMSNorm bypass only rescales
    u_norm = torch.finfo(model_dtype).eps / 2 if architecture(export.info.arch).norm_subtracts_mean else 0.0
    n = len(seqs[0])
    causal = ~torch.ones(n, n, dtype=torch.bool).triu(1)
    layers = []
    for i, info in enumerate(compiled.layer_info):
        h = compiled.layers[i].spec.head_dim
        amp = float(sum(info.amps))
        theta = max((abs(f) for f in info.freqs), default=0.0)
        x_max = float(ours.residual[i].abs().max())
        delta = (
            compiled.logit_scale * amp * ((4 * n * theta + 2 * h + 16) * FLOAT32_UNIT + 16 * x_max * u_norm)
        )
        s_diff = float((scores[i][:, 0].double() - ours.logits[i])[:, causal].abs().max())
        p = ours.patterns[i]
        w_tol = torch.minimum(p, 1 - p) * math.expm1(2 * delta) + 8 * FLOAT32_UNIT
        w_err = (weights[i][:, 0].double() - p).abs()
        w_diff = float(w_err[:, causal].max())
        ratio = float((w_err / w_tol)[:, causal].max())
        layers.append(
            LayerParity(i, s_diff, delta, w_diff, w_diff / ratio if ratio > 0 else float(w_tol.max()))
        )
    hf_logits = out.logits[:, -1, :-1].double()  # drop [UNK]
    logit_diff = float((hf_logits - ours.readout[:, -1]).abs().max())
    depth = compiled.n_layers
    x_final = float(ours.residual[-1].abs().max())
    logit_tol = 2.0**depth * (n * sum(p.weight_diff for p in layers) + 8 * depth * FLOAT32_UNIT)
    logit_tol += 16 * x_final * u_norm
    hf_answers = hf_logits.argmax(-1).tolist()
    our_answers = ours.readout[:, -1].argmax(-1).tolist()
    dtype = str(model_dtype).removeprefix("torch.")
    return ModelParity(dtype, tuple(layers), logit_diff, float(logit_tol), hf_answers == our_answers)


def parity_table(parity: ModelParity) -> list[dict[str, Any]]:
    """One row per layer: measured and allowed differences."""
    return [
        {
            "layer": p.layer,
            "score_diff": p.score_diff,
            "score_tol": p.score_tol,
            "weight_diff": p.weight_diff,
            "weight_tol": p.weight_tol,
            "ok": p.ok,
        }
        for p in parity.layers
    ]
