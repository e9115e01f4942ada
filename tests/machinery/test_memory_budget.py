"""The memory limit: parsing, precedence, the refusal message, and that estimates are honest."""

from __future__ import annotations

import tracemalloc

import pytest

from ropeproof.constructions._compile import compile_construction, compiled_head_bytes
from ropeproof.constructions._paper import index_construction, retrieval_construction
from ropeproof.machinery._errors import InputError, MemoryBudgetError, RopeproofError
from ropeproof.machinery._memory_budget import (
    ENV_VAR,
    check_allocation,
    format_bytes,
    memory_limit,
    parse_size,
    physical_memory,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8GiB", 8 * 2**30),
        ("500MB", 500 * 10**6),
        ("1e9", 10**9),
        (" 2 k ", 2048),
        ("123", 123),
        ("1.5TiB", 3 * 2**39),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "8 parsecs", "-1GB", "0", "nan", "inf"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(InputError, match=ENV_VAR):
        parse_size(text)


def test_limit_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "3MiB")
    assert memory_limit() == 3 * 2**20
    check_allocation("x", 3 * 2**20)  # equal to the limit: allowed
    with pytest.raises(MemoryBudgetError, match=r"x needs about 3 MiB, more than the memory limit of 2 MiB"):
        check_allocation("x", 3 * 2**20, limit=2 * 2**20)  # the argument wins over the variable
    monkeypatch.delenv(ENV_VAR)
    total = physical_memory()
    assert memory_limit() == (total // 2 if total else 8 * 2**30)


def test_refusal_names_estimate_limit_and_variable() -> None:
    with pytest.raises(MemoryBudgetError) as exc:
        check_allocation("compiling x", 8.02e12, limit=2**30)
    assert str(exc.value) == (
        f"compiling x needs about 7.29 TiB, more than the memory limit of 1 GiB (set {ENV_VAR}, "
        f"e.g. {ENV_VAR}=64GiB, to change the limit)"
    )
    assert isinstance(exc.value, RopeproofError)


def test_format_bytes() -> None:
    assert [format_bytes(b) for b in (0, 1023, 1024, 1536 * 2**20, 2**40)] == [
        "0 B",
        "1023 B",
        "1 KiB",
        "1.5 GiB",
        "1 TiB",
    ]


def test_compiled_head_bytes_is_exact() -> None:
    """The estimate is the exact size of the six matrices (an independent count: their nbytes)."""
    for c in (index_construction(letters=5, max_int=3), retrieval_construction(3, 0.1, max_int=2)):
        head = compile_construction(c)
        actual = sum(getattr(head, m).nbytes for m in ("W_E", "W_Q", "W_K", "W_V", "W_O", "W_U"))
        assert compiled_head_bytes(head.vocab_size, head.spec.head_dim) == actual


def test_compile_refuses_before_allocating(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "16GiB")
    # 30000 letters + 16 integers -> V = head_dim = 30016, 48 V^2 bytes = 40.3 GiB ([A]'s issue asked for
    # 100000 letters: refused before any token is built, tests/machinery/test_size_limits.py)
    c = index_construction(letters=30_000)
    tracemalloc.start()
    try:
        with pytest.raises(MemoryBudgetError, match=r"30016 tokens.*40.3 GiB.*16 GiB"):
            compile_construction(c)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**30  # nothing near the estimate was allocated
