"""A run directory: its settings (``run.json``), the log of every reply (``log.jsonl``) and the summary
(``results.json``).

**The log loses nothing.** Each reply is appended as one JSON line the moment it arrives (one
``write`` per batch of lines on a file opened for appending, then ``fsync``), with the prompt id and
key, the prompt text, the raw reply, the parsed and the correct answer, tokens used, latency, the
finish reason and the model the server reported; a request that ended without a usable reply is
logged with its ``error``. A line cut short by a crash is the only damage a kill can do, and opening
the log again drops it (it was a request in flight).

**Resuming.** :func:`open_run` on a directory that holds a run with the same identity (provider,
model, endpoint, protocol settings, format, seed) continues it: the plan (tasks, lengths, prompts,
draws) may change, and only prompts without a reply are sent (a reply is matched to its prompt by
:attr:`~ropeproof.verify.studies.llm_eval._plan.Prompt.key`). A different identity is refused unless
``force``, which starts over (the old run directory is replaced as a whole once the new one's settings
are in place: :func:`ropeproof.machinery._atomic_output.atomic_directory`). Settings and summaries are
written to a temporary file beside the target, flushed and renamed into place.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ropeproof.machinery._atomic_output import atomic_directory, atomic_open
from ropeproof.machinery._errors import InputError, OutputError

LOG_FILE = "log.jsonl"
SETTINGS_FILE = "run.json"
RESULTS_FILE = "results.json"
PROTOCOL = "A-1hop/1"
"""The protocol's version: prompts, layout and generators. A run of another version is not resumed."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def write_json_atomic(path: Path, doc: Any) -> None:
    """Write ``doc`` as JSON to ``path``, synced to disk, never half-written
    (:func:`ropeproof.machinery._atomic_output.atomic_open`)."""
    with atomic_open(path, fsync=True) as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def _check_regular(path: Path, mode: int | None = None) -> None:
    """Raise :class:`OutputError` unless ``path`` (or the open file of ``mode``) is a regular file: a
    log is never written through a link or into a FIFO."""
    mode = os.lstat(path).st_mode if mode is None else mode
    if not stat.S_ISREG(mode):
        raise OutputError(f"{path} is not a regular file (a link, FIFO or device); it is not a reply log")


class RunLog:
    """The reply log (module docstring); ``path=None`` keeps the records in memory only. ``repair``:
    cut a last line left unfinished by a crash from the file (when opening to append); without it
    such a line is only skipped (when reading a log another process may be writing)."""

    def __init__(self, path: Path | None = None, repair: bool = True) -> None:
        self.path = None if path is None else Path(path)
        self._lock = threading.Lock()
        self._records: list[dict[str, Any]] = []
        if self.path is not None:
            self._records = self._read(repair)

    def _read(self, repair: bool) -> list[dict[str, Any]]:
        assert self.path is not None
        if not os.path.lexists(self.path):
            return []
        _check_regular(self.path)
        data = self.path.read_bytes()
        cut = data.rfind(b"\n") + 1
        if cut < len(data):  # a line cut short by a crash: the request was in flight, drop it
            if repair:
                with open(self.path, "r+b") as f:
                    f.truncate(cut)
            data = data[:cut]
        out = []
        for number, line in enumerate(data.decode().splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                raise InputError(
                    f"{self.path} line {number} is not JSON; repair or remove that line"
                ) from None
        return out

    def records(self) -> list[dict[str, Any]]:
        """Every record, in the order written."""
        with self._lock:
            return list(self._records)

    def append(self, records: Iterable[dict[str, Any]]) -> None:
        """Append ``records`` (thread-safe; on disk before returning)."""
        records = list(records)
        if not records:
            return
        blob = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
        with self._lock:
            if self.path is not None:
                flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                try:
                    fd = os.open(self.path, flags | getattr(os, "O_NONBLOCK", 0), 0o666)  # the umask applies
                except OSError:  # a link (ELOOP) or a FIFO without a reader (ENXIO): say which
                    _check_regular(self.path)
                    raise
                try:
                    _check_regular(self.path, os.fstat(fd).st_mode)
                    view = memoryview(blob)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fsync(fd)
                finally:
                    os.close(fd)
            self._records.extend(records)

    def replies(self) -> dict[str, dict[str, Any]]:
        """The latest record that holds a reply (``reply`` not ``None``), by prompt key."""
        out = {}
        for r in self.records():
            if r.get("reply") is not None:
                out[r["key"]] = r
        return out


def read_settings(out: Path) -> dict[str, Any] | None:
    """The settings of the run in ``out``, or ``None`` when it holds no run."""
    path = Path(out) / SETTINGS_FILE
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError:
        raise InputError(f"{path} is not JSON; it is not a run this version can read") from None
    if not isinstance(doc, dict) or "identity" not in doc:
        raise InputError(f"{path} is not the settings file of an llm-eval run")
    return doc


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    keys = sorted(set(old) | set(new))
    return [f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in keys if old.get(k) != new.get(k)]


def open_run(
    out: Path, identity: dict[str, Any], plan: dict[str, Any], label: str, force: bool = False
) -> RunLog:
    """Start or resume the run in ``out`` (module docstring) and return its log. ``identity`` must be
    JSON data; the settings file is rewritten with the current ``plan`` and ``label``."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out={out} is an existing file; expected a run directory")
    old = read_settings(out) if out.is_dir() else None
    identity = json.loads(json.dumps({"protocol": PROTOCOL, **identity}))
    if out.is_dir() and any(out.iterdir()):
        if old is None and not force:
            raise OutputError(
                f"--out={out} is not empty and holds no llm-eval run; choose a new directory, or --force to "
                "replace it"
            )
        if old is not None and old["identity"] != identity and not force:
            diff = "; ".join(_differences(old["identity"], identity))
            raise OutputError(
                f"--out={out} holds a run with other settings ({diff}); use a new directory, the same "
                "settings to resume, or --force to replace it (its replies are deleted)"
            )
        replace = force and (old is None or old["identity"] != identity)
        if replace:
            old = None
    else:
        replace = False
    settings = {
        "identity": identity,
        "plan": plan,
        "label": label,
        "created": old["created"] if old else now(),
        "updated": now(),
    }
    if replace:  # the old run goes only once the new settings are in place (the one swap protocol)
        with atomic_directory(out, force=True) as staging:
            write_json_atomic(staging / SETTINGS_FILE, settings)
    else:
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / SETTINGS_FILE, settings)
    return RunLog(out / LOG_FILE)
