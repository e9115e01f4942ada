"""Run a :class:`~ropeproof.constructions._head.CompiledHead` in torch: its module, its embeddings and
its answers.

- :func:`head_module` builds the head's :class:`~ropeproof.verify.kernel._attention.RopeAttention`
  (also available as ``RopeAttention.from_head``);
- :func:`encode` embeds token names as a tensor (``W_E`` rows);
- :func:`answer` reads the head's answer at the last position, by hard or softmax attention;
- :func:`answers` reads it at several readouts at once, from one projection and the last query alone.
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
    return _hard_answers(head, sequences, res.logits[:, -1])


def _hard_answers(
    head: CompiledHead, sequences: Sequence[Sequence[str]], row: torch.Tensor
) -> list[str | None]:
    """The hard-attention answers from the last query's logits ``row`` (``[batch, n]``): ``None`` on a
    tie for the top logit, else the argmax of the attended token's value readout (``None`` if zero)."""
    top2 = torch.topk(row.double(), min(2, row.shape[-1]), dim=-1)
    values, indices = top2.values.tolist(), top2.indices[:, 0].tolist()
    readouts: dict[str, str | None] = {}
    out: list[str | None] = []
    for seq, vals, idx in zip(sequences, values, indices, strict=True):
        if len(vals) > 1 and vals[0] == vals[1]:
            out.append(None)
            continue
        token = seq[idx]
        if token not in readouts:
            value = head.value_readout(token)
            readouts[token] = head.tokens[int(np.argmax(value))] if np.any(value != 0) else None
        out.append(readouts[token])
    return out


def answers(
    head: CompiledHead,
    sequences: Sequence[Sequence[str]],
    readouts: Sequence[float | None],
    device: DeviceLike = "auto",
    dtype: DtypeLike = torch.float64,
) -> list[list[str | None]]:
    """:func:`answer` at every readout of ``readouts``, one list of answers per readout: ``None`` reads
    by ``mode="hard"``, a number by ``mode="softmax"`` at that ``softmax_scale`` (finite, > 0).

    The sequences are embedded and projected once, and only the last query is attended
    (:meth:`~ropeproof.verify.kernel._attention.RopeAttention.last_query`): no ``[n, n]`` logits.
    On that row the arithmetic is :func:`answer`'s: the logits multiplied by ``head.scale *
    softmax_scale`` in one rounding in ``dtype``, the softmax over the row, ``@ v @ W_O``, then
    ``@ W_U`` (``tests/verify/kernel/test_compiled.py`` compares the two on every readout).
    """
    scales = [None if r is None else real(r, "softmax_scale", low=0, low_open=True) for r in readouts]
    module = _cached_module(head, device, dtype)
    row, v = module.last_query(encode(head, sequences, dtype))
    out: list[list[str | None]] = []
    w_u = None
    for scale in scales:
        factor = head.scale * (1.0 if scale is None else scale)
        logits = row * factor if factor != 1.0 else row
        if scale is None:
            out.append(_hard_answers(head, sequences, logits))
            continue
        if w_u is None:
            w_u = torch.as_tensor(head.W_U, dtype=v.dtype, device=v.device)
        output = (torch.softmax(logits, dim=-1).unsqueeze(-2) @ v) @ module.W_O
        out.append(head.decode((output[:, 0] @ w_u).double().cpu().numpy()))  # type: ignore[arg-type]
    return out
