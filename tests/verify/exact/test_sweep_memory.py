"""Sweeps refuse sizes over the memory limit before allocating, and their estimates bound the real peak."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from ropeproof.theory.errors import MemoryBudgetError
from ropeproof.theory.memory_budget import ENV_VAR
from ropeproof.verify.exact.sweep import (
    INDEX_BYTES_PER_LENGTH,
    RETRIEVAL_BYTES_PER_LENGTH_PER_CODE_PAIR,
    ROW_BYTES,
    sweep_index,
    sweep_retrieval,
)


def _peak(fn: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_index_estimate_bounds_the_peak() -> None:
    """After a warm-up (the first call caches ~10 MB of sympy derivations, once per process) the peak
    grows ~310 B per length, under the 1 KiB estimate."""
    sweep_index(0.8, 100, "float64", "cpu")
    n = 5000
    table, peak = _peak(lambda: sweep_index(0.8, n, "float64", "cpu"))
    assert peak <= INDEX_BYTES_PER_LENGTH * n
    rows, peak = _peak(table.rows)
    assert len(rows) == n - 1 and peak <= ROW_BYTES * len(rows)


def test_retrieval_estimate_bounds_the_peak() -> None:
    alphabet, n = 8, 400
    sweep_retrieval(alphabet, 0.001, 50, "float64", "cpu")  # warm-up, as above
    _, peak = _peak(lambda: sweep_retrieval(alphabet, 0.001, n, "float64", "cpu"))
    # estimate: the compiled head (72 tokens, tiny) plus the per-length tables
    assert peak <= RETRIEVAL_BYTES_PER_LENGTH_PER_CODE_PAIR * alphabet**2 * n + 2**20


def test_alphabet_1000_is_refused_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's input: ``sweep retrieval --alphabet 1000`` tried to allocate 7.3 TiB."""
    monkeypatch.setenv(ENV_VAR, "64GiB")
    start = time.perf_counter()
    with pytest.raises(
        MemoryBudgetError, match=r"\|ALPH\| = 1000 .* TiB, more than the memory limit of 64 GiB"
    ):
        sweep_retrieval(1000, 0.001, 5)
    assert time.perf_counter() - start < 5  # refused before the 10^6 tokens were even built


def test_long_index_sweep_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "1GiB")
    with pytest.raises(MemoryBudgetError, match="index sweep to n = 10000000"):
        sweep_index(0.8, 10_000_000)
