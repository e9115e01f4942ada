"""Sweeps as runs on disk (``verify/``'s third layer, above :mod:`~ropeproof.verify.measure`): the sweep
file formats (JSON, JSON Lines, text tables), shards of a long sweep and of a certified sweep, their
merge with every row verified by digest, and the shard runner (local processes or a Dask cluster). The
kernels below compute rows and write nothing; the commands write through this package."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "enclose_gap_records": "ropeproof.verify.sweep_runs._certified_shards",
    "judge_records": "ropeproof.verify.sweep_runs._certified_shards",
    "merge_gap_records": "ropeproof.verify.sweep_runs._certified_shards",
    "offsets_for": "ropeproof.verify.sweep_runs._certified_shards",
    "run_certified_index": "ropeproof.verify.sweep_runs._shard_runner",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.verify.sweep_runs._certified_shards import (
        enclose_gap_records,
        judge_records,
        merge_gap_records,
        offsets_for,
    )
    from ropeproof.verify.sweep_runs._shard_runner import run_certified_index

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
