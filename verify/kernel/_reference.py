"""Straightforward numpy reference for RoPE logits, independent of :mod:`ropeproof.verify.kernel._rope`'s
kernel.

It builds the explicit ``head_dim x head_dim`` block-diagonal matrix ``R(u)`` and evaluates
``scale * q_i^T R(j - i) k_j`` one pair at a time: slow, obvious, and used only to check the fast
path.
"""

from __future__ import annotations

import numpy as np

from ropeproof.theory._rope_spec import RopeSpec


def rotation_matrix(spec: RopeSpec, offset: float) -> np.ndarray:
    """``R(offset)``: block ``rho(offset * theta_k)`` on the dims ``spec.plane_dims[k]``."""
    r = np.zeros((spec.head_dim, spec.head_dim))
    for (a, b), theta in zip(spec.plane_dims, spec.plane_freqs, strict=True):
        c, s = np.cos(offset * theta), np.sin(offset * theta)
        r[a, a], r[a, b], r[b, a], r[b, b] = c, -s, s, c
    return r


def reference_logits(
    q: np.ndarray,
    k: np.ndarray,
    spec: RopeSpec,
    scale: float = 1.0,
    q_positions: np.ndarray | None = None,
    k_positions: np.ndarray | None = None,
) -> np.ndarray:
    """``[n_q, n_k]`` logits ``scale * q_i^T R(p_j - p_i) k_j`` for 2-D ``q`` and ``k``.

    Shapes: q [n_q, head_dim]; k [n_k, head_dim]; q_positions [n_q]; k_positions [n_k]; return [n_q, n_k]
    """
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    qp = np.arange(len(q)) if q_positions is None else np.asarray(q_positions, dtype=np.float64)
    kp = np.arange(len(k)) if k_positions is None else np.asarray(k_positions, dtype=np.float64)
    out = np.empty((len(q), len(k)))
    for a in range(len(q)):
        for b in range(len(k)):
            out[a, b] = scale * q[a] @ rotation_matrix(spec, kp[b] - qp[a]) @ k[b]
    return out
