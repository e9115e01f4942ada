"""Judging RoPE's identities on the module's own logits
(:func:`~ropeproof.verify.kernel._rope.rope_logits`): they depend on positions only through the offset,
and the interleaved and half layouts agree with each other and with the explicit block-diagonal
reference (:func:`~ropeproof.verify.kernel._reference.reference_logits`, numpy float64).

Each difference is judged against twice the dtype's rounding bound on a logit
(:func:`~ropeproof.verify.kernel._resolution.logit_error_bound`: the dot product and rotation in the dtype,
plus the float64 rounding of the rotation angles), twice because each side of a difference carries its own
rounding. The claims in :mod:`ropeproof.claims._rope` state what is judged and call these.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._reference import reference_logits
from ropeproof.verify.kernel._resolution import logit_error_bound
from ropeproof.verify.kernel._rope import rope_logits
from ropeproof.verify.measure._outcome import Outcome


def random_qk(spec: RopeSpec, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(q, k)``: ``n`` standard normal rows of ``spec.head_dim`` each (``numpy`` seed ``seed``)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, spec.head_dim)), rng.standard_normal((n, spec.head_dim))


def _magnitude(q: np.ndarray, k: np.ndarray) -> float:
    """The largest ``||q_i||_1 ||k_j||_1``: a bound on every term sum of a logit."""
    return float(np.abs(q).sum(1).max() * np.abs(k).sum(1).max())


def relative_position_outcome(
    specs: Sequence[RopeSpec], n: int, shifts: Sequence[int], device: torch.device, dtype: torch.dtype
) -> Outcome:
    """For each spec (``q``, ``k`` from :func:`random_qk` with the spec's index as seed), the logits at
    positions ``0 .. n - 1`` against the logits at positions shifted by each of ``shifts``, in ``dtype`` on
    ``device``; ``holds`` when every difference is at most twice :func:`logit_error_bound` with the
    rotation angles up to ``max |theta| (n + max(shifts))``.

    Figures: ``max_abs_diff``, the difference of largest ratio to its tolerance, and ``tolerance``, that
    tolerance (``0.0`` when every difference is exactly 0). The counterexample names the spec and shift
    of that difference."""
    worst, worst_case, bound_at_worst = 0.0, None, 0.0
    ok = True
    for index, spec in enumerate(specs):
        q, k = random_qk(spec, n, seed=index)
        mag = _magnitude(q, k)
        max_angle = float(np.abs(spec.plane_freqs).max()) * (n + max(shifts))
        tol = 2 * logit_error_bound(dtype, spec.head_dim, mag, max_angle)
        tq = torch.as_tensor(q, dtype=dtype, device=device)
        tk = torch.as_tensor(k, dtype=dtype, device=device)
        base = rope_logits(tq, tk, spec).double().cpu().numpy()
        for shift in shifts:
            pos = np.arange(n) + shift
            moved = rope_logits(tq, tk, spec, q_positions=pos, k_positions=pos).double().cpu().numpy()
            diff = float(np.abs(moved - base).max())
            if diff / tol > worst / max(bound_at_worst, 1e-300):
                worst, bound_at_worst = diff, tol
                worst_case = {"spec": repr(spec), "shift": shift}
            ok &= diff <= tol
    return Outcome.judge(
        ok,
        {"max_abs_diff": worst, "tolerance": bound_at_worst},
        key_figure="max_abs_diff",
        counterexample=worst_case,
    )


def layout_equivalence_outcome(
    specs: Sequence[RopeSpec], n: int, device: torch.device, dtype: torch.dtype
) -> Outcome:
    """For each spec (``q``, ``k`` from :func:`random_qk` with seed ``100 +`` the spec's index, ``n`` rows):
    its logits in ``dtype`` on ``device`` against the other layout's logits on the permuted rows
    (:meth:`~ropeproof.theory._rope_spec.RopeSpec.permutation_to`) and against the block-diagonal reference;
    ``holds`` when every difference is at most twice :func:`logit_error_bound` without its angle term. The
    two layouts round the same float64 angles alike, so that term cancels between them; against the
    reference, which rotates by the offset angle instead, it does not, and the tolerance leaves out the
    angles' float64 roundings (``2 u_64 max |p theta|`` of the magnitude, at most ``n`` times the largest
    frequency), which are of the order of the dtype term in float64 and far below it in lower dtypes.

    Figures: ``max_abs_diff``, the largest difference, and ``tolerance``, the tolerance of its spec. The
    counterexample names that spec."""
    worst, worst_case, ok = 0.0, None, True
    tol_at_worst = 0.0
    for index, spec in enumerate(specs):
        other = spec.to_layout("half" if spec.layout == "interleaved" else "interleaved")
        perm = spec.permutation_to(other)
        q, k = random_qk(spec, n, seed=100 + index)
        tol = 2 * logit_error_bound(dtype, spec.head_dim, _magnitude(q, k))
        tq = torch.as_tensor(q, dtype=dtype, device=device)
        tk = torch.as_tensor(k, dtype=dtype, device=device)
        ours = rope_logits(tq, tk, spec).double().cpu().numpy()
        permuted = rope_logits(tq[:, perm], tk[:, perm], other).double().cpu().numpy()
        ref = reference_logits(q, k, spec)
        diff = float(max(np.abs(ours - permuted).max(), np.abs(ours - ref).max()))
        if diff > worst:
            worst, tol_at_worst, worst_case = diff, tol, {"spec": repr(spec)}
        ok &= diff <= tol
    return Outcome.judge(
        ok,
        {"max_abs_diff": worst, "tolerance": tol_at_worst},
        key_figure="max_abs_diff",
        counterexample=worst_case,
    )
