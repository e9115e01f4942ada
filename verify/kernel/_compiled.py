"""Run a :class:`~ropeproof.constructions._head.CompiledHead` in torch: its module, its embeddings and
its answers.

- :func:`head_module` builds the head's :class:`~ropeproof.verify.kernel._attention.RopeAttention`
  (also available as ``RopeAttention.from_head``);
- :func:`encode` embeds token names as a tensor (``W_E`` rows);
- :func:`answer` reads the head's answer at the last position, by hard or softmax attention.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import real
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike, resolve_device, resolve_dtype

ANSWER_MODES: tuple[str, ...] = ("hard", "softmax")


def head_module(
    head: CompiledHead, device: DeviceLike = "auto", dtype: DtypeLike = torch.float64
) -> RopeAttention:
    """The head as a :class:`RopeAttention` (its ``W_Q``, ``W_K``, ``W_V``, ``W_O``, spec and scale)."""
    return RopeAttention.from_head(head, device, dtype)


def encode(
    head: CompiledHead, tokens: Sequence[str] | Sequence[Sequence[str]], dtype: DtypeLike = torch.float64
) -> torch.Tensor:
    """Embed names: ``[n, d_model]`` for one sequence, ``[batch, n, d_model]`` for a list of them."""
    return torch.as_tensor(head.embed(tokens)).to(resolve_dtype(dtype))


def _cached_module(head: CompiledHead, device: DeviceLike, dtype: DtypeLike) -> RopeAttention:
    key = (str(resolve_device(device)), str(resolve_dtype(dtype)))
    cache = head.__dict__.setdefault("_module_cache", {})
    if key not in cache:
        cache[key] = head_module(head, device, dtype)
    return cache[key]


def answer(
    head: CompiledHead,
    sequences: Sequence[Sequence[str]],
    mode: str = "hard",
    softmax_scale: float = 1.0,
    device: DeviceLike = "auto",
    dtype: DtypeLike = torch.float64,
) -> list[str | None]:
    """The head's answer at the last position of each (equal-length) sequence.

    ``mode="hard"``: attend only to the argmax logit (ties -> ``None``), write its value, and read
    the argmax output token of ``W_E[key] W_V W_O W_U`` (``None`` if that is zero, e.g. an integer
    under T_Index). ``mode="softmax"``: run the module with logits multiplied by ``softmax_scale``
    (finite, > 0) and read the argmax of ``output[-1] @ W_U``.
    """
    if mode not in ANSWER_MODES:
        raise InputError(f"mode={mode!r} is unknown; accepted: {list(ANSWER_MODES)}")
    scale = real(softmax_scale, "softmax_scale", low=0, low_open=True) if mode == "softmax" else 1.0
    module = _cached_module(head, device, dtype)
    module.scale = head.scale * scale
    res = module(encode(head, sequences, dtype))
    if mode == "softmax":
        w_u = torch.as_tensor(head.W_U, dtype=res.output.dtype, device=res.output.device)
        return head.decode((res.output[:, -1] @ w_u).double().cpu().numpy())  # type: ignore[return-value]
    row = res.logits[:, -1].double()
    top2 = torch.topk(row, min(2, row.shape[-1]), dim=-1)
    out: list[str | None] = []
    for b in range(row.shape[0]):
        vals, idx = top2.values[b], top2.indices[b]
        if vals.numel() > 1 and vals[0] == vals[1]:
            out.append(None)
            continue
        value = head.value_readout(sequences[b][int(idx[0])])
        out.append(head.tokens[int(np.argmax(value))] if np.any(value != 0) else None)
    return out
