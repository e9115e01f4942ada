"""Run a :class:`~ropeproof.constructions._multihop_compile.CompiledModel` in torch: one
:class:`~ropeproof.verify.kernel._attention.RopeAttention` per layer on a residual stream.

For inputs ``x_0 = W_E[tokens]`` (``[batch, n, d_model]``) layer ``l`` computes

    x_{l+1} = x_l + RopeAttention_l(x_l).output

(no norms, no MLPs), and the readout is ``x_L W_U`` (``[batch, n, V]``); the answer is the argmax at the
last position. Every layer's logits and pattern and every residual state are returned. Runs on the CPU or
CUDA in any supported dtype (``device="auto"`` picks CUDA when present).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from ropeproof.constructions._multihop_compile import CompiledModel
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.verify.kernel._attention import AttentionResult, RopeAttention
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike, resolve_device, resolve_dtype


@dataclass(frozen=True)
class MultiLayerResult:
    """What :meth:`MultiLayerRopeModel.forward` returns.

    ``logits[l]``/``patterns[l]``: layer ``l``'s ``[batch, n, n]`` masked logits and softmax;
    ``residual``: ``[L + 1, batch, n, d_model]``, the stream entering each layer and, last, the final
    stream; ``readout``: ``[batch, n, V]`` = final stream ``@ W_U``.

    Shapes: logits [L, batch, n, n] (a tuple of L tensors); patterns [L, batch, n, n] (a tuple);
        residual [L + 1, batch, n, d_model]; readout [batch, n, V]
    """

    logits: tuple[torch.Tensor, ...]
    patterns: tuple[torch.Tensor, ...]
    residual: torch.Tensor
    readout: torch.Tensor


class MultiLayerRopeModel(nn.Module):
    """The compiled model as a stack of :class:`RopeAttention` layers (module docstring)."""

    def __init__(
        self, model: CompiledModel, device: DeviceLike = "auto", dtype: DtypeLike = torch.float64
    ) -> None:
        super().__init__()
        if not isinstance(model, CompiledModel):
            raise InputError(f"model must be a CompiledModel, got {type(model).__name__}")
        dev, dt = resolve_device(device), resolve_dtype(dtype)
        self.model = model
        self.layers = nn.ModuleList(RopeAttention.from_head(h, dev, dt) for h in model.layers)
        self.register_buffer("W_E", torch.as_tensor(model.W_E).to(device=dev, dtype=dt))
        self.register_buffer("W_U", torch.as_tensor(model.W_U).to(device=dev, dtype=dt))

    @property
    def device(self) -> torch.device:
        return self.W_E.device

    @property
    def dtype(self) -> torch.dtype:
        return self.W_E.dtype

    def embed(self, sequences: Sequence[Sequence[str]]) -> torch.Tensor:
        """``[batch, n, d_model]`` embeddings of equal-length token-name sequences."""
        ids = torch.as_tensor(self.model.ids([list(s) for s in sequences]), device=self.device)
        return self.W_E[ids]

    def block(
        self, layer: int, x: torch.Tensor, positions: torch.Tensor | Sequence[int] | None = None
    ) -> tuple[torch.Tensor, AttentionResult]:
        """Re-run only layer ``layer`` on hidden states ``x``: ``(x + output, attention result)``.

        Shapes: x [batch, n, d_model]; positions [n]; return [batch, n, d_model] (and the result)
        """
        if not 0 <= layer < len(self.layers):
            raise InputError(f"layer={layer} is out of range; the model has layers 0..{len(self.layers) - 1}")
        res = self.layers[layer](x, positions)
        return x.to(device=self.device, dtype=self.dtype) + res.output, res

    def forward(
        self, x: torch.Tensor, positions: torch.Tensor | Sequence[int] | None = None
    ) -> MultiLayerResult:
        """Run every layer on ``x`` (``[batch, n, d_model]``) at ``positions`` (default ``0 .. n-1``).

        Shapes: x [batch, n, d_model]; positions [n]; return.residual [L + 1, batch, n, d_model];
            return.readout [batch, n, V]
        """
        states = [x.to(device=self.device, dtype=self.dtype)]
        logits, patterns = [], []
        for layer in range(len(self.layers)):
            nxt, res = self.block(layer, states[-1], positions)
            logits.append(res.logits)
            patterns.append(res.pattern)
            states.append(nxt)
        final = states[-1]
        return MultiLayerResult(tuple(logits), tuple(patterns), torch.stack(states), final @ self.W_U)

    def run(self, sequences: Sequence[Sequence[str]]) -> MultiLayerResult:
        """:meth:`forward` on token-name sequences."""
        return self(self.embed(sequences))

    def answer(self, sequences: Sequence[Sequence[str]]) -> list[str]:
        """The argmax readout token at the last position of each sequence."""
        with torch.no_grad():
            scores = self.run(sequences).readout[:, -1]
        return self.model.decode(scores.double().cpu().numpy())


def model_module(
    model: CompiledModel, device: DeviceLike = "auto", dtype: DtypeLike = torch.float64
) -> MultiLayerRopeModel:
    """The compiled model as a :class:`MultiLayerRopeModel`."""
    return MultiLayerRopeModel(model, device, dtype)


def answer_model(
    model: CompiledModel,
    sequences: Sequence[Sequence[str]],
    device: DeviceLike = "auto",
    dtype: DtypeLike = torch.float64,
    batch_size: int = 256,
) -> list[str]:
    """The model's answers to equal-length sequences, ``batch_size`` at a time."""
    batch_size = integer(batch_size, "batch_size", low=1)
    module = _cached(model, device, dtype)
    out: list[str] = []
    seqs = list(sequences)
    for start in range(0, len(seqs), batch_size):
        out += module.answer(seqs[start : start + batch_size])
    return out


def _cached(model: CompiledModel, device: DeviceLike, dtype: DtypeLike) -> MultiLayerRopeModel:
    key = (str(resolve_device(device)), str(resolve_dtype(dtype)))
    cache = model.__dict__.setdefault("_module_cache", {})
    if key not in cache:
        cache[key] = MultiLayerRopeModel(model, device, dtype)
    return cache[key]
