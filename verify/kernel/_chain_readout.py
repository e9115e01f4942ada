"""The last position's readout of a compiled multi-hop model on long inputs, without the ``n x n``
patterns of every layer.

Queries and keys read only content, which no layer writes, so layer ``l``'s pattern ``A_l`` is a function
of the tokens alone, and with value weights ``w_l`` the channel evolves linearly (``docs/theory.md``
section 6):

    C_{l+1} = (I + w_l A_l) C_l,   so   C_L[n-1] = e_{n-1}^T (I + w_{L-1} A_{L-1}) ... (I + w_0 A_0) C_0.

:func:`readout_weights` evaluates the row vector ``v_0^T = e_{n-1}^T prod_l (I + w_l A_l)`` from the last
layer down, ``v_l^T = v_{l+1}^T + w_l v_{l+1}^T A_l``, computing only the rows of ``A_l`` where
``v_{l+1}`` is nonzero (in float64 a sharp softmax underflows to exact zeros, so few rows are needed),
in blocks, with the module's own RoPE arithmetic (the rotation tables and rotations of
:func:`~ropeproof.verify.kernel._rope.rope_logits`, each key rotated once per distinct layer, queries and keys
projected once per distinct token: the same floats as calling it block by block).
Then ``C_L[n-1] = sum_p v_0[p] C_0[p]`` and the readout is ``C_L[n-1] W_U`` (:func:`last_readout`).
This equals :class:`~ropeproof.verify.kernel._multilayer.MultiLayerRopeModel`'s readout up to the order
of float64 summation (tested), in ``O(sum_l rows_l n)`` time and ``O(block n)`` memory.

Entries of ``v_{l+1}`` below ``drop * max|v_{l+1}|`` are dropped before layer ``l`` (default ``1e-30``).
Since ``||C_l[p]|| <= 2^l max_p ||C_0[p]||`` (rows are probability vectors), dropping ``v_i`` moves
``C_L[n-1]`` by at most ``|v_i| 2^l M_0``; :func:`readout_weights` returns the sum of these bounds, and
:func:`long_answers` checks that every answer's readout margin exceeds twice it (with unit codes,
``M_0 = 1`` and unembeddings of norm <= 1), so the answers are those of the full computation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ropeproof.constructions._multihop_compile import CompiledModel
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike, resolve_device, resolve_dtype
from ropeproof.verify.kernel._finite import all_finite, finite_screen, overflow_error, passes
from ropeproof.verify.kernel._rope import (
    RopeSpec,
    RotationTable,
    plane_layout,
    rotate_by_table,
    rotation_table,
)


def _check_structure(model: CompiledModel) -> list[float]:
    """The value weights, after checking that queries/keys ignore the channel and values copy it."""
    chan = model.feature_dims("channel")
    weights = []
    for i, (head, info) in enumerate(zip(model.layers, model.layer_info, strict=True)):
        ov = head.W_V @ head.W_O
        expected = np.zeros_like(ov)
        expected[chan, chan] = info.value_weight * np.eye(chan.stop - chan.start)
        if head.W_Q[chan].any() or head.W_K[chan].any() or not np.array_equal(ov, expected):
            raise InputError(
                f"layer {i} does not have the multi-hop structure (q/k off the channel, OV a copy)"
            )
        weights.append(info.value_weight)
    return weights


def readout_weights(
    model: CompiledModel,
    sequences: Sequence[Sequence[str]],
    device: DeviceLike = "cpu",
    dtype: DtypeLike = torch.float64,
    block: int = 512,
    drop: float = 1e-30,
) -> tuple[torch.Tensor, np.ndarray]:
    """``(v_0, dropped)`` for equal-length sequences: ``v_0`` is ``[batch, n]`` with ``C_L[n-1] = sum_p
    v_0[p] C_0[p]``, ``dropped`` (``[batch]``) bounds how far the dropped entries move ``C_L[n-1]``
    (module docstring)."""
    block = integer(block, "block", low=1)
    drop = real(drop, "drop", low=0.0, high=1.0, high_open=True)
    weights = _check_structure(model)
    ids = torch.as_tensor(model.ids([list(s) for s in sequences]))
    return _weights(model, weights, ids, resolve_device(device), resolve_dtype(dtype), block, drop)


def _weights(
    model: CompiledModel,
    weights: list[float],
    ids: torch.Tensor,
    dev: torch.device,
    dt: torch.dtype,
    block: int,
    drop: float,
) -> tuple[torch.Tensor, np.ndarray]:
    """:func:`readout_weights` of token ids ``[batch, n]``. Queries and keys are projected once per
    distinct token (``W_E[t] W_Q``, ``W_E[t] W_K``) and gathered; the keys of every position are rotated
    once per layer with one rotation table per distinct spectrum, and the queries of the rows needed."""
    batch, n = ids.shape
    uniq, inverse = torch.unique(ids.to(dev), return_inverse=True)
    emb = torch.as_tensor(model.W_E, device=dev, dtype=dt)[uniq]  # [U, d]: the distinct tokens' embeddings
    v = torch.zeros(batch, n, dtype=dt, device=dev)
    v[:, -1] = 1
    positions = torch.arange(n, device=dev)
    tables: dict[tuple[float, ...], RotationTable] = {}
    rotated: dict[tuple[RopeSpec, bytes], torch.Tensor] = {}
    dropped = torch.zeros(batch, dtype=torch.float64)
    buffers = (torch.empty(0, dtype=dt, device=dev), torch.empty(0, dtype=dt, device=dev))
    for layer in range(model.n_layers - 1, -1, -1):
        small = v.abs() < drop * v.abs().amax(dim=1, keepdim=True)
        dropped += (v.abs() * small).sum(1).double().cpu() * 2.0**layer
        v = v.masked_fill(small, 0.0)
        head = model.layers[layer]
        spec = head.spec
        freqs = plane_layout(spec).freqs
        if freqs not in tables:
            tables[freqs] = rotation_table(spec, positions, n, dev, dt, shifted=True)
        table = tables[freqs]
        rows = torch.nonzero(v.any(dim=0)).flatten()
        key_of = (spec, head.W_K.tobytes())  # layers with the same keys and spectrum share their rotation
        if key_of not in rotated:
            w_k = torch.as_tensor(head.W_K, device=dev, dtype=dt)
            rotated[key_of] = rotate_by_table((emb @ w_k)[inverse], spec, table)
        keys = rotated[key_of]
        w_q = torch.as_tensor(head.W_Q, device=dev, dtype=dt)
        update = torch.zeros_like(v)
        for start in range(0, rows.numel(), block):
            r = rows[start : start + block]
            last = int(r.max()) + 1  # causal: no key past the last row of the block
            q = rotate_by_table(emb[inverse[:, r]] @ w_q, spec, RotationTable(table.cos[r], table.sin[r]))
            size = batch * r.numel() * last  # the block's logits and weights live in two reused buffers
            if buffers[0].numel() < size:
                buffers = (torch.empty(size, dtype=dt, device=dev), torch.empty(size, dtype=dt, device=dev))
            logits = buffers[0][:size].view(batch, r.numel(), last)
            torch.matmul(q, keys[:, :last].transpose(-1, -2), out=logits).mul_(head.scale)
            if not passes(finite_screen(logits), lambda: all_finite(logits)):  # noqa: B023
                raise overflow_error(f"layer {layer}'s logits", dt, {"W_E": emb, "W_Q": w_q})
            # causal mask: keys up to the block's first row are before every row of it
            first = int(r.min()) + 1
            logits[..., first:last].masked_fill_(positions[first:last][None, :] > r[:, None], float("-inf"))
            weights_block = torch.softmax(logits, dim=-1, out=buffers[1][:size].view(batch, r.numel(), last))
            update[:, :last] += torch.einsum("br,brj->bj", v[:, r], weights_block)
        v = v + weights[layer] * update
    return v, dropped.numpy()


def last_readout(
    model: CompiledModel,
    sequences: Sequence[Sequence[str]],
    device: DeviceLike = "cpu",
    dtype: DtypeLike = torch.float64,
    block: int = 512,
    drop: float = 1e-30,
    batch_size: int = 64,
) -> tuple[np.ndarray, np.ndarray]:
    """``(readout, dropped)``: the readout at the last position, ``[batch, V]`` (float64), of sequences of
    any lengths (equal lengths are batched, ``batch_size`` at a time), and per sequence the bound on the
    channel moved by dropped entries."""
    batch_size = integer(batch_size, "batch_size", low=1)
    block = integer(block, "block", low=1)
    drop = real(drop, "drop", low=0.0, high=1.0, high_open=True)
    weights = _check_structure(model)
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    w_e = torch.as_tensor(model.W_E, dtype=torch.float64)
    w_u = torch.as_tensor(model.W_U, dtype=torch.float64)
    seqs = [list(s) for s in sequences]
    readout = np.zeros((len(seqs), model.vocab_size))
    bounds = np.zeros(len(seqs))
    by_length: dict[int, list[int]] = {}
    for i, s in enumerate(seqs):
        by_length.setdefault(len(s), []).append(i)
    with torch.inference_mode():
        for members in by_length.values():
            for start in range(0, len(members), batch_size):
                idx = members[start : start + batch_size]
                ids = torch.as_tensor(model.ids([seqs[i] for i in idx]))
                v, dropped = _weights(model, weights, ids, dev, dt, block, drop)
                channel = torch.einsum("bp,bpd->bd", v.double().cpu(), w_e[ids])
                readout[idx] = (channel @ w_u).numpy()
                bounds[idx] = dropped
    return readout, bounds


def long_answers(
    model: CompiledModel,
    sequences: Sequence[Sequence[str]],
    device: DeviceLike = "cpu",
    dtype: DtypeLike = torch.float64,
    block: int = 512,
    drop: float = 1e-30,
) -> list[str]:
    """The argmax readout token at the last position of each sequence (any lengths); raises if a dropped
    entry could have changed an answer (module docstring)."""
    readout, dropped = last_readout(model, sequences, device, dtype, block, drop)
    for b in range(readout.shape[0]):
        top = np.sort(readout[b])[-2:]
        if top[1] - top[0] <= 2 * dropped[b]:
            raise InputError(
                f"sequence {b}: readout margin {top[1] - top[0]:.3g} is within the dropped bound"
            )
    return model.decode(readout)
