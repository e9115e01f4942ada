"""Corrected statements: each refuted statement of [A] or [B] against what is true instead, computed and
checked (docs/theory.md section 9); the claims and ``ropeproof errata`` read them. Public here: the best
one-plane T_Index margin over every angle, found without the lemma (:func:`index_best_theta`). The
modules are private."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "index_best_theta": "ropeproof.verify.studies.errata._index",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.verify.studies.errata._index import index_best_theta

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
