"""Exact measurement over whole input families, never sampled: the family a construction is judged on
(:func:`family_for`), length sweeps of [A]'s constructions against Theorem 3.2's bound
(:func:`sweep_index`, :func:`sweep_retrieval`) and of any compiled head (:func:`sweep_head`), a bound
you state judged row by row (:func:`check_bound`), the one-pass T_Index sweep (:func:`index_sweep`),
logit tables and their sweep (:func:`build_tables`, :func:`exact_sweep`) and the certified horizon of
compiled multi-hop models (:func:`certified_horizon`). Sharded and certified sweeps as runs on disk are
in :mod:`ropeproof.verify.sweep_runs`. The modules are private."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ropeproof.machinery._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "family_for": "ropeproof.verify.measure.exact._families",
    "SweepTable": "ropeproof.verify.measure.exact._sweep",
    "sweep_index": "ropeproof.verify.measure.exact._sweep",
    "sweep_spectrum": "ropeproof.verify.measure.exact._spectrum_sweep",
    "SpectrumSweep": "ropeproof.verify.measure.exact._spectrum_sweep",
    "scan_parameter": "ropeproof.verify.measure.exact._parameter_scan",
    "ParameterScan": "ropeproof.verify.measure.exact._parameter_scan",
    "partial_sum_decay": "ropeproof.verify.measure.exact._partial_sums",
    "PartialSumDecay": "ropeproof.verify.measure.exact._partial_sums",
    "sweep_retrieval": "ropeproof.verify.measure.exact._sweep",
    "HeadSweep": "ropeproof.verify.measure.exact._head_sweep",
    "sweep_head": "ropeproof.verify.measure.exact._head_sweep",
    "BoundCheck": "ropeproof.verify.measure.exact._stated_bound",
    "check_bound": "ropeproof.verify.measure.exact._stated_bound",
    "index_sweep": "ropeproof.verify.measure.exact._index_sweep",
    "build_tables": "ropeproof.verify.measure.exact._discrepancy",
    "exact_sweep": "ropeproof.verify.measure.exact._discrepancy",
    "retrieval_closed_form_outcome": "ropeproof.verify.measure.exact._closed_form_checks",
    "BASIC": "ropeproof.verify.measure.exact._multihop_certified",
    "certified_horizon": "ropeproof.verify.measure.exact._multihop_certified",
}
"""Each public name and the module that defines it; loaded on first use."""

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.verify.measure.exact._closed_form_checks import retrieval_closed_form_outcome
    from ropeproof.verify.measure.exact._discrepancy import build_tables, exact_sweep
    from ropeproof.verify.measure.exact._families import family_for
    from ropeproof.verify.measure.exact._head_sweep import HeadSweep, sweep_head
    from ropeproof.verify.measure.exact._index_sweep import index_sweep
    from ropeproof.verify.measure.exact._multihop_certified import BASIC, certified_horizon
    from ropeproof.verify.measure.exact._parameter_scan import ParameterScan, scan_parameter
    from ropeproof.verify.measure.exact._partial_sums import PartialSumDecay, partial_sum_decay
    from ropeproof.verify.measure.exact._spectrum_sweep import SpectrumSweep, sweep_spectrum
    from ropeproof.verify.measure.exact._stated_bound import BoundCheck, check_bound
    from ropeproof.verify.measure.exact._sweep import SweepTable, sweep_index, sweep_retrieval

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
