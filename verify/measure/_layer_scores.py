"""[A]'s per-layer positional/symbolic scores of a compiled multi-hop model, from first principles.

For layer ``l`` (``docs/theory.md`` section 6, "[A]'s per-layer scores"): take the hidden states entering
block ``l`` (the residual stream after ``l`` layers, content and channel), swap the hidden vectors at two
non-query positions ``i < j`` (position ids unchanged), re-run only block ``l`` and score the last token's
attention row with [A]'s score (``tau = 1e-4``): :func:`~ropeproof.verify.measure.ps._scores.ps_scores` with
the
block as a callable. Queries and keys read the content, which moves with the swap: an Index layer's keys are
all ``v`` (its row cannot move: positional), a Retrieval layer's row follows the keys' left letters
(symbolic). A Reflexive layer's row sits on the query itself, which is never swapped, so most swapped
entries underflow to zero in float64 and the score is not resolved
(:data:`~ropeproof.verify.measure.ps._swap_stream.MAX_UNRESOLVED_WEIGHT`): such a layer is reported with NaN
scores and the label ``unresolved`` (it used to read about (1, 1), the ``0/0`` convention of the cosine).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ropeproof.constructions._multihop_compile import CompiledModel
from ropeproof.machinery._errors import InputError, UnderflowError
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike
from ropeproof.verify.kernel._multilayer import model_module
from ropeproof.verify.measure._tasks import TaskInstance
from ropeproof.verify.measure.ps._scores import ps_scores

CLASS_THRESHOLD = 0.5
"""A layer is positional when ``S_pos > 0.5 > S_sym`` and symbolic when ``S_sym > 0.5 > S_pos``."""


@dataclass(frozen=True)
class LayerScore:
    """One layer's scores: the mean ``S_pos``/``S_sym`` over inputs and their spread."""

    layer: int
    kind: str
    S_pos: float
    S_sym: float
    s_pos_min: float
    s_sym_max: float
    s_sym_min: float
    s_pos_max: float

    @property
    def label(self) -> str:
        """``positional``, ``symbolic`` or ``mixed`` (:data:`CLASS_THRESHOLD`), or ``unresolved`` when the
        dtype could not resolve the scores (NaN)."""
        if math.isnan(self.S_pos) or math.isnan(self.S_sym):
            return "unresolved"
        if self.S_pos > CLASS_THRESHOLD > self.S_sym:
            return "positional"
        if self.S_sym > CLASS_THRESHOLD > self.S_pos:
            return "symbolic"
        return "mixed"

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "label": self.label}


def layer_ps_scores(
    model: CompiledModel,
    instances: Sequence[TaskInstance],
    tau: float = 1e-4,
    device: DeviceLike = "cpu",
    dtype: DtypeLike = torch.float64,
    layers: Sequence[int] | None = None,
) -> list[LayerScore]:
    """[A]'s layer-input swap scores of every layer (or ``layers``) on equal-length task inputs."""
    if not instances:
        raise InputError("instances is empty")
    module = model_module(model, device, dtype)
    with torch.no_grad():
        res = module.run([i.tokens for i in instances])
    out = []
    for layer in layers if layers is not None else range(model.n_layers):
        if not 0 <= layer < model.n_layers:
            raise InputError(f"layer={layer} is out of range; the model has layers 0..{model.n_layers - 1}")
        block = module.layers[layer]

        def row(x: torch.Tensor, _block: Any = block) -> torch.Tensor:  # re-run only this block
            with torch.no_grad():
                return _block(x).pattern[:, -1, :]

        try:
            sc = ps_scores(row, res.residual[layer], tau=tau)
        except UnderflowError:  # the row sits on the query: every swapped entry underflows
            out.append(LayerScore(layer, model.layer_info[layer].label, *[math.nan] * 6))
            continue
        out.append(
            LayerScore(
                layer,
                model.layer_info[layer].label,
                sc.S_pos,
                sc.S_sym,
                float(sc.s_pos.min()),
                float(sc.s_sym.max()),
                float(sc.s_sym.min()),
                float(sc.s_pos.max()),
            )
        )
    return out
