"""A head's logits by distance, plane by plane, with angles ``d * theta_k`` formed exactly.

For a query vector ``q`` (at position ``n - 1``) and a key vector ``k`` ``d`` positions back, plane
``k`` of the spec (dims ``(a, b)``, frequency ``theta_k``) contributes ``q^T rho(-d theta_k) k``, so

    l(d) = scale * sum_k [A_k cos(d theta_k) - B_k sin(d theta_k)],
    A_k = q_a k_a + q_b k_b,   B_k = q_b k_a - q_a k_b

(:func:`ropeproof.theory._rope_symbolic.plane_logit_coefficients`; pass-through planes have
``theta_k = 0``). :func:`distance_logits_exact` evaluates this in float64 with ``d * theta_k`` reduced
mod ``2 pi`` exactly (:func:`plane_angles`, the same reduction the direct sweeps use) and returns a
bound on the error of every value against the exact real logit of the given float64 vectors:

- angles: ``|r - (d theta mod 2 pi)| <= e_r``
  (:func:`~ropeproof.verify.kernel._angles.offset_angles_with_error`), so ``cos``/``sin`` err
  by at most ``e_r + 4 u`` (``SIN_ULPS = 2`` ulps, checked against mpmath in
  ``tests/verify/measure/exact/test_angles.py``);
- ``A_k``, ``B_k``: two products and a sum, at most ``2 u P_k`` each, with
  ``P_k = (|q_a| + |q_b|)(|k_a| + |k_b|)`` (so ``|A_k|, |B_k| <= P_k``);
- the two products per plane and the sum of ``2K`` terms: ``u`` per product and ``2K u`` of the sum of
  magnitudes; the scale one more ``u``.

Altogether ``|l - l_exact| <= |scale| (sum_k P_k (2 e_r,k + 16 u) + 2K u sum_k 2 P_k)``, inflated by a
few ulps of itself. Distances must satisfy ``d < 2^26``
(:data:`~ropeproof.verify.measure.exact._angles.MAX_MULTIPLE`).
"""

from __future__ import annotations

import functools

import numpy as np

from ropeproof.machinery._errors import InputError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._angles import offset_angles_with_error
from ropeproof.verify.measure.exact._angles import UNIT_ROUNDOFF
from ropeproof.verify.measure.exact._index_sweep import SIN_ULPS


def plane_angles(distances: np.ndarray, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """``(r, err)``: ``d * theta`` reduced mod ``2 pi`` for integer distances ``d`` and a bound on the
    error of each ``r``: the toolkit's one angle reduction,
    :func:`~ropeproof.verify.kernel._angles.offset_angles_with_error`, on the distances as int64.

    Shapes: distances [D]; return.0 [D]; return.1 [D]
    """
    d = np.asarray(distances)
    exact = np.asarray(d, dtype=np.int64)
    if not np.array_equal(exact, d):
        raise InputError("distances must be integers (int64 range)")
    return offset_angles_with_error(exact, float(theta))


KEPT_DISTANCES = 4096
"""Distance arrays up to this size have their angle terms kept (:func:`_kept_terms`, a least-recently-used
cache of bounded size, so bounded memory); longer ones are computed each time."""


def _plane_terms(distances: np.ndarray, theta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cos r, sin r, err)`` of :func:`plane_angles`."""
    r, e_r = plane_angles(distances, theta)
    return np.cos(r), np.sin(r), np.asarray(e_r)


@functools.lru_cache(maxsize=256)
def _kept_terms(distances: bytes, theta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_plane_terms` of the float64 distances packed in ``distances``, kept for the process as
    read-only arrays: a sweep asks for the same distances at the same frequencies for every query and
    key, and a trained model's spectrum is every layer's."""
    out = _plane_terms(np.frombuffer(distances, dtype=np.float64), theta)
    for a in out:
        a.setflags(write=False)
    return out


def plane_coefficients(q: np.ndarray, keys: np.ndarray, spec: RopeSpec) -> tuple[np.ndarray, ...]:
    """``(A, B, P)``, each ``[n_keys, n_planes]``: the coefficients of the module docstring in float64
    and the magnitudes ``P_k`` that bound them.

    Shapes: q [head_dim]; keys [n_keys, head_dim]; return [n_keys, n_planes] (each)
    """
    dims = np.asarray(spec.plane_dims)
    qa, qb = q[dims[:, 0]], q[dims[:, 1]]
    ka, kb = keys[:, dims[:, 0]], keys[:, dims[:, 1]]
    a = qa * ka + qb * kb
    b = qb * ka - qa * kb
    p = (np.abs(qa) + np.abs(qb)) * (np.abs(ka) + np.abs(kb))
    return a, b, p


def distance_logits_exact(
    q: np.ndarray, keys: np.ndarray, spec: RopeSpec, distances: np.ndarray, scale: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """``(logits, errors)``, each ``[n_keys, len(distances)]``: ``scale * q . rho(-d) k`` in float64 with
    exactly reduced angles, and a bound on each value's error against the exact logit of these
    float64 vectors (module docstring). Planes where ``q`` is zero add exact zeros and are skipped.

    Shapes: q [head_dim]; keys [n_keys, head_dim]; distances [D]; return [n_keys, D] (each)
    """
    q = np.asarray(q, dtype=np.float64)
    keys = np.atleast_2d(np.asarray(keys, dtype=np.float64))
    dist = np.asarray(distances, dtype=np.float64)
    a, b, p = plane_coefficients(q, keys, spec)
    freqs = spec.plane_freqs
    active = [k for k, (i, j) in enumerate(spec.plane_dims) if q[i] != 0 or q[j] != 0]
    out = np.zeros((keys.shape[0], dist.size))
    err = np.zeros(out.shape)
    u = UNIT_ROUNDOFF
    key = dist.tobytes() if dist.size <= KEPT_DISTANCES else None
    for k in active:
        theta = float(freqs[k])
        c, s, e_r = _plane_terms(dist, theta) if key is None else _kept_terms(key, theta)
        out += a[:, k : k + 1] * c[None, :] - b[:, k : k + 1] * s[None, :]
        err += p[:, k : k + 1] * (2 * (e_r + 2 * SIN_ULPS * u) + 8 * u)[None, :]
    total_p = p[:, active].sum(1, keepdims=True) if active else np.zeros((keys.shape[0], 1))
    err += 4 * len(active) * u * total_p  # the sum of 2K terms, each at most P_k in magnitude
    scale = float(scale)
    values = scale * out
    bound = abs(scale) * err + u * np.abs(values)
    return values, bound * (1 + 16 * u) + 5e-324
