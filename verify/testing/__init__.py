"""Tools for property-testing heads and constructions: hypothesis strategies (:func:`rope_specs`,
:func:`rope_heads`, :func:`family_inputs`, :func:`key_permutations`, :func:`index_params`,
:func:`retrieval_params`) and the standard property battery :func:`check_construction`. Only tests,
benchmarks and the command line import this package. The modules are private."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "check_construction": "ropeproof.verify.testing._properties",
    "family_inputs": "ropeproof.verify.testing._strategies",
    "key_permutations": "ropeproof.verify.testing._strategies",
    "rope_specs": "ropeproof.verify.testing._strategies",
    "rope_heads": "ropeproof.verify.testing._strategies",
    "index_params": "ropeproof.verify.testing._strategies",
    "retrieval_params": "ropeproof.verify.testing._strategies",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.verify.testing._properties import check_construction
    from ropeproof.verify.testing._strategies import (
        family_inputs,
        index_params,
        key_permutations,
        retrieval_params,
        rope_heads,
        rope_specs,
    )

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
