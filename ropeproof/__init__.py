"""ropeproof: RoPE attention theory as explicit weights, checked numerically.

The package is one namespace built from the repository's folders, in pipeline order:
``ropeproof.theory`` (sympy) -> ``ropeproof.constructions`` (weights) -> ``ropeproof.verify``
(torch checks) -> ``ropeproof.paper_figures`` -> the command line and the claims
(``ropeproof.cli``, ``ropeproof.claims``).

The names below are the curated public API, re-exported here on purpose and loaded on first use (so
``import ropeproof.theory`` stays free of torch and of the command line). :data:`_EXPORTS` is the one
list; ``__all__`` is made from it, and a test checks that the static ``TYPE_CHECKING`` imports name the
same things::

    from ropeproof import RopeSpec, RopeAttention, index_construction, compile_construction
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("ropeproof")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"

_EXPORTS: dict[str, str] = {
    # theory
    "RopeproofError": "ropeproof.theory.errors",
    "RopeSpecError": "ropeproof.theory.errors",
    "WeightError": "ropeproof.theory.errors",
    "InputError": "ropeproof.theory.errors",
    "ConstructionError": "ropeproof.theory.errors",
    "RopeSpec": "ropeproof.theory.rope_spec",
    "Construction": "ropeproof.theory.construction",
    "Plane": "ropeproof.theory.construction",
    "Rotated": "ropeproof.theory.construction",
    "Token": "ropeproof.theory.construction",
    "Family": "ropeproof.theory.family",
    "FamilyCase": "ropeproof.theory.family",
    "token_family": "ropeproof.theory.family",
    "derive": "ropeproof.theory.derive",
    "derive_logit": "ropeproof.theory.rope_symbolic",
    "index_bound": "ropeproof.theory.bounds",
    "retrieval_bound": "ropeproof.theory.bounds",
    "required_logit_scale": "ropeproof.theory.softmax_link",
    # constructions
    "index_construction": "ropeproof.constructions.paper",
    "retrieval_construction": "ropeproof.constructions.paper",
    "reflexive_construction": "ropeproof.constructions.paper",
    "compile_construction": "ropeproof.constructions.compile",
    "CompiledHead": "ropeproof.constructions.head",
    "load_head": "ropeproof.constructions.head",
    # verify
    "apply_rope": "ropeproof.verify.kernel.rope",
    "rope_logits": "ropeproof.verify.kernel.rope",
    "RopeAttention": "ropeproof.verify.kernel.attention",
    "answer": "ropeproof.verify.kernel.compiled",
    "number_task": "ropeproof.verify.measure.tasks",
    "letter_task": "ropeproof.verify.measure.tasks",
    "family_for": "ropeproof.verify.measure.exact.families",
    "sweep_head": "ropeproof.verify.measure.exact.head_sweep",
    "check_bound": "ropeproof.verify.measure.exact.stated_bound",
    "parse_bound": "ropeproof.theory.bound_expression",
    "sweep_index": "ropeproof.verify.measure.exact.sweep",
    "sweep_retrieval": "ropeproof.verify.measure.exact.sweep",
    "ps_scores": "ropeproof.verify.measure.ps.scores",
    "exact_exclusion": "ropeproof.verify.measure.ps.exact",
    "per_frequency_scores": "ropeproof.verify.measure.ps.per_frequency",
    "check_construction": "ropeproof.verify.testing.properties",
    # paper_figures
    "plot_sweeps": "ropeproof.paper_figures.sweeps",
    "save_figure": "ropeproof.paper_figures.style",
    "FigureResult": "ropeproof.paper_figures.style",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:  # pragma: no cover - static view of the lazy exports (tests/test_packaging.py: the same)
    from ropeproof.constructions.compile import compile_construction
    from ropeproof.constructions.head import CompiledHead, load_head
    from ropeproof.constructions.paper import (
        index_construction,
        reflexive_construction,
        retrieval_construction,
    )
    from ropeproof.paper_figures.style import FigureResult, save_figure
    from ropeproof.paper_figures.sweeps import plot_sweeps
    from ropeproof.theory.bound_expression import parse_bound
    from ropeproof.theory.bounds import index_bound, retrieval_bound
    from ropeproof.theory.construction import Construction, Plane, Rotated, Token
    from ropeproof.theory.derive import derive
    from ropeproof.theory.errors import (
        ConstructionError,
        InputError,
        RopeproofError,
        RopeSpecError,
        WeightError,
    )
    from ropeproof.theory.family import Family, FamilyCase, token_family
    from ropeproof.theory.rope_spec import RopeSpec
    from ropeproof.theory.rope_symbolic import derive_logit
    from ropeproof.theory.softmax_link import required_logit_scale
    from ropeproof.verify.kernel.attention import RopeAttention
    from ropeproof.verify.kernel.compiled import answer
    from ropeproof.verify.kernel.rope import apply_rope, rope_logits
    from ropeproof.verify.measure.exact.families import family_for
    from ropeproof.verify.measure.exact.head_sweep import sweep_head
    from ropeproof.verify.measure.exact.stated_bound import check_bound
    from ropeproof.verify.measure.exact.sweep import sweep_index, sweep_retrieval
    from ropeproof.verify.measure.ps.exact import exact_exclusion
    from ropeproof.verify.measure.ps.per_frequency import per_frequency_scores
    from ropeproof.verify.measure.ps.scores import ps_scores
    from ropeproof.verify.measure.tasks import letter_task, number_task
    from ropeproof.verify.testing.properties import check_construction


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ropeproof' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
