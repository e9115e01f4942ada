"""HF ``transformers`` interop: export compiled heads into GPT-J / LLaMA layers, import trained heads.

Needs the optional ``hf`` extra (``transformers``). The placement arithmetic below works without it;
building or reading a model imports ``transformers`` on first use.

**Export** (:func:`export_head`). A :class:`~constructions.compile.CompiledHead` becomes a one-layer
``GPTJForCausalLM`` or ``LlamaForCausalLM`` (built from a config, nothing downloaded) whose layer-0
attention computes exactly the head's logits, pattern and output:

- *Frequencies are placed, never approximated.* Every plane that carries query/key weight is moved
  onto a distinct plane of the target spectrum with the same frequency (a negative frequency onto
  ``|theta|`` with the plane's two dims swapped). "Same" means equal up to float64 rounding of the
  spectrum formula (relative ``FREQ_RTOL = 1e-12``); a 4-digit value such as ``0.8660`` is *not*
  ``10000^(-2/128) = 0.86596432...`` and is refused with an explanation.
- *GPT-J* (interleaved planes, partial rotary, base fixed at 10000): spectrum
  ``10000^(-2k/rotary_dim)``, ``k = 0 .. rotary_dim/2 - 1``, plus pass-through planes (``theta = 0``)
  beyond ``rotary_dim``. The smallest even ``rotary_dim`` that holds every frequency is chosen.
  T_Index at ``theta = 10000^(-2/128)`` lands on ``k = 1`` (dims 2, 3) of ``rotary_dim = 128`` -- [A]'s
  "frequency id 2" counts from 1 (``id = k + 1``; Retrieval's id 42 is ``k = 41``, ``0.00274``).
- *LLaMA* (half layout, every dim rotates, configurable ``rope_theta``): spectrum
  ``rope_theta^(-2k/head_dim)``. Base 10000 is tried first; otherwise ``rope_theta`` is derived so
  that every frequency is an integer power of one ratio (one plane at ``theta``: ``k = 1`` and
  ``rope_theta = theta^(-head_dim/2)``). A ``theta = 0`` plane has an exact home only at
  ``rope_theta = inf``, whose spectrum is ``(1, 0, 0, ...)`` exactly (``inf ** x = inf``, ``1/inf = 0``
  in every precision); that leaves plane 0 at frequency 1 as the only rotating plane, so a head mixing
  zero and other frequencies has no LLaMA placement (``LlamaAttention`` has no partial rotary).
- *Scale*: HF multiplies ``q . k`` by ``head_dim^(-1/2)``; ``q_proj`` carries
  ``sqrt(head_dim) * head.scale * logit_scale``.
- *Residual layout*: the head reads hidden dims ``[0, d_model)`` and writes ``[d_model, 2 d_model)``,
  so the LM head sees only the attention output, as :meth:`CompiledHead.answer` does. Value dims keep
  their indices (``v_proj``/``o_proj`` are separate projections), so ``head_dim`` is at least the
  compiled head's last used value dim + 1.
- *Norm bypass* (the LM wrapper): every norm gets ``eps = 2^80`` and gain ``2^40``. While the
  stream's (mean-square) variance stays below ``2^55`` (float32 norms) or ``2^27`` (GPT-J float64),
  ``var + eps`` rounds to ``eps``, the normaliser is exactly ``2^-40``, so RMSNorm (LLaMA) is the
  identity and LayerNorm (GPT-J) is ``x - mean(x)``; for GPT-J every matrix reading a LayerNorm
  output gets one extra column on a spare, always-zero hidden dim equal to minus its row sum, which
  cancels the mean exactly in real arithmetic. MLPs are zero. The LM's logits therefore equal
  ``output @ W_U`` of our head up to rounding (not only in argmax).

**Precision of the HF modules** (checked with transformers 4.45 to 5.24). Even in a float64 model,
GPT-J's sin/cos table and its eager ``q . k`` are float32, and LLaMA's rotary angles, RMSNorm and
eager softmax are float32. Float64 parity is therefore at float32 level except where those steps
are exact (``theta = 0`` planes: LLaMA's eager scores, SDPA outputs); the tests report the measured
differences. HF also evaluates the spectrum in float32, so "exact" frequencies are exact in float64
arithmetic and agree with HF's to float32 rounding (relative ~6e-8).

**Import** (:func:`import_head`): one head of a GPT-J or LLaMA layer (state dict + config, GQA
aware) as a :class:`~verify.attention.RopeAttention` with the architecture's layout, ``rotary_dim``,
frequencies (computed in float64 from the formula; HF evaluates them in float32) and scale.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from constructions.compile import CompiledHead
from verify.attention import RopeAttention
from verify.devices import DeviceLike, DtypeLike, resolve_device, resolve_dtype
from verify.errors import RopeproofError
from verify.rope import RopeSpec

ARCHITECTURES: tuple[str, ...] = ("gptj", "llama")
"""Architectures this module exports to and imports from."""

GPTJ_BASE = 10000.0
"""GPT-J's RoPE base; fixed in its code (``create_sinusoidal_positions``)."""

