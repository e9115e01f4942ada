"""What the HF interop shares: tolerances, the exported LM's norm constants, the errors it raises, the
lazy ``transformers`` import and silencing its progress bars. What differs per architecture is in its
converter (:mod:`ropeproof.verify.interop.hf.converters`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ropeproof.theory.errors import RopeproofError

FREQ_RTOL = 1e-12
"""Relative tolerance for "same frequency": float64 rounding of the spectrum formula, nothing more."""

MAX_SEARCH_DIM = 4096
"""Largest ``rotary_dim`` / ``head_dim`` / ratio exponent the placement search tries."""

NORM_EPS = 2.0**80
"""Norm epsilon of the exported LM: dominates any variance the stream reaches, exactly in float32."""

NORM_GAIN = 2.0**40
"""Norm gain of the exported LM: ``sqrt(NORM_EPS)``, so normalise-then-scale is exact."""

EXPORT_INFO_FILE = "ropeproof_export.json"
"""File written next to ``config.json`` by :meth:`HFExport.save_pretrained`."""


class ExportError(RopeproofError):
    """A head cannot be exported exactly (no placement, bad option, or ``transformers`` missing)."""


class HeadImportError(RopeproofError):
    """A state dict / config cannot be read as a RoPE attention head."""


def require_transformers() -> Any:
    try:
        import transformers
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ExportError(
            "transformers is not installed; install the optional extra: pip install 'ropeproof[hf]'"
        ) from exc
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
