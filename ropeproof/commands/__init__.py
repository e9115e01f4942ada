"""One module per ``ropeproof`` subcommand; each exposes ``register(subparsers)``.

:data:`SUMMARIES` holds each subcommand's one-line help apart from its module, so that
``ropeproof --help`` lists the subcommands without importing them (their modules import torch, sympy
and the claims). :func:`main` (``ropeproof ARGS`` from Python: ``main(["sweep", "index", ...])``
returns the exit status) loads on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.commands._summaries import SUMMARIES
from ropeproof.machinery._lazy import lazy_exports

__all__ = ["SUMMARIES", "main"]

_EXPORTS: dict[str, str] = {"main": "ropeproof._cli"}
"""The public names this package loads on first use."""

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof._cli import main


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
