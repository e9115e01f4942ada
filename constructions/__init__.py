"""Compilation: symbolic constructions become explicit attention weights.

- :mod:`ropeproof.constructions._paper`: [A]'s constructions and the paper's constants;
- :mod:`ropeproof.constructions._compile`: a :class:`~ropeproof.theory._construction.Construction`
  becomes a :class:`~ropeproof.constructions._head.CompiledHead` (every entry evaluated from sympy);
- :mod:`ropeproof.constructions._head`: the compiled head (numpy matrices and a RoPE spec) and its
  on-disk form (``head.json`` and ``weights.safetensors``);
- :mod:`ropeproof.constructions._multihop_programs`: [A]'s multi-hop solvers as symbolic programs, and
  :mod:`ropeproof.constructions._multihop_compile`: their per-layer weights (``CompiledModel``).

Nothing here imports torch; :mod:`ropeproof.verify` runs the heads.
"""

from __future__ import annotations

from ropeproof.constructions._head import CompiledHead, load_head

load = load_head
"""``load(path)``: read a head saved with ``CompiledHead.save`` (see :mod:`ropeproof.constructions._head`)."""

__all__ = ["CompiledHead", "load"]
