"""ropeproof: RoPE attention theory as explicit weights, checked numerically.

The package is one namespace built from the repository's folders, in pipeline order:
``ropeproof.theory`` (sympy) -> ``ropeproof.constructions`` (weights) -> ``ropeproof.verify``
(torch checks) -> ``ropeproof.paper_figures`` -> the command line and the claims
(``ropeproof.commands``, ``ropeproof.claims``), all above the run's machinery (``ropeproof.machinery``).
Modules are private (a leading underscore); each package lists its public names in ``__all__``.

The names below are the names the guides use most, re-exported here from the layer packages and loaded
on first use (so ``import ropeproof.theory`` stays free of torch and of the command line).
:data:`_EXPORTS` is the one list; ``__all__`` is made from it, and a test checks that the static
``TYPE_CHECKING`` imports name the same things::

    from ropeproof import RopeSpec, RopeAttention, index_construction, compile_construction
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

try:
    __version__ = version("ropeproof")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"

_EXPORTS: dict[str, str] = {
    # machinery and theory
    "RopeproofError": "ropeproof.machinery",
    "RopeSpecError": "ropeproof.machinery",
    "WeightError": "ropeproof.machinery",
    "InputError": "ropeproof.machinery",
    "ConstructionError": "ropeproof.machinery",
    "RopeSpec": "ropeproof.theory",
    "Spectrum": "ropeproof.theory",
    "Construction": "ropeproof.theory",
    "Plane": "ropeproof.theory",
    "Rotated": "ropeproof.theory",
    "Token": "ropeproof.theory",
    "Family": "ropeproof.theory",
    "FamilyCase": "ropeproof.theory",
    "token_family": "ropeproof.theory",
    "derive": "ropeproof.theory",
    "derive_logit": "ropeproof.theory",
    "index_bound": "ropeproof.theory",
    "retrieval_bound": "ropeproof.theory",
    "required_logit_scale": "ropeproof.theory",
    # constructions
    "index_construction": "ropeproof.constructions",
    "retrieval_construction": "ropeproof.constructions",
    "reflexive_construction": "ropeproof.constructions",
    "compile_construction": "ropeproof.constructions",
    "CompiledHead": "ropeproof.constructions",
    "load_head": "ropeproof.constructions",
    # verify
    "apply_rope": "ropeproof.verify.kernel",
    "rope_logits": "ropeproof.verify.kernel",
    "RopeAttention": "ropeproof.verify.kernel",
    "answer": "ropeproof.verify.kernel",
    "number_task": "ropeproof.verify.measure",
    "letter_task": "ropeproof.verify.measure",
    "family_for": "ropeproof.verify.measure.exact",
    "sweep_head": "ropeproof.verify.measure.exact",
    "check_bound": "ropeproof.verify.measure.exact",
    "parse_bound": "ropeproof.theory",
    "sweep_index": "ropeproof.verify.measure.exact",
    "sweep_spectrum": "ropeproof.verify.measure.exact",
    "SpectrumSweep": "ropeproof.verify.measure.exact",
    "scan_parameter": "ropeproof.verify.measure.exact",
    "ParameterScan": "ropeproof.verify.measure.exact",
    "partial_sum_decay": "ropeproof.verify.measure.exact",
    "PartialSumDecay": "ropeproof.verify.measure.exact",
    "sweep_retrieval": "ropeproof.verify.measure.exact",
    "ps_scores": "ropeproof.verify.measure.ps",
    "exact_exclusion": "ropeproof.verify.measure.ps",
    "per_frequency_scores": "ropeproof.verify.measure.ps",
    # verify.interop: a head as an HF model, and its worst cases replayed through the saved directory
    "export_head": "ropeproof.verify.interop.hf",
    "replay_worst_cases": "ropeproof.verify.interop",
    # verify.testing: the property battery and the hypothesis strategies
    "check_construction": "ropeproof.verify.testing",
    "family_inputs": "ropeproof.verify.testing",
    "key_permutations": "ropeproof.verify.testing",
    "rope_specs": "ropeproof.verify.testing",
    "rope_heads": "ropeproof.verify.testing",
    "index_params": "ropeproof.verify.testing",
    "retrieval_params": "ropeproof.verify.testing",
    # paper_figures
    "plot_sweeps": "ropeproof.paper_figures",
    "plot_parameter_scans": "ropeproof.paper_figures",
    "plot_partial_sum_decay": "ropeproof.paper_figures",
    "save_figure": "ropeproof.paper_figures",
    "FigureResult": "ropeproof.paper_figures",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:  # pragma: no cover - static view of the lazy exports (tests/test_packaging.py: the same)
    from ropeproof.constructions import (
        CompiledHead,
        compile_construction,
        index_construction,
        load_head,
        reflexive_construction,
        retrieval_construction,
    )
    from ropeproof.machinery import ConstructionError, InputError, RopeproofError, RopeSpecError, WeightError
    from ropeproof.paper_figures import (
        FigureResult,
        plot_parameter_scans,
        plot_partial_sum_decay,
        plot_sweeps,
        save_figure,
    )
    from ropeproof.theory import (
        Construction,
        Family,
        FamilyCase,
        Plane,
        RopeSpec,
        Rotated,
        Spectrum,
        Token,
        derive,
        derive_logit,
        index_bound,
        parse_bound,
        required_logit_scale,
        retrieval_bound,
        token_family,
    )
    from ropeproof.verify.interop import replay_worst_cases
    from ropeproof.verify.interop.hf import export_head
    from ropeproof.verify.kernel import RopeAttention, answer, apply_rope, rope_logits
    from ropeproof.verify.measure import letter_task, number_task
    from ropeproof.verify.measure.exact import (
        ParameterScan,
        PartialSumDecay,
        SpectrumSweep,
        check_bound,
        family_for,
        partial_sum_decay,
        scan_parameter,
        sweep_head,
        sweep_index,
        sweep_retrieval,
        sweep_spectrum,
    )
    from ropeproof.verify.measure.ps import exact_exclusion, per_frequency_scores, ps_scores
    from ropeproof.verify.testing import (
        check_construction,
        family_inputs,
        index_params,
        key_permutations,
        retrieval_params,
        rope_heads,
        rope_specs,
    )

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
