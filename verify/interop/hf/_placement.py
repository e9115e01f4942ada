"""Placement: move a compiled head's planes onto the exact frequencies of a GPT-J or LLaMA spectrum
(see :mod:`ropeproof.verify.interop.hf`).

The searches here are spectrum arithmetic: :func:`place_gptj` (base fixed at 10000, partial rotary,
``head_dim`` = the width) and :func:`place_llama` (free ``rope_theta``, every dim rotating), for one head,
and :func:`place_gptj_layers` / :func:`place_llama_layers` for every layer of a multi-hop model. Which
search an architecture uses is its converter's choice (:mod:`ropeproof.verify.interop.hf._converters`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.constructions._multihop_compile import CompiledModel
from ropeproof.machinery._validate import integer
from ropeproof.theory._architectures import GPTJ_BASE, architecture
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.interop._errors import ExportError

FREQ_RTOL = 1e-12
"""Relative tolerance for "same frequency": float64 rounding of the spectrum formula, nothing more."""

MAX_SEARCH_DIM = 4096
"""Largest ``rotary_dim`` / ``head_dim`` / ratio exponent the placement search tries."""

LOG_FLOAT64_MAX = math.log(np.finfo(np.float64).max)
FLOAT32_MAX = float(np.finfo(np.float32).max)


def spectrum_freq(base: float, k: int, dim: int) -> float:
    """Frequency of plane ``k`` of the default spectrum, ``1 / base ** (2k / dim)``, as HF writes it."""
    return 1.0 / (base ** (2 * k / dim))


SPECTRUM_DTYPES: tuple[str, ...] = ("float32", "float64")
"""The precisions a target library may evaluate its spectrum in: transformers always float32; TransformerLens
in the model's dtype."""


def spectrum_rtol(base: float, dtype: str) -> float:
    """How far (relative) a frequency ``1 / base ** x`` (``0 <= x < 1``) evaluated in ``dtype`` may be from
    the exact one: twice the first-order bound ``(|ln base| + 4) u`` (``u`` the unit roundoff) from rounding
    the exponent ``x`` (an error of ``u x`` in ``x`` moves the result by ``|ln base| u x``), the base, the
    power and the reciprocal once each. A frequency outside it (a base past the dtype's range, a
    frequency below its normal range) is not what the library computes."""
    u = 2.0**-24 if dtype == "float32" else 2.0**-53
    return 2 * (abs(math.log(base)) + 4) * u if math.isfinite(base) and base > 0 else 0.0


def library_spectrum(base: float, dim: int, dtype: str = "float32") -> np.ndarray:
    """The ``dim / 2`` frequencies ``1 / base ** (2k / dim)`` as transformers computes them
    (``LlamaRotaryEmbedding.compute_default_rope_parameters``, GPT-J's ``create_sinusoidal_positions``:
    ``torch.arange(0, dim, 2)`` divided by ``dim`` in ``dtype``, the base raised to it, the reciprocal),
    as float64 values. ``base = inf`` gives ``(1, 0, 0, ...)``; a base past ``dtype``'s range gives
    ``inf ** x = inf`` and frequency ``0``, as in the library."""
    dt = torch.float32 if dtype == "float32" else torch.float64
    exponents = torch.arange(0, dim, 2, dtype=torch.int64).to(dt) / dim
    return (1.0 / (float(base) ** exponents)).double().numpy()


def same_freq(a: float, b: float) -> bool:
    """``a`` and ``b`` agree to :data:`FREQ_RTOL` (relative); exact zeros only match zeros."""
    return abs(a - b) <= FREQ_RTOL * max(abs(a), abs(b))


def _k_on_spectrum(f: float, base: float, dim: int) -> int | None:
    """The ``k`` with ``spectrum_freq(base, k, dim) == f`` (to FREQ_RTOL), or ``None``."""
    if f == 1.0:
        return 0
    if not math.isfinite(base) or base <= 0 or base == 1:
        return None
    k = round(-math.log(f) / math.log(base) * dim / 2)
    if 0 <= k < dim // 2 and same_freq(f, spectrum_freq(base, k, dim)):
        return k
    return None


