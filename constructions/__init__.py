"""Compilation: symbolic constructions become explicit attention weights.

``constructions.load(path)`` reads a head written by ``CompiledHead.save(path)`` (see
:mod:`constructions.io` for the format).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from constructions.compile import CompiledHead


def load(path: str | Path) -> CompiledHead:
    """Read a compiled head saved with ``CompiledHead.save`` (``head.json`` + ``weights.npz``)."""
    from constructions.io import load_head

    return load_head(path)
