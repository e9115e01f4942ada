"""The one table of limits on the size of work and of files read, each checked before the work.

Memory is checked against the machine (:mod:`ropeproof.machinery._memory_budget`) and running time against
a budget (:mod:`ropeproof.machinery._time_budget`); what neither estimate covers, or what would run for hours
before it allocated anything (sympy building a construction's tokens one by one, an integer power in a
stated bound, a file that never ends), has a fixed limit here. :func:`check_size` refuses a request past
one with an :class:`~ropeproof.machinery._errors.InputError` that gives the estimate and the limit, before
any of the work is done. Each entry of :data:`LIMITS` is ``(limit, unit, what it bounds)``.
"""

from __future__ import annotations

from ropeproof.machinery._errors import InputError

LIMITS: dict[str, tuple[int, str, str]] = {
    "construction tokens": (
        32_768,
        "tokens",
        "the vocabulary of one of the paper's constructions (index, retrieval, reflexive): each token's "
        "vectors are built in sympy, milliseconds each, and a compiled head holds V x V matrices",
    ),
    "construction family entries": (
        1 << 26,
        "entries",
        "the input family index and reflexive constructions carry: one case per integer, each listing "
        "every token (max_int x tokens)",
    ),
    "bound bits": (
        1 << 22,
        "bits",
        "any node of a stated bound, exactly or as a magnitude (float64 itself ends at 2^1024)",
    ),
    "ps-score work": (
        1 << 40,
        "entries",
        "ps-score's swapped attention rows: inputs x swaps per input x length",
    ),
    "export-model layers": (1_024, "layers", "the layers of one exported multi-hop checkpoint"),
    "dask worker bytes": (
        1 << 30,
        "bytes",
        "the memory set aside per local Dask worker process: --workers is at most the cores and at most "
        "the memory limit over this",
    ),
    "JSON file bytes": (
        256 << 20,
        "bytes",
        "a JSON file a user names: a family (--family, Family.load), a training record",
    ),
    "gap-records file bytes": (4 << 30, "bytes", "one gap-records shard read by sweep merge"),
    "claims file bytes": (16 << 20, "bytes", "a claims file (--claims FILE)"),
}
"""Every fixed limit: name -> ``(limit, unit, what it bounds)``."""


def limit(name: str) -> int:
    """The limit called ``name`` in :data:`LIMITS`."""
    return LIMITS[name][0]


def check_size(what: str, estimate: float, name: str) -> None:
    """Refuse ``what`` (an :class:`InputError`) when ``estimate`` exceeds the limit ``name``, giving both."""
    bound, unit, _ = LIMITS[name]
    if estimate > bound:
        shown = f"{estimate:.3g}" if estimate >= 1e6 else f"{int(estimate)}"
        raise InputError(
            f"{what} needs about {shown} {unit}; the limit is {bound} {unit} ({name!r} in "
            "ropeproof.machinery._size_limits.LIMITS)"
        )


def limits_table() -> str:
    """:data:`LIMITS` as a Markdown table (the documentation's copy is compared with it)."""
    rows = ["| limit | value | what it bounds |", "|---|---|---|"]
    rows += [f"| {name} | {value} {unit} | {why} |" for name, (value, unit, why) in LIMITS.items()]
    return "\n".join(rows)


__all__ = ["LIMITS", "check_size", "limit", "limits_table"]