FREQ_RTOL = 1e-12
"""Relative tolerance for "same frequency": float64 rounding of the spectrum formula, nothing more."""

MAX_SEARCH_DIM = 4096
"""Largest ``rotary_dim`` / ``head_dim`` / ratio exponent the placement search tries."""

NORM_EPS = 2.0**80
"""Norm epsilon of the exported LM: dominates any variance the stream reaches, exactly in float32."""

NORM_GAIN = 2.0**40
"""Norm gain of the exported LM: ``sqrt(NORM_EPS)``, so normalise-then-scale is exact."""

EXPORT_INFO_FILE = "ropeproof_export.json"
"""File written next to ``config.json`` by :meth:`HFExport.save_pretrained`."""


class ExportError(RopeproofError):
    """A head cannot be exported exactly (no placement, bad option, or ``transformers`` missing)."""


class HeadImportError(RopeproofError):
    """A state dict / config cannot be read as a RoPE attention head."""


def _transformers() -> Any:
    try:
        import transformers
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ExportError(
            "transformers is not installed; install the optional extra: pip install 'ropeproof[hf]'"
        ) from exc
    return transformers


def _check_arch(arch: str, error: type[RopeproofError]) -> str:
    if not isinstance(arch, str) or arch.lower() not in ARCHITECTURES:
        raise error(f"arch={arch!r} is unknown; accepted: {list(ARCHITECTURES)}")
    return arch.lower()


# --------------------------------------------------------------------------------------------------
# placement


