"""A RoPE spectrum: frequencies ``theta_k`` with amplitudes ``a_k``, and its per-offset sum.

The quantity of a spectrum at an integer offset ``m`` is

    B(m) = sum_k a_k cos(m theta_k),

for ``a_k >= 0`` the logit, at offset ``m``, of a query and key equal to each other with squared norm
``a_k`` in plane ``k``. With ``a_k = 1`` and ``theta_k = b^(-2k/d)`` it is Men et al.'s
``B_m(b)`` (*Base of RoPE Bounds Context Length*, 2024). A spectrum is built

- from numbers (:class:`Spectrum` itself), each frequency the exact value of its float64;
- from sympy-exact expressions (:meth:`Spectrum.exact`, e.g. ``Rational(b) ** Rational(-i, 64)``): the
  floats are the expressions rounded to nearest, and certified checks enclose the exact reals;
- from a base (:meth:`Spectrum.from_base`), exact or as floats;
- from a model's configuration (:meth:`Spectrum.from_config`): ``rope_theta``, ``head_dim`` (or
  ``hidden_size / num_attention_heads``), ``partial_rotary_factor``, and ``rope_scaling`` (or
  ``rope_parameters``) of type ``default``, ``linear``, ``dynamic``, ``yarn`` or ``llama3``, by the
  formulas of transformers' ``modeling_rope_utils`` (evaluated here in float64, where transformers
  uses float32).

This module is numpy and sympy only; sweeps over offsets live in
:mod:`ropeproof.verify.measure.exact._spectrum_sweep`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real

SCALING_TYPES: tuple[str, ...] = ("default", "linear", "dynamic", "yarn", "llama3")
"""The ``rope_scaling`` types :meth:`Spectrum.from_config` reads."""


@dataclass(frozen=True)
class Spectrum:
    """Frequencies ``theta_k`` (radians per position) with amplitudes ``a_k``.

    Parameters
    ----------
    freqs:
        One or more finite real frequencies; zeros (NoPE planes) and negatives allowed.
    amps:
        One finite real amplitude per frequency; defaults to all ones.
    exact_freqs:
        Optional sympy expressions, one per frequency, whose real values the frequencies are; when
        given, ``freqs`` must be those values rounded to nearest (use :meth:`exact`).
    source:
        Where the spectrum came from (free-form, JSON-ready), e.g. a model configuration's fields.
    """

    freqs: tuple[float, ...]
    amps: tuple[float, ...] | None = None
    exact_freqs: tuple[sp.Expr, ...] | None = field(default=None, compare=False)
    source: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        try:
            f = np.asarray(self.freqs, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise InputError(f"freqs must be a list of real numbers, got {self.freqs!r}") from exc
        if f.size == 0 or not np.all(np.isfinite(f)):
            raise InputError(f"freqs must be one or more finite real numbers, got {f.tolist()}")
        if self.amps is None:
            a = np.ones_like(f)
        else:
            try:
                a = np.asarray(self.amps, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError) as exc:
                raise InputError(f"amps must be a list of real numbers, got {self.amps!r}") from exc
            if a.size != f.size or not np.all(np.isfinite(a)):
                raise InputError(
                    f"amps must be {f.size} finite real numbers (one per frequency), got {a.tolist()}"
                )
        object.__setattr__(self, "freqs", tuple(f.tolist()))
        object.__setattr__(self, "amps", tuple(a.tolist()))
        if self.exact_freqs is not None:
            exact = tuple(sp.sympify(e) for e in self.exact_freqs)
            if len(exact) != f.size:
                raise InputError(f"exact_freqs has {len(exact)} entries; freqs has {f.size}")
            for e, x in zip(exact, f.tolist(), strict=True):
                if not (e.is_real and e.is_finite) or e.free_symbols:
                    raise InputError(f"exact_freqs must be finite real constants, got {e}")
                if float(e.evalf(40)) != x:
                    raise InputError(f"freqs must be exact_freqs rounded to nearest: {e} is not {x!r}")
            object.__setattr__(self, "exact_freqs", exact)
        object.__setattr__(self, "source", dict(self.source))

    # ---------------------------------------------------------------------------------- constructors

    @classmethod
    def exact(cls, exprs: Sequence[Any], amps: Sequence[float] | None = None, **source: Any) -> Spectrum:
        """A spectrum whose frequencies are the sympy expressions ``exprs`` (constants, real, finite);
        its float frequencies are the expressions rounded to nearest float64."""
        exact = tuple(sp.sympify(e) for e in exprs)
        freqs = []
        for e in exact:
            if e.free_symbols or not e.is_real:
                raise InputError(f"exprs must be real constants without symbols, got {e}")
            freqs.append(float(e.evalf(40)))
        return cls(tuple(freqs), amps, exact, source)

    @classmethod
    def from_base(cls, base: float | int | str | sp.Expr, dim: int, *, exact: bool = False) -> Spectrum:
        """``theta_i = base^(-2i/dim)`` for ``i = 0 .. dim/2 - 1`` with unit amplitudes (``dim`` even, >= 2;
        ``base > 0``). With ``exact=True`` the frequencies are ``Rational(base) ** Rational(-2i, dim)``
        (a float ``base`` read as its decimal ``repr``: ``3.1e5`` is ``310000``); otherwise they are
        ``base ** (-2i/dim)`` in float64, as :class:`~ropeproof.theory._rope_spec.RopeSpec` computes them."""
        dim = integer(dim, "dim", low=2, even=True)
        if exact:
            b = sp.Rational(repr(base)) if isinstance(base, float) else sp.sympify(base)
            if not (b.is_real and b.is_positive) or b.free_symbols:
                raise InputError(f"base={base!r} is out of range; accepted: a real number > 0")
            return cls.exact([b ** sp.Rational(-2 * i, dim) for i in range(dim // 2)], base=str(b), dim=dim)
        b = real(base, "base", low=0, low_open=True)
        i = np.arange(dim // 2, dtype=np.float64)
        return cls(tuple((b ** (-2.0 * i / dim)).tolist()), None, None, {"base": b, "dim": dim})

    @classmethod
    def from_config(cls, config: Any, *, seq_len: int | None = None) -> Spectrum:
        """The rotating frequencies of a model configuration (a mapping or an object with attributes, such
        as a transformers ``PretrainedConfig``), unit amplitudes.

        Reads ``rope_theta`` (default 10000), ``head_dim`` (else ``hidden_size // num_attention_heads``),
        ``partial_rotary_factor`` (default 1; ``dim = int(head_dim * factor)``), and ``rope_scaling`` or
        ``rope_parameters`` (``rope_type`` or ``type``): ``linear`` divides every frequency by
        ``factor``; ``dynamic`` raises the base to ``base (factor s / M - (factor - 1))^(dim/(dim-2))`` with
        ``s = max(seq_len, M)``, ``M = max_position_embeddings`` (``seq_len`` defaults to ``M``, where
        the spectrum is the default one); ``yarn`` and ``llama3`` blend interpolated and extrapolated
        frequencies as transformers does. YaRN's ``attention_factor`` (which scales the logits by its
        square) is kept in :attr:`source`, not in the amplitudes."""
        get = _getter(config)
        scaling = get("rope_scaling") or get("rope_parameters") or {}
        if not isinstance(scaling, Mapping):
            raise InputError(f"rope_scaling must be a mapping or None, got {type(scaling).__name__}")
        kind = scaling.get("rope_type", scaling.get("type", "default"))
        if kind not in SCALING_TYPES:
            raise InputError(f"rope_scaling type {kind!r} is not supported; accepted: {list(SCALING_TYPES)}")
        base = real(scaling.get("rope_theta", get("rope_theta", 10000.0)), "rope_theta", low=0, low_open=True)
        head_dim = get("head_dim")
        if head_dim is None:
            hidden, heads = get("hidden_size"), get("num_attention_heads")
            if hidden is None or heads is None:
                raise InputError("config needs head_dim, or hidden_size and num_attention_heads")
            head_dim = integer(hidden, "hidden_size", low=1) // integer(heads, "num_attention_heads", low=1)
        head_dim = integer(head_dim, "head_dim", low=2)
        partial = real(
            scaling.get("partial_rotary_factor", get("partial_rotary_factor", 1.0)),
            "partial_rotary_factor",
            low=0,
            high=1,
            low_open=True,
        )
        dim = int(head_dim * partial)
        if dim < 2:
            raise InputError(
                f"head_dim * partial_rotary_factor = {head_dim * partial} leaves no rotating plane"
            )
        exponents = np.arange(0, dim, 2, dtype=np.float64) / dim
        inv = 1.0 / base**exponents
        source: dict[str, Any] = {"rope_type": kind, "rope_theta": base, "head_dim": head_dim, "dim": dim}
        if kind == "linear":
            inv = inv / _factor(scaling)
        elif kind == "dynamic":
            factor, max_pos = (
                _factor(scaling),
                integer(get("max_position_embeddings"), "max_position_embeddings", low=1),
            )
            s = max(max_pos, max_pos if seq_len is None else integer(seq_len, "seq_len", low=1))
            dynamic_base = base * ((factor * s / max_pos) - (factor - 1)) ** (dim / (dim - 2))
            inv = 1.0 / dynamic_base**exponents
            source["dynamic_base"] = dynamic_base
        elif kind == "yarn":
            inv, source["attention_factor"] = _yarn(inv, scaling, base, dim, get)
        elif kind == "llama3":
            inv = _llama3(inv, scaling)
        return cls(tuple(inv.tolist()), None, None, source)

    # ------------------------------------------------------------------------------------ properties

    @property
    def size(self) -> int:
        """The number of frequencies (planes)."""
        return len(self.freqs)

    @property
    def total(self) -> float:
        """``sum_k |a_k|``: a bound on ``|B(m)|`` at every offset (``B(0) = sum_k a_k``)."""
        return float(np.abs(np.asarray(self.amps)).sum())

    def with_amps(self, amps: Sequence[float]) -> Spectrum:
        """The same frequencies with other amplitudes."""
        return Spectrum(self.freqs, tuple(amps), self.exact_freqs, self.source)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"freqs", "amps", "exact_freqs" (strings or None), "source"}``."""
        exact = None if self.exact_freqs is None else [sp.srepr(e) for e in self.exact_freqs]
        return {
            "freqs": list(self.freqs),
            "amps": list(self.amps or ()),
            "exact_freqs": exact,
            "source": dict(self.source),
        }


