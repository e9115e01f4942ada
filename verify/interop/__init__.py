"""Exchange with other libraries: compiled heads and models exported to HF ``transformers``
(:mod:`ropeproof.verify.interop.hf`: GPT-J, LLaMA; the optional ``hf`` extra) and TransformerLens
(:mod:`ropeproof.verify.interop.tl`; the ``tl`` extra), and trained heads imported back.

Shared by both libraries: the errors (:exc:`ExportError`, :exc:`HeadImportError`), the record a saved
export carries (:func:`load_export_info`) and the replay of a family's worst cases through a saved
export (:func:`replay_worst_cases`). User guide: ``docs/guides/exports.md``. The modules are private.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ExportError": "ropeproof.verify.interop._errors",
    "HeadImportError": "ropeproof.verify.interop._errors",
    "EXPORT_INFO_FILE": "ropeproof.verify.interop._head_export",
    "ExportInfo": "ropeproof.verify.interop._head_export",
    "load_export_info": "ropeproof.verify.interop._head_export",
    "WorstCaseReplay": "ropeproof.verify.interop._worst_case_replay",
    "replay_worst_cases": "ropeproof.verify.interop._worst_case_replay",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.verify.interop._errors import ExportError, HeadImportError
    from ropeproof.verify.interop._head_export import EXPORT_INFO_FILE, ExportInfo, load_export_info
    from ropeproof.verify.interop._worst_case_replay import WorstCaseReplay, replay_worst_cases

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
