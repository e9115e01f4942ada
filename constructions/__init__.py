"""Compilation: symbolic constructions become explicit attention weights (no torch).

[A]'s constructions (:func:`index_construction`, :func:`retrieval_construction`,
:func:`reflexive_construction`), a :class:`~ropeproof.theory.Construction` compiled to a
:class:`CompiledHead` (:func:`compile_construction`; every entry evaluated from sympy) and read back
from disk (:func:`load_head`), and [A]'s multi-hop solvers as programs (:func:`checkpoint_program`)
compiled layer by layer (:func:`compile_program`, :class:`CompiledModel`). :mod:`ropeproof.verify` runs
them. The modules are private (``constructions/_*.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "index_construction": "ropeproof.constructions._paper",
    "retrieval_construction": "ropeproof.constructions._paper",
    "reflexive_construction": "ropeproof.constructions._paper",
    "compile_construction": "ropeproof.constructions._compile",
    "CompiledHead": "ropeproof.constructions._head",
    "load_head": "ropeproof.constructions._head",
    "checkpoint_program": "ropeproof.constructions._multihop_programs",
    "CompiledModel": "ropeproof.constructions._multihop_compile",
    "compile_program": "ropeproof.constructions._multihop_compile",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.constructions._compile import compile_construction
    from ropeproof.constructions._head import CompiledHead, load_head
    from ropeproof.constructions._multihop_compile import CompiledModel, compile_program
    from ropeproof.constructions._multihop_programs import checkpoint_program
    from ropeproof.constructions._paper import (
        index_construction,
        reflexive_construction,
        retrieval_construction,
    )

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
