"""The public API as the reference shows it, read from the packages themselves.

A package is public when no part of its dotted name starts with ``_``; its public names are its
``__all__``. A name several packages export (``ropeproof.RopeSpec`` is ``ropeproof.theory.RopeSpec``) is
documented once, at its *home*: of the packages exporting that object, the one whose path shares the
longest prefix with the module that defines it (the layer it lives in), the shorter path on a tie, and
never the top-level ``ropeproof`` while a layer exports it. :func:`homes` maps each public object's
defining path (``ropeproof.theory._rope_spec.RopeSpec``) to its home (``ropeproof.theory.RopeSpec``);
the API pages (``api_pages.py``) and the cross-references of the docstrings (``sphinx_roles.py``) both
use it, so a link always lands on an entry the reference has.
"""

from __future__ import annotations

import ast
import functools
import importlib
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _is_public(dotted: str) -> bool:
    return not any(part.startswith("_") for part in dotted.split("."))


@functools.cache
def public_packages() -> tuple[str, ...]:
    """Every public package, by its installed name, from pyproject's ``package-dir`` map."""
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    found = set()
    for name, folder in package_dir.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            dotted = ".".join([name, *parts])
            if _is_public(dotted) and "__pycache__" not in parts:
                found.add(dotted)
    return tuple(sorted(found))


def package_file(package: str) -> Path:
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    best = max((p for p in package_dir if package == p or package.startswith(p + ".")), key=len)
    rest = package[len(best) :].lstrip(".").split(".") if package != best else []
    return ROOT / package_dir[best] / Path(*rest) / "__init__.py"


def _defining_modules(package: str) -> dict[str, str]:
    """Name -> the module a package takes it from (its ``from X import name`` lines, the static
    ``TYPE_CHECKING`` ones included); a name it defines itself maps to the package."""
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(package_file(package).read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {(a.asname or a.name): f"{node.module}" for a in node.names}
    return found


@functools.cache
def exports() -> dict[str, dict[str, str]]:
    """Each public package's public names -> the path of the object where it is defined."""
    taken = {}
    for package in public_packages():
        origin = _defining_modules(package)
        taken[package] = {
            name: (origin.get(name, package), name) for name in importlib.import_module(package).__all__
        }

    def defined(module: str, name: str) -> str:  # through re-exports of re-exports
        while module != (source := taken.get(module, {}).get(name, (module, name)))[0]:
            module, name = source
        return f"{module}.{name}"

    return {
        package: {name: defined(*where) for name, where in names.items()} for package, names in taken.items()
    }


def _shared(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("."), b.split("."), strict=False):
        if x != y:
            break
        n += 1
    return n


@functools.cache
def homes() -> dict[str, str]:
    """The defining path of every public object -> its home entry (``package.name``); every public
    package maps to itself."""
    exporters: dict[str, list[tuple[str, str]]] = {}
    for package, names in exports().items():
        for name, defined in names.items():
            exporters.setdefault(defined, []).append((package, name))
    out = {package: package for package in public_packages()}
    for defined, where in exporters.items():
        layers = [w for w in where if w[0] != "ropeproof"] or where
        package, name = max(layers, key=lambda w: (_shared(w[0], defined), -len(w[0])))
        out[defined] = f"{package}.{name}"
    return out


def entries(package: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The names documented under ``package`` (those at home there), and the names it re-exports from
    another home, as ``(name, home)``."""
    home = homes()
    own, elsewhere = [], []
    for name, defined in exports()[package].items():
        target = home[defined]
        if target == f"{package}.{name}":
            own.append(name)
        else:
            elsewhere.append((name, target))
    return own, elsewhere
