"""The public API: modules are private (a leading underscore) and the packages are the public surface.
Each package lists its public names in ``__all__``; every one of them exists; a package that loads them
lazily (``_EXPORTS``) names the same things in its static ``TYPE_CHECKING`` imports (what type checkers
and the API reference read); and at most 15% of the library's modules are public."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PUBLIC_SHARE = 0.15
"""At most this share of the library's modules is public (issue 42: the API is curated, not the tree)."""


def is_public(module: str) -> bool:
    """A module is public when no component of its dotted name starts with ``_``."""
    return not any(part.startswith("_") for part in module.split("."))


def public_packages(package_modules: dict[str, Path]) -> list[str]:
    return sorted(m for m, path in package_modules.items() if path.name == "__init__.py" and is_public(m))


def test_at_most_15_percent_of_the_modules_are_public(package_modules: dict[str, Path]) -> None:
    public = [m for m in package_modules if is_public(m)]
    share = len(public) / len(package_modules)
    assert share <= PUBLIC_SHARE, f"{len(public)} of {len(package_modules)} modules are public: {public}"
    # the public modules are the packages: every other module is private
    assert set(public) == set(public_packages(package_modules))


def test_the_rule_reads_every_component() -> None:
    assert is_public("ropeproof.verify.measure.exact")
    assert not is_public("ropeproof.verify.measure.exact._sweep")
    assert not is_public("ropeproof._cli") and not is_public("ropeproof.__main__")


def test_every_package_lists_names_that_exist(package_modules: dict[str, Path]) -> None:
    packages = public_packages(package_modules)
    assert len(packages) >= 20
    missing = {}
    for name in packages:
        package = importlib.import_module(name)
        assert isinstance(package.__all__, list), name
        assert len(set(package.__all__)) == len(package.__all__), f"{name}.__all__ repeats a name"
        absent = [n for n in package.__all__ if getattr(package, n, None) is None]
        if absent:
            missing[name] = absent
    assert not missing, f"names in __all__ that the package does not have: {missing}"


def test_no_public_name_is_private(package_modules: dict[str, Path]) -> None:
    for name in public_packages(package_modules):
        assert all(not n.startswith("_") or n == "__version__" for n in importlib.import_module(name).__all__)


def _static_imports(path: Path) -> dict[str, str]:
    static: dict[str, str] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module, path
                static |= {alias.name: imp.module for alias in imp.names}
    return static


def test_the_lazy_lists_agree(package_modules: dict[str, Path]) -> None:
    """In every package with ``_EXPORTS``: the static imports name the same things from the same
    modules, every lazy name is public, and asking for it gives the object of the module it names."""
    lazy = [m for m in public_packages(package_modules) if hasattr(importlib.import_module(m), "_EXPORTS")]
    assert {"ropeproof", "ropeproof.theory", "ropeproof.verify.measure.exact"} <= set(lazy)
    for name in lazy:
        package = importlib.import_module(name)
        assert _static_imports(package_modules[name]) == package._EXPORTS, name
        assert set(package._EXPORTS) <= set(package.__all__), name
        for attr, module in package._EXPORTS.items():
            assert getattr(package, attr) is getattr(importlib.import_module(module), attr)


@pytest.mark.parametrize("name", ["does_not_exist", "_EXPORTS_missing"])
def test_an_unknown_name_is_refused(name: str) -> None:
    import ropeproof.theory

    with pytest.raises(AttributeError, match=name):
        getattr(ropeproof.theory, name)
