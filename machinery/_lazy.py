"""Public names that load on first use: the ``__getattr__`` and ``__dir__`` of a package whose
``__init__`` lists its public names in one table (``_EXPORTS``: name -> the module that defines it), so
that importing the package imports none of those modules (``import ropeproof.theory`` stays free of
torch; a layer's heavy modules load when one of their names is first asked for)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` (its ``__name__``): ``__getattr__(name)`` imports
    ``exports[name]``, takes ``name`` from it, keeps it in the package's namespace (the next look-up is
    a plain attribute) and returns it; any other name raises :exc:`AttributeError` as a module does.
    ``__dir__`` lists the package's namespace and every exported name."""

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(importlib.import_module(exports[name]), name)
            setattr(sys.modules[package], name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