# ---------------------------------------------------------------------------------------- helpers


def _getter(config: Any) -> Any:
    if isinstance(config, Mapping):
        return config.get
    return lambda name, default=None: getattr(config, name, default)


def _factor(scaling: Mapping[str, Any]) -> float:
    return real(scaling.get("factor"), "rope_scaling['factor']", low=0, low_open=True)


def _yarn(
    inv: np.ndarray, scaling: Mapping[str, Any], base: float, dim: int, get: Any
) -> tuple[np.ndarray, float]:
    original = scaling.get("original_max_position_embeddings")
    factor = scaling.get("factor")
    if factor is None:
        factor = get("max_position_embeddings") / original
    factor = real(factor, "rope_scaling['factor']", low=0, low_open=True)
    original = integer(
        original if original is not None else get("max_position_embeddings"),
        "original_max_position_embeddings",
        low=1,
    )

    def mscale(scale: float, m: float = 1.0) -> float:
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    attention = scaling.get("attention_factor")
    if attention is None:
        ms, ms_all = scaling.get("mscale"), scaling.get("mscale_all_dim")
        attention = mscale(factor, ms) / mscale(factor, ms_all) if ms and ms_all else mscale(factor)
    beta_fast, beta_slow = scaling.get("beta_fast") or 32, scaling.get("beta_slow") or 1

    def correction_dim(rotations: float) -> float:
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if scaling.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    extrapolation = 1 - ramp
    return (inv / factor) * (1 - extrapolation) + inv * extrapolation, float(attention)


def _llama3(inv: np.ndarray, scaling: Mapping[str, Any]) -> np.ndarray:
    factor = _factor(scaling)
    low_f = real(scaling.get("low_freq_factor"), "rope_scaling['low_freq_factor']", low=0, low_open=True)
    high_f = real(scaling.get("high_freq_factor"), "rope_scaling['high_freq_factor']", low=0, low_open=True)
    old = integer(scaling.get("original_max_position_embeddings"), "original_max_position_embeddings", low=1)
    low_wavelen, high_wavelen = old / low_f, old / high_f
    wavelen = 2 * math.pi / inv
    out = np.where(wavelen > low_wavelen, inv / factor, inv)
    smooth = (old / wavelen - low_f) / (high_f - low_f)
    smoothed = (1 - smooth) * out / factor + smooth * out
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, smoothed, out)
