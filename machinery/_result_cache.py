"""Results kept across runs: a persistent cache of a :class:`~ropeproof.machinery._result_store.ResultStore`'s
values, keyed by content and by the version of the code that computed them.

A run of ``ropeproof check`` asks its store for the same values as the run before it when nothing has
changed. With a cache, the store looks a value up here before computing it and puts what it computes
here after, so an unchanged second run recomputes nothing that went through the store.

**What a key is.** ``(code version, value key)``. The value key is the store's own
(:func:`~ropeproof.machinery._result_store.result_key`: the product's name and its arguments as sorted JSON).
The code version (:func:`code_version`) is a SHA-256 over everything that could change a number: every
source file and data file of the installed package (the shipped checkpoints' weights and records
included), the versions of Python and of the numerical libraries, and the machine's architecture. Any
change to any of them starts a new version, so a value is never shared across code versions that could
change it; entries of old versions are never read again and age out (least recently stored first) once
the cache passes its size limit.

**Where.** ``$ROPEPROOF_CACHE_DIR``, else ``$XDG_CACHE_HOME/ropeproof``, else ``~/.cache/ropeproof``
(:func:`default_cache_dir`); ``ropeproof check --cache-dir DIR`` chooses another and ``--no-cache``
uses none. The storage is the ``diskcache`` package (SQLite and files, safe across processes: check's
two processes share one cache).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import os
import pickle
import platform
import sqlite3
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from ropeproof.machinery._errors import InputError

SIZE_LIMIT = 4 * 2**30
"""Bytes the cache may hold before the least recently stored entries are evicted."""
LIBRARIES = (
    "numpy",
    "scipy",
    "sympy",
    "mpmath",
    "python-flint",
    "torch",
    "transformers",
    "transformer-lens",
    "matplotlib",
)
"""Libraries whose version is part of :func:`code_version` (a different release may change a number)."""
SUBPACKAGES = ("theory", "constructions", "verify", "paper_figures")
"""The installed subpackages built from the repository's folders (each has a folder of its own)."""
SOURCE_SUFFIXES = {".py", ".json", ".safetensors", ".mplstyle"}
"""The files of the package that :func:`code_version` hashes: its code and the data it ships."""
_MISSING = object()


