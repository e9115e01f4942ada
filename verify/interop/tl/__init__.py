"""TransformerLens interop, both ways (the optional ``tl`` extra: TransformerLens 3.x, whose
``HookedTransformer`` 4.0 removed).

**Import** (:func:`import_tl_head`, earlier ``from_hooked_transformer``; its HF counterpart is
``import_hf_head``): one head of a rotary ``HookedTransformer`` as a
:class:`~ropeproof.verify.kernel._attention.RopeAttention`: ``rotary_adjacent_pairs`` decides the
layout (interleaved vs half), ``rotary_dim`` the partial rotary, ``rotary_base`` (and
``rotary_scaling_factor``) the frequencies, GQA is resolved by TransformerLens' ``W_K``/``W_V``, and
``attn_scale`` is folded into ``W_Q``. With it ``ps_scores``, exact sweeps and per-frequency
profiles work on any TransformerLens model.

**Export** (:func:`export_hooked_transformer`): a compiled head as an attention-only rotary
``HookedTransformer`` whose hooks (``hook_attn_scores``, ``hook_pattern``, ``run_with_cache``,
activation patching) see exactly the head's logits and pattern.

**On disk** (:mod:`.checkpoint`): TransformerLens has no save format, so a model directory is
``tl_config.json`` + ``model.safetensors``; ``ropeproof import tl DIR`` reads it.

Nothing here imports TransformerLens until a model is built or read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "load_export_info": "ropeproof.verify.interop._head_export",
    "TL_CONFIG_FILE": "ropeproof.verify.interop.tl._checkpoint",
    "TL_WEIGHTS_FILE": "ropeproof.verify.interop.tl._checkpoint",
    "load_hooked_transformer": "ropeproof.verify.interop.tl._checkpoint",
    "save_hooked_transformer": "ropeproof.verify.interop.tl._checkpoint",
    "TLExport": "ropeproof.verify.interop.tl._export",
    "TLExportInfo": "ropeproof.verify.interop.tl._export",
    "export_hooked_transformer": "ropeproof.verify.interop.tl._export",
    "from_hooked_transformer": "ropeproof.verify.interop.tl._head_import",
    "import_tl_head": "ropeproof.verify.interop.tl._head_import",
    "tl_rope_spec": "ropeproof.verify.interop.tl._head_import",
    "build_hooked_transformer": "ropeproof.verify.interop.tl._library",
    "require_transformer_lens": "ropeproof.verify.interop.tl._library",
    "TLPlacement": "ropeproof.verify.interop.tl._placement",
    "place_tl": "ropeproof.verify.interop.tl._placement",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.verify.interop._head_export import load_export_info
    from ropeproof.verify.interop.tl._checkpoint import (
        TL_CONFIG_FILE,
        TL_WEIGHTS_FILE,
        load_hooked_transformer,
        save_hooked_transformer,
    )
    from ropeproof.verify.interop.tl._export import TLExport, TLExportInfo, export_hooked_transformer
    from ropeproof.verify.interop.tl._head_import import from_hooked_transformer, import_tl_head, tl_rope_spec
    from ropeproof.verify.interop.tl._library import build_hooked_transformer, require_transformer_lens
    from ropeproof.verify.interop.tl._placement import TLPlacement, place_tl

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
