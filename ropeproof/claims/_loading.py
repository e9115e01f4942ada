"""Claims from outside the package: files, modules, installed plugins, and selection by id.

``ropeproof check`` runs the built-in claims (:data:`~ropeproof.claims.BUILTIN_TOPICS`), then
:data:`~ropeproof.claims._registry.USER_CLAIMS`, then the claims loaded here:

- ``--claims my_claims.py`` (a file) or ``--claims my_pkg.claims`` (an importable module):
  importing it registers whatever it decorates with the module-level ``claim`` decorator (sibling
  modules it imports included), and every :class:`~ropeproof.claims._registry.ClaimSet` defined at its
  top level is added too. A file's directory is on ``sys.path`` while it is imported, so it can import
  the modules next to it;
- the entry-point group :data:`ENTRY_POINT_GROUP` (``ropeproof.claims``): each entry point of an
  installed distribution names a module (loaded as above), a ``ClaimSet``, or a callable returning
  a ``ClaimSet`` or a list of claims, e.g. in the plugin's ``pyproject.toml``::

      [project.entry-points."ropeproof.claims"]
      my_topic = "my_pkg.claims"

- ``--only PATTERN`` / ``--skip PATTERN`` keep the claims whose id matches (shell glob, e.g.
  ``'example.*'``) any ``--only`` pattern and no ``--skip`` pattern.

:func:`claim_source` says where each claim comes from (``ropeproof check --list`` prints it). Ids
stay unique across every source.

Loaded here, in the calling process, a file is imported with the process-wide settings saved and put
back afterwards (:func:`~ropeproof.claims._global_state.global_state_restored`: mpmath precision,
environment, random state, ...), so what its top level sets does not outlive the import.
``ropeproof check`` does not load your claims in its own process at all: it loads and runs them in a
process of their own (:mod:`ropeproof.claims._claims_process`), where ``keep_path=True`` keeps a file's
directory on ``sys.path`` for the checks that import next to it later.
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from ropeproof.claims._global_state import global_state_restored
from ropeproof.claims._registry import USER_CLAIMS, Claim, ClaimSet
from ropeproof.machinery._errors import InputError, RopeproofError
from ropeproof.machinery._input_files import check_regular_file
from ropeproof.machinery._memory_budget import format_bytes
from ropeproof.machinery._size_limits import limit

CLAIMS_FILE_LIMIT = limit("claims file bytes")
"""The largest claims file imported."""
ENTRY_POINT_GROUP = "ropeproof.claims"
"""The entry-point group third-party packages register claims under."""

_SOURCES: dict[str, str] = {}
"""Claim id -> where it was loaded from (file path, module name or ``entry point NAME``)."""

_LOADED_ATTR = "__ropeproof_claim_ids__"


class ClaimLoadError(RopeproofError):
    """A claims file, module or entry point could not be loaded, or a selection matched nothing."""


def _module_name_for(path: Path) -> str:
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    stem = "".join(ch if ch.isalnum() else "_" for ch in path.stem)
    return f"ropeproof_user_claims.{stem}_{digest}"


@contextmanager
def _importing(directory: Path | None, keep_path: bool) -> Iterator[None]:
    """Import with ``directory`` first on ``sys.path``; unless ``keep_path``, with the process-wide
    settings put back afterwards (``sys.path`` included)."""
    if keep_path:
        if directory is not None and str(directory) not in sys.path:
            sys.path.insert(0, str(directory))
        yield
        return
    with global_state_restored():
        if directory is not None:
            sys.path.insert(0, str(directory))
        yield


def _registered_while(module_name: str, run: Callable[[], ModuleType]) -> ModuleType:
    """``run()`` (an import), recording on the module the ``USER_CLAIMS`` ids registered meanwhile (by
    it or the modules it imports); a second import finds the module in ``sys.modules`` and its record."""
    before = {c.id for c in USER_CLAIMS}
    already = module_name in sys.modules
    module = run()
    if not already and getattr(module, _LOADED_ATTR, None) is None:
        setattr(module, _LOADED_ATTR, [c.id for c in USER_CLAIMS if c.id not in before])
    return module


def _import_file(path: Path, keep_path: bool = False) -> ModuleType:
    name = _module_name_for(path)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ClaimLoadError(f"--claims {path}: not a Python file that can be imported")
    module = importlib.util.module_from_spec(spec)

    def run() -> ModuleType:
        sys.modules[name] = module
        try:
            with _importing(path.parent, keep_path):
                spec.loader.exec_module(module)  # type: ignore[union-attr]
        except Exception as exc:
            del sys.modules[name]
            raise ClaimLoadError(f"--claims {path}: importing it raised {type(exc).__name__}: {exc}") from exc
        return module

    return _registered_while(name, run)


def _import_module(name: str, keep_path: bool = False) -> ModuleType:
    def run() -> ModuleType:
        try:
            with _importing(None, keep_path):
                return importlib.import_module(name)
        except ModuleNotFoundError as exc:
            raise ClaimLoadError(
                f"--claims {name}: no such file, and no importable module of that name ({exc})"
            ) from exc
        except Exception as exc:
            raise ClaimLoadError(f"--claims {name}: importing it raised {type(exc).__name__}: {exc}") from exc

    return _registered_while(name, run)


def _claims_of_module(module: ModuleType) -> list[Claim]:
    """The claims a module registers: the ``USER_CLAIMS`` entries its import added (recorded on first
    import, since a second import does not re-run it; for a module imported before, those whose check
    it defines) and the claims of its top-level ``ClaimSet`` s."""
    ids = getattr(module, _LOADED_ATTR, None)
    if ids is None:
        ids = [c.id for c in USER_CLAIMS if getattr(c.check, "__module__", None) == module.__name__]
        setattr(module, _LOADED_ATTR, ids)
    claims = [USER_CLAIMS[i] for i in ids if i in USER_CLAIMS]
    for value in vars(module).values():
        if isinstance(value, ClaimSet) and value is not USER_CLAIMS:
            claims.extend(value)
    return claims


def _record(claims: Iterable[Claim], source: str) -> list[Claim]:
    out = list(claims)
    for c in out:
        _SOURCES.setdefault(c.id, source)
    return out


def load_claims(spec: str | Path, keep_path: bool = False) -> list[Claim]:
    """The claims of a file (``*.py`` or an existing path) or an importable module name.

    A file is imported once per process under a private module name, with its directory first on
    ``sys.path`` while it is imported (for good when ``keep_path``); a module by
    ``importlib.import_module``. Unless ``keep_path``, the process-wide settings the import changes
    are put back afterwards (module docstring). Raises :class:`ClaimLoadError` (one line) when it
    cannot be found or importing it fails.
    """
    text = str(spec)
    path = Path(text).expanduser()
    if text.endswith(".py") or path.exists():
        check_claims_file(text, path)
        path = path.resolve()
        return _record(_claims_of_module(_import_file(path, keep_path)), str(path))
    module = _import_module(text, keep_path)
    return _record(_claims_of_module(module), module.__name__)


def check_claims_file(text: str, path: Path) -> None:
    """Refuse (:class:`ClaimLoadError`, one line) a ``--claims`` path that is missing, not a regular file
    (a FIFO, a device such as ``/dev/zero``, a directory: never read) or larger than
    :data:`CLAIMS_FILE_LIMIT`."""
    if not path.exists():
        raise ClaimLoadError(f"--claims {text}: no such file")
    try:
        size = check_regular_file(path, "--claims")
    except InputError as exc:
        raise ClaimLoadError(str(exc)) from None
    if size > CLAIMS_FILE_LIMIT:
        raise ClaimLoadError(
            f"--claims {text} is larger than {format_bytes(CLAIMS_FILE_LIMIT)}, the most read from it; "
            "it is not a file this command reads"
        )


def _entry_points() -> Sequence[Any]:
    return list(metadata.entry_points(group=ENTRY_POINT_GROUP))


def declared_entry_points() -> list[Any]:
    """The ``ropeproof.claims`` entry points the installed distributions declare, in name order (read
    from their metadata; nothing is imported)."""
    return sorted(_entry_points(), key=lambda e: e.name)


def _claims_of_object(obj: Any, where: str) -> list[Claim]:
    if isinstance(obj, ModuleType):
        return _claims_of_module(obj)
    if isinstance(obj, ClaimSet):
        return list(obj)
    if callable(obj):
        obj = obj()
        if isinstance(obj, ClaimSet):
            return list(obj)
        claims = list(obj)
        if all(isinstance(c, Claim) for c in claims):
            return claims
    raise ClaimLoadError(
        f"{where} must name a module, a ClaimSet, or a callable returning a ClaimSet or a list of claims"
    )


def entry_point_claims(points: Sequence[Any] | None = None) -> list[Claim]:
    """The claims of ``points`` (``importlib.metadata.EntryPoint`` s; by default every installed
    ``ropeproof.claims`` entry point, :func:`declared_entry_points`), in name order."""
    out: list[Claim] = []
    for ep in sorted(declared_entry_points() if points is None else points, key=lambda e: e.name):
        where = f"entry point {ep.name} = {ep.value}"
        try:
            obj = ep.load()
        except Exception as exc:
            raise ClaimLoadError(
                f"{where}: loading it raised {type(exc).__name__}: {exc} (--no-plugins skips entry points)"
            ) from exc
        out.extend(_record(_claims_of_object(obj, where), f"entry point {ep.name} ({ep.value})"))
    return out


def claim_source(c: Claim) -> str:
    """Where ``c`` comes from: the file, module or entry point it was loaded from (``c.source`` for a
    claim loaded in the claims process), else the module that defines its check (a built-in topic
    such as ``ropeproof.claims._thm32``)."""
    return getattr(c, "source", "") or _SOURCES.get(c.id) or str(getattr(c.check, "__module__", "?"))


def gather_claims(
    registered: Sequence[Claim],
    sources: Sequence[str | Path] = (),
    entry_points: bool = True,
    keep_path: bool = False,
) -> list[Claim]:
    """``registered`` (the built-in and user claims), then the claims of each of ``sources``
    (:func:`load_claims`, with ``keep_path``), then the entry points' (:func:`entry_point_claims`);
    a claim reached twice is kept once, two different claims with one id raise
    :class:`ClaimLoadError` (:func:`merge_claims`)."""
    extra: list[Claim] = []
    for spec in sources:
        extra.extend(load_claims(spec, keep_path))
    if entry_points:
        extra.extend(entry_point_claims())
    return merge_claims([*registered, *extra])


def merge_claims(claims: Iterable[Claim]) -> list[Claim]:
    """``claims`` in order with each claim kept once; :class:`ClaimLoadError` naming both sources when
    two different claims have one id."""
    out: list[Claim] = []
    by_id: dict[str, Claim] = {}
    for c in claims:
        if c.id in by_id:
            if by_id[c.id] is c:
                continue
            raise ClaimLoadError(
                f"claim id {c.id!r} is defined twice ({claim_source(by_id[c.id])} and {claim_source(c)})"
            )
        by_id[c.id] = c
        out.append(c)
    return out


def select_claims(claims: Sequence[Claim], only: Sequence[str] = (), skip: Sequence[str] = ()) -> list[Claim]:
    """The claims whose id matches any of ``only`` (all when empty) and none of ``skip`` (globs,
    :func:`fnmatch.fnmatchcase`). :class:`ClaimLoadError` when an ``only`` pattern matches no claim."""
    for pattern in only:
        if not any(fnmatch.fnmatchcase(c.id, pattern) for c in claims):
            raise ClaimLoadError(f"--only {pattern!r} matches no claim id (see ropeproof check --list)")
    return [
        c
        for c in claims
        if (not only or any(fnmatch.fnmatchcase(c.id, p) for p in only))
        and not any(fnmatch.fnmatchcase(c.id, p) for p in skip)
    ]
