"""Checks of scalar arguments that raise the project's errors with the parameter's name and the
accepted range, so a bad value never reaches sympy or torch (where it would surface as a bare
``TypeError`` or, worse, a plausible wrong number).

- :func:`integer`: an ``int`` (numpy integers too; never ``bool``, never a float such as ``1.5`` or
  ``2.0``, never a string), optionally within ``[low, high]`` and even;
- :func:`real`: a real number (``int``, ``float``, numpy scalars; never ``bool`` or a string), finite
  unless ``finite=False``, optionally within bounds.

Both return the value as a plain Python ``int``/``float``.
"""

from __future__ import annotations

import math
import numbers

from ropeproof.theory.errors import InputError, RopeproofError


def _range_text(
    low: float | None, high: float | None, low_open: bool = False, high_open: bool = False
) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high}")
    return " and ".join(parts)


def integer(
    value: object,
    name: str,
    *,
    low: int | None = None,
    high: int | None = None,
    even: bool = False,
    error: type[RopeproofError] = InputError,
) -> int:
    """``value`` as an ``int`` if it is an integer in ``[low, high]`` (and even when ``even``), else
    ``error`` naming ``name`` and the accepted values."""
    accepted = " ".join(p for p in ("an", "even" if even else "", "integer", _range_text(low, high)) if p)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise error(f"{name}={value!r} is not an integer; accepted: {accepted}")
    out = int(value)
    if (low is not None and out < low) or (high is not None and out > high) or (even and out % 2):
        raise error(f"{name}={out} is out of range; accepted: {accepted}")
    return out


def real(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    finite: bool = True,
    error: type[RopeproofError] = InputError,
) -> float:
    """``value`` as a ``float`` if it is a real number (finite unless ``finite=False``) with ``low <=
    value`` (``<`` when ``low_open``) and ``value <= high`` (``<`` when ``high_open``), else ``error``
    naming ``name``."""
    bounds = _range_text(low, high, low_open, high_open)
    accepted = "a " + ("finite " if finite else "") + "real number" + (f" {bounds}" if bounds else "")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error(f"{name}={value!r} is not a number; accepted: {accepted}")
    out = float(value)
    if math.isnan(out) or (finite and math.isinf(out)):
        raise error(
            f"{name}={out} must be {'finite' if finite else 'a number, not NaN'}; accepted: {accepted}"
        )
    if low is not None and (out <= low if low_open else out < low):
        raise error(f"{name}={out} is out of range; accepted: {accepted}")
    if high is not None and (out >= high if high_open else out > high):
        raise error(f"{name}={out} is out of range; accepted: {accepted}")
    return out
