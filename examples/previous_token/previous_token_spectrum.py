"""The previous-token head through the spectrum API: its per-offset logit is a spectrum sum.

The key ``d`` positions back scores ``sum_k cos((d - 1) theta_k)`` (``previous_token_head.py``): with
``m = d - 1`` that is ``B(m) = sum_k cos(m theta_k)`` of the head's 16 planes (``logit_spectrum``), the
previous token at ``m = 0``, the query itself at ``m = -1`` (the same value as ``m = 1``). So the head's
worst margin at length ``n`` is the least lead of the target over the keys ``m = 1 .. n - 2`` (``m = 1``
alone at ``n = 2``):

    margin_inf(n) = min over 1 <= m <= max(1, n - 2) of  L(m),   L(m) = sum_k (1 - cos(m theta_k)),

and ``L`` is itself a spectrum: the kept frequencies with amplitude -1 and one zero frequency with
amplitude the number kept (``lead_spectrum``; NoPE planes add 1 - 1 = 0). A bound "``margin_inf(n) >=
t`` at every ``n <= N``" is then one exact sweep of ``L(m) >= t`` over ``m = 1 .. N - 2``
(``sweep_spectrum(..., start=1)``; offset 0 is the target itself), certified where a row is close to
call, and its first violation ``m`` is the first failing length ``n = m + 2`` (``n = 2`` when ``m = 1``).
The p-RoPE fraction ``p`` is the design parameter: ``scan_parameter`` over ``p = 0, 1/16, .., 1``
reports the good fractions as runs.

Written only against ropeproof's public API (``from ropeproof import ...``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from previous_token_head import PLANES, frequencies, kept_planes, previous_token_head

from ropeproof import (
    ParameterScan,
    Spectrum,
    SpectrumSweep,
    compile_construction,
    scan_parameter,
    sweep_head,
    sweep_spectrum,
)

FRACTIONS = tuple(k / PLANES for k in range(PLANES + 1))
"""Every p-RoPE fraction the 16 planes allow: ``p = k / 16``."""


def logit_spectrum(p: float) -> Spectrum:
    """The head's 16 planes with unit amplitudes: ``B(m)`` is the logit of the key ``m + 1`` back."""
    return Spectrum(tuple(frequencies(p)))


def lead_spectrum(p: float) -> Spectrum:
    """``L(m) = sum_k (1 - cos(m theta_k))`` over the kept planes: the target's lead over the key ``m + 1``
    back (a zero frequency with amplitude the number kept, each kept frequency with amplitude -1)."""
    kept = frequencies(p)[: kept_planes(p)]
    return Spectrum((0.0, *kept), (float(len(kept)), *(-1.0 for _ in kept)))


def first_failing_length(m: int | None) -> int | None:
    """The length at which a lead first violated at offset ``m`` shows: ``m + 2``, or 2 when ``m = 1``."""
    return None if m is None else 2 if m == 1 else m + 2


def margin_sweep(p: float, bound: float | str, max_n: int, *, keep_values: bool = False) -> SpectrumSweep:
    """``L(m) >= bound`` for every ``m = 1 .. max_n - 2`` (so ``margin_inf(n) >= bound`` for every
    ``n <= max_n``), certified; ``bound`` as a float (a decimal string: its nearest float)."""
    return sweep_spectrum(
        lead_spectrum(p), max(1, max_n - 2), ">=", float(bound), start=1, keep_values=keep_values
    )


def fraction_scan(bound: float | str, max_n: int) -> ParameterScan:
    """For each ``p = k / 16``, whether ``margin_inf(n) >= bound`` at every ``n <= max_n`` (certified)."""
    return scan_parameter(lead_spectrum, max(1, max_n - 2), FRACTIONS, threshold=float(bound), start=1)


def margins_from_spectrum(p: float, max_n: int) -> tuple[np.ndarray, np.ndarray]:
    """``margin_inf(n)`` for ``n = 2 .. max_n`` as running minima of the lead ``L`` (float values from
    one sweep), with each row's error bound (the largest bound of the offsets it ranges over)."""
    swept = sweep_spectrum(
        lead_spectrum(p), max(1, max_n - 2), ">=", 0.0, stop_at_first=False, keep_values=True
    )
    lead, err = swept.values[1:], swept.errors[1:]  # offsets 1 .. max(1, max_n - 2)
    margins = np.minimum.accumulate(lead)
    errors = np.maximum.accumulate(err)
    # n = 2 and n = 3 both range over m = 1 only; then n = m + 2
    return np.concatenate([margins[:1], margins])[: max_n - 1], np.concatenate([errors[:1], errors])[
        : max_n - 1
    ]


def agreement(p: float, max_n: int) -> dict[str, Any]:
    """The spectrum's margins against the example's own exact sweep (``sweep_head``'s ``margin_inf``):
    the largest difference and the largest error bound over ``n = 2 .. max_n``."""
    margins, errors = margins_from_spectrum(p, max_n)
    head = sweep_head(compile_construction(previous_token_head(p)), max_n).columns["margin_inf"]
    return {
        "p": p,
        "max_n": max_n,
        "max_difference": float(np.max(np.abs(margins - head))),
        "max_error_bound": float(errors.max()),
    }
