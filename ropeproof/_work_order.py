"""How long each claim and figure of ``ropeproof check`` took, kept to order the next run's work.

``check`` shares its claims and figures between two processes (:mod:`ropeproof._check_pool`) that take
the longest task first, so that neither is left with a long task at the end. What "longest" means comes
from measurement: the seconds each task took in the last run of the same kind (quick or full) on this
machine, kept in ``timings.json`` in the cache directory
(:func:`~ropeproof.machinery._result_cache.default_cache_dir` or ``--cache-dir``), else the seconds
measured on the project's machine and shipped with the package (``expected_seconds.json``, written
by ``python3 benchmarks/expected_seconds.py REPORT_DIR ...`` from the ``run.task_seconds`` of reports).
Only the order of the work depends on these numbers, never a result, so they are read and written
whatever ``--no-cache`` says; a file that cannot be read or written is ignored (the run's order is
then the shipped one).
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path

from ropeproof.machinery._atomic_output import atomic_path

HISTORY = "timings.json"
"""The file in the cache directory that keeps the last run's seconds per task."""
SHIPPED = Path(__file__).with_name("expected_seconds.json")
"""Seconds per task measured on the project's machine: ``{"quick": {key: s}, "full": {key: s}}``."""


def _kind(quick: bool) -> str:
    return "quick" if quick else "full"


def _read(path: Path, kind: str) -> dict[str, float]:
    try:
        table = json.loads(path.read_text())[kind]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {
        str(k): float(v)
        for k, v in table.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
    }


def expected_seconds(cache_dir: Path, quick: bool) -> dict[str, float]:
    """Seconds per task key (``"claim:ID"``, ``"figure:NAME"``) for a run of this kind: the shipped
    measurements, overridden by this machine's last run (``cache_dir/timings.json``) where it has one."""
    return {**_read(SHIPPED, _kind(quick)), **_read(Path(cache_dir) / HISTORY, _kind(quick))}


def record_seconds(cache_dir: Path, quick: bool, seconds: Mapping[str, float]) -> None:
    """Keep ``seconds`` (task key to seconds) as this machine's last run of this kind, merged over what
    ``cache_dir/timings.json`` held (tasks this run did not do keep their earlier seconds); written
    atomically, and nothing happens when the directory cannot be written."""
    path = Path(cache_dir) / HISTORY
    kind = _kind(quick)
    try:
        table = json.loads(path.read_text())
        if not isinstance(table, dict):
            table = {}
    except (OSError, ValueError):
        table = {}
    table[kind] = {**_read(path, kind), **{k: round(float(v), 3) for k, v in seconds.items()}}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    except OSError:
        return


TRANSFORMERS_CLAIMS = ("training.*", "multihop.hf-*", "llm-eval.*")
"""The built-in claims (id globs) that run models through ``transformers`` (the shipped trained
checkpoints, the exported ones, local language models)."""


def transformers_tasks(claim_ids: Iterable[str], figure_names: Iterable[str]) -> frozenset[str]:
    """The task keys among ``claim_ids`` and ``figure_names`` whose work imports ``transformers``: the
    claims of :data:`TRANSFORMERS_CLAIMS` and the figures of
    :data:`~ropeproof.paper_figures.NEEDS_HF`. ``check`` keeps them in one process where that keeps the
    balance (:class:`~ropeproof._check_pool.CheckPool`'s ``second_first``), since importing
    ``transformers`` costs each process that does it seconds."""
    from ropeproof.paper_figures import NEEDS_HF

    claims = {f"claim:{i}" for i in claim_ids if any(fnmatch.fnmatchcase(i, g) for g in TRANSFORMERS_CLAIMS)}
    return frozenset(claims | {f"figure:{n}" for n in figure_names if n in NEEDS_HF})
