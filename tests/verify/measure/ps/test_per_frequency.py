"""Per-frequency decomposition (one 2-D head per RoPE plane) and the PS figures."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore
from ropeproof.paper_figures._ps_plane import (
    PER_FREQUENCY_QUICK,
    per_frequency_figure,
    per_frequency_rows,
    ps_plane_figure,
)
from ropeproof.paper_figures._style import save_figure
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._random_heads import random_head as _head
from ropeproof.verify.measure.ps._per_frequency import per_frequency_scores, split_planes
from ropeproof.verify.measure.ps._scores import ps_scores
from ropeproof.verify.testing._strategies import rope_specs


@settings(deadline=None)
@given(spec=rope_specs(max_head_dim=12), n=st.integers(1, 9), seed=st.integers(0, 2**31 - 1))
def test_plane_logits_sum_to_head_logits(spec: RopeSpec, n: int, seed: int) -> None:
    head = _head(spec, 5, seed, scale=0.3)
    x = torch.randn(2, n, 5, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    planes = split_planes(head)
    assert len(planes) == spec.head_dim // 2
    full = head(x).logits
    total = sum(p.head(x).logits for p in planes)
    finite = torch.isfinite(full)
    assert torch.equal(finite, torch.isfinite(total))
    assert torch.allclose(total[finite], full[finite], rtol=1e-12, atol=1e-12)
    for p, freq in zip(planes, spec.plane_freqs, strict=True):
        assert p.freq == freq and p.head.spec.head_dim == 2 and p.head.scale == head.scale


@settings(deadline=None, max_examples=30)
@given(
    spec=rope_specs(max_head_dim=12),
    n=st.integers(5, 9),
    block=st.integers(1, 2),
    gain=st.sampled_from([1.0, 2.5]),
    seed=st.integers(0, 2**31 - 1),
)
def test_all_planes_at_once_equal_each_plane_alone(
    spec: RopeSpec, n: int, block: int, gain: float, seed: int
) -> None:
    """per_frequency_scores scores every plane in one stream (PlaneTableSource); each plane's scores and
    last logit row equal those of its own plane head (split_planes) scored alone by ps_scores."""
    from ropeproof.verify.measure.ps._swap_sources import PlaneTableSource

    head = _head(spec, 5, seed, scale=0.3)
    x = torch.randn(3, n, 5, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    prof = per_frequency_scores(head, x, tau=0.01, block_size=block, gain=gain)
    rows = PlaneTableSource(head, x, gain).last_logits()
    for k, plane in enumerate(split_planes(head, gain)):
        alone = ps_scores(plane.head, x, tau=0.01, block_size=block)
        assert torch.allclose(prof.s_pos[k], alone.s_pos, rtol=0, atol=1e-12)
        assert torch.allclose(prof.s_sym[k], alone.s_sym, rtol=0, atol=1e-12)
        alone_row = plane.head(x).logits[:, -1, :]
        assert torch.allclose(rows[:, k], alone_row, rtol=1e-13, atol=1e-13)
        assert torch.allclose(prof.row_spread[k], alone_row.std(dim=-1), rtol=1e-12, atol=1e-13)


def test_half_layout_planes_by_hand() -> None:
    """head_dim 8, half layout: plane k is dims (k, k + 4); rebuilt here without split_planes."""
    spec = RopeSpec(8, freqs=[1.0, 0.3, 0.05, 0.0], layout="half")
    head = _head(spec, 6, seed=2, scale=0.5)
    x = torch.randn(4, 9, 6, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    prof = per_frequency_scores(head, x, tau=0.01)
    for k, theta in enumerate([1.0, 0.3, 0.05, 0.0]):
        idx = [k, k + 4]
        manual = RopeAttention(
            head.W_Q[:, idx], head.W_K[:, idx], head.W_V[:, idx], head.W_O[idx, :],
            RopeSpec(2, freqs=[theta]), scale=0.5, device="cpu",
        )  # fmt: skip
        sc = ps_scores(manual, x, tau=0.01)
        assert prof.dims[k] == (k, k + 4)
        assert float(prof.S_pos[k]) == pytest.approx(sc.S_pos, abs=1e-14)
        assert float(prof.S_sym[k]) == pytest.approx(sc.S_sym, abs=1e-14)
        assert torch.allclose(prof.s_pos[k], sc.s_pos, rtol=0, atol=1e-14)
    # the theta = 0 plane is NoPE: exactly symbolic
    assert float(prof.S_sym[3]) == pytest.approx(1.0, abs=1e-12)
    assert all(math.isnan(v) for v in prof.rel_pos.tolist())


def test_relative_deviations() -> None:
    spec = RopeSpec(8, freqs=[2.0, 0.5, 0.01, 0.0])
    head = _head(spec, 6, seed=4)
    x = torch.randn(5, 10, 6, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    prof = per_frequency_scores(head, x, gain=2.0, n_samples=300)
    assert prof.rel_sym[3] == 0.0  # NoPE plane
    assert float(prof.rel_sym[2]) < 1e-2 < float(prof.rel_sym[0])  # slow plane nearly symbolic
    assert prof.gain == 2.0 and prof.n_samples == 300
    assert set(prof.to_dict()) >= {"freqs", "S_pos", "S_sym", "rel_pos", "rel_sym", "gain"}
    # gain rescales the plane's logits
    planes = split_planes(head, gain=2.0)
    assert planes[0].head.scale == 2.0 * head.scale


def test_errors() -> None:
    head = _head(RopeSpec(4), 3, seed=0)
    with pytest.raises(InputError, match="RopeAttention"):
        split_planes(lambda x: x)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="gain"):
        split_planes(head, gain=float("inf"))
    with pytest.raises(InputError, match="n_samples"):
        per_frequency_scores(head, torch.zeros(1, 5, 3), n_samples=-1)
    with pytest.raises(InputError, match="tau"):
        per_frequency_scores(head, torch.zeros(1, 5, 3), tau=0)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def test_figures(tmp_path: Path) -> None:
    paths = save_figure(ps_plane_figure(), tmp_path / "a")
    names = sorted(p.name for p in paths)
    assert names == ["ps_plane.caption.txt", "ps_plane.csv", "ps_plane.pdf", "ps_plane.png"]
    rows = _rows(tmp_path / "a" / "ps_plane.csv")
    by_label = {r["label"]: r for r in rows}
    assert float(by_label["T_Index(theta=0.866)"]["S_pos"]) == pytest.approx(1.0, abs=1e-9)
    assert float(by_label["T_Retrieval(theta=0)"]["S_sym"]) == pytest.approx(1.0, abs=1e-9)
    assert sum(r["kind"] == "random" for r in rows) >= 20
    assert "Positional-symbolic plane" in (tmp_path / "a" / "ps_plane.caption.txt").read_text()
    store = ResultStore()  # the rows computed once, the figure drawn and saved twice from them
    first = save_figure(per_frequency_figure(store=store), tmp_path / "b")
    second = save_figure(per_frequency_figure(store=store), tmp_path / "c")
    for p, q in zip(first, second, strict=True):
        assert p.read_bytes() == q.read_bytes(), p.name  # deterministic drawing, PDF and PNG included
    assert per_frequency_rows(**PER_FREQUENCY_QUICK) == per_frequency_rows(**PER_FREQUENCY_QUICK)  # seeded
    rows = _rows(tmp_path / "b" / "per_frequency.csv")
    assert len(rows) == 64 and float(rows[0]["theta"]) == 1.0
