"""Du et al.'s token-consistency claim, read as a probability and checked by sampling with intervals.

Du et al., *RoPE Distinguishes Neither Positions Nor Tokens in Long Contexts, Provably* (arXiv
2605.15514) state that as the context grows RoPE attention loses its consistency in token relevance:
a key that outscores another at one position can score lower at another, with a probability of
failure approaching 0.5. Known here only **second-hand** (abstract and summaries), so this is this
project's reading, with its distribution stated:

- a query ``q`` and two keys ``k_a``, ``k_b``, independent standard normal vectors in ``R^32`` (16
  planes, the spectrum ``theta_k = 10000^(-k/16)``, or p-RoPE's with the lowest planes at 0; any
  :class:`~ropeproof.RopeSpec` is accepted);
- the query at position ``n - 1``; two key positions ``j1``, ``j2``, independent and uniform on
  ``0 .. n - 1``; the scores ``s_x(j) = q^T R(j - (n - 1)) k_x`` from ropeproof's ``rope_logits``;
- **failure**: the order of ``k_a`` and ``k_b`` at ``j1`` is not their order at ``j2``.

Each estimate is a count of failures over independent samples with its Clopper-Pearson interval (scipy,
exact coverage); a threshold is decided only when the interval lies on one side of it. Beside it, an
independent reference from the same draws: given ``w = k_a - k_b`` and ``u = j1 - j2``, the two score
differences are jointly normal over ``q`` with correlation ``rho = sum_k |w_k|^2 cos(u theta_k) / |w|^2``
(``|w_k|`` the norm of ``w`` in plane ``k``), so the failure probability is ``arccos(rho) / pi`` exactly;
its mean over the draws estimates the same probability with no sampling of ``q``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import binomtest

from ropeproof import RopeSpec, rope_logits

PLANES, BASE = 16, 10000.0


def spectrum(p: float = 1.0) -> RopeSpec:
    """32 dims, 16 planes at ``10000^(-k/16)``, ``k = 0 .. 15``; p-RoPE sets all but the ``round(16 p)``
    highest frequencies to 0."""
    keep = round(p * PLANES)
    freqs = [BASE ** (-k / PLANES) if k < keep else 0.0 for k in range(PLANES)]
    return RopeSpec(2 * PLANES, 2 * PLANES, freqs=freqs, layout="interleaved")


@dataclass(frozen=True)
class FlipEstimate:
    """The failure probability at one context length: ``failures`` of ``samples``, its Clopper-Pearson
    interval at ``confidence``, and the conditional-exact reference mean (module docstring)."""

    n: int
    samples: int
    failures: int
    low: float
    high: float
    confidence: float
    reference: float

    @property
    def estimate(self) -> float:
        return self.failures / self.samples

    def above(self, threshold: float) -> bool | None:
        """``True``/``False`` when the interval lies above/below ``threshold``, ``None`` when it straddles."""
        return True if self.low > threshold else False if self.high < threshold else None

    def describe(self) -> str:
        return (
            f"n = {self.n}: {self.failures}/{self.samples} = {self.estimate:.4f}, "
            f"{self.confidence:.1%} interval [{self.low:.4f}, {self.high:.4f}], "
            f"reference {self.reference:.4f}"
        )


def score_correlation(spec: RopeSpec, w: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The correlation over ``q`` of ``q^T R(j1) w`` and ``q^T R(j2) w`` for each row of ``w`` and offset
    ``u = j1 - j2``: ``sum_k |w_k|^2 cos(u theta_k) / |w|^2`` over ``spec``'s planes.

    Shapes: w [samples, head_dim]; u [samples]; return [samples]
    """
    w2 = np.stack([w[:, a] ** 2 + w[:, b] ** 2 for a, b in spec.plane_dims], axis=1)  # |w_k|^2 per plane
    return (w2 * np.cos(np.outer(u, spec.plane_freqs))).sum(axis=1) / w2.sum(axis=1)


def flip_probability(
    spec: RopeSpec, n: int, samples: int = 40000, seed: int = 0, confidence: float = 0.999
) -> FlipEstimate:
    """Estimate the failure probability at context length ``n`` for the head dimensions and frequencies
    of ``spec`` (module docstring)."""
    if n < 1 or samples < 1:
        raise ValueError(f"n={n}, samples={samples}; accepted: both >= 1")
    dim = spec.head_dim
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(samples, 1, dim, generator=g, dtype=torch.float64)
    k_a, k_b = torch.randn(2, samples, 1, dim, generator=g, dtype=torch.float64)
    j = torch.randint(0, n, (samples, 2), generator=g)
    keys = torch.cat([k_a.expand(-1, 2, -1), k_b.expand(-1, 2, -1)], dim=1)  # k_a@j1, k_a@j2, k_b@j1, k_b@j2
    s = rope_logits(
        q, keys, spec, q_positions=torch.full((samples, 1), n - 1), k_positions=torch.cat([j, j], 1)
    )
    diff = s[:, 0, :2] - s[:, 0, 2:]  # s_a - s_b at j1 and at j2
    failures = int((torch.sign(diff[:, 0]) != torch.sign(diff[:, 1])).sum())
    ci = binomtest(failures, samples).proportion_ci(confidence_level=confidence, method="exact")

    rho = score_correlation(spec, (k_a - k_b)[:, 0].numpy(), (j[:, 0] - j[:, 1]).numpy())
    reference = float(np.mean(np.arccos(np.clip(rho, -1.0, 1.0)) / math.pi))
    return FlipEstimate(n, samples, failures, float(ci.low), float(ci.high), confidence, reference)