def default_cache_dir() -> Path:
    """``$ROPEPROOF_CACHE_DIR``, else ``$XDG_CACHE_HOME/ropeproof``, else ``~/.cache/ropeproof``."""
    if os.environ.get("ROPEPROOF_CACHE_DIR"):
        return Path(os.environ["ROPEPROOF_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ropeproof"


def package_files() -> list[Path]:
    """Every file of the installed ``ropeproof`` package that :func:`code_version` hashes (sorted): the
    folders of ``ropeproof`` and of its subpackages, found without importing them."""
    from importlib.util import find_spec

    roots: set[Path] = set()
    for name in (
        "ropeproof",
        *(f"ropeproof.{s}" for s in ("machinery", "theory", "constructions", "verify", "paper_figures")),
    ):
        spec = find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise InputError(f"the package {name} is not installed; the cache cannot tell its code version")
        roots |= {Path(p).resolve() for p in spec.submodule_search_locations}
    files = {
        f
        for root in roots
        for f in root.rglob("*")
        if f.is_file() and f.suffix in SOURCE_SUFFIXES and "__pycache__" not in f.parts
    }
    return sorted(files)


@functools.cache
def code_version() -> str:
    """The SHA-256 (hex) of everything that could change a computed number (module docstring): each
    package file's path relative to its root folder and its bytes, then Python's version, the machine's
    architecture and the :data:`LIBRARIES` versions."""
    digest = hashlib.sha256()
    for path in package_files():
        digest.update(f"{path.parent.name}/{path.name}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    digest.update(f"python {sys.version}\0{platform.machine()}\0".encode())
    for name in LIBRARIES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{name} {version}\0".encode())
    return digest.hexdigest()


class ResultCache:
    """A persistent cache of computed values (module docstring) in ``directory``, for the code version
    ``version`` (default :func:`code_version`).

    **A cache, never a source.** Each value is stored with a SHA-256 over its code version, kind, key
    and bytes (:func:`_sealed`); a value whose digest does not match, an entry that cannot be read or
    unpickled, and a database that cannot be opened or queried (a file that is not a database, a
    directory in its place) are each a miss: the value is computed again and stored in place of the
    damaged entry (a damaged database file is replaced by a new one), with one line on standard error
    per cache directory and kind of damage, and never an error or another value.
    """

    def __init__(self, directory: str | Path | None = None, version: str | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        if self.directory.exists() and not self.directory.is_dir():
            raise InputError(f"--cache-dir={self.directory} exists and is not a directory")
        self.version = version or code_version()
        self._cache: Any = self._open()

    def _open(self) -> Any:
        """The ``diskcache.Cache``, or ``None`` when the database cannot be opened even after a damaged
        database file was removed."""
        import diskcache

        def attempt() -> Any:
            return diskcache.Cache(
                str(self.directory), size_limit=SIZE_LIMIT, eviction_policy="least-recently-stored"
            )

        try:
            return attempt()
        except (sqlite3.Error, OSError) as exc:
            damage = f"{exc.__class__.__name__}: {exc}"
        database = self.directory / DATABASE
        if database.is_file() and not database.is_symlink():
            for path in (database, *(database.with_name(DATABASE + s) for s in ("-wal", "-shm"))):
                with contextlib.suppress(OSError):
                    path.unlink()
            try:
                cache = attempt()
            except (sqlite3.Error, OSError):
                pass
            else:
                _warn(
                    self.directory,
                    f"the database could not be read ({damage}); it was replaced by an empty one",
                )
                return cache
        _warn(self.directory, f"the database cannot be opened ({damage}); this run computes without it")
        return None

    def _get(self, kind: str, key: str) -> bytes | None:
        if self._cache is None:
            return None
        try:
            stored = self._cache.get((self.version, kind, key))
        except Exception as exc:  # any failure to read a cache entry is a miss
            _warn(
                self.directory, f"an entry could not be read ({exc.__class__.__name__}); it is computed again"
            )
            return None
        if stored is None:
            return None
        payload = _unsealed(stored, self.version, kind, key)
        if payload is None:
            _warn(self.directory, "an entry did not match its digest; it is computed again and replaced")
        return payload

    def _set(self, kind: str, key: str, payload: bytes) -> None:
        if self._cache is None:
            return
        try:
            self._cache.set((self.version, kind, key), _sealed(self.version, kind, key, payload))
        except Exception as exc:  # a value that cannot be stored is simply not cached
            _warn(self.directory, f"a value could not be stored ({exc.__class__.__name__}); it is not cached")

    def get_text(self, key: str) -> str | None:
        """The JSON text of a data value stored for ``key`` under this code version, or ``None`` (also
        for an entry that is damaged: class docstring)."""
        payload = self._get("data", key)
        if payload is None:
            return None
        try:
            return payload.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def put_text(self, key: str, text: str) -> None:
        """Store a data value's JSON text for ``key`` under this code version."""
        self._set("data", key, text.encode("utf-8"))

    def get_object(self, key: str) -> Any:
        """The object stored for ``key`` under this code version, or :data:`MISSING` (also for an entry
        that is damaged or cannot be unpickled: class docstring)."""
        payload = self._get("object", key)
        if payload is None:
            return _MISSING
        try:
            return pickle.loads(payload)
        except Exception as exc:  # an entry that cannot be unpickled is a miss
            _warn(
                self.directory,
                f"an entry could not be unpickled ({exc.__class__.__name__}); it is computed again",
            )
            return _MISSING

    def put_object(self, key: str, value: Any) -> None:
        """Store ``value`` for ``key`` under this code version (pickled with ``cloudpickle``); an object
        that cannot be pickled is not stored."""
        import cloudpickle

        try:
            data = cloudpickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            return
        self._set("object", key, data)

    def put_file(self, key: str, data: bytes) -> None:
        """Store ``data`` for ``key`` under this code version as a file of the cache's own
        (:meth:`file`)."""
        import io

        if self._cache is None:
            return
        try:
            self._cache.set((self.version, "file", key), io.BytesIO(data), read=True)
        except Exception as exc:  # a file that cannot be stored is simply not cached
            _warn(self.directory, f"a file could not be stored ({exc.__class__.__name__}); it is not cached")

    def file(self, key: str) -> Path | None:
        """The cache's own file holding the bytes :meth:`put_file` stored for ``key`` under this code
        version, or ``None`` (also when the database is damaged or the entry cannot be read): to be read,
        copied or hard-linked, never written. The file's bytes are not sealed here; the caller checks them
        against the SHA-256 its sealed record holds (the cache is never a source)."""
        if self._cache is None:
            return None
        try:
            handle = self._cache.get((self.version, "file", key), read=True)
        except Exception as exc:  # any failure to read a cache entry is a miss
            _warn(self.directory, f"a file could not be read ({exc.__class__.__name__}); it is made again")
            return None
        if handle is None or not hasattr(handle, "name"):
            return None
        handle.close()
        return Path(handle.name)

    def close(self) -> None:
        if self._cache is not None:
            with contextlib.suppress(Exception):
                self._cache.close()

    def __len__(self) -> int:
        if self._cache is None:
            return 0
        try:
            return len(self._cache)
        except Exception:  # a damaged database holds nothing readable
            return 0


DATABASE = "cache.db"
"""The SQLite file of the cache inside its directory (``diskcache``'s)."""
_SEAL = b"ropeproof-cache-1\0"
_WARNED: set[tuple[str, str]] = set()


def _digest(version: str, kind: str, key: str, payload: bytes) -> bytes:
    head = f"{version}\0{kind}\0{key}\0{len(payload)}\0".encode()
    return hashlib.sha256(head + payload).digest()


def _sealed(version: str, kind: str, key: str, payload: bytes) -> bytes:
    """``payload`` as stored: a format tag, the SHA-256 over the version, kind, key and the payload, and
    the payload."""
    return _SEAL + _digest(version, kind, key, payload) + payload


def _unsealed(stored: object, version: str, kind: str, key: str) -> bytes | None:
    """The payload of a stored value, or ``None`` when it is not one :func:`_sealed` wrote for this
    version, kind and key (another format, a digest that does not match its bytes)."""
    if not isinstance(stored, bytes) or not stored.startswith(_SEAL) or len(stored) < len(_SEAL) + 32:
        return None
    digest, payload = stored[len(_SEAL) : len(_SEAL) + 32], stored[len(_SEAL) + 32 :]
    return payload if hmac.compare_digest(digest, _digest(version, kind, key, payload)) else None


def _warn(directory: Path, what: str) -> None:
    """One line on standard error per cache directory and kind of damage (the first in this process)."""
    kind = what.split(" (")[0]
    if (str(directory), kind) in _WARNED:
        return
    _WARNED.add((str(directory), kind))
    print(f"ropeproof: the cache in {directory}: {what}", file=sys.stderr)


def cache_info(directory: str | Path | None = None) -> dict[str, Any]:
    """What the cache in ``directory`` (default :func:`default_cache_dir`) holds, without changing it:
    its directory, whether it exists, its entries (all code versions; ``None`` when the database cannot
    be read), the bytes its directory holds, and the current code version."""
    path = Path(directory) if directory is not None else default_cache_dir()
    if path.exists() and not path.is_dir():
        raise InputError(f"--cache-dir={path} exists and is not a directory")
    out: dict[str, Any] = {"directory": str(path), "exists": path.is_dir(), "entries": 0, "bytes": 0}
    if path.is_dir():
        out["bytes"] = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
        database = path / DATABASE
        if database.exists():
            try:
                with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
                    out["entries"] = int(db.execute("SELECT COUNT(*) FROM Cache").fetchone()[0])
            except sqlite3.Error:
                out["entries"] = None
    out["code_version"] = code_version()
    return out


def clear_cache(directory: str | Path | None = None) -> int:
    """Remove every entry of the cache in ``directory`` (default :func:`default_cache_dir`) and its
    record of task seconds (``timings.json``); a damaged database file is removed. Returns the bytes
    freed. Files that are not the cache's own are left alone."""
    path = Path(directory) if directory is not None else default_cache_dir()
    if path.exists() and not path.is_dir():
        raise InputError(f"--cache-dir={path} exists and is not a directory")
    if not path.is_dir():
        return 0
    before = cache_info(path)["bytes"]
    import diskcache

    try:
        with contextlib.closing(diskcache.Cache(str(path))) as cache:
            cache.clear()
    except (sqlite3.Error, OSError):
        for name in (DATABASE, DATABASE + "-wal", DATABASE + "-shm"):
            target = path / name
            if target.is_file() and not target.is_symlink():
                target.unlink()
    timings = path / "timings.json"
    if timings.is_file() and not timings.is_symlink():
        timings.unlink()
    return max(0, int(before) - int(cache_info(path)["bytes"]))


MISSING = _MISSING
"""What :meth:`ResultCache.get` returns for a key it does not hold."""
