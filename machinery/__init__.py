"""The run's machinery, below every other layer: the exceptions every layer raises on bad input, the
validators of user input, atomic outputs, the run's result store and the cache of earlier runs, memory
and time budgets, and reading the user's input files. Nothing here knows RoPE; ``ropeproof.theory`` and
everything above build on it.

Public here: the exceptions, atomic outputs (:func:`atomic_directory`, :func:`staged_directory`) and the
run's result store (:class:`ResultStore`). The modules are private (``machinery/_*.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "RopeproofError": "ropeproof.machinery._errors",
    "InputError": "ropeproof.machinery._errors",
    "RopeSpecError": "ropeproof.machinery._errors",
    "WeightError": "ropeproof.machinery._errors",
    "ConstructionError": "ropeproof.machinery._errors",
    "NonFiniteError": "ropeproof.machinery._errors",
    "OutputError": "ropeproof.machinery._errors",
    "MemoryBudgetError": "ropeproof.machinery._errors",
    "TimeBudgetError": "ropeproof.machinery._errors",
    "atomic_directory": "ropeproof.machinery._atomic_output",
    "staged_directory": "ropeproof.machinery._atomic_output",
    "ResultStore": "ropeproof.machinery._result_store",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.machinery._atomic_output import atomic_directory, staged_directory
    from ropeproof.machinery._errors import (
        ConstructionError,
        InputError,
        MemoryBudgetError,
        NonFiniteError,
        OutputError,
        RopeproofError,
        RopeSpecError,
        TimeBudgetError,
        WeightError,
    )
    from ropeproof.machinery._result_store import ResultStore

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
