"""Sampled discrepancy: the same quantities as :mod:`ropeproof.verify.measure.exact._discrepancy`, as
bounds from samples.

For heads or families without the per-position structure the exact engine needs (several layers, a
trained model, inputs that constrain each other), run the head on sampled inputs and report, per
length, over the ``count`` inputs seen:

- ``gap_sup_lower = max gap``  (a lower bound on the true ``gap_sup``),
- ``gap_inf_upper = min gap``  (an upper bound on the true ``gap_inf``),
- ``margin_inf_upper = min margin``  (an upper bound on the true ``margin_inf``),

with ``gap = top1 - top2`` and ``margin = l_target - max_{p != target} l_p`` of the last query row.
:func:`search_margin` drives hypothesis towards small margins (``hypothesis.target``) instead of
sampling uniformly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings, target
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.verify.kernel._compiled import encode, head_module

RowFn = Callable[[Sequence[Sequence[str]]], torch.Tensor]
"""``rows(batch of equal-length token lists) -> [batch, n]`` last-query logits."""


@dataclass(frozen=True)
class SampledExtremes:
    """Bounds from samples at one length (see the module docstring)."""

    n: int
    count: int
    gap_sup_lower: float
    gap_inf_upper: float
    margin_inf_upper: float
    worst_margin_input: tuple[str, ...]


def gaps_and_margins(rows: np.ndarray, targets: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per row: ``top1 - top2`` and ``row[target] - max(row without target)``.

    Shapes: rows [count, n]; return [count] (gaps, margins)
    """
    srt = np.sort(rows, axis=1)
    gaps = srt[:, -1] - srt[:, -2]
    margins = np.array([r[t] - np.delete(r, t).max() for r, t in zip(rows, targets, strict=True)])
    return gaps, margins


def sampled_extremes(rows: RowFn, samples: Sequence[tuple[Sequence[str], int]]) -> SampledExtremes:
    """Bounds from ``samples`` (``(tokens, target_position)`` pairs of one length)."""
    if not samples:
        raise InputError("samples is empty; give at least one (tokens, target_position)")
    lengths = {len(t) for t, _ in samples}
    if len(lengths) != 1 or min(lengths) < 2:
        raise InputError(f"samples must share one length >= 2, got lengths {sorted(lengths)}")
    vals = rows([list(t) for t, _ in samples]).detach().double().cpu().numpy()
    gaps, margins = gaps_and_margins(vals, [p for _, p in samples])
    worst = int(np.argmin(margins))
    return SampledExtremes(
        lengths.pop(),
        len(samples),
        float(gaps.max()),
        float(gaps.min()),
        float(margins.min()),
        tuple(samples[worst][0]),
    )


def head_rows(head) -> RowFn:
    """Last-query rows of a :class:`~ropeproof.constructions._compile.CompiledHead` (float64, CPU)."""
    module = head_module(head, "cpu")

    def rows(batch: Sequence[Sequence[str]]) -> torch.Tensor:
        return module(encode(head, [list(b) for b in batch])).logits[:, -1]

    return rows


def search_margin(
    rows: RowFn, inputs: st.SearchStrategy[tuple[Sequence[str], int]], max_examples: int = 500
) -> tuple[float, tuple[str, ...]]:
    """Smallest margin hypothesis finds over ``inputs`` (guided by ``hypothesis.target``)."""
    best: list = [np.inf, ()]

    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(inputs)
    def probe(sample: tuple[Sequence[str], int]) -> None:
        tokens, t = sample
        _, margins = gaps_and_margins(rows([list(tokens)]).detach().double().cpu().numpy(), [t])
        m = float(margins[0])
        target(-m)
        if m < best[0]:
            best[0], best[1] = m, tuple(tokens)

    probe()
    return best[0], best[1]
