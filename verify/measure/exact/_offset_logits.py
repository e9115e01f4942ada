"""Logits as a function of the distance back from the query, computed with the module's arithmetic.

For a query vector ``q`` (already projected by ``W_Q``) placed at position 0 and key vectors ``k_g``
at position ``-d``, the logit is ``scale * q . R(-d) k_g``, equal (RoPE is relative) to the logit of
a query at ``n - 1`` against a key at ``n - 1 - d``. The key side is rotated with
:func:`ropeproof.verify.kernel._rope.apply_rope` in the requested dtype, exactly as
:class:`~ropeproof.verify.kernel._attention.RopeAttention`
does, and the distances are processed in chunks so memory stays bounded.
"""

from __future__ import annotations

import numpy as np
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike, resolve_device, resolve_dtype
from ropeproof.verify.kernel._rope import EXACT_POSITION_LIMIT, apply_rope


def _integer_distances(distances: np.ndarray) -> np.ndarray:
    """``distances`` as a 1-D int64 array; :class:`InputError` unless each is a finite integer with
    ``|d| <= 2^53`` (the positions :func:`~ropeproof.verify.kernel._rope.apply_rope` accepts)."""
    d = np.asarray(distances).reshape(-1)
    if d.dtype.kind == "f":
        if d.size and not (np.all(np.isfinite(d)) and np.all(d == np.floor(d))):
            raise InputError("distances must be finite integers")
        if d.size and np.abs(d).max() > EXACT_POSITION_LIMIT:
            raise InputError(f"distances must satisfy |d| <= 2^53, got {np.abs(d).max():.17g}")
    elif d.dtype.kind not in "iu" or d.dtype.kind == "b":
        raise InputError(f"distances must be integers, got dtype {d.dtype}")
    elif d.size and max(abs(int(d.max())), abs(int(d.min()))) > EXACT_POSITION_LIMIT:
        raise InputError("distances must satisfy |d| <= 2^53")
    return d.astype(np.int64)


def distance_logits(
    q: np.ndarray,
    keys: np.ndarray,
    spec: RopeSpec,
    distances: np.ndarray,
    scale: float = 1.0,
    dtype: DtypeLike = torch.float64,
    device: DeviceLike = "cpu",
    chunk: int = 16384,
) -> np.ndarray:
    """``[n_keys, len(distances)]`` logits ``scale * q . R(-d) k`` (float64 numpy output).

    ``q`` is ``[head_dim]``, ``keys`` ``[n_keys, head_dim]``. Arithmetic runs in ``dtype`` on
    ``device``; the result is converted to float64 for the caller. Distances are integers (int64 on
    the way to :func:`~ropeproof.verify.kernel._rope.apply_rope`, whose angles ``d theta`` are reduced
    by :func:`~ropeproof.verify.kernel._angles.offset_angles`). Only the planes where ``q`` is nonzero
    are computed (the others add exact zeros).

    Shapes: q [head_dim]; keys [n_keys, head_dim]; distances [D]; return [n_keys, D]
    """
    dt, dev = resolve_dtype(dtype), resolve_device(device)
    q, keys = np.asarray(q, dtype=np.float64), np.atleast_2d(np.asarray(keys, dtype=np.float64))
    # Planes where q is zero contribute exact zeros; drop them (a construction's head_dim is mostly
    # value dims).
    active = [k for k, (a, b) in enumerate(spec.plane_dims) if q[a] != 0 or q[b] != 0]
    if not active:
        return np.zeros((keys.shape[0], np.asarray(distances).size))
    dims = [d for k in active for d in spec.plane_dims[k]]
    spec = RopeSpec(2 * len(active), freqs=spec.plane_freqs[active].tolist())
    q, keys = q[dims], keys[:, dims]
    qt = torch.as_tensor(q).to(dev, dt)
    kt = torch.as_tensor(keys).to(dev, dt)
    dist = _integer_distances(distances)
    out = np.empty((kt.shape[0], dist.size))
    for start in range(0, dist.size, chunk):
        d = torch.as_tensor(-dist[start : start + chunk], device=dev)  # int64: the angles are formed exactly
        rotated = apply_rope(kt[:, None, :].expand(-1, d.numel(), -1), spec, d)
        out[:, start : start + d.numel()] = (scale * (rotated @ qt)).double().cpu().numpy()
    return out
