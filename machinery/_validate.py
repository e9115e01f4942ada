"""Checks of scalar arguments that raise the project's errors with the parameter's name and the
accepted range, so a bad value never reaches sympy or torch (where it would surface as a bare
``TypeError`` or, worse, a plausible wrong number).

- :func:`integer`: an ``int`` (numpy integers too; never ``bool``, never a float such as ``1.5`` or
  ``2.0``, never a string), optionally within ``[low, high]`` and even;
- :func:`real`: a real number (``int``, ``float``, numpy scalars; never ``bool`` or a string), finite
  unless ``finite=False``, optionally within bounds.

Both return the value as a plain Python ``int``/``float``, and raise ``error`` (default
:class:`~ropeproof.machinery._errors.InputError`) with a message of the form
``"max_n=1 is out of range; accepted: an integer >= 2 and <= 4096 (note)"``. :func:`integer_problem`
and :func:`real_problem` return the part after the value (or ``None`` when it is accepted), for callers
that name the value their own way (the command line's argument types).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, ClassVar, cast

from ropeproof.machinery._errors import InputError, RopeproofError


class Parsed:
    """A value that was checked against :attr:`LIMIT` once, where the user gave it."""

    LIMIT: ClassVar[Any]
    """The :class:`~ropeproof.machinery._values.Limit` it was checked against."""

    @classmethod
    def covers(cls, low: float | None, high: float | None) -> bool:
        """Whether a check for ``[low, high]`` is implied by the parse (so it may be skipped)."""
        return cls.LIMIT.contains(low, high)


def _range_text(
    low: float | None, high: float | None, low_open: bool = False, high_open: bool = False
) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high}")
    return " and ".join(parts)


def _with_note(accepted: str, note: str) -> str:
    return f"{accepted} ({note})" if note else accepted


def _shown(value: object, kind: type, convert: type) -> object:
    """How a refused value appears in a message: converted when it is of the right kind (``np.int64(3)``
    as ``3``), else its ``repr`` (``'8'``, ``True``)."""
    if isinstance(value, kind) and not isinstance(value, bool):
        try:
            return convert(value)
        except OverflowError:  # an int beyond float64's range
            pass
    return repr(value)


def integer_problem(
    value: object,
    *,
    low: int | None = None,
    high: int | None = None,
    even: bool = False,
    note: str = "",
) -> str | None:
    """``None`` if ``value`` is an integer in ``[low, high]`` (and even when ``even``); else what is
    wrong with it and what is accepted: ``"is not an integer; accepted: an integer >= 2"`` or
    ``"is out of range; accepted: ..."`` (``note``, when given, in parentheses at the end)."""
    if type(value) is not int and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
        wrong = "is not an integer"  # (a plain int skips the slower abstract-class check)
    else:
        out = int(value)
        if not ((low is not None and out < low) or (high is not None and out > high) or (even and out % 2)):
            return None
        wrong = "is out of range"
    accepted = " ".join(p for p in ("an", "even" if even else "", "integer", _range_text(low, high)) if p)
    return f"{wrong}; accepted: {_with_note(accepted, note)}"


def integer(
    value: object,
    name: str,
    *,
    low: int | None = None,
    high: int | None = None,
    even: bool = False,
    note: str = "",
    error: type[RopeproofError] = InputError,
) -> int:
    """``value`` as an ``int`` if it is an integer in ``[low, high]`` (and even when ``even``), else
    ``error`` naming ``name``, the value and the accepted values (see :func:`integer_problem`). A value
    parsed once at the boundary (:class:`~ropeproof.machinery._values.Parsed`) whose range lies in
    ``[low, high]`` is handed back as it is, unchecked."""
    if isinstance(value, Parsed) and isinstance(value, int) and not even and value.covers(low, high):
        return value
    problem = integer_problem(value, low=low, high=high, even=even, note=note)
    if problem is not None:
        raise error(f"{name}={_shown(value, numbers.Integral, int)} {problem}")
    return int(cast(numbers.Integral, value))


def real_problem(
    value: object,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    finite: bool = True,
    note: str = "",
) -> str | None:
    """``None`` if ``value`` is a real number (finite unless ``finite=False``; never NaN) with ``low <=
    value`` (``<`` when ``low_open``) and ``value <= high`` (``<`` when ``high_open``); else what is
    wrong with it and what is accepted: ``"is not a number; ..."``, ``"must be finite; ..."`` or ``"is
    out of range; accepted: a finite real number > 0"``."""
    if type(value) not in (float, int) and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
        wrong = "is not a number"
    else:
        try:
            out = float(value)
        except OverflowError:  # an int beyond float64's range
            out = math.inf if value > 0 else -math.inf  # type: ignore[operator]
        if math.isnan(out) or (finite and math.isinf(out)):
            wrong = f"must be {'finite' if finite else 'a number, not NaN'}"
        elif (low is not None and (out <= low if low_open else out < low)) or (
            high is not None and (out >= high if high_open else out > high)
        ):
            wrong = "is out of range"
        else:
            return None
    bounds = _range_text(low, high, low_open, high_open)
    accepted = "a " + ("finite " if finite else "") + "real number" + (f" {bounds}" if bounds else "")
    return f"{wrong}; accepted: {_with_note(accepted, note)}"


def real(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    finite: bool = True,
    note: str = "",
    error: type[RopeproofError] = InputError,
) -> float:
    """``value`` as a ``float`` if it is a real number (finite unless ``finite=False``) with ``low <=
    value`` (``<`` when ``low_open``) and ``value <= high`` (``<`` when ``high_open``), else ``error``
    naming ``name``, the value and the accepted values (see :func:`real_problem`). A value parsed once at
    the boundary (:class:`~ropeproof.machinery._values.Parsed`) whose range lies in ``[low, high]`` is
    handed back as it is, unchecked (open ends and ``finite=False`` included: a parsed real is finite)."""
    parsed = isinstance(value, Parsed) and isinstance(value, float) and value.covers(low, high)
    if parsed and not (low_open and value == low) and not (high_open and value == high):
        return value  # type: ignore[return-value]
    problem = real_problem(
        value, low=low, high=high, low_open=low_open, high_open=high_open, finite=finite, note=note
    )
    if problem is not None:
        raise error(f"{name}={_shown(value, numbers.Real, float)} {problem}")
    return float(cast(numbers.Real, value))
