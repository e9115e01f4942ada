"""The toolkit's thread policy: how many intra-op torch threads its own workloads use.

The toolkit's workloads (claims, sweeps, property tests) are many calls on small tensors. On a
2-core machine torch's default (one intra-op thread per core) made ``ropeproof check --quick``
about 3x slower than one thread (``benchmarks/bench_threads.py`` measures it), because splitting a
small kernel across threads costs more than the kernel. The policy is therefore **one thread** unless
the caller says otherwise.

How many threads a workload gets, first match wins:

1. an explicit ``threads`` argument (the CLI's ``ropeproof --threads N``);
2. the policy of an enclosing :func:`thread_policy` block (so the CLI's choice reaches the claim
   runner and sweeps it calls);
3. the environment variable ``ROPEPROOF_THREADS``;
4. :data:`DEFAULT_THREADS` (1).

A value is an integer ``N >= 0``: ``N >= 1`` runs with ``N`` intra-op threads, ``0`` leaves torch's
own setting untouched (torch's default is one thread per core).

:func:`thread_policy` sets torch's intra-op threads, and the thread count of the BLAS library numpy
calls (OpenBLAS or MKL, through ``threadpoolctl``; only torch's if that package is missing), for the
duration of a block and restores the caller's settings on exit, so library users who call in with
their own settings keep them. It works as a context manager and as a decorator.

It does not import torch: a command that never uses torch (a float64 sweep) starts without it. When torch
is not imported yet, the block sets ``OMP_NUM_THREADS`` to its count instead (restored on exit), which is
the count torch starts with if the block imports it; torch then keeps that count after the block, since
there was no earlier setting of the caller's to restore.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from contextvars import ContextVar

from ropeproof.machinery._validate import integer

try:  # a declared dependency; without it (a bare environment) only torch's threads are set
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover - exercised only where threadpoolctl is missing
    threadpool_limits = None

THREADS_ENV = "ROPEPROOF_THREADS"
"""The environment variable read when no explicit value or enclosing policy applies."""

DEFAULT_THREADS = 1
"""Intra-op threads for the toolkit's workloads when nothing else is said."""

_ENCLOSING: ContextVar[int | None] = ContextVar("ropeproof_threads", default=None)


def parse_threads(value: int | str, name: str = "threads") -> int:
    """``value`` (an integer, an integral float such as ``2.0``, or its text, e.g. an environment
    variable's) as a thread count ``N >= 0``; raises :class:`InputError` naming ``name`` otherwise."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = int(value.strip())
    elif isinstance(value, float) and value.is_integer():
        value = int(value)
    return integer(value, name, low=0, note="0: leave torch's setting")


def resolve_threads(threads: int | str | None = None) -> int:
    """The thread count a workload uses: ``threads``, else the enclosing policy, else
    ``$ROPEPROOF_THREADS``, else :data:`DEFAULT_THREADS`. ``0`` means "leave torch's setting"."""
    if threads is not None:
        return parse_threads(threads)
    enclosing = _ENCLOSING.get()
    if enclosing is not None:
        return enclosing
    env = os.environ.get(THREADS_ENV, "").strip()
    if env:
        return parse_threads(env, THREADS_ENV)
    return DEFAULT_THREADS


@contextlib.contextmanager
def thread_policy(threads: int | str | None = None) -> Iterator[int]:
    """Run a block with :func:`resolve_threads` ``(threads)`` intra-op torch threads (and as many
    BLAS threads for numpy); yield torch's count.

    The caller's settings are restored on exit (also on an exception). Nested blocks without an explicit
    value inherit the enclosing block's count. ``0`` leaves torch's setting as it is. Usable as
    ``with thread_policy(): ...`` or as a decorator ``@thread_policy()``.
    """
    n = resolve_threads(threads)
    inherited = n == _ENCLOSING.get()  # the enclosing block already set these limits
    torch = sys.modules.get("torch")
    previous = torch.get_num_threads() if torch is not None else None
    token = _ENCLOSING.set(n)
    with contextlib.ExitStack() as stack:
        try:
            if n and not inherited and threadpool_limits is not None:
                stack.enter_context(threadpool_limits(limits=n, user_api="blas"))
            if torch is None:
                if n:
                    stack.enter_context(_environment("OMP_NUM_THREADS", str(n)))
                yield n if n else (os.cpu_count() or 1)
            else:
                if n and n != previous:
                    torch.set_num_threads(n)
                yield torch.get_num_threads()
        finally:
            _ENCLOSING.reset(token)
            if torch is not None and torch.get_num_threads() != previous:
                torch.set_num_threads(previous)


@contextlib.contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """``os.environ[name] = value`` for the block, the previous value (or its absence) restored after."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
