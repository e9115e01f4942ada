"""The registry of HF converters: one per architecture, looked up by name (``model_type``).

Every module of :mod:`ropeproof.verify.interop.hf` that needs something architecture-specific asks
:func:`converter` (or :func:`model_converter` for a loaded model) and calls it; none names an
architecture. Adding one is writing an :class:`~ropeproof.verify.interop.hf._converter.HFConverter`
subclass and calling :func:`register_converter` (which registers its facts too), as :mod:`.gptj` and
:mod:`.llama` are registered here.
"""

from __future__ import annotations

from typing import Any

from ropeproof.machinery._errors import RopeproofError
from ropeproof.theory._architectures import register_architecture
from ropeproof.verify.interop._errors import ExportError, HeadImportError
from ropeproof.verify.interop.hf._converter import HFConverter
from ropeproof.verify.interop.hf._gptj import GPTJConverter
from ropeproof.verify.interop.hf._llama import LlamaConverter

BUILT_IN: tuple[HFConverter, ...] = (GPTJConverter(), LlamaConverter())
CONVERTERS: dict[str, HFConverter] = {c.name: c for c in BUILT_IN}
"""Every converter by architecture name (``model_type``), in registration order."""


def register_converter(conv: HFConverter) -> HFConverter:
    """Add ``conv`` (and its facts, :func:`~ropeproof.theory._architectures.register_architecture`);
    from then on export, import, placement, runs and the CLI accept ``arch=conv.name``."""
    if not isinstance(conv, HFConverter):
        raise ExportError(f"conv must be an HFConverter, got {type(conv).__name__}")
    register_architecture(conv.facts)
    CONVERTERS[conv.name] = conv
    return conv


def converter(arch: object, error: type[RopeproofError] = ExportError) -> HFConverter:
    """The converter of ``arch`` (case-insensitive); ``error`` naming the accepted architectures."""
    conv = CONVERTERS.get(arch.lower()) if isinstance(arch, str) else None
    if conv is None:
        raise error(f"arch={arch!r} is unknown; accepted: {list(CONVERTERS)}")
    return conv


def model_converter(model: Any, arch: str | None = None) -> HFConverter:
    """The converter of a loaded model: ``arch``, or else its ``config.model_type``."""
    if arch is None:
        arch = getattr(getattr(model, "config", None), "model_type", None)
        if arch not in CONVERTERS:
            names = " or ".join(f"arch={n!r}" for n in CONVERTERS)
            raise HeadImportError(
                f"cannot tell the architecture of {type(model).__name__} (config.model_type={arch!r}); "
                f"pass {names}"
            )
    return converter(arch, HeadImportError)
