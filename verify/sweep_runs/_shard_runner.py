"""Every shard of a sweep or of the certified Index check, in one process or as Dask tasks, merged exactly.

:func:`run_sweep` writes a sweep's JSON Lines file and :func:`run_certified_index` returns the certified
Index verdict. With ``executor=None`` they compute in this process, as ``ropeproof sweep`` always did.
With ``executor="dask"`` (a local cluster of ``workers`` processes, or the cluster at ``scheduler``) or a
``distributed.Client``, the work is cut into ``shards`` contiguous shards
(:func:`~ropeproof.verify.sweep_runs._sweep_files.shard_lengths`,
:func:`~ropeproof.verify.sweep_runs._certified_shards.offsets_for`), each one a Dask task
(:func:`sweep_shard_text`, :func:`records_shard_text`) retried by Dask itself (``retries``; a task whose
worker dies is rescheduled by the scheduler). Each result comes back to this process and is stored in a
shard directory keyed by the computation's parameters (:func:`shard_directory`) as soon as it arrives, so
a shard that fails for good is reported with its range while the finished ones stay on disk, and running
the same computation again computes only what is missing. The shards are then merged here by the
verified merges (:func:`~ropeproof.verify.sweep_runs._sweep_files.merge_jsonl`,
:func:`~ropeproof.verify.sweep_runs._certified_shards.merge_gap_records`), so the output is byte for byte
the
one-process output; the shard directory is removed after a successful merge.

Row sweeps recompute their prefix from ``n = 2`` in every shard (a row depends on every shorter one),
so their shards overlap in that pass and the speed-up is in writing the rows; the certified check's
shards are independent ranges of offsets.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import math
import os
import shutil
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, Any

from ropeproof.machinery._atomic_output import write_text_atomic
from ropeproof.machinery._errors import InputError, RopeproofError
from ropeproof.machinery._validate import integer, real
from ropeproof.verify.kernel._threads import thread_policy
from ropeproof.verify.measure.exact._sweep import iter_index_sweep, iter_retrieval_sweep
from ropeproof.verify.sweep_runs._certified_shards import (
    CertifiedRecordCheck,
    GapRecords,
    enclose_gap_records,
    judge_records,
    merge_gap_records,
    offsets_for,
)
from ropeproof.verify.sweep_runs._sweep_files import (
    FORMAT_VERSION,
    SweepHeader,
    SweepSummary,
    merge_jsonl,
    read_sweep_file,
    selected_rows,
    shard_lengths,
    write_rows,
)

EXECUTORS = ("local", "dask")
"""``--executor`` values: ``local`` computes in this process (no shards), ``dask`` runs shards as tasks."""
SWEEP_SHARD_ROWS = 1 << 16
"""Default rows per sweep shard (about 20 MB of JSON Lines, returned by the task)."""
RECORDS_SHARD_OFFSETS = 1 << 20
"""Default offsets per certified shard (a few seconds each)."""
DEFAULT_SHARD_ROOT = Path(".ropeproof-shards")
"""Where shard directories go unless given (relative to the working directory)."""

DASK_PAYS_FROM: dict[str, int | None] = {"certified-index": 10**7, "sweep": None}
"""The smallest work size (``certified-index``: offsets ``max_n - 1``; ``sweep``: rows) at which a new
local cluster of 2 workers on a 2-core machine was measured to finish before one process, cluster start
included (``benchmarks/RESULTS.md``, issue 46: ``bench_dask_threshold.py``); ``None``: at no size
measured. :func:`dask_will_not_pay` warns below it."""
DASK_MEASURED_CORES = 2
"""The cores of the machine :data:`DASK_PAYS_FROM` was measured on."""


class DaskWillNotPayWarning(UserWarning):
    """A new local Dask cluster is asked for work it was not measured to speed up on this machine."""


def dask_will_not_pay(kind: str, size: int, workers: int | None, cores: int | None = None) -> str | None:
    """Why a new local cluster of ``workers`` processes (``None``: one per core) on a machine of
    ``cores`` cores (default: this one's) will not pay for ``size`` units of ``kind`` work
    (:data:`DASK_PAYS_FROM`), or ``None`` when it may: one core or one worker (nothing runs side by
    side), more workers than cores, or less work than it was measured to pay from on
    :data:`DASK_MEASURED_CORES` cores (a larger machine is not measured: the same size is asked)."""
    cores = (os.cpu_count() or 1) if cores is None else cores
    workers = cores if workers is None else workers
    if cores < 2 or workers < 2:
        return f"a local cluster of {workers} worker(s) on {cores} core(s) runs nothing side by side"
    if workers > cores:
        return f"{workers} workers on {cores} cores share them: the cluster cannot beat one process"
    pays = DASK_PAYS_FROM[kind]
    if pays is None:
        return (
            f"a {kind} on a local cluster was not measured to beat one process at any size (its shards each "
            "recompute the rows from n = 2)"
        )
    if size < pays:
        return (
            f"a {kind} of {size} was measured to pay on a local cluster only from {pays} "
            f"({DASK_MEASURED_CORES} workers on {DASK_MEASURED_CORES} cores, cluster start included)"
        )
    return None


def _warn_if_no_gain(kind: str, size: int, executor: Any, workers: int | None, scheduler: str | None) -> None:
    """Warn (:class:`DaskWillNotPayWarning`) when a new local cluster will not pay
    (:func:`dask_will_not_pay`); an existing cluster (``scheduler`` or a client) is not judged."""
    if executor != "dask" or scheduler is not None:
        return
    why = dask_will_not_pay(kind, size, workers)
    if why is not None:
        warnings.warn(
            f"--executor dask will likely be slower than --executor local here: {why}",
            DaskWillNotPayWarning,
            stacklevel=3,
        )


class ShardFailure(RopeproofError):
    """A shard failed for good (after Dask's retries); the message names its range and where the
    finished shards are kept."""


@dataclass(frozen=True)
class SweepSpec:
    """One row sweep of a built-in construction (what ``ropeproof sweep index|retrieval`` takes)."""

    construction: str
    theta: float
    lengths: tuple[int, int, int]
    alphabet: int = 8
    dtype: str = "float64"

    def __post_init__(self) -> None:
        if self.construction not in ("index", "retrieval"):
            raise InputError(f"construction={self.construction!r}; accepted: 'index', 'retrieval'")
        real(self.theta, "theta")

    def params(self) -> dict[str, Any]:
        if self.construction == "index":
            return {"theta": self.theta}
        return {"alphabet_size": self.alphabet, "theta": self.theta, "omega": 2 * math.pi / self.alphabet}

    def bound(self) -> str:
        if self.construction == "index":
            return "Delta_Index(n) <= min(1 - cos(theta), pi^2/(2 n^2))"
        return "Delta_Retrieval(n) <= 1 - cos(omega - n theta)"

    def header(self, shard: tuple[int, int] | None) -> SweepHeader:
        first, last = shard_lengths(*self.lengths, shard)
        return SweepHeader(
            self.construction, self.params(), self.dtype, self.bound(), self.lengths, shard, first, last
        )

    def rows(self) -> int:
        return selected_rows(*self.lengths)


def _blocks(spec: SweepSpec, first: int, last: int, device: str = "cpu") -> Iterator[Any]:
    if spec.construction == "index":
        return iter_index_sweep(spec.theta, first, last, spec.dtype, device)
    return iter_retrieval_sweep(spec.alphabet, spec.theta, first, last, spec.dtype, device)


def sweep_shard_text(spec: SweepSpec, shard: tuple[int, int]) -> str:
    """One shard's JSON Lines file as text (what a Dask task returns)."""
    header = spec.header(shard)
    out = io.StringIO()
    with thread_policy():
        write_rows(out, header, _blocks(spec, header.first_n, header.last_n), True)
    return out.getvalue()


def records_shard_text(theta: float, prec: int, first: int, last: int, m_last: int | None = None) -> str:
    """One certified shard's gap records as JSON (what a Dask task returns); ``m_last``: the last offset
    of the whole check (``None``: ``last``)."""
    with thread_policy():
        return enclose_gap_records([theta], None, first, last, prec, m_last=m_last).to_json()


def _package_version() -> str:
    try:
        return version("ropeproof")
    except PackageNotFoundError:  # pragma: no cover - run from a checkout that was never installed
        return "unknown"


def shard_directory(root: str | os.PathLike[str] | None, kind: str, params: dict[str, Any]) -> Path:
    """``root/KIND-HASH``: the directory of one computation's shards, keyed by everything that decides
    their bytes (the parameters, the shard count, the file format and the package version)."""
    key = json.dumps({"kind": kind, **params, "format": FORMAT_VERSION, "version": _package_version()})
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(DEFAULT_SHARD_ROOT if root is None else root) / f"{kind}-{digest}"


@dataclass
class _Job:
    label: str
    path: Path
    fn: Callable[..., str]
    args: tuple[Any, ...]


def _store(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a shard file is complete or absent)."""
    write_text_atomic(path, text)


@contextlib.contextmanager
def _client(executor: Any, workers: int | None, scheduler: str | None) -> Iterator[Any]:
    """A ``distributed.Client``: the one given, one connected to ``scheduler``, or one on a new local
    cluster of ``workers`` processes (one thread each, loopback only, no dashboard), closed after."""
    if not isinstance(executor, str):
        yield executor
        return
    try:
        import distributed
    except ImportError:
        raise InputError(
            "executor='dask' needs Dask: install the dask extra (pip install -e '.[dask]')"
        ) from None
    if scheduler is not None:
        try:
            client = distributed.Client(scheduler, timeout="30s")
        except (OSError, ValueError, TypeError, TimeoutError) as exc:
            raise InputError(
                f"scheduler={scheduler!r}: cannot connect ({type(exc).__name__}: {exc})"
            ) from None
        with client:
            yield client
        return
    n = (os.cpu_count() or 1) if workers is None else integer(workers, "workers", low=1, note="or None")
    with (
        distributed.LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            # no dashboard, and the scheduler's remaining HTTP routes (health checks) on a free loopback
            # port instead of 8787, which another cluster or program may hold
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.CRITICAL,  # a closing cluster logs lost heartbeats as errors
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def _run_jobs(
    jobs: Sequence[_Job],
    directory: Path,
    executor: Any,
    workers: int | None,
    scheduler: str | None,
    retries: int,
    progress: bool,
) -> None:
    """Compute every job whose file is missing, storing each result as it arrives; raise
    :class:`ShardFailure` naming the failed shards once every other one has finished."""
    retries = integer(retries, "retries", low=0)
    todo = [j for j in jobs if not j.path.exists()]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(jobs), initial=len(jobs) - len(todo), unit="shard", leave=False)
    failed: list[str] = []
    try:
        if not todo:
            return
        with _client(executor, workers, scheduler) as client:
            from distributed import as_completed

            directory.mkdir(parents=True, exist_ok=True)  # once a cluster is there to fill it

            run = uuid.uuid4().hex[:8]  # keys unique per run: a cluster may still hold an earlier run's
            futures = {
                client.submit(j.fn, *j.args, retries=retries, pure=False, key=f"ropeproof-{run}-{i}"): j
                for i, j in enumerate(todo)
            }
            try:
                for fut in as_completed(futures):
                    job = futures[fut]
                    try:
                        _store(job.path, fut.result())
                    except Exception as exc:  # the task's own error, or KilledWorker
                        first_line = (str(exc).splitlines() or [""])[0][:200]
                        failed.append(f"{job.label} ({type(exc).__name__}: {first_line})")
                    if bar is not None:
                        bar.set_postfix_str(job.label, refresh=False)
                        bar.update(1)
            finally:
                client.cancel(list(futures))
    finally:
        if bar is not None:
            bar.close()
    if failed:
        kept = sum(j.path.exists() for j in jobs)
        raise ShardFailure(
            f"{failed[0]} failed for good after {retries} retries"
            + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else "")
            + f"; {kept} of {len(jobs)} shards are kept in {directory}: run the same command again to "
            "reuse them"
        )


def _remove(directory: Path, default_root: bool) -> None:
    """Delete a merged computation's shard directory (and the default root, once empty)."""
    shutil.rmtree(directory, ignore_errors=True)
    if default_root:
        with contextlib.suppress(OSError):
            directory.parent.rmdir()  # only when empty


def _shard_count(shards: int | None, total: int, per_shard: int, workers: int | None) -> int:
    if shards is not None:
        return integer(shards, "shards", low=1, high=total, note="or None")
    return min(total, max(workers or os.cpu_count() or 1, -(-total // per_shard)))


def run_sweep(
    spec: SweepSpec,
    out: IO[str],
    fmt: str = "jsonl",
    executor: Any = None,
    workers: int | None = None,
    scheduler: str | None = None,
    shards: int | None = None,
    retries: int = 2,
    shard_root: str | os.PathLike[str] | None = None,
    progress: bool = False,
    task: Callable[..., str] = sweep_shard_text,
) -> SweepSummary:
    """Write the sweep ``spec`` to ``out`` (``fmt``: ``"jsonl"`` or, in one process only, ``"json"``).

    ``executor``: ``None``/``"local"`` (this process), ``"dask"`` or a ``distributed.Client`` (shards
    as tasks; see the module docstring). ``task(spec, (k, N))`` computes one shard (default
    :func:`sweep_shard_text`; tests wrap it). Returns the summary of the rows written."""
    if executor in (None, "local"):
        header = spec.header(None)
        return write_rows(out, header, _blocks(spec, header.first_n, header.last_n), True, fmt)
    if isinstance(executor, str) and executor not in EXECUTORS:
        raise InputError(f"executor={executor!r}; accepted: {', '.join(EXECUTORS)} or a distributed.Client")
    if fmt != "jsonl":
        raise InputError("a sweep on Dask is written as JSON Lines (fmt='jsonl', --jsonl)")
    _warn_if_no_gain("sweep", spec.rows(), executor, workers, scheduler)
    count = _shard_count(shards, spec.rows(), SWEEP_SHARD_ROWS, workers)
    directory = shard_directory(shard_root, "sweep", {**asdict(spec), "shards": count})
    jobs = []
    for k in range(1, count + 1):
        first, last = shard_lengths(*spec.lengths, (k, count))
        label = f"shard {k}/{count} (n = {first}..{last})"
        jobs.append(_Job(label, directory / f"shard-{k:06d}.jsonl", task, (spec, (k, count))))
    _run_jobs(jobs, directory, executor, workers, scheduler, retries, progress)
    for j in jobs:  # a file left by another computation would fail the merge's checks; say which
        head = read_sweep_file(j.path).header
        if head.to_dict() != spec.header(j.args[1]).to_dict():
            raise InputError(f"{j.path} holds another sweep's shard; remove it and run again")
    summary = merge_jsonl([j.path for j in jobs], out)
    _remove(directory, shard_root is None)
    return summary


def run_certified_index(
    theta: float,
    max_n: int,
    term: str = "min",
    prec: int = 80,
    executor: Any = None,
    workers: int | None = None,
    scheduler: str | None = None,
    shards: int | None = None,
    retries: int = 2,
    shard_root: str | os.PathLike[str] | None = None,
    progress: bool = False,
    task: Callable[..., str] = records_shard_text,
) -> CertifiedRecordCheck:
    """The certified Index check of every ``n = 2 .. max_n`` (as ``ropeproof sweep certified-index``):
    in this process, or with the offsets cut into shards run as Dask tasks (module docstring);
    ``task(theta, prec, first, last, m_last)`` encloses the offsets ``first .. last`` of ``1 .. m_last``
    (default :func:`records_shard_text`)."""
    max_n = integer(max_n, "max_n", low=2)
    if executor in (None, "local"):
        records = enclose_gap_records([theta], None, *offsets_for(max_n, None), prec)
        return judge_records(records, max_n, term)
    if isinstance(executor, str) and executor not in EXECUTORS:
        raise InputError(f"executor={executor!r}; accepted: {', '.join(EXECUTORS)} or a distributed.Client")
    _warn_if_no_gain("certified-index", max_n - 1, executor, workers, scheduler)
    count = _shard_count(shards, max_n - 1, RECORDS_SHARD_OFFSETS, workers)
    params = {"theta": float(theta).hex(), "max_n": max_n, "prec": prec, "shards": count}
    directory = shard_directory(shard_root, "certified-index", params)
    jobs = []
    for k in range(1, count + 1):
        first, last = offsets_for(max_n, (k, count))
        label = f"shard {k}/{count} (offsets m = {first}..{last})"
        args = (float(theta), prec, first, last, max_n - 1)
        jobs.append(_Job(label, directory / f"shard-{k:06d}.json", task, args))
    t0 = time.perf_counter()
    _run_jobs(jobs, directory, executor, workers, scheduler, retries, progress)
    parts = []
    for j in jobs:
        try:
            rec = GapRecords.from_json(j.path.read_text(encoding="utf-8"))
        except (ValueError, KeyError, TypeError, InputError) as e:
            raise InputError(
                f"{j.path}: not a complete records file ({e}); remove it and run again"
            ) from None
        if (rec.freqs, rec.prec, rec.m_start, rec.m_stop, rec.m_last) != ([float(theta)], prec, *j.args[2:]):
            raise InputError(f"{j.path} holds another check's shard; remove it and run again")
        parts.append(rec)
    result = judge_records(merge_gap_records(parts), max_n, term)
    result.shard_seconds = time.perf_counter() - t0
    _remove(directory, shard_root is None)
    return result
