"""The run's machinery, below every other layer: the exceptions every layer raises on bad input, the
validators of user input, atomic outputs, the run's result store and the cache of earlier runs, memory
and time budgets, and reading the user's input files. Nothing here knows RoPE; ``ropeproof.theory`` and
everything above build on it."""

from __future__ import annotations

from ropeproof.machinery._errors import (
    ConstructionError,
    InputError,
    MemoryBudgetError,
    OutputError,
    RopeproofError,
    RopeSpecError,
    TimeBudgetError,
    WeightError,
)

__all__ = [
    "ConstructionError",
    "InputError",
    "MemoryBudgetError",
    "OutputError",
    "RopeSpecError",
    "RopeproofError",
    "TimeBudgetError",
    "WeightError",
]
