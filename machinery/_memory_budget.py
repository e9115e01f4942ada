"""The memory limit, and the up-front check that refuses a computation that cannot fit.

Functions that allocate in proportion to their arguments (compiling a head, sweeping lengths,
building task inputs) estimate the bytes they will need *before* allocating and call
:func:`check_allocation`, which raises :class:`~ropeproof.machinery._errors.MemoryBudgetError` giving the
estimate and the limit. The limit is, in order of precedence:

1. the ``limit`` argument of :func:`check_allocation` (bytes);
2. the environment variable ``ROPEPROOF_MEMORY_LIMIT``: a byte count with an optional unit,
   e.g. ``"8GiB"``, ``"500MB"``, ``"1e9"``;
3. half of the machine's physical memory (``os.sysconf``), or 8 GiB where that is unknown.

Estimates are deliberately rough (a constant number of bytes per element, measured once for each
caller); their job is to turn a 7 TiB request into a one-line error, not to budget to the byte.
"""

from __future__ import annotations

import math
import os
import re

from ropeproof.machinery._errors import InputError, MemoryBudgetError

ENV_VAR = "ROPEPROOF_MEMORY_LIMIT"
"""Environment variable that sets the memory limit (see the module docstring for the syntax)."""
FALLBACK_LIMIT = 8 * 2**30
"""The limit where the physical memory cannot be read: 8 GiB."""

_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
    "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40,
}  # fmt: skip


def parse_size(text: str) -> int:
    """``"8GiB"`` -> ``8 * 2**30``; ``"500MB"`` -> ``5 * 10**8``; ``"1e9"`` -> ``10**9`` (bytes, > 0).

    Units (case-insensitive): ``B``, ``kB/MB/GB/TB`` (powers of 1000), ``KiB/MiB/GiB/TiB`` and the bare
    ``K/M/G/T`` (powers of 1024).
    """
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
    if match is None or match.group(2).lower() not in _UNITS:
        raise InputError(
            f"{ENV_VAR}={text!r} is not a size; accepted: a positive number of bytes with an optional unit "
            "(B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. '8GiB'"
        )
    value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if not math.isfinite(value) or value < 1:
        raise InputError(f"{ENV_VAR}={text!r} must be at least 1 byte")
    return int(value)


def physical_memory() -> int | None:
    """Total physical memory in bytes, or ``None`` where ``os.sysconf`` cannot tell."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * page_size if pages > 0 and page_size > 0 else None


def memory_limit() -> int:
    """The limit in bytes: ``$ROPEPROOF_MEMORY_LIMIT`` if set, else half the physical memory (8 GiB
    if unknown)."""
    text = os.environ.get(ENV_VAR)
    if text:
        return parse_size(text)
    total = physical_memory()
    return total // 2 if total else FALLBACK_LIMIT


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units with three significant digits: ``8.02e12`` -> ``"7.29 TiB"``."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


def check_allocation(what: str, nbytes: float, limit: int | None = None) -> None:
    """Raise :class:`MemoryBudgetError` if ``nbytes`` (an estimate for ``what``) exceeds the limit.

    ``limit`` (bytes) overrides :func:`memory_limit`. The message gives both numbers and how to
    change the limit.
    """
    budget = memory_limit() if limit is None else int(limit)
    if nbytes > budget:
        raise MemoryBudgetError(
            f"{what} needs about {format_bytes(nbytes)}, more than the memory limit of "
            f"{format_bytes(budget)} (set {ENV_VAR}, e.g. {ENV_VAR}=64GiB, to change the limit)"
        )
