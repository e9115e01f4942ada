"""The claims' outcomes, the corrections' results and the figures' files of ``ropeproof check`` kept
across runs, so that a rerun that recomputes nothing redraws nothing.

The run's :class:`~ropeproof.machinery._result_store.ResultStore` keeps its values in the cache of earlier
runs (:class:`~ropeproof.machinery._result_cache.ResultCache`), keyed by the code version and the value's
key. A claim's outcome, a correction's result and a figure's files are results of the same kind: a
task (:func:`claim_key`, :func:`correction_key`, :func:`figure_key`) computed by code of one version
from the store values it reads. Running one through :func:`recorded_claim`,
:func:`recorded_correction` or :func:`recorded_figure` notes the values it asks of the store
(:meth:`~ropeproof.machinery._result_store.ResultStore.reading`), and puts in the cache, under the task's
key and the code version, a record of what it read (each data value's SHA-256; an object value by its
key, which the code version and its arguments determine) and of what it made: the pickled outcome (or
the correction's data and figures), or each file's name and bytes, stored by their SHA-256 in files of
the cache's own (:meth:`~ropeproof.machinery._result_cache.ResultCache.put_file`).

:func:`replayed_claim`, :func:`replayed_correction` and :func:`replayed_figure` give the task back from
its record without running it, or ``None`` (a miss: the caller runs it). The cache is never a source:
the record must be whole and of this task; every data value it read must be in the cache with the
SHA-256 it had (a value computed again differently, or evicted, is a miss); the outcome's bytes and
every file's must have the SHA-256 recorded, checked on the bytes that are used (a file is hard-linked
from the cache's own file into the output directory, or copied where a link cannot be made, and its
digest is read from the output).
The data values read are then copied into the run's store (its directory is what ``ropeproof figures
--from-report`` draws from), so a replayed run's store and figures are those of the run that computed
them, byte for byte.

Only claims of the toolkit (:attr:`~ropeproof.claims._registry.Claim.builtin`) are kept: the code version
covers their code, not that of your claims. Outcomes with the verdict ``error``, corrections that raised
and figures whose drawing raised are not kept. A hard-linked figure shares its bytes with the cache's
file: a report's figures are changed by writing new files (as every ropeproof command does), not in
place; the next replay would find the altered bytes and draw the figure again.

:func:`complete_run` and :func:`kept_run` note, per code version and settings of a whole check, that
its every task was kept, with the figures it drew and their formats: a rerun then starts no second
process before it knows that one has work to take, and needs the figures' modules only to draw one.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ropeproof.claims._corrections import Correction, CorrectionResult
    from ropeproof.claims._registry import CheckContext, Claim, ClaimResult
    from ropeproof.machinery._result_cache import ResultCache
    from ropeproof.machinery._result_store import ResultStore

TASK_FORMAT, TASK_VERSION = "ropeproof-task", 1
"""Name and version of a task's record in the cache."""
RECORD = "task:"
"""Prefix of a record's key among the cache's data values (a product name has no ``:``)."""


def _sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def _key(kind: str, fields: Mapping[str, Any]) -> str:
    return kind + json.dumps(dict(sorted(fields.items())), separators=(",", ":"))


def _checked_key(kind: str, task_id: str, ctx: CheckContext) -> str:
    return _key(
        kind,
        {
            "id": task_id,
            "quick": bool(ctx.quick),
            "device": str(ctx.device),
            "dtype": str(ctx.dtype).removeprefix("torch."),
            "certified": bool(ctx.certified),
        },
    )


def claim_key(claim: Claim, ctx: CheckContext) -> str:
    """The task of ``claim`` run in ``ctx``: its id and the settings a check may depend on (``--quick``,
    device, dtype, ``--certified``); the code version stands for its parameters and its code."""
    return _checked_key("claim", claim.id, ctx)


def correction_key(correction: Correction, ctx: CheckContext) -> str:
    """The task of ``correction`` computed in ``ctx`` (as :func:`claim_key`)."""
    return _checked_key("correction", correction.id, ctx)


def figure_key(name: str, quick: bool, formats: Sequence[str]) -> str:
    """The task of drawing figure ``name`` (quick or full) and saving it in ``formats``."""
    return _key("figure", {"name": name, "quick": bool(quick), "formats": list(formats)})


def _read_digests(store: ResultStore, reads: Mapping[str, str]) -> dict[str, str | None] | None:
    """``{key: SHA-256 of the data value's text, or None for an object}`` of what a task read, or
    ``None`` when a data value read is not held (it raised while computing: nothing to key by)."""
    out: dict[str, str | None] = {}
    for key, kind in sorted(reads.items()):
        if kind == "object":
            out[key] = None
            continue
        text = store.held_text(key)
        if text is None:
            return None
        out[key] = _sha(text)
    return out


def _put_record(cache: ResultCache, key: str, reads: dict[str, str | None], made: dict[str, Any]) -> None:
    record = {"format": TASK_FORMAT, "version": TASK_VERSION, "task": key, "reads": reads, **made}
    cache.put_text(RECORD + key, json.dumps(record, separators=(",", ":")))