def spectrum_freq(base: float, k: int, dim: int) -> float:
    """Frequency of plane ``k`` of the default spectrum, ``1 / base ** (2k / dim)``, as HF writes it."""
    return 1.0 / (base ** (2 * k / dim))


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
    of the value path. ``hidden_size``: the model width (GPT-J: equal to ``head_dim``).
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
        if self.arch == "gptj":
            return RopeSpec(self.head_dim, self.rotary_dim, GPTJ_BASE, layout="interleaved")
        if math.isinf(self.rope_theta):
            freqs = [1.0] + [0.0] * (self.head_dim // 2 - 1)
            return RopeSpec(self.head_dim, self.head_dim, freqs=freqs, layout="half")
        return RopeSpec(self.head_dim, self.head_dim, self.rope_theta, layout="half")

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


def place_llama(
    planes: Sequence[tuple[int, float]],
    n_values: int,
    hidden_size: int,
    head_dim: int | None = None,
    rope_theta: float | None = None,
) -> Placement:
    """Place ``(source plane, theta)`` pairs on a LLaMA spectrum (see the module docstring)."""
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
    if found is None and rope_theta is None:
        ratio = _ratio_exponents(rot)
        if ratio is not None:
            ks, step = ratio
            d = head_dim or _even(max(2 * (max(ks) + 1), d_min))
            if 2 * (max(ks) + 1) <= d:
                base = math.exp(-step * d / 2) if step else 10000.0
                for b in (_nice(base), base):
                    if math.isfinite(b) and b > 0 and b != 1 and fits(b, d) == ks:
                        found = (b, d, ks)
                        break
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
    moves = [(p, k, sw) for (p, _, sw), k in zip(rot, ks, strict=True)]
    return Placement("llama", d, d, base, hidden_size, tuple(sorted(moves)), values)


def place_head(
    head: CompiledHead,
    arch: str,
    rotary_dim: int | None = None,
    head_dim: int | None = None,
    rope_theta: float | None = None,
) -> Placement:
    """The :class:`Placement` :func:`export_head` uses for ``head`` in ``arch``; raises if none is exact."""
    arch = _check_arch(arch, ExportError)
    planes, values = _used_planes(head), _used_value_dims(head)
    n_values = (values[-1] + 1) if values else 0
    if arch == "gptj":
        if rope_theta is not None and float(rope_theta) != GPTJ_BASE:
            raise ExportError(f"rope_theta={rope_theta}: GPT-J's base is fixed at 10000; use arch='llama'")
        return place_gptj(planes, n_values, 2 * head.d_model + 1, rotary_dim, head_dim)
    if rotary_dim is not None:
        raise ExportError(
            f"rotary_dim={rotary_dim}: LLaMA rotates all of head_dim (no partial rotary); use head_dim"
        )
    return place_llama(planes, n_values, 2 * head.d_model, head_dim, rope_theta)


# --------------------------------------------------------------------------------------------------
# export


@dataclass(frozen=True)
class ExportInfo:
    """What an export did: enough to map an imported head back onto the compiled one.

    ``read_dims``/``write_dims``: hidden dims holding the head's input / output residual stream
    (``d_model`` each); ``spare_dim``: GPT-J's always-zero dim carrying the LayerNorm compensation.
    ``logit_scale`` multiplied the logits on top of ``head_scale``.
    """

    name: str
    tokens: tuple[str, ...]
    source_spec: RopeSpec
    placement: Placement
    read_dims: tuple[int, ...]
    write_dims: tuple[int, ...]
    spare_dim: int | None
    head_scale: float
    logit_scale: float
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def arch(self) -> str:
        return self.placement.arch

    @property
    def d_model(self) -> int:
        return len(self.read_dims)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """Residual inputs ``[..., d_model]`` -> hidden states ``[..., hidden_size]`` (zeros elsewhere)."""
        out = x.new_zeros((*x.shape[:-1], self.placement.hidden_size))
        out[..., list(self.read_dims)] = x
        return out

    def read_output(self, hidden: torch.Tensor) -> torch.Tensor:
        """The head's output ``[..., d_model]`` from an attention layer's ``[..., hidden_size]`` output."""
        return hidden[..., list(self.write_dims)]

    def import_kwargs(self) -> dict[str, Any]:
        """``read_dims``/``write_dims`` for :func:`import_head` on this export."""
        return {"read_dims": list(self.read_dims), "write_dims": list(self.write_dims)}

    def to_source(self, attention: RopeAttention) -> RopeAttention:
        """An imported head (``d_model`` restricted by :meth:`import_kwargs`) in the compiled head's dims.

        Undoes the plane/value placement and ``logit_scale``; the result has the source spec and
        ``scale = head_scale``, so its matrices equal the compiled head's (to rounding).
        """
        spec, pl = self.source_spec, self.placement
        if attention.spec.head_dim != pl.head_dim or attention.d_model != self.d_model:
            raise HeadImportError(
                f"attention has head_dim={attention.spec.head_dim}, d_model={attention.d_model}; this "
                f"export needs head_dim={pl.head_dim}, d_model={self.d_model} (import with "
                "**info.import_kwargs())"
            )
        s, sv = pl.qk_map(spec), pl.value_map(spec.head_dim)
        w = {n: getattr(attention, n).detach().double().cpu().numpy() for n in ("W_Q", "W_K", "W_V", "W_O")}
        q_factor = attention.scale / (self.logit_scale * self.head_scale)
        return RopeAttention(
            w["W_Q"] @ s.T * q_factor,
            w["W_K"] @ s.T,
            w["W_V"] @ sv.T,
            sv @ w["W_O"],
            spec,
            self.head_scale,
            attention.device,
            attention.dtype,
        )

    def to_json(self) -> dict[str, Any]:
        pl = self.placement
        return {
            "name": self.name,
            "tokens": list(self.tokens),
            "source_spec": {
                "head_dim": self.source_spec.head_dim,
                "rotary_dim": self.source_spec.rotary_dim,
                "freqs": self.source_spec.rotating_freqs.tolist(),
                "layout": self.source_spec.layout,
            },
            "placement": {
                "arch": pl.arch,
                "head_dim": pl.head_dim,
                "rotary_dim": pl.rotary_dim,
                "rope_theta": "inf" if math.isinf(pl.rope_theta) else pl.rope_theta,
                "hidden_size": pl.hidden_size,
                "planes": [list(m) for m in pl.planes],
                "values": [list(m) for m in pl.values],
            },
            "read_dims": list(self.read_dims),
            "write_dims": list(self.write_dims),
            "spare_dim": self.spare_dim,
            "head_scale": self.head_scale,
            "logit_scale": self.logit_scale,
            "metadata": self.metadata,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ExportInfo:
        s, p = data["source_spec"], data["placement"]
        placement = Placement(
            p["arch"],
            int(p["head_dim"]),
            int(p["rotary_dim"]),
            float(p["rope_theta"]),
            int(p["hidden_size"]),
            tuple((int(a), int(b), bool(c)) for a, b, c in p["planes"]),
            tuple((int(a), int(b)) for a, b in p["values"]),
        )
        return cls(
            name=data["name"],
            tokens=tuple(data["tokens"]),
            source_spec=RopeSpec(s["head_dim"], s["rotary_dim"], freqs=s["freqs"], layout=s["layout"]),
            placement=placement,
            read_dims=tuple(data["read_dims"]),
            write_dims=tuple(data["write_dims"]),
            spare_dim=data["spare_dim"],
            head_scale=float(data["head_scale"]),
            logit_scale=float(data["logit_scale"]),
            metadata=dict(data.get("metadata", {})),
        )


def load_export_info(path: str | Path) -> ExportInfo:
    """Read the :class:`ExportInfo` that :meth:`HFExport.save_pretrained` wrote into ``path``."""
    file = Path(path) / EXPORT_INFO_FILE
    if not file.is_file():
        raise HeadImportError(f"{file} does not exist; it is written by HFExport.save_pretrained")
    return ExportInfo.from_json(json.loads(file.read_text()))


@dataclass
class HFExport:
    """An exported head: the one-layer causal LM (``model``) and how it was laid out (``info``)."""

    model: Any
    info: ExportInfo

    @property
    def config(self) -> Any:
        return self.model.config

    @property
    def attention(self) -> Any:
        """The layer-0 attention module (``GPTJAttention`` / ``LlamaAttention``)."""
        return attention_module(self.model, self.info.arch)

    def ids(self, sequences: Sequence[Sequence[str]]) -> torch.Tensor:
        """Token ids ``[batch, n]`` of equal-length sequences of token names."""
        index = {t: i for i, t in enumerate(self.info.tokens)}
        try:
            return torch.tensor([[index[t] for t in seq] for seq in sequences], dtype=torch.long)
        except KeyError as exc:
            raise ExportError(f"unknown token {exc.args[0]!r}; this export has {len(index)} tokens") from None

    def lm_logits(self, sequences: Sequence[Sequence[str]]) -> torch.Tensor:
        """The causal LM's logits ``[batch, n, vocab]`` on token-name sequences."""
        with torch.no_grad():
            return self.model(input_ids=self.ids(sequences)).logits

    def answer(self, sequences: Sequence[Sequence[str]]) -> list[str]:
        """The LM's argmax token at the last position of each sequence."""
        last = self.lm_logits(sequences)[:, -1]
        return [self.info.tokens[int(i)] for i in last.argmax(-1)]

    def save_pretrained(self, path: str | Path) -> Path:
        """``model.save_pretrained(path)`` plus :data:`EXPORT_INFO_FILE`."""
        path = Path(path)
        self.model.save_pretrained(path)
        (path / EXPORT_INFO_FILE).write_text(json.dumps(self.info.to_json(), indent=1))
        return path


def _config(arch: str, pl: Placement, vocab: int, max_positions: int, attn_implementation: str) -> Any:
    tf = _transformers()
    common = {
        "vocab_size": vocab,
        "tie_word_embeddings": False,
        "bos_token_id": None,
        "eos_token_id": None,
        "pad_token_id": None,
        "attn_implementation": attn_implementation,
    }
    if arch == "gptj":
        return tf.GPTJConfig(
            n_embd=pl.hidden_size,
            n_head=1,
            n_layer=1,
            n_inner=1,
            rotary_dim=pl.rotary_dim,
            n_positions=max_positions,
            layer_norm_epsilon=NORM_EPS,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            **common,
        )
    return tf.LlamaConfig(
        hidden_size=pl.hidden_size,
        intermediate_size=1,
        num_hidden_layers=1,
        num_attention_heads=1,
        num_key_value_heads=1,
        head_dim=pl.head_dim,
        rope_theta=pl.rope_theta,
        rms_norm_eps=NORM_EPS,
        max_position_embeddings=max_positions,
        attention_bias=False,
        mlp_bias=False,
        **common,
    )


def export_head(
    head: CompiledHead,
    arch: str,
    *,
    rotary_dim: int | None = None,
    head_dim: int | None = None,
    rope_theta: float | None = None,
    logit_scale: float = 1.0,
    dtype: DtypeLike = torch.float32,
    max_positions: int = 2048,
    attn_implementation: str = "eager",
) -> HFExport:
    """Export ``head`` as a one-layer ``GPTJForCausalLM`` / ``LlamaForCausalLM`` (eager attention).

    ``arch``: ``"gptj"`` or ``"llama"``. ``rotary_dim`` (GPT-J), ``head_dim`` and ``rope_theta``
    (LLaMA) fix choices the placement would otherwise make; if they leave no exact placement an
    :class:`ExportError` says why and what would work. ``logit_scale`` multiplies the head's logits
    (e.g. a large value makes softmax pick the argmax key). ``dtype``: ``float32`` or ``float64``
    (see the module docstring on what HF still computes in float32). ``max_positions``: the longest
    sequence (GPT-J's sin/cos table, LLaMA's ``max_position_embeddings``). ``attn_implementation``:
    ``"eager"`` (returns attention weights; what the parity checks use) or e.g. ``"sdpa"``.
    """
    if not isinstance(head, CompiledHead):
        raise ExportError(f"head must be a CompiledHead, got {type(head).__name__}")
    logit_scale = float(logit_scale)
    if not math.isfinite(logit_scale) or logit_scale <= 0:
        raise ExportError(f"logit_scale={logit_scale} must be finite and > 0")
    dt = resolve_dtype(dtype)
    if dt not in (torch.float32, torch.float64):
        raise ExportError(f"dtype={dt} is not supported; accepted: float32, float64")
    if isinstance(max_positions, bool) or not isinstance(max_positions, int) or max_positions < 1:
        raise ExportError(f"max_positions={max_positions} must be an integer >= 1")
    pl = place_head(head, arch, rotary_dim, head_dim, rope_theta)
    arch = pl.arch
    d = head.d_model
    read, write = np.arange(d), np.arange(d, 2 * d)
    spare = 2 * d if arch == "gptj" else None
    s, sv = pl.qk_map(head.spec), pl.value_map(head.spec.head_dim)
    h, hid, vocab = pl.head_dim, pl.hidden_size, head.vocab_size
    q_w, k_w, v_w = (np.zeros((h, hid)) for _ in range(3))
    q_w[:, read] = (head.W_Q @ s * (math.sqrt(h) * head.scale * logit_scale)).T
    k_w[:, read] = (head.W_K @ s).T
    v_w[:, read] = (head.W_V @ sv).T
    o_w = np.zeros((hid, h))
    o_w[write, :] = (sv.T @ head.W_O).T
    emb = np.zeros((vocab, hid))
    emb[:, read] = head.W_E
    lm = np.zeros((vocab, hid))
    lm[:, write] = head.W_U.T
    if spare is not None:  # LayerNorm output is x - mean(x): make every reader annihilate constants
        for w in (q_w, k_w, v_w, lm):
            w[:, spare] = -w.sum(axis=1)
    config = _config(arch, pl, vocab, max_positions, attn_implementation)
    tf = _transformers()
    model_cls = tf.GPTJForCausalLM if arch == "gptj" else tf.LlamaForCausalLM
    torch_state = torch.random.get_rng_state()
    try:
        model = model_cls(config)
    finally:  # HF initialisation draws random weights we overwrite; leave the caller's RNG alone
        torch.random.set_rng_state(torch_state)
    model = model.to(dt).eval()
    gain = np.full(hid, NORM_GAIN)
    if arch == "gptj":
        pre = "transformer.h.0."
        new = {
            "transformer.wte.weight": emb,
            pre + "attn.q_proj.weight": q_w,
            pre + "attn.k_proj.weight": k_w,
            pre + "attn.v_proj.weight": v_w,
            pre + "attn.out_proj.weight": o_w,
            pre + "ln_1.weight": gain,
            "transformer.ln_f.weight": gain,
            "lm_head.weight": lm,
        }
    else:
        pre = "model.layers.0."
        new = {
            "model.embed_tokens.weight": emb,
            pre + "self_attn.q_proj.weight": q_w,
            pre + "self_attn.k_proj.weight": k_w,
            pre + "self_attn.v_proj.weight": v_w,
            pre + "self_attn.o_proj.weight": o_w,
            pre + "input_layernorm.weight": gain,
            pre + "post_attention_layernorm.weight": gain,
            "model.norm.weight": gain,
            "lm_head.weight": lm,
        }
    state = model.state_dict()
    for key, value in state.items():  # everything else (MLP, norm biases) is zero
        state[key] = torch.as_tensor(new[key], dtype=dt) if key in new else torch.zeros_like(value)
    missing = set(new) - set(state)
    if missing:  # pragma: no cover - guards against a transformers rename
        raise ExportError(f"this transformers version has no parameters {sorted(missing)}")
    model.load_state_dict(state)
    info = ExportInfo(
        name=head.name,
        tokens=tuple(head.tokens),
        source_spec=head.spec,
        placement=pl,
        read_dims=tuple(int(i) for i in read),
        write_dims=tuple(int(i) for i in write),
        spare_dim=spare,
        head_scale=float(head.scale),
        logit_scale=logit_scale,
        metadata={"construction": head.metadata.get("construction", head.name)},
    )
    return HFExport(model, info)


# --------------------------------------------------------------------------------------------------
# running HF attention


def _base_model(model: Any, arch: str) -> Any:
    return getattr(model, "transformer" if arch == "gptj" else "model", model)


def attention_module(model: Any, arch: str, layer: int = 0) -> Any:
    """Layer ``layer``'s attention module of a GPT-J / LLaMA model (causal LM or base model)."""
    arch = _check_arch(arch, HeadImportError)
    base = _base_model(model, arch)
    layers = base.h if arch == "gptj" else base.layers
    if not 0 <= layer < len(layers):
        raise HeadImportError(f"layer={layer} is out of range; the model has layers 0..{len(layers) - 1}")
    return layers[layer].attn if arch == "gptj" else layers[layer].self_attn


@dataclass(frozen=True)
class HFAttentionResult:
    """What an HF attention module computed: ``scores`` (pre-softmax, as fed to softmax, masked
    entries at a large negative value) and ``weights``, ``[batch, heads, n, n]``; ``output``
    ``[batch, n, hidden_size]``."""

    scores: torch.Tensor
    weights: torch.Tensor
    output: torch.Tensor


@contextlib.contextmanager
def capture_softmax_inputs() -> Iterator[list[torch.Tensor]]:
    """Record every 4-D tensor passed to ``torch.nn.functional.softmax`` inside the block.

    HF's eager attention calls ``nn.functional.softmax(scores, ...)`` on exactly the scaled, masked
    ``q . k`` scores; this reads them without re-deriving anything. Not thread-safe.
    """
    fn = torch.nn.functional
    original = fn.softmax
    seen: list[torch.Tensor] = []

    def recording(input: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        if isinstance(input, torch.Tensor) and input.ndim == 4:
            seen.append(input.detach().clone())
        return original(input, *args, **kwargs)

    fn.softmax = recording
    try:
        yield seen
    finally:
        fn.softmax = original


def hf_attention_forward(model: Any, arch: str, hidden: torch.Tensor, layer: int = 0) -> HFAttentionResult:
    """Run layer ``layer``'s HF attention module on ``hidden`` (``[batch, n, hidden_size]``).

    Positions ``0 .. n-1``, causal mask as an additive ``finfo.min`` mask (what eager attention
    receives from the model). The model must use eager attention for ``weights``/``scores``.
    """
    arch = _check_arch(arch, HeadImportError)
    attn = attention_module(model, arch, layer)
    batch, n, _ = hidden.shape
    dev = hidden.device
    pos = torch.arange(n, device=dev).unsqueeze(0).expand(batch, n)
    future = torch.ones(n, n, dtype=torch.bool, device=dev).triu(1)
    mask = torch.zeros(1, 1, n, n, dtype=hidden.dtype, device=dev)
    mask = mask.masked_fill(future, torch.finfo(hidden.dtype).min)
    with torch.no_grad(), capture_softmax_inputs() as seen:
        if arch == "gptj" and hasattr(attn, "embed_positions"):  # older GPT-J: rotary inside attention
            out = attn(hidden_states=hidden, attention_mask=mask, position_ids=pos, output_attentions=True)
        else:
            pe = _base_model(model, arch).rotary_emb(hidden, pos)
            out = attn(
                hidden_states=hidden,
                position_embeddings=pe,
                attention_mask=mask,
                position_ids=pos,
                output_attentions=True,
            )
    weights = [t for t in out[1:] if isinstance(t, torch.Tensor) and t.ndim == 4]
    if not weights or not seen:
        raise HeadImportError(
            "the attention module returned no weights; load the model with attn_implementation='eager'"
        )
    return HFAttentionResult(scores=seen[-1], weights=weights[0], output=out[0])


# --------------------------------------------------------------------------------------------------
# import


def _cfg(config: Any, *names: str, default: Any = None) -> Any:
    for name in names:
        value = config.get(name) if isinstance(config, Mapping) else getattr(config, name, None)
        if value is not None:
            return value
    return default


def _int_cfg(config: Any, what: str, *names: str, default: Any = None) -> int:
    value = _cfg(config, *names, default=default)
    if value is None:
        raise HeadImportError(f"config has no {what} (looked for {list(names)})")
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise HeadImportError(f"config {names[0]}={value!r} must be a positive integer")
    return int(value)


@dataclass(frozen=True)
class _HeadGeometry:
    hidden: int
    n_heads: int
    n_kv: int
    head_dim: int
    spec: RopeSpec
    prefixes: tuple[str, ...]
    names: tuple[str, str, str, str]


def _llama_rope(config: Any) -> float:
    params = _cfg(config, "rope_parameters")
    if isinstance(params, Mapping) and "rope_theta" not in params and params:
        raise HeadImportError(
            f"config rope_parameters={dict(params)} has no rope_theta (per-layer-type RoPE is not supported)"
        )
    scaling = _cfg(config, "rope_scaling")
    rope_type = (
        (params or {}).get("rope_type") or (scaling or {}).get("rope_type") or (scaling or {}).get("type")
    )
    if rope_type not in (None, "default"):
        raise HeadImportError(
            f"config rope_type={rope_type!r} rescales frequencies or positions; only the default RoPE "
            "is imported exactly"
        )
    factor = _cfg(config, "partial_rotary_factor", default=1.0)
    if float(factor) != 1.0:
        raise HeadImportError(
            f"config partial_rotary_factor={factor}: LlamaAttention rotates the whole head; a partial "
            "factor is not imported"
        )
    theta = _cfg(config, "rope_theta") or (params or {}).get("rope_theta")
    if theta is None:
        raise HeadImportError("config has no rope_theta (nor rope_parameters['rope_theta'])")
    if isinstance(theta, Mapping) and "__float__" in theta:
        theta = theta["__float__"]
    theta = float(theta)
    if not theta > 0 or theta == 1:
        raise HeadImportError(f"config rope_theta={theta} must be > 0 and != 1")
    return theta


def _geometry(arch: str, config: Any, layer: int) -> _HeadGeometry:
    model_type = _cfg(config, "model_type")
    if model_type is not None and model_type != arch:
        raise HeadImportError(f"config.model_type={model_type!r} does not match arch={arch!r}")
    if arch == "gptj":
        hidden = _int_cfg(config, "hidden size", "n_embd", "hidden_size")
        n_heads = _int_cfg(config, "head count", "n_head", "num_attention_heads")
        if hidden % n_heads:
            raise HeadImportError(f"config n_embd={hidden} is not divisible by n_head={n_heads}")
        head_dim = hidden // n_heads
        rotary = _cfg(config, "rotary_dim")
        rotary = int(rotary) if rotary is not None else hidden
        if rotary > head_dim or rotary % 2:
            raise HeadImportError(
                f"config rotary_dim={rotary} (None means n_embd) must be even and <= head_dim="
                f"n_embd/n_head={head_dim}"
            )
        spec = RopeSpec(head_dim, rotary, GPTJ_BASE, layout="interleaved")
        prefixes = (f"transformer.h.{layer}.attn.", f"h.{layer}.attn.", "")
        return _HeadGeometry(hidden, n_heads, n_heads, head_dim, spec, prefixes, ("q", "k", "v", "out"))
    hidden = _int_cfg(config, "hidden size", "hidden_size")
    n_heads = _int_cfg(config, "head count", "num_attention_heads")
    n_kv = _int_cfg(config, "key/value head count", "num_key_value_heads", default=n_heads)
    if n_heads % n_kv:
        raise HeadImportError(
            f"config num_attention_heads={n_heads} is not a multiple of num_key_value_heads={n_kv}; GQA "
            "maps query head h to key/value head h // (num_attention_heads / num_key_value_heads)"
        )
    head_dim = _int_cfg(config, "head_dim", "head_dim", default=hidden // n_heads)
    if head_dim % 2:
        raise HeadImportError(f"config head_dim={head_dim} must be even")
    theta = _llama_rope(config)
    if math.isinf(theta):
        spec = RopeSpec(head_dim, head_dim, freqs=[1.0] + [0.0] * (head_dim // 2 - 1), layout="half")
    else:
        spec = RopeSpec(head_dim, head_dim, theta, layout="half")
    prefixes = (f"model.layers.{layer}.self_attn.", f"layers.{layer}.self_attn.", "")
    return _HeadGeometry(hidden, n_heads, n_kv, head_dim, spec, prefixes, ("q", "k", "v", "o"))


def _dims(name: str, dims: slice | Sequence[int] | None, hidden: int) -> np.ndarray:
    if dims is None:
        return np.arange(hidden)
    idx = np.arange(hidden)[dims] if isinstance(dims, slice) else np.asarray(dims, dtype=np.int64)
    if idx.ndim != 1 or idx.size == 0 or idx.min() < 0 or idx.max() >= hidden:
        raise HeadImportError(f"{name} must select dims in 0..{hidden - 1}, got {dims!r}")
    return idx


def import_head(
    arch: str,
    state_dict: Mapping[str, torch.Tensor],
    config: Any,
    layer: int = 0,
    head: int = 0,
    *,
    read_dims: slice | Sequence[int] | None = None,
    write_dims: slice | Sequence[int] | None = None,
    fold_scale: bool = True,
    device: DeviceLike = "auto",
    dtype: DtypeLike = torch.float64,
) -> RopeAttention:
    """Query head ``head`` of layer ``layer`` of a GPT-J / LLaMA model as a :class:`RopeAttention`.

    ``state_dict``: a causal LM's, a base model's (``transformer.``/``model.`` prefix dropped), or one
    attention module's (then ``layer`` is not looked up). ``config``: the model's config object or
    its dict. Keys other than the four projections are ignored, including the legacy ``attn.bias`` /
    ``attn.masked_bias`` buffers of old GPT-J checkpoints. GQA (LLaMA): query head ``h`` reads
    key/value head ``h // (num_attention_heads / num_key_value_heads)``.

    The spec is GPT-J's (interleaved, ``rotary_dim`` from the config, base 10000) or LLaMA's (half,
    ``rope_theta``); frequencies are the formula's in float64 (HF evaluates them in float32).
    ``fold_scale=True`` divides ``W_Q`` by ``sqrt(head_dim)`` and sets ``scale = 1`` (the
    constructions' convention); ``False`` keeps the weights and sets ``scale = head_dim^(-1/2)``.
    ``read_dims``/``write_dims`` restrict ``d_model`` to the hidden dims the head reads (rows of
    ``W_Q/W_K/W_V``) and writes (columns of ``W_O``); both must have the same size.
    """
    arch = _check_arch(arch, HeadImportError)
    if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
        raise HeadImportError(f"layer={layer} must be an integer >= 0")
    geo = _geometry(arch, config, layer)
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < geo.n_heads:
        raise HeadImportError(f"head={head} is out of range; the config has heads 0..{geo.n_heads - 1}")
    if not isinstance(state_dict, Mapping):
        raise HeadImportError(
            f"state_dict must be a mapping of names to tensors, got {type(state_dict).__name__}"
        )
    first = f"{geo.names[0]}_proj.weight"
    prefix = next((p for p in geo.prefixes if p + first in state_dict), None)
    if prefix is None:
        layer_ids = sorted(
            {int(k.split(".")[-4]) for k in state_dict if k.endswith(first) and k.split(".")[-4].isdigit()}
        )
        raise HeadImportError(
            f"missing keys: state_dict has none of {[p + first for p in geo.prefixes]}"
            + (f"; layers present: {layer_ids}" if layer_ids else f"; it has {len(state_dict)} keys")
        )
    hd, group = geo.head_dim, geo.n_heads // geo.n_kv
    kv = head // group
    expected = {
        "q": (geo.n_heads * hd, geo.hidden),
        "k": (geo.n_kv * hd, geo.hidden),
        "v": (geo.n_kv * hd, geo.hidden),
        geo.names[3]: (geo.hidden, geo.n_heads * hd),
    }
    weights = {}
    for short in geo.names:
        key = f"{prefix}{short}_proj.weight"
        if key not in state_dict:
            raise HeadImportError(f"missing key {key!r} in state_dict")
        w = torch.as_tensor(state_dict[key]).detach().to("cpu", torch.float64)
        if tuple(w.shape) != expected[short]:
            what = "GQA: num_key_value_heads * head_dim" if short in ("k", "v") else "the config"
            raise HeadImportError(
                f"{key} has shape {tuple(w.shape)}; {what} gives {expected[short]} (hidden={geo.hidden}, "
                f"heads={geo.n_heads}, kv_heads={geo.n_kv}, head_dim={hd})"
            )
        bias = state_dict.get(f"{prefix}{short}_proj.bias")
        if bias is not None and torch.as_tensor(bias).abs().max() != 0:
            raise HeadImportError(f"{prefix}{short}_proj.bias is nonzero; RopeAttention has no biases")
        weights[short] = w
    rows_q = slice(head * hd, (head + 1) * hd)
    rows_kv = slice(kv * hd, (kv + 1) * hd)
    read = _dims("read_dims", read_dims, geo.hidden)
    write = _dims("write_dims", write_dims, geo.hidden)
    if read.size != write.size:
        raise HeadImportError(f"read_dims has {read.size} dims and write_dims {write.size}; they must match")
    w_q = weights["q"][rows_q].T[read]
    w_k = weights["k"][rows_kv].T[read]
    w_v = weights["v"][rows_kv].T[read]
    w_o = weights[geo.names[3]][:, rows_q].T[:, write]
    if fold_scale:
        w_q, scale = w_q / math.sqrt(hd), 1.0
    else:
        scale = hd**-0.5
    return RopeAttention(w_q, w_k, w_v, w_o, geo.spec, scale, resolve_device(device), dtype)


def import_model_head(
    model: Any, arch: str | None = None, layer: int = 0, head: int = 0, **kwargs: Any
) -> RopeAttention:
    """:func:`import_head` on a loaded ``transformers`` model (``arch`` defaults to its model type)."""
    arch = arch or getattr(model.config, "model_type", None) or ""
    return import_head(arch, model.state_dict(), model.config, layer, head, **kwargs)
