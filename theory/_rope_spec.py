"""The numeric RoPE specification: which dims form each plane, and each plane's frequency.

Conventions (``docs/theory.md`` section 1): plane ``k`` of a vector at position ``p`` is rotated by
``p * theta_k`` with ``rho(a) = [[cos a, -sin a], [sin a, cos a]]``. This module is numpy only; the
torch rotation lives in :mod:`ropeproof.verify.kernel._rope`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ropeproof.machinery._errors import RopeSpecError
from ropeproof.machinery._validate import integer, real

Layout = Literal["interleaved", "half"]
LAYOUTS: tuple[str, ...] = ("interleaved", "half")


@dataclass(frozen=True)
class RopeSpec:
    """A RoPE head's rotation: which dims form each plane, and each plane's frequency.

    Parameters
    ----------
    head_dim:
        Size of a query/key vector; an even integer >= 2.
    rotary_dim:
        How many leading dims rotate (GPT-J's partial rotary). Even, ``0 <= rotary_dim <= head_dim``.
        Defaults to ``head_dim``. Dims beyond it are planes with ``theta = 0`` (pass-through).
    base:
        Default spectrum ``theta_k = base ** (-2k / rotary_dim)``, ``k = 0 .. rotary_dim/2 - 1``.
        Finite and > 0. Ignored when ``freqs`` is given.
    freqs:
        Explicit list of ``rotary_dim / 2`` finite frequencies (radians per position); zeros allowed.
    layout:
        ``"interleaved"`` (GPT-J): plane ``k`` is dims ``(2k, 2k+1)``. ``"half"`` (NeoX/LLaMA): plane
        ``k`` is dims ``(k, k + rotary_dim/2)`` inside the rotary block; the pass-through block is
        paired the same way within itself.
    """

    head_dim: int
    rotary_dim: int | None = None
    base: float = 10000.0
    freqs: Sequence[float] | None = None
    layout: Layout = "interleaved"
    _theta: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        head_dim, rotary_dim = self.head_dim, self.rotary_dim
        head_dim = integer(head_dim, "head_dim", low=2, even=True, error=RopeSpecError)
        if rotary_dim is None:
            rotary_dim = head_dim
        rotary_dim = integer(
            rotary_dim,
            "rotary_dim",
            low=0,
            high=head_dim,
            even=True,
            note=f"head_dim={head_dim}",
            error=RopeSpecError,
        )
        if self.layout not in LAYOUTS:
            raise RopeSpecError(f"layout={self.layout!r} is unknown; accepted: {list(LAYOUTS)}")
        n_rot = rotary_dim // 2
        if self.freqs is not None:
            try:
                theta = np.asarray(self.freqs, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError) as exc:
                raise RopeSpecError(f"freqs must be a list of {n_rot} real numbers") from exc
            if theta.size != n_rot:
                raise RopeSpecError(
                    f"freqs has {theta.size} entries; rotary_dim={rotary_dim} needs exactly "
                    f"rotary_dim/2={n_rot}"
                )
            if not np.all(np.isfinite(theta)):
                raise RopeSpecError(f"freqs must all be finite, got {theta.tolist()}")
        else:
            base = real(self.base, "base", low=0, low_open=True, error=RopeSpecError)
            k = np.arange(n_rot, dtype=np.float64)
            with np.errstate(over="ignore"):
                theta = base ** (-2.0 * k / rotary_dim) if n_rot else np.zeros(0)
            if not np.all(np.isfinite(theta)):
                raise RopeSpecError(
                    f"base={self.base} gives infinite frequencies base^(-2k/rotary_dim); accepted: a base "
                    "for which every frequency is finite (any base >= 1e-300 is)"
                )
        n_pass = (head_dim - rotary_dim) // 2
        object.__setattr__(self, "rotary_dim", int(rotary_dim))
        object.__setattr__(self, "head_dim", int(head_dim))
        if self.freqs is not None:
            object.__setattr__(self, "freqs", tuple(float(t) for t in theta))
        object.__setattr__(self, "_theta", tuple(theta.tolist()) + (0.0,) * n_pass)

    @property
    def n_planes(self) -> int:
        """Number of 2-D planes, ``head_dim / 2`` (rotating and pass-through)."""
        return self.head_dim // 2

    @property
    def plane_freqs(self) -> np.ndarray:
        """Frequency of every plane, shape ``[head_dim/2]``; ``0`` beyond ``rotary_dim``."""
        return np.array(self._theta, dtype=np.float64)

    @property
    def plane_dims(self) -> list[tuple[int, int]]:
        """The ``(first, second)`` dims of every plane, in plane order.

        The rotation acts as ``x_first' = x_first cos - x_second sin`` and
        ``x_second' = x_first sin + x_second cos``.
        """
        r, h = self.rotary_dim, self.head_dim
        if self.layout == "interleaved":
            return [(2 * k, 2 * k + 1) for k in range(h // 2)]
        rot = [(k, k + r // 2) for k in range(r // 2)]
        p = (h - r) // 2
        return rot + [(r + m, r + p + m) for m in range(p)]

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON-ready data: ``{"head_dim", "rotary_dim", "freqs", "layout"}``.

        ``freqs`` lists the ``rotary_dim / 2`` rotating frequencies as Python floats, so a JSON round
        trip (``repr`` of a float64) restores them bit for bit.
        """
        return {
            "head_dim": self.head_dim,
            "rotary_dim": self.rotary_dim,
            "freqs": [float(f) for f in self.rotating_freqs],
            "layout": self.layout,
        }

    @classmethod
    def from_dict(cls, data: Any) -> RopeSpec:
        """The inverse of :meth:`to_dict`; raises :class:`RopeSpecError` naming a missing key."""
        if not isinstance(data, dict):
            raise RopeSpecError(f"a RoPE spec must be a mapping, got {type(data).__name__}")
        missing = [k for k in ("head_dim", "rotary_dim", "freqs", "layout") if k not in data]
        if missing:
            raise RopeSpecError(f"a RoPE spec needs the keys {missing}")
        return cls(data["head_dim"], data["rotary_dim"], freqs=data["freqs"], layout=data["layout"])

    def to_layout(self, layout: Layout) -> RopeSpec:
        """The same planes and frequencies under another layout."""
        return RopeSpec(self.head_dim, self.rotary_dim, self.base, self.rotating_freqs.tolist(), layout)

    @property
    def rotating_freqs(self) -> np.ndarray:
        """Frequencies of the ``rotary_dim / 2`` rotating planes."""
        return self.plane_freqs[: self.rotary_dim // 2]

    def permutation_to(self, other: RopeSpec) -> np.ndarray:
        """Index array ``perm`` with ``x_other = x_self[..., perm]`` mapping plane ``k`` to plane ``k``.

        The two specs must have the same ``head_dim``, ``rotary_dim`` and frequencies; only the
        layout may differ.
        """
        if (self.head_dim, self.rotary_dim) != (other.head_dim, other.rotary_dim) or not np.array_equal(
            self.plane_freqs, other.plane_freqs
        ):
            raise RopeSpecError("permutation_to needs specs that differ only in layout")
        perm = np.empty(self.head_dim, dtype=np.int64)
        for (a, b), (c, d) in zip(self.plane_dims, other.plane_dims, strict=True):
            perm[c], perm[d] = a, b
        return perm
