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

import functools
import hashlib
import os
import pickle
import platform
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
    ``version`` (default :func:`code_version`)."""

    def __init__(self, directory: str | Path | None = None, version: str | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        if self.directory.exists() and not self.directory.is_dir():
            raise InputError(f"--cache-dir={self.directory} exists and is not a directory")
        import diskcache

        self._cache = diskcache.Cache(
            str(self.directory), size_limit=SIZE_LIMIT, eviction_policy="least-recently-stored"
        )
        self.version = version or code_version()

    def get_text(self, key: str) -> str | None:
        """The JSON text of a data value stored for ``key`` under this code version, or ``None``."""
        value = self._cache.get((self.version, "data", key))
        return value if isinstance(value, str) else None

    def put_text(self, key: str, text: str) -> None:
        """Store a data value's JSON text for ``key`` under this code version."""
        self._cache.set((self.version, "data", key), text)

    def get_object(self, key: str) -> Any:
        """The object stored for ``key`` under this code version, or :data:`MISSING`."""
        data = self._cache.get((self.version, "object", key))
        return _MISSING if data is None else pickle.loads(data)

    def put_object(self, key: str, value: Any) -> None:
        """Store ``value`` for ``key`` under this code version (pickled with ``cloudpickle``); an object
        that cannot be pickled is not stored."""
        import cloudpickle

        try:
            data = cloudpickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            return
        self._cache.set((self.version, "object", key), data)

    def put_file(self, key: str, data: bytes) -> None:
        """Store ``data`` for ``key`` under this code version as a file of the cache's own
        (:meth:`file`)."""
        import io

        self._cache.set((self.version, "file", key), io.BytesIO(data), read=True)

    def file(self, key: str) -> Path | None:
        """The cache's own file holding the bytes :meth:`put_file` stored for ``key`` under this code
        version, or ``None``: to be read, copied or hard-linked, never written (the caller checks the
        bytes: the cache is never a source)."""
        handle = self._cache.get((self.version, "file", key), read=True)
        if handle is None or not hasattr(handle, "name"):
            return None
        handle.close()
        return Path(handle.name)

    def close(self) -> None:
        self._cache.close()

    def __len__(self) -> int:
        return len(self._cache)


MISSING = _MISSING
"""What :meth:`ResultCache.get` returns for a key it does not hold."""
