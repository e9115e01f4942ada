"""ropeproof: RoPE attention theory as explicit weights, checked numerically.

The package is one namespace built from the repository's folders, in pipeline order:
``ropeproof.theory`` (sympy) -> ``ropeproof.constructions`` (weights) -> ``ropeproof.verify``
(torch checks) -> ``ropeproof.paper_figures`` -> the command line and the claims
(``ropeproof._cli``, ``ropeproof.claims``).

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
    "RopeproofError": "ropeproof.machinery._errors",
    "RopeSpecError": "ropeproof.machinery._errors",
    "WeightError": "ropeproof.machinery._errors",
    "InputError": "ropeproof.machinery._errors",
    "ConstructionError": "ropeproof.machinery._errors",
    "RopeSpec": "ropeproof.theory._rope_spec",
    "Construction": "ropeproof.theory._construction",
    "Plane": "ropeproof.theory._construction",
    "Rotated": "ropeproof.theory._construction",
    "Token": "ropeproof.theory._construction",
    "Family": "ropeproof.theory._family",
    "FamilyCase": "ropeproof.theory._family",
    "token_family": "ropeproof.theory._family",
    "derive": "ropeproof.theory._derive",
    "derive_logit": "ropeproof.theory._rope_symbolic",
    "index_bound": "ropeproof.theory._bounds",
    "retrieval_bound": "ropeproof.theory._bounds",
    "required_logit_scale": "ropeproof.theory._softmax_link",
    # constructions
    "index_construction": "ropeproof.constructions._paper",
    "retrieval_construction": "ropeproof.constructions._paper",
    "reflexive_construction": "ropeproof.constructions._paper",
    "compile_construction": "ropeproof.constructions._compile",
    "CompiledHead": "ropeproof.constructions._head",
    "load_head": "ropeproof.constructions._head",
    # verify
    "apply_rope": "ropeproof.verify.kernel._rope",
    "rope_logits": "ropeproof.verify.kernel._rope",
    "RopeAttention": "ropeproof.verify.kernel._attention",
    "answer": "ropeproof.verify.kernel._compiled",
    "number_task": "ropeproof.verify.measure._tasks",
    "letter_task": "ropeproof.verify.measure._tasks",
    "family_for": "ropeproof.verify.measure.exact._families",
    "sweep_head": "ropeproof.verify.measure.exact._head_sweep",
    "check_bound": "ropeproof.verify.measure.exact._stated_bound",
    "parse_bound": "ropeproof.theory._bound_expression",
    "sweep_index": "ropeproof.verify.measure.exact._sweep",
    "sweep_retrieval": "ropeproof.verify.measure.exact._sweep",
    "ps_scores": "ropeproof.verify.measure.ps._scores",
    "exact_exclusion": "ropeproof.verify.measure.ps._exact",
    "per_frequency_scores": "ropeproof.verify.measure.ps._per_frequency",
    # verify.interop: a head as an HF model, and its worst cases replayed through the saved directory
    "export_head": "ropeproof.verify.interop.hf._export",
    "replay_worst_cases": "ropeproof.verify.interop._worst_case_replay",
    # verify.testing: the property battery and the hypothesis strategies
    "check_construction": "ropeproof.verify.testing._properties",
    "family_inputs": "ropeproof.verify.testing._strategies",
    "key_permutations": "ropeproof.verify.testing._strategies",
    "rope_specs": "ropeproof.verify.testing._strategies",
    "rope_heads": "ropeproof.verify.testing._strategies",
    "index_params": "ropeproof.verify.testing._strategies",
    "retrieval_params": "ropeproof.verify.testing._strategies",
    # paper_figures
    "plot_sweeps": "ropeproof.paper_figures._sweeps",
    "save_figure": "ropeproof.paper_figures._style",
    "FigureResult": "ropeproof.paper_figures._style",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:  # pragma: no cover - static view of the lazy exports (tests/test_packaging.py: the same)
    from ropeproof.constructions._compile import compile_construction
    from ropeproof.constructions._head import CompiledHead, load_head
    from ropeproof.constructions._paper import (
        index_construction,
        reflexive_construction,
        retrieval_construction,
    )
    from ropeproof.machinery._errors import (
        ConstructionError,
        InputError,
        RopeproofError,
        RopeSpecError,
        WeightError,
    )
    from ropeproof.paper_figures._style import FigureResult, save_figure
    from ropeproof.paper_figures._sweeps import plot_sweeps
    from ropeproof.theory._bound_expression import parse_bound
    from ropeproof.theory._bounds import index_bound, retrieval_bound
    from ropeproof.theory._construction import Construction, Plane, Rotated, Token
    from ropeproof.theory._derive import derive
    from ropeproof.theory._family import Family, FamilyCase, token_family
    from ropeproof.theory._rope_spec import RopeSpec
    from ropeproof.theory._rope_symbolic import derive_logit
    from ropeproof.theory._softmax_link import required_logit_scale
    from ropeproof.verify.interop._worst_case_replay import replay_worst_cases
    from ropeproof.verify.interop.hf._export import export_head
    from ropeproof.verify.kernel._attention import RopeAttention
    from ropeproof.verify.kernel._compiled import answer
    from ropeproof.verify.kernel._rope import apply_rope, rope_logits
    from ropeproof.verify.measure._tasks import letter_task, number_task
    from ropeproof.verify.measure.exact._families import family_for
    from ropeproof.verify.measure.exact._head_sweep import sweep_head
    from ropeproof.verify.measure.exact._stated_bound import check_bound
    from ropeproof.verify.measure.exact._sweep import sweep_index, sweep_retrieval
    from ropeproof.verify.measure.ps._exact import exact_exclusion
    from ropeproof.verify.measure.ps._per_frequency import per_frequency_scores
    from ropeproof.verify.measure.ps._scores import ps_scores
    from ropeproof.verify.testing._properties import check_construction
    from ropeproof.verify.testing._strategies import (
        family_inputs,
        index_params,
        key_permutations,
        retrieval_params,
        rope_heads,
        rope_specs,
    )


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ropeproof' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
