"""What the HF interop shares: the supported architectures, GPT-J's fixed base, tolerances, the
exported LM's norm constants, and the errors it raises."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ropeproof.theory.errors import RopeproofError

ARCHITECTURES: tuple[str, ...] = ("gptj", "llama")
"""Architectures this module exports to and imports from."""

GPTJ_BASE = 10000.0
"""GPT-J's RoPE base; fixed in its code (``create_sinusoidal_positions``)."""

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


def check_arch(arch: str, error: type[RopeproofError]) -> str:
    if not isinstance(arch, str) or arch.lower() not in ARCHITECTURES:
        raise error(f"arch={arch!r} is unknown; accepted: {list(ARCHITECTURES)}")
    return arch.lower()


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
