"""Exceptions raised on bad input.

Every error names the offending parameter and the accepted range, so a caller never has to read a
torch traceback to learn what was wrong. All of them are ``ValueError`` subclasses.
"""

from __future__ import annotations


class RopeproofError(ValueError):
    """Base class of every input error raised by ropeproof."""


class RopeSpecError(RopeproofError):
    """A RoPE specification is invalid (dims, frequencies, base or layout)."""


class WeightError(RopeproofError):
    """Attention weights have the wrong shape or contain NaN/inf."""


class InputError(RopeproofError):
    """A sequence, position list, dtype or device argument is invalid."""


class ConstructionError(RopeproofError):
    """A symbolic construction is malformed (unknown token, missing rule, bad plane)."""


class NonFiniteError(InputError):
    """A result came out NaN or inf from finite inputs: the computation overflowed in its dtype."""


class UnderflowError(InputError):
    """A result depends on numbers that underflow in the dtype (below its smallest normal number), so it
    is not resolved there: reported, never passed off as a value."""


class MemoryBudgetError(RopeproofError):
    """A computation would need more memory than the limit allows (estimated before allocating)."""


class TimeBudgetError(RopeproofError):
    """A computation would run longer than the time limit allows (estimated before starting)."""


class OutputError(RopeproofError):
    """An output path cannot be written: it is a file, not empty, or not writable."""
