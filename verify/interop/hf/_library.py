"""Reaching ``transformers``: the lazy import (the optional ``hf`` extra) and silencing its progress bars
for a block."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ropeproof.verify.interop._errors import ExportError

HF_EXTRA = "pip install 'ropeproof[hf]'"
"""How to install ``transformers`` with the versions this package is tested against."""


def require_transformers() -> Any:
    """The ``transformers`` module; :class:`ExportError` naming the ``hf`` extra when it is absent."""
    try:
        import transformers
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ExportError(f"transformers is not installed; install the optional extra: {HF_EXTRA}") from exc
    return transformers


@contextmanager
def quiet_progress() -> Iterator[None]:
    """Turn off transformers' own progress bars (loading and writing weights) inside the block."""
    logging = require_transformers().utils.logging
    enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            logging.enable_progress_bar()