def _record(cache: ResultCache, key: str) -> dict[str, Any] | None:
    """The whole record of task ``key`` under the cache's code version, or ``None``."""
    text = cache.get_text(RECORD + key)
    if text is None:
        return None
    try:
        record = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(record, dict) or (record.get("format"), record.get("version")) != (
        TASK_FORMAT,
        TASK_VERSION,
    ):
        return None
    if record.get("task") != key or not isinstance(record.get("reads"), dict):
        return None
    return record


def _checked_reads(cache: ResultCache, reads: Mapping[str, Any]) -> dict[str, str] | None:
    """The texts of the data values a record read, from the cache, each with the SHA-256 recorded; or
    ``None`` when one is missing or differs."""
    texts = {}
    for key, digest in reads.items():
        if digest is None:
            continue
        text = cache.get_text(key)
        if text is None or _sha(text) != digest:
            return None
        texts[key] = text
    return texts


def _cached_bytes(cache: ResultCache, digest: Any) -> bytes | None:
    path = cache.file(digest) if isinstance(digest, str) else None
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if _sha(data) == digest else None


# ---------------------------------------------------------------------------------- claims, corrections


def _keep(store: ResultStore, key: str, reads: Mapping[str, str], payload: Any) -> None:
    """Put ``payload`` (pickled with ``cloudpickle``) and what the task ``key`` read in ``store``'s cache,
    when it has one and the payload pickles."""
    import cloudpickle  # a correction's proof steps hold closures

    digests = _read_digests(store, reads)
    if store.cache is None or digests is None:
        return
    try:
        data = cloudpickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # what does not pickle is not kept
        return
    digest = _sha(data)
    store.cache.put_file(digest, data)
    _put_record(store.cache, key, digests, {"outcome": digest})


def _given_back(store: ResultStore, key: str) -> tuple[bool, Any]:
    """``(True, payload)`` of task ``key`` from ``store``'s cache, the data values it read copied into
    ``store``; ``(False, None)`` when the cache does not hold all of it as recorded."""
    cache = store.cache
    record = None if cache is None else _record(cache, key)
    if cache is None or record is None:
        return False, None
    data = _cached_bytes(cache, record.get("outcome"))
    texts = None if data is None else _checked_reads(cache, record["reads"])
    if data is None or texts is None:
        return False, None
    try:
        payload = pickle.loads(data)
    except Exception:
        return False, None
    for text_key, text in texts.items():
        store.adopt_text(text_key, text)
    return True, payload


def recorded_claim(
    claim: Claim, ctx: CheckContext, run: Callable[[Claim, CheckContext], ClaimResult] | None = None
) -> ClaimResult:
    """``run(claim, ctx)`` (default :func:`~ropeproof.claims._registry.run_claim`), and, when the run's
    store has a cache and the claim is built in, its outcome and what it read put in the cache (module
    docstring)."""
    from ropeproof.claims._registry import run_claim

    run = run or run_claim
    if ctx.store.cache is None or not claim.builtin:
        return run(claim, ctx)
    with ctx.store.reading() as reads:
        result = run(claim, ctx)
    if result.outcome.verdict != "error":
        _keep(ctx.store, claim_key(claim, ctx), reads, result.outcome)
    return result


def replayed_claim(claim: Claim, ctx: CheckContext) -> ClaimResult | None:
    """The result of ``claim`` in ``ctx`` given back from the cache of earlier runs without running it
    (the data values it read copied into ``ctx.store``), or ``None`` when the cache does not hold all of
    it as recorded (module docstring). Its ``seconds`` are this replay's."""
    import time

    from ropeproof.claims._registry import ClaimResult
    from ropeproof.verify.measure._outcome import Outcome

    start = time.perf_counter()
    if not claim.builtin:
        return None
    found, outcome = _given_back(ctx.store, claim_key(claim, ctx))
    if not found or not isinstance(outcome, Outcome):
        return None
    seconds = time.perf_counter() - start
    return ClaimResult(claim, outcome, seconds, ctx.quick, str(ctx.dtype).removeprefix("torch."))


def recorded_correction(correction: Correction, ctx: CheckContext) -> CorrectionResult:
    """:func:`~ropeproof.claims._corrections.run_correction`, and, when the run's store has a cache, what it
    computed and read put in the cache (module docstring; a correction that raised is not kept)."""
    from ropeproof.claims._corrections import run_correction

    if ctx.store.cache is None:
        return run_correction(correction, ctx)
    with ctx.store.reading() as reads:
        result = run_correction(correction, ctx)
    if result.error is None:
        _keep(ctx.store, correction_key(correction, ctx), reads, (result.data, result.figures))
    return result


