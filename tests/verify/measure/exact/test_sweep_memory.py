"""Sweeps refuse sizes over the memory limit before allocating, and their estimates bound the real peak."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from ropeproof.machinery._errors import MemoryBudgetError
from ropeproof.machinery._memory_budget import ENV_VAR
from ropeproof.verify.measure.exact._sweep import (
    ROW_BYTES,
    TABLE_BYTES_PER_LENGTH,
    iter_retrieval_sweep,
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
    """After a warm-up (the first call caches sympy derivations, once per process) the peak grows
    ~185 B per length (one block since issue 46), under the estimate."""
    sweep_index(0.8, 100, "float64", "cpu")
    n = 5000
    table, peak = _peak(lambda: sweep_index(0.8, n, "float64", "cpu"))
    assert 170 * n <= peak <= 200 * n <= TABLE_BYTES_PER_LENGTH * n  # the docstring's ~185 B per length
    rows, peak = _peak(table.rows)
    assert len(rows) == n - 1 and peak <= ROW_BYTES * len(rows)


def test_retrieval_estimate_bounds_the_peak() -> None:
    n = 4000
    for alphabet in (8, 30):
        sweep_retrieval(alphabet, 0.001, 50, "float64", "cpu")  # warm-up, as above
        _, peak = _peak(lambda a=alphabet: sweep_retrieval(a, 0.001, n, "float64", "cpu"))
        assert peak <= TABLE_BYTES_PER_LENGTH * n + 2**20, alphabet


def test_alphabet_1000(monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's input, ``sweep retrieval --alphabet 1000``, tried to allocate 7.3 TiB. The float64
    rows are now computed from the code angles (O(1) codes per length, no compiled head), so it runs;
    measured logits in another dtype need the compiled head (10^6 tokens) and are refused at once."""
    monkeypatch.setenv(ENV_VAR, "64GiB")
    blocks = list(iter_retrieval_sweep(1000, 0.001, 2, 5))
    assert [int(n) for b in blocks for n in b.columns["n"]] == [2, 3, 4, 5]
    start = time.perf_counter()
    refused = r"1001000 tokens\).* TiB, more than the memory limit of 64 GiB"
    with pytest.raises(MemoryBudgetError, match=refused):
        list(iter_retrieval_sweep(1000, 0.001, 2, 5, "float32"))
    assert time.perf_counter() - start < 5  # refused before the 10^6 tokens were even built


def test_long_index_sweep_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "1GiB")
    with pytest.raises(MemoryBudgetError, match="index sweep table to n = 10000000"):
        sweep_index(0.8, 10_000_000)
