"""The torch kernel every check runs on: RoPE rotation (:func:`apply_rope`, :func:`rope_logits`), the
causal single-head module :class:`RopeAttention`, compiled heads run as modules (:func:`head_module`,
:func:`answer`) and the toolkit's thread policy (:func:`thread_policy`). The modules are private."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "apply_rope": "ropeproof.verify.kernel._rope",
    "rope_logits": "ropeproof.verify.kernel._rope",
    "RopeAttention": "ropeproof.verify.kernel._attention",
    "answer": "ropeproof.verify.kernel._compiled",
    "head_module": "ropeproof.verify.kernel._compiled",
    "thread_policy": "ropeproof.verify.kernel._threads",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.verify.kernel._attention import RopeAttention
    from ropeproof.verify.kernel._compiled import answer, head_module
    from ropeproof.verify.kernel._rope import apply_rope, rope_logits
    from ropeproof.verify.kernel._threads import thread_policy

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