def _nearest_on_spectrum(f: float, base: float, dim: int) -> tuple[int, float]:
    k = min(max(round(-math.log(f) / math.log(base) * dim / 2), 0), dim // 2 - 1)
    return k, spectrum_freq(base, k, dim)


@dataclass(frozen=True)
class Placement:
    """Where a head's planes and value dims go in the target architecture.

    ``planes``: ``(source plane, target plane, swapped)`` -- source plane ``p`` of the head's spec is
    written on target plane ``t`` of :meth:`target_spec`; ``swapped`` puts its two dims in reverse
    order (a negative frequency rotating as ``|theta|``). ``values``: ``(source dim, target dim)``
    of the value path. ``hidden_size``: the model width (GPT-J: equal to ``head_dim``). ``arch`` names
    an architecture of :data:`ropeproof.theory._architectures.ARCHITECTURES`, whose layout the target
    spec has.
    """

    arch: str
    head_dim: int
    rotary_dim: int
    rope_theta: float
    hidden_size: int
    planes: tuple[tuple[int, int, bool], ...]
    values: tuple[tuple[int, int], ...]

    def target_spec(self) -> RopeSpec:
        """The target head's :class:`RopeSpec` (frequencies in float64, from the formula)."""
        facts = architecture(self.arch, ExportError)
        return facts.rope_spec(self.head_dim, self.rotary_dim, self.rope_theta)

    def qk_map(self, source: RopeSpec) -> np.ndarray:
        """``S`` (``[source.head_dim, head_dim]``, 0/1) with ``q_target = q_source @ S``."""
        target = self.target_spec()
        s = np.zeros((source.head_dim, self.head_dim))
        for p, t, swapped in self.planes:
            a, b = source.plane_dims[p]
            c, d = target.plane_dims[t]
            if swapped:
                a, b = b, a
            s[a, c] = s[b, d] = 1.0
        return s

    def value_map(self, source_head_dim: int) -> np.ndarray:
        """``S_v`` (``[source_head_dim, head_dim]``, 0/1) with ``v_target = v_source @ S_v``."""
        s = np.zeros((source_head_dim, self.head_dim))
        for j, t in self.values:
            s[j, t] = 1.0
        return s

    def describe(self, source: RopeSpec) -> str:
        """One line per placed plane: source plane, frequency, target plane and dims."""
        target = self.target_spec()
        lines = []
        for p, t, swapped in self.planes:
            lines.append(
                f"plane {p} (theta={source.plane_freqs[p]:.17g}) -> {self.arch} plane k={t} "
                f"dims {target.plane_dims[t]}{' swapped' if swapped else ''} "
                f"(theta={target.plane_freqs[t]:.17g})"
            )
        return "\n".join(lines)


def _used_planes(head: CompiledHead) -> list[tuple[int, float]]:
    out = []
    for p, (a, b) in enumerate(head.spec.plane_dims):
        if np.any(head.W_Q[:, [a, b]] != 0) or np.any(head.W_K[:, [a, b]] != 0):
            out.append((p, float(head.spec.plane_freqs[p])))
    return out


def _used_value_dims(head: CompiledHead) -> list[int]:
    used = np.any(head.W_V != 0, axis=0) | np.any(head.W_O != 0, axis=1)
    return [int(j) for j in np.flatnonzero(used)]


def used_value_count(head: CompiledHead) -> int:
    """How many leading value dims the head uses: its last used value dim + 1 (0 if none)."""
    values = _used_value_dims(head)
    return (values[-1] + 1) if values else 0


def _split(planes: list[tuple[int, float]]) -> tuple[list[int], list[tuple[int, float, bool]]]:
    zeros = [p for p, f in planes if f == 0]
    rot = [(p, abs(f), f < 0) for p, f in planes if f != 0]
    seen: dict[float, int] = {}
    for p, f, _ in rot:
        for f0, p0 in seen.items():
            if same_freq(f, f0):
                raise ExportError(
                    f"planes {p0} and {p} both have |theta|={f:.17g}; a RoPE spectrum holds each nonzero "
                    "frequency on one plane only, so no exact placement exists. Merge the two planes "
                    "(same frequency = one 2-D rotation) or give them different frequencies"
                )
        seen[f] = p
    return zeros, rot


def _even(n: int) -> int:
    return n + n % 2


def _check_dim_option(name: str, value: int | None, minimum: int = 2) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum or value % 2:
        raise ExportError(f"{name}={value} must be an even integer >= {minimum}")
    return int(value)


def place_gptj(
    planes: Sequence[tuple[int, float]],
    n_values: int,
    min_hidden: int = 2,
    rotary_dim: int | None = None,
    head_dim: int | None = None,
) -> Placement:
    """Place ``(source plane, theta)`` pairs on GPT-J's spectrum (see the module docstring).

    ``n_values`` value dims and a width of at least ``min_hidden`` must fit in ``head_dim``
    (``= hidden_size`` with one head). ``rotary_dim``/``head_dim`` fix those choices.
    """
    rotary_dim = _check_dim_option("rotary_dim", rotary_dim)
    head_dim = _check_dim_option("head_dim", head_dim)
    zeros, rot = _split(list(planes))
    for p, f, _ in rot:
        if f > 1 and not same_freq(f, 1.0):
            raise ExportError(
                f"plane {p} has |theta|={f:.17g} > 1; GPT-J's frequencies 10000^(-2k/rotary_dim) lie in "
                "(0, 1], so it has no exact placement. Use theta <= 1, or llama (rope_theta < 1 gives "
                "frequencies above 1)"
            )
    candidates = [rotary_dim] if rotary_dim is not None else range(2, MAX_SEARCH_DIM + 1, 2)
    chosen: tuple[int, list[int]] | None = None
    for r in candidates:
        ks = [_k_on_spectrum(f, GPTJ_BASE, r) for _, f, _ in rot]
        if all(k is not None for k in ks) and len(set(ks)) == len(ks):
            chosen = (r, ks)  # type: ignore[assignment]
            break
    if chosen is None:
        r_hint = rotary_dim or 128
        bad = [(p, f) for p, f, _ in rot if _k_on_spectrum(f, GPTJ_BASE, r_hint) is None] or [
            (p, f) for p, f, _ in rot
        ]
        p, f = bad[0]
        k, near = _nearest_on_spectrum(f, GPTJ_BASE, r_hint)
        where = f"rotary_dim={rotary_dim}" if rotary_dim else f"any even rotary_dim <= {MAX_SEARCH_DIM}"
        raise ExportError(
            f"plane {p} has |theta|={f:.17g}, which is not on GPT-J's spectrum 10000^(-2k/rotary_dim) "
            f"(base fixed at 10000) for {where} with every plane on its own k. Nearest: k={k} of "
            f"rotary_dim={r_hint} gives {near!r} (off by {abs(f - near):.3g}); it is not used, since "
            f"export never approximates. Would work: theta = 10000**(-2*k/r) exactly (e.g. "
            f"10000**(-{2 * k}/{r_hint}) = {near!r}), theta = 0 (pass-through dims), or arch='llama' "
            "(rope_theta is chosen to fit)"
        )
    r, ks = chosen
    needed = _even(max(r + 2 * len(zeros), n_values, min_hidden))
    if head_dim is not None and head_dim < needed:
        raise ExportError(
            f"head_dim={head_dim} is too small for GPT-J: needs >= {needed} (rotary_dim={r}, "
            f"{len(zeros)} pass-through planes, {n_values} value dims, width >= {min_hidden})"
        )
    hd = head_dim or needed
    moves = [(p, k, sw) for (p, _, sw), k in zip(rot, ks, strict=True)]
    moves += [(p, r // 2 + i, False) for i, p in enumerate(zeros)]
    return Placement(
        "gptj", hd, r, GPTJ_BASE, hd, tuple(sorted(moves)), tuple((j, j) for j in range(n_values))
    )


def _nice(x: float) -> float:
    return float(f"{x:.12g}")


def _ratio_exponents(rot: list[tuple[int, float, bool]]) -> tuple[list[int], float] | None:
    """Smallest integers ``k_i`` with ``ln f_i = k_i * s`` for one step ``s`` (``f = 1`` -> ``k = 0``)."""
    logs = [math.log(f) for _, f, _ in rot]
    nonzero = [v for v in logs if v != 0]
    if not nonzero:
        return [0] * len(logs), 0.0
    ref = min(nonzero, key=abs)
    for m in range(1, MAX_SEARCH_DIM // 2):
        step = ref / m
        ks = [round(v / step) for v in logs]
        if all(k >= 0 for k in ks) and all(
            same_freq(f, math.exp(k * step)) for (_, f, _), k in zip(rot, ks, strict=True)
        ):
            return ks, step
    return None


def _ratio_base(
    ks: list[int], step: float, d: int, dtype: str, fits: Any
) -> tuple[tuple[float, int, list[int]] | None, tuple[float, int] | None]:
    """A base for frequencies ``exp(k_i step)`` on a ``d``-dim spectrum: plane ``k_i m`` of
    ``rope_theta = exp(-step d / (2 m))`` for the smallest ``m >= 1`` whose base lies in ``dtype``'s range
    (``m = 1`` unless that base overflows; larger ``m`` use higher planes and smaller bases). Returns
    ``(found, None)``, or ``(None, (least log base, d))`` when every ``m`` with ``k_i m < d/2`` overflows."""
    if not step:
        return ((10000.0, d, ks) if fits(10000.0, d) == ks else None), None
    log_limit = math.log(FLOAT32_MAX) if dtype == "float32" else LOG_FLOAT64_MAX
    top = max(ks)
    largest_m = (d // 2 - 1) // top if top else 1
    for m in range(1, largest_m + 1):
        log_base = -step * d / (2 * m)
        if log_base > log_limit:
            continue
        want = [k * m for k in ks]
        base = math.exp(log_base)
        for b in (_nice(base), base):
            if math.isfinite(b) and b > 0 and b != 1 and fits(b, d) == want:
                return (b, d, want), None
        return None, None
    return None, (-step * d / (2 * largest_m), d)


def place_llama(
    planes: Sequence[tuple[int, float]],
    n_values: int,
    hidden_size: int,
    head_dim: int | None = None,
    rope_theta: float | None = None,
    spectrum_dtype: str = "float32",
) -> Placement:
    """Place ``(source plane, theta)`` pairs on a LLaMA spectrum (see the module docstring).

    ``spectrum_dtype``: the precision the target library evaluates the spectrum in (transformers:
    ``"float32"``); every placed frequency must survive it (:func:`library_spectrum`) or the placement is
    refused."""
    head_dim = _check_dim_option("head_dim", head_dim)
    if rope_theta is not None:
        rope_theta = float(rope_theta)
        if not rope_theta > 0 or rope_theta == 1 or math.isnan(rope_theta):
            raise ExportError(f"rope_theta={rope_theta} must be > 0 and != 1 (or inf)")
    zeros, rot = _split(list(planes))
    values = tuple((j, j) for j in range(n_values))
    if zeros:
        others = [(p, f) for p, f, _ in rot if not same_freq(f, 1.0)]
        if others or (rope_theta is not None and not math.isinf(rope_theta)):
            why = (
                f"plane {others[0][0]} has theta={others[0][1]:.17g}"
                if others
                else f"rope_theta={rope_theta} is finite"
            )
            raise ExportError(
                f"plane {zeros[0]} has theta=0, but LLaMA rotates every dim (no partial rotary in this "
                "transformers' LlamaAttention); a zero frequency exists only with rope_theta=inf "
                f"(spectrum 1, 0, 0, ...), and {why}. Would work: arch='gptj' (pass-through dims), or "
                "only theta=0 and theta=1 planes with rope_theta=inf"
            )
        needed = _even(max(2 * (1 + len(zeros)), n_values))
        if head_dim is not None and head_dim < needed:
            raise ExportError(f"head_dim={head_dim} is too small: needs >= {needed}")
        hd = head_dim or needed
        moves = [(p, 0, sw) for p, _, sw in rot] + [(p, 1 + i, False) for i, p in enumerate(zeros)]
        return Placement("llama", hd, hd, math.inf, hidden_size, tuple(sorted(moves)), values)

    def fits(base: float, d: int) -> list[int] | None:
        ks = [_k_on_spectrum(f, base, d) for _, f, _ in rot]
        if all(k is not None for k in ks) and len(set(ks)) == len(ks):
            return ks  # type: ignore[return-value]
        return None

    d_min = _even(max(2, n_values))
    if head_dim is not None and head_dim < d_min:
        raise ExportError(f"head_dim={head_dim} is too small: the head's value dims need >= {d_min}")
    dims = [head_dim] if head_dim is not None else list(range(d_min, MAX_SEARCH_DIM + 1, 2))
    found: tuple[float, int, list[int]] | None = None
    for base in [rope_theta] if rope_theta is not None else [10000.0]:
        for d in dims:
            ks = fits(base, d)
            if ks is not None:
                found = (base, d, ks)
                break
    too_large: tuple[float, int] | None = None  # (least log rope_theta, head_dim) when every base overflows
    if found is None and rope_theta is None:
        ratio = _ratio_exponents(rot)
        if ratio is not None:
            ks, step = ratio
            d = head_dim or _even(max(2 * (max(ks) + 1), d_min))
            if 2 * (max(ks) + 1) <= d:
                found, too_large = _ratio_base(ks, step, d, spectrum_dtype, fits)
    if found is None and too_large is not None:
        p, f, _ = min(rot, key=lambda r: r[1])
        log_base, d = too_large
        limit = FLOAT32_MAX if spectrum_dtype == "float32" else float(np.finfo(np.float64).max)
        raise ExportError(
            f"plane {p} has |theta|={f:.3g}: a LLaMA spectrum rope_theta^(-2k/head_dim) with head_dim={d} "
            f"holds it only with rope_theta >= 10^{log_base / math.log(10):.0f}, past {spectrum_dtype}'s "
            f"range ({limit:.3g}) in which the library evaluates the spectrum (transformers: float32), so "
            "it has no exact LLaMA placement. Would work: a larger |theta|, a larger head_dim, or theta = 0 "
            "with arch='gptj' (pass-through dims)"
        )
    if found is None:
        p, f, _ = rot[0]
        if rope_theta is not None:
            how = f"rope_theta={rope_theta}" + (f", head_dim={head_dim}" if head_dim else "")
        else:
            how = "any rope_theta" + (f" with head_dim={head_dim}" if head_dim else "")
        raise ExportError(
            f"no exact LLaMA placement for the frequencies {[f for _, f, _ in rot]} with {how}: "
            "a LLaMA spectrum rope_theta^(-2k/head_dim) needs every log-frequency to be an integer "
            f"multiple k < head_dim/2 of one step (first unplaced: plane {p}, theta={f:.17g}). Would "
            "work: one nonzero frequency (any value), frequencies theta_1^k for integers k, or leave "
            "rope_theta/head_dim unset so they are chosen"
        )
    base, d, ks = found
    _check_library_spectrum(rot, ks, base, d, spectrum_dtype)
    moves = [(p, k, sw) for (p, _, sw), k in zip(rot, ks, strict=True)]
    return Placement("llama", d, d, base, hidden_size, tuple(sorted(moves)), values)


def _check_library_spectrum(
    rot: Sequence[tuple[int, float, bool]], ks: Sequence[int], base: float, dim: int, dtype: str
) -> None:
    """Refuse a placement whose frequencies the target library's ``dtype`` evaluation
    (:func:`library_spectrum`) does not reproduce within :func:`spectrum_rtol`: a ``rope_theta`` past
    float32's range (about ``3.4e38``) makes transformers' frequencies 0."""
    if dtype not in SPECTRUM_DTYPES:
        raise ExportError(f"spectrum_dtype={dtype!r} is unknown; accepted: {list(SPECTRUM_DTYPES)}")
    library = library_spectrum(base, dim, dtype)
    rtol = max(spectrum_rtol(base, dtype), FREQ_RTOL)
    for (p, f, _), k in zip(rot, ks, strict=True):
        if abs(library[k] - f) > rtol * f:
            raise ExportError(
                f"plane {p} has |theta|={f:.17g} on plane k={k} of rope_theta={base:.6g}, head_dim={dim}, "
                f"but the library evaluates that spectrum in {dtype} (transformers always; TransformerLens "
                f"in the model's dtype) and gets {library[k]:.9g}"
                + (" (rope_theta is past float32's range, 3.4e38)" if base > FLOAT32_MAX else "")
                + ". Would work: a larger |theta| (a smaller rope_theta), theta = 0 with arch='gptj' "
                "(pass-through dims), or a float64 TransformerLens export"
            )


def place_gptj_layers(
    model: CompiledModel, hidden: int | None, rotary_dim: int | None
) -> tuple[int, list[Placement]]:
    """Every layer of ``model`` on GPT-J's spectrum in [A]'s shape (one head, ``head_dim = n_embd``):
    ``n_embd`` (``hidden``, default ``d_model + 1`` rounded up to even: the spare dim of the LayerNorm
    bypass) and one :class:`Placement` per layer, ``rotary_dim`` (default ``n_embd``) shared."""
    d = model.d_model + 1
    size = d + d % 2 if hidden is None else integer(hidden, "hidden_size", error=ExportError)
    if size < d or size % 2:
        raise ExportError(f"hidden_size={size} must be even and >= d_model + 1 = {d} (the spare dim)")
    rotary = size
    if rotary_dim is not None:
        rotary = integer(rotary_dim, "rotary_dim", low=2, high=size, even=True, error=ExportError)
    placements = []
    for layer, head in enumerate(model.layers):
        planes = _used_planes(head)
        zeros = [p for p, f in planes if f == 0]
        if zeros and rotary == size:
            raise ExportError(
                f"layer {layer} has a theta = 0 plane, and with rotary_dim = n_embd = {size} every dim "
                "rotates, so a non-rotating plane has no exact home. Use rotary_dim < hidden_size (GPT-J's "
                f"partial rotary leaves the dims past it unrotated), or the lowest frequency "
                f"10000^(-{size - 2}/{size}) = {GPTJ_BASE ** (-(size - 2) / size)!r}"
            )
        try:
            placements.append(place_gptj(planes, used_value_count(head), size, rotary, size))
        except ExportError as exc:
            raise ExportError(f"layer {layer}: {exc}") from None
    return size, placements


def place_llama_layers(
    model: CompiledModel, hidden: int | None, head_dim: int | None, rope_theta: float | None
) -> tuple[int, list[Placement]]:
    """Every layer of ``model`` on one LLaMA spectrum: the width (``hidden``, default ``d_model``) and one
    :class:`Placement` per layer, sharing the ``head_dim`` and ``rope_theta`` that place the union of
    every layer's frequencies (:func:`place_llama`)."""
    union: list[tuple[int, float]] = []
    for head in model.layers:
        for _, f in _used_planes(head):
            if not any(same_freq(abs(f), abs(g)) for _, g in union):
                union.append((len(union), f))
    n_values = max(used_value_count(head) for head in model.layers)
    size = model.d_model
    if hidden is not None:
        size = integer(hidden, "hidden_size", low=model.d_model, error=ExportError)
    shared = place_llama(union, n_values, size, head_dim, rope_theta)
    placements = [
        place_llama(_used_planes(head), n_values, size, shared.head_dim, shared.rope_theta)
        for head in model.layers
    ]
    return size, placements
