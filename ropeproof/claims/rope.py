"""The RoPE identities: relative position and layout equivalence."""

from __future__ import annotations

import numpy as np
import torch

from ropeproof.claims.registry import CheckContext, ClaimSet, Outcome
from ropeproof.theory.rope_spec import RopeSpec
from ropeproof.verify.kernel.reference import reference_logits
from ropeproof.verify.kernel.resolution import logit_error_bound
from ropeproof.verify.kernel.rope import rope_logits

CLAIMS = ClaimSet("rope", section="RoPE identities")
"""The rope claims, in report order."""


_IDENTITY_SPECS = (
    RopeSpec(8, freqs=[1.0, 0.25, 0.0, 2.5]),
    RopeSpec(8, freqs=[1.0, 0.25, 0.0, 2.5], layout="half"),
    RopeSpec(12, rotary_dim=4, base=10000.0),
    RopeSpec(12, rotary_dim=4, base=10000.0, layout="half"),
    RopeSpec(64),
)


def _random_qk(spec: RopeSpec, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, spec.head_dim)), rng.standard_normal((n, spec.head_dim))


@CLAIMS.claim(
    id="rope.relative-position",
    statement="RoPE logits depend on positions only through the offset j - i: shifting both positions by "
    "{shifts} changes no logit beyond the dtype's rounding bound, for {specs} specs (both layouts, "
    "partial rotary) and n = {n}.",
    reference="docs/theory.md section 1",
    params={"specs": len(_IDENTITY_SPECS), "n": 9, "shifts": [1, 7, 1000]},
    meaning="The module's rotation is relative, as the convention requires.",
)
def _relative_position(ctx: CheckContext) -> Outcome:
    worst, worst_case, bound_at_worst = 0.0, None, 0.0
    ok = True
    for index, spec in enumerate(_IDENTITY_SPECS):
        q, k = _random_qk(spec, 9, seed=index)
        mag = float(np.abs(q).sum(1).max() * np.abs(k).sum(1).max())
        max_angle = float(np.abs(spec.plane_freqs).max()) * (9 + 1000)
        tol = 2 * logit_error_bound(ctx.dtype, spec.head_dim, mag, max_angle)
        tq = torch.as_tensor(q, dtype=ctx.dtype, device=ctx.device)
        tk = torch.as_tensor(k, dtype=ctx.dtype, device=ctx.device)
        base = rope_logits(tq, tk, spec).double().cpu().numpy()
        for shift in (1, 7, 1000):
            pos = np.arange(9) + shift
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


@CLAIMS.claim(
    id="rope.layout-equivalence",
    statement=(
        "The interleaved and half layouts give equal logits once q/k rows are permuted, and both "
        "equal the explicit block-diagonal reference, for {specs} specs and n = {n}."
    ),
    reference="docs/theory.md section 1",
    params={"specs": len(_IDENTITY_SPECS), "n": 9},
    meaning="Both layouts implement the same rotation; a layout mix-up would show here.",
)
def _layout_equivalence(ctx: CheckContext) -> Outcome:
    worst, worst_case, ok = 0.0, None, True
    tol_at_worst = 0.0
    for index, spec in enumerate(_IDENTITY_SPECS):
        other = spec.to_layout("half" if spec.layout == "interleaved" else "interleaved")
        perm = spec.permutation_to(other)
        q, k = _random_qk(spec, 9, seed=100 + index)
        mag = float(np.abs(q).sum(1).max() * np.abs(k).sum(1).max())
        tol = 2 * logit_error_bound(ctx.dtype, spec.head_dim, mag)
        tq = torch.as_tensor(q, dtype=ctx.dtype, device=ctx.device)
        tk = torch.as_tensor(k, dtype=ctx.dtype, device=ctx.device)
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
