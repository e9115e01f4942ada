"""The mathematics: RoPE specifications, constructions declared token by token, closed-form logits
proved equal to the raw product, input families, [A]'s reported bounds in stable form, and the exact
one-plane optimum (sympy and numpy; no torch). The modules are private (``theory/_*.py``); these are
the public names, loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "RopeSpec": "ropeproof.theory._rope_spec",
    "Spectrum": "ropeproof.theory._spectrum",
    "SymbolicRopeSpec": "ropeproof.theory._rope_symbolic",
    "derive_logit": "ropeproof.theory._rope_symbolic",
    "vec2": "ropeproof.theory._rope_symbolic",
    "Construction": "ropeproof.theory._construction",
    "Plane": "ropeproof.theory._construction",
    "Rotated": "ropeproof.theory._construction",
    "Token": "ropeproof.theory._construction",
    "Family": "ropeproof.theory._family",
    "FamilyCase": "ropeproof.theory._family",
    "token_family": "ropeproof.theory._family",
    "derive": "ropeproof.theory._derive",
    "index_bound": "ropeproof.theory._bounds",
    "retrieval_bound": "ropeproof.theory._bounds",
    "parse_bound": "ropeproof.theory._bound_expression",
    "required_logit_scale": "ropeproof.theory._softmax_link",
    "attaining_angles": "ropeproof.theory._one_plane_optimum",
    "best_value": "ropeproof.theory._one_plane_optimum",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.theory._bound_expression import parse_bound
    from ropeproof.theory._bounds import index_bound, retrieval_bound
    from ropeproof.theory._construction import Construction, Plane, Rotated, Token
    from ropeproof.theory._derive import derive
    from ropeproof.theory._family import Family, FamilyCase, token_family
    from ropeproof.theory._one_plane_optimum import attaining_angles, best_value
    from ropeproof.theory._rope_spec import RopeSpec
    from ropeproof.theory._rope_symbolic import SymbolicRopeSpec, derive_logit, vec2
    from ropeproof.theory._softmax_link import required_logit_scale
    from ropeproof.theory._spectrum import Spectrum

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
