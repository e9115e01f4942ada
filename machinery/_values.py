"""Values parsed once, at the boundary: the command line and the public functions turn what the user
gave into these small types, and the code below them trusts what it is handed.

:data:`LIMITS` is the one table of each concept's name and accepted range, read by the command line's
argument types, the public functions and the kernels alike. A parsed value is a subclass of ``float`` or
``int`` (:class:`Angle`, :class:`AlphabetSize`, :class:`Length`), so arithmetic and numpy take it as
they take the number; :func:`~ropeproof.machinery._validate.real` and
:func:`~ropeproof.machinery._validate.integer` hand it back unchecked when the range asked for contains
the range it was parsed against. :class:`Lengths` is ``--lengths A:B[:STEP]``: ``A, A + STEP, ...`` and
``B`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import Parsed, integer, real


@dataclass(frozen=True)
class Limit:
    """A concept's one name and accepted range: ``kind`` ``"real"`` (finite) or ``"integer"``, ``low <=
    value <= high`` (``None``: unbounded), and ``note`` (why the range is what it is)."""

    name: str
    kind: str
    low: float | None = None
    high: float | None = None
    note: str = ""

    def contains(self, low: float | None, high: float | None) -> bool:
        """Whether every value in this range also lies in ``[low, high]`` (``None``: unbounded)."""
        low_ok = low is None or (self.low is not None and self.low >= low)
        high_ok = high is None or (self.high is not None and self.high <= high)
        return low_ok and high_ok


LIMITS: dict[str, Limit] = {
    "theta": Limit("theta", "real", note="an angle in radians"),
    "alphabet_size": Limit(
        "alphabet_size",
        "integer",
        2,
        2**32,
        "at most 2^32: the letter codes' angles are exact to double-double",
    ),
    "length": Limit("n", "integer", 2, 2**26 - 1, "angles are reduced exactly for distances below 2^26"),
    "step": Limit("step", "integer", 1, None),
}
"""Each concept's name and range: the one table the command line, the public functions and the kernels
read (``LIMITS["alphabet_size"].high`` is the largest alphabet any sweep accepts)."""


class Angle(Parsed, float):
    """A finite real angle in radians, parsed once (:meth:`of`)."""

    LIMIT = LIMITS["theta"]

    @classmethod
    def of(cls, value: object, name: str = "theta") -> Angle:
        """``value`` itself when it is an :class:`Angle`, else ``value`` checked (finite real) and parsed;
        :class:`InputError` naming ``name`` otherwise."""
        if isinstance(value, Angle):
            return value
        return cls(real(value, name, note=cls.LIMIT.note))


class _ParsedCount(Parsed, int):
    """An integer parsed once against the class's :attr:`LIMIT` (its range and note)."""

    @classmethod
    def of(cls, value: object, name: str | None = None) -> Self:
        """``value`` itself when it is already of this class, else checked against :attr:`LIMIT` and
        parsed; :class:`InputError` naming ``name`` (default: the limit's name) otherwise."""
        if isinstance(value, cls):
            return value
        lim = cls.LIMIT
        low, high = int(lim.low), None if lim.high is None else int(lim.high)
        return cls(integer(value, name or lim.name, low=low, high=high, note=lim.note))


class AlphabetSize(_ParsedCount):
    """``|ALPH|``, the number of letters, in ``LIMITS["alphabet_size"]``'s range, parsed once."""

    LIMIT = LIMITS["alphabet_size"]


class Length(_ParsedCount):
    """A sequence length ``n`` in ``LIMITS["length"]``'s range, parsed once."""

    LIMIT = LIMITS["length"]


@dataclass(frozen=True)
class Lengths:
    """The lengths ``start, start + step, ...`` and ``stop`` itself (always included), ``2 <= start <=
    stop``; parsed once from ``"A:B[:STEP]"`` (:meth:`parse`) or a ``(start, stop[, step])`` tuple."""

    start: Length
    stop: Length
    step: int = 1

    @classmethod
    def parse(cls, text: str, name: str = "lengths") -> Lengths:
        """``"A:B[:STEP]"`` with ``2 <= A <= B <= LIMITS["length"].high`` and ``STEP >= 1``; else
        :class:`InputError` naming ``name`` and the accepted form."""
        parts = str(text).split(":")
        if len(parts) not in (2, 3):
            raise InputError(f"{name}={text!r} must look like A:B or A:B:STEP")
        try:
            a, b, step = int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) == 3 else 1
        except ValueError:
            raise InputError(f"{name}={text!r}: A, B and STEP must be integers") from None
        high = int(LIMITS["length"].high)  # type: ignore[arg-type]
        if a < 2 or b < a or step < 1 or b > high:
            raise InputError(
                f"{name}={text!r}: need 2 <= A <= B <= {high} and STEP >= 1 (a query needs one key; "
                f"{LIMITS['length'].note})"
            )
        return cls(Length(a), Length(b), step)

    @classmethod
    def of(cls, value: object, name: str = "lengths") -> Lengths:
        """``value`` itself when it is :class:`Lengths`, else parsed from text or a tuple."""
        if isinstance(value, Lengths):
            return value
        if isinstance(value, tuple) and len(value) in (2, 3):
            return cls.parse(":".join(str(v) for v in value), name)
        return cls.parse(value, name)  # type: ignore[arg-type]

    def __iter__(self):  # (start, stop, step) = lengths
        return iter((self.start, self.stop, self.step))

    def __str__(self) -> str:
        return f"{self.start}:{self.stop}" + (f":{self.step}" if self.step != 1 else "")