def replayed_correction(correction: Correction, ctx: CheckContext) -> CorrectionResult | None:
    """The result of ``correction`` in ``ctx`` given back from the cache of earlier runs without computing
    it, or ``None`` (as :func:`replayed_claim`)."""
    import time

    from ropeproof.claims._corrections import CorrectionResult

    start = time.perf_counter()
    found, payload = _given_back(ctx.store, correction_key(correction, ctx))
    if not found or not (isinstance(payload, tuple) and len(payload) == 2 and isinstance(payload[1], dict)):
        return None
    data, figures = payload
    return CorrectionResult(correction, data, figures, time.perf_counter() - start, ctx.quick)


# -------------------------------------------------------------------------------------------- figures


def recorded_figure(
    name: str, quick: bool, store: ResultStore, out_dir: Path, formats: tuple[str, ...]
) -> list[Path]:
    """Figure ``name`` drawn from ``store`` and saved in ``out_dir`` (its files' paths,
    :func:`~ropeproof.paper_figures._style.save_figure`), and, when ``store`` has a cache, its files and
    what it read put in the cache (module docstring)."""
    from ropeproof.paper_figures import draw_figure
    from ropeproof.paper_figures._style import save_figure

    if store.cache is None:
        return save_figure(draw_figure(name, quick, store), out_dir, formats)
    with store.reading() as reads:
        paths = save_figure(draw_figure(name, quick, store), out_dir, formats)
    digests = _read_digests(store, reads)
    if digests is None:
        return paths
    files = []
    for path in paths:
        data = path.read_bytes()
        digest = _sha(data)
        store.cache.put_file(digest, data)
        files.append([path.name, digest])
    _put_record(store.cache, figure_key(name, quick, formats), digests, {"files": files})
    return paths


def _link_or_copy(source: Path, target: Path) -> None:
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:  # another file system, or links not allowed: a copy
        shutil.copyfile(source, target)


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def replayed_figure(
    name: str, quick: bool, formats: tuple[str, ...], store: ResultStore, out_dir: Path
) -> list[Path] | None:
    """The files of figure ``name`` given back from the cache of earlier runs into ``out_dir`` without
    drawing it (hard-linked, or copied; the data values it read copied into ``store``), in the order
    :func:`~ropeproof.paper_figures._style.save_figure` returns them, or ``None`` when the cache does not
    hold all of it as recorded (module docstring; nothing is then left in ``out_dir``)."""
    cache = store.cache
    if cache is None:
        return None
    record = _record(cache, figure_key(name, quick, formats))
    files = None if record is None else record.get("files")
    if not isinstance(files, list) or not files:
        return None
    texts = _checked_reads(cache, record["reads"])  # type: ignore[index]
    if texts is None:
        return None
    out_dir = Path(out_dir)
    made: list[Path] = []
    for entry in files:
        ok = isinstance(entry, list) and len(entry) == 2 and all(isinstance(x, str) for x in entry)
        source = cache.file(entry[1]) if ok else None
        target = out_dir / str(entry[0]) if ok else None
        if source is None or target is None or target.name != entry[0] or entry[0].startswith("."):
            return _undone(made)
        out_dir.mkdir(parents=True, exist_ok=True)
        try:
            _link_or_copy(source, target)
        except OSError:  # evicted meanwhile
            return _undone(made)
        made.append(target)
        if _file_digest(target) != entry[1]:
            return _undone(made)
    for key, text in texts.items():
        store.adopt_text(key, text)
    return made


def _undone(made: list[Path]) -> None:
    for path in made:
        path.unlink(missing_ok=True)
    return None


# ------------------------------------------------------------------------------------------ whole runs


def run_key(settings: Mapping[str, Any]) -> str:
    """The record of a whole check with ``settings`` (JSON data: what selects and shapes its tasks)."""
    return RECORD + _key("check", settings)


def complete_run(
    cache: ResultCache, settings: Mapping[str, Any], figures: Sequence[str], formats: Sequence[str]
) -> None:
    """Note that a check with ``settings`` kept every one of its tasks under this code version, and that
    it drew ``figures`` in ``formats`` (which the code version and the settings decide)."""
    record = {"figures": list(figures), "formats": list(formats)}
    cache.put_text(run_key(settings), json.dumps(record, separators=(",", ":")))


def kept_run(cache: ResultCache, settings: Mapping[str, Any]) -> tuple[list[str], tuple[str, ...]] | None:
    """``(figures, formats)`` of a check with ``settings`` that kept every one of its tasks under this
    code version (:func:`complete_run`), or ``None``: a hint, each task is still checked when it is
    given back."""
    text = cache.get_text(run_key(settings))
    try:
        record = json.loads(text) if text is not None else None
    except json.JSONDecodeError:
        return None
    if not isinstance(record, dict):
        return None
    figures, formats = record.get("figures"), record.get("formats")
    if not all(isinstance(x, list) and all(isinstance(v, str) for v in x) for x in (figures, formats)):
        return None
    return list(figures), tuple(formats)  # type: ignore[arg-type]


__all__ = [
    "claim_key",
    "complete_run",
    "correction_key",
    "figure_key",
    "kept_run",
    "recorded_claim",
    "recorded_correction",
    "recorded_figure",
    "replayed_claim",
    "replayed_correction",
    "replayed_figure",
    "run_key",
]
