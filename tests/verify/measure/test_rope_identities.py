"""Judging RoPE's identities: each side of a judged difference against the numpy float64 block-diagonal
reference (so the tolerance covers what the dtype actually does), and a rotation that leaks absolute
position, or a layout mix-up, caught."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._reference import reference_logits
from ropeproof.verify.kernel._resolution import logit_error_bound
from ropeproof.verify.kernel._rope import rope_logits
from ropeproof.verify.measure import _rope_identities as rope_identities
from ropeproof.verify.measure._rope_identities import (
    layout_equivalence_outcome,
    random_qk,
    relative_position_outcome,
)

SPECS = (
    RopeSpec(8, freqs=[1.0, 0.25, 0.0, 2.5]),
    RopeSpec(8, freqs=[1.0, 0.25, 0.0, 2.5], layout="half"),
    RopeSpec(12, rotary_dim=4, base=10000.0),
)
CPU = torch.device("cpu")


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_relative_position_tolerance_covers_each_side_against_the_reference(dtype: torch.dtype) -> None:
    """Each side of a judged difference (the module's logits at shifted positions, in ``dtype``) lies
    within half the outcome's tolerance of the float64 reference, so their difference is within it."""
    out = relative_position_outcome(SPECS, 9, [1, 7, 1000], CPU, dtype)
    assert out.verdict == "holds"
    for index, spec in enumerate(SPECS):
        q, k = random_qk(spec, 9, seed=index)
        mag = float(np.abs(q).sum(1).max() * np.abs(k).sum(1).max())
        tol = 2 * logit_error_bound(dtype, spec.head_dim, mag, float(np.abs(spec.plane_freqs).max()) * 1009)
        for shift in (0, 1, 7, 1000):
            pos = np.arange(9) + shift
            got = rope_logits(
                torch.as_tensor(q, dtype=dtype), torch.as_tensor(k, dtype=dtype), spec, 1.0, pos, pos
            )
            ref = reference_logits(q, k, spec, q_positions=pos, k_positions=pos)
            assert np.abs(got.double().numpy() - ref).max() <= tol / 2
    # the module rotates exactly alike at every shift here: the figure is the largest difference, 0
    assert out.figures["max_abs_diff"] == 0.0 and out.counterexample is None


def test_a_rotation_that_leaks_absolute_position_is_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    def leaky(q, k, spec, scale=1.0, q_positions=None, k_positions=None):
        logits = rope_logits(q, k, spec, q_positions=q_positions, k_positions=k_positions)
        shift = 0 if q_positions is None else int(q_positions[0])
        return logits + 1e-9 * shift

    monkeypatch.setattr(rope_identities, "rope_logits", leaky)
    out = relative_position_outcome(SPECS, 9, [1, 7, 1000], CPU, torch.float64)
    assert out.verdict == "violated" and out.counterexample["shift"] == 1000
    assert out.figures["max_abs_diff"] == pytest.approx(1e-6, rel=1e-6)


def test_layout_equivalence_against_the_reference() -> None:
    out = layout_equivalence_outcome(SPECS, 9, CPU, torch.float32)
    assert out.verdict == "holds"
    worst = 0.0
    for index, spec in enumerate(SPECS):
        q, k = random_qk(spec, 9, seed=100 + index)
        got = rope_logits(
            torch.as_tensor(q, dtype=torch.float32), torch.as_tensor(k, dtype=torch.float32), spec
        )
        worst = max(worst, float(np.abs(got.double().numpy() - reference_logits(q, k, spec)).max()))
    # the figure is the larger of the two comparisons per spec, the reference one among them
    assert worst <= out.figures["max_abs_diff"] <= out.figures["tolerance"]


def test_a_layout_mix_up_is_violated(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rotating half-layout rows as if they were interleaved pairs the wrong coordinates."""

    def mixed_up(q, k, spec, *args, **kw):
        return rope_logits(
            q, k, spec.to_layout("interleaved") if spec.layout == "half" else spec, *args, **kw
        )

    monkeypatch.setattr(rope_identities, "rope_logits", mixed_up)
    out = layout_equivalence_outcome(SPECS, 9, CPU, torch.float64)
    assert out.verdict == "violated" and out.figures["max_abs_diff"] > 1e-3
