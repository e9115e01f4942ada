"""Placement: a compiled head's planes on the exact frequencies of a TransformerLens rotary spectrum.

TransformerLens' spectrum is ``rotary_base^(-2k/rotary_dim)``, ``k = 0 .. rotary_dim/2 - 1``, on
the first ``rotary_dim`` dims of ``d_head`` (the rest pass through, ``theta = 0``), in either
layout. All three numbers are free, so a head is placed

1. at base 10000 when every frequency lies on ``10000^(-2k/r)`` for some even ``r`` (GPT-J's
   search, :func:`~ropeproof.verify.interop.hf._placement.place_gptj`), else
2. on a derived base that makes every nonzero frequency an integer power of one ratio (LLaMA's
   search, :func:`~ropeproof.verify.interop.hf._placement.place_llama`, over the rotating planes),

with ``theta = 0`` planes on the pass-through dims past ``rotary_dim`` in both cases. Frequencies
are placed exactly (relative ``FREQ_RTOL``) or the export fails saying why.
"""

from __future__ import annotations

from dataclasses import dataclass

from ropeproof.constructions._head import CompiledHead
from ropeproof.theory._architectures import GPTJ_BASE
from ropeproof.theory._rope_spec import LAYOUTS, Layout, RopeSpec
from ropeproof.verify.interop._errors import ExportError
from ropeproof.verify.interop.hf._placement import (
    Placement,
    _check_dim_option,
    _even,
    _split,
    _used_planes,
    _used_value_dims,
    place_gptj,
    place_llama,
)


@dataclass(frozen=True)
class TLPlacement(Placement):
    """A :class:`~ropeproof.verify.interop.hf._placement.Placement` on a TransformerLens head:
    ``rope_theta`` is ``rotary_base``, ``head_dim`` is ``d_head``, ``hidden_size`` is ``d_model``,
    and ``layout`` is ``"interleaved"`` (``rotary_adjacent_pairs=True``) or ``"half"``."""

    layout: Layout = "interleaved"

    def target_spec(self) -> RopeSpec:
        """The TransformerLens head's :class:`RopeSpec` (frequencies in float64, from the formula)."""
        return RopeSpec(self.head_dim, self.rotary_dim, self.rope_theta, layout=self.layout)


def place_tl(
    head: CompiledHead,
    layout: Layout = "interleaved",
    rotary_dim: int | None = None,
    d_head: int | None = None,
    rotary_base: float | None = None,
    spectrum_dtype: str = "float32",
) -> TLPlacement:
    """The placement :func:`~ropeproof.verify.interop.tl._export.export_hooked_transformer` uses.

    ``rotary_dim``, ``d_head`` and ``rotary_base`` fix choices the search would otherwise make;
    :class:`ExportError` says why when no exact placement exists. ``spectrum_dtype``: the model's dtype,
    in which TransformerLens evaluates the spectrum (a derived base must survive it).
    """
    if layout not in LAYOUTS:
        raise ExportError(f"layout={layout!r} is unknown; accepted: {list(LAYOUTS)}")
    rotary_dim = _check_dim_option("rotary_dim", rotary_dim)
    d_head = _check_dim_option("d_head", d_head)
    planes, values = _used_planes(head), _used_value_dims(head)
    n_values = (values[-1] + 1) if values else 0
    hidden = 2 * head.d_model
    value_moves = tuple((j, j) for j in range(n_values))
    if rotary_base is None or float(rotary_base) == GPTJ_BASE:
        try:
            pl = place_gptj(planes, n_values, 2, rotary_dim, d_head)
            return TLPlacement(
                "tl", pl.head_dim, pl.rotary_dim, GPTJ_BASE, hidden, pl.planes, value_moves, layout
            )
        except ExportError:
            if rotary_base is not None:
                raise
    zeros, _ = _split(list(planes))
    rotating = [(p, f) for p, f in planes if f != 0]
    pl = place_llama(rotating, 0, hidden, rotary_dim, rotary_base, spectrum_dtype)
    r = pl.head_dim
    needed = _even(max(r + 2 * len(zeros), n_values, 2))
    if d_head is not None and d_head < needed:
        raise ExportError(
            f"d_head={d_head} is too small: needs >= {needed} (rotary_dim={r}, {len(zeros)} pass-through "
            f"planes, {n_values} value dims)"
        )
    moves = list(pl.planes) + [(p, r // 2 + i, False) for i, p in enumerate(zeros)]
    return TLPlacement(
        "tl", d_head or needed, r, pl.rope_theta, hidden, tuple(sorted(moves)), value_moves, layout
    )
