"""Logits as a function of the distance back from the query, computed with the module's arithmetic.

For a query vector ``q`` (already projected by ``W_Q``) placed at position 0 and key vectors ``k_g``
at position ``-d``, the logit is ``scale * q . R(-d) k_g``, equal (RoPE is relative) to the logit of
a query at ``n - 1`` against a key at ``n - 1 - d``. The key side is rotated with
:func:`ropeproof.verify.kernel.rope.apply_rope` in the requested dtype, exactly as
:class:`~ropeproof.verify.kernel.attention.RopeAttention`
does, and the distances are processed in chunks so memory stays bounded.
"""

from __future__ import annotations

import numpy as np
import torch

from ropeproof.theory.rope_spec import RopeSpec
from ropeproof.verify.kernel.devices import DeviceLike, DtypeLike, resolve_device, resolve_dtype
from ropeproof.verify.kernel.rope import apply_rope


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
    ``device``; the result is converted to float64 for the caller. Only the planes where ``q`` is
    nonzero are computed (the others add exact zeros).

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
    dist = np.asarray(distances, dtype=np.float64)
    out = np.empty((kt.shape[0], dist.size))
    for start in range(0, dist.size, chunk):
        d = torch.as_tensor(-dist[start : start + chunk], device=dev)
        rotated = apply_rope(kt[:, None, :].expand(-1, d.numel(), -1), spec, d)
        out[:, start : start + d.numel()] = (scale * (rotated @ qt)).double().cpu().numpy()
    return out
