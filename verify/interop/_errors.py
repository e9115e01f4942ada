"""The errors of the interop layer: a head that cannot be exported exactly, and a model or file that cannot
be read as a RoPE head. Both are :class:`~ropeproof.machinery._errors.RopeproofError` s (one line on the
command line, exit 2)."""

from __future__ import annotations

from ropeproof.machinery._errors import RopeproofError


class ExportError(RopeproofError):
    """A head cannot be exported exactly (no placement, bad option, or the target library missing)."""


class HeadImportError(RopeproofError):
    """A state dict / config / export directory cannot be read as a RoPE attention head."""
