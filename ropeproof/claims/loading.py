"""Claims from outside the package: files, modules, installed plugins, and selection by id.

``ropeproof check`` runs the built-in claims (:data:`~ropeproof.claims.BUILTIN_TOPICS`), then
:data:`~ropeproof.claims.registry.USER_CLAIMS`, then the claims loaded here:

- ``--claims my_claims.py`` (a file) or ``--claims my_pkg.claims`` (an importable module):
  importing it registers whatever it decorates with the module-level ``claim`` decorator, and
  every :class:`~ropeproof.claims.registry.ClaimSet` defined at its top level is added too;
- the entry-point group :data:`ENTRY_POINT_GROUP` (``ropeproof.claims``): each entry point of an
  installed distribution names a module (loaded as above), a ``ClaimSet``, or a callable returning
  a ``ClaimSet`` or a list of claims, e.g. in the plugin's ``pyproject.toml``::

      [project.entry-points."ropeproof.claims"]
      my_topic = "my_pkg.claims"

- ``--only PATTERN`` / ``--skip PATTERN`` keep the claims whose id matches (shell glob, e.g.
  ``'example.*'``) any ``--only`` pattern and no ``--skip`` pattern.

:func:`claim_source` says where each claim comes from (``ropeproof check --list`` prints it). Ids
stay unique across every source.
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from ropeproof.claims.registry import USER_CLAIMS, Claim, ClaimSet
from ropeproof.theory.errors import RopeproofError

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


def _import_file(path: Path) -> ModuleType:
    name = _module_name_for(path)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ClaimLoadError(f"--claims {path}: not a Python file that can be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ClaimLoadError(f"--claims {path}: importing it raised {type(exc).__name__}: {exc}") from exc
    return module


def _import_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        raise ClaimLoadError(
            f"--claims {name}: no such file, and no importable module of that name ({exc})"
        ) from exc
    except Exception as exc:
        raise ClaimLoadError(f"--claims {name}: importing it raised {type(exc).__name__}: {exc}") from exc


def _claims_of_module(module: ModuleType) -> list[Claim]:
    """The claims a module registers: its new ``USER_CLAIMS`` entries (recorded on first import,
    since a second import does not re-run it) and the claims of its top-level ``ClaimSet`` s."""
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


def load_claims(spec: str | Path) -> list[Claim]:
    """The claims of a file (``*.py`` or an existing path) or an importable module name.

    A file is imported once per process under a private module name; a module by
    ``importlib.import_module``. Raises :class:`ClaimLoadError` (one line) when it cannot be found
    or importing it fails.
    """
    text = str(spec)
    path = Path(text).expanduser()
    if text.endswith(".py") or path.exists():
        if not path.is_file():
            raise ClaimLoadError(f"--claims {text}: no such file")
        path = path.resolve()
        return _record(_claims_of_module(_import_file(path)), str(path))
    module = _import_module(text)
    return _record(_claims_of_module(module), module.__name__)


def _entry_points() -> Sequence[Any]:
    return list(metadata.entry_points(group=ENTRY_POINT_GROUP))


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


def entry_point_claims() -> list[Claim]:
    """The claims of every installed ``ropeproof.claims`` entry point, in name order."""
    out: list[Claim] = []
    for ep in sorted(_entry_points(), key=lambda e: e.name):
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
    """Where ``c`` comes from: the file, module or entry point it was loaded from, else the module
    that defines its check (a built-in topic such as ``ropeproof.claims.thm32``)."""
    return _SOURCES.get(c.id) or str(getattr(c.check, "__module__", "?"))


def gather_claims(
    registered: Sequence[Claim], sources: Sequence[str | Path] = (), entry_points: bool = True
) -> list[Claim]:
    """``registered`` (the built-in and user claims), then the claims of each of ``sources``
    (:func:`load_claims`), then the entry points' (:func:`entry_point_claims`); a claim reached twice
    is kept once, two different claims with one id raise :class:`ClaimLoadError`."""
    extra: list[Claim] = []
    for spec in sources:
        extra.extend(load_claims(spec))
    if entry_points:
        extra.extend(entry_point_claims())
    out: list[Claim] = []
    by_id: dict[str, Claim] = {}
    for c in [*registered, *extra]:
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
