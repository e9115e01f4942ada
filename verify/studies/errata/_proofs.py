"""Every correction's proof, by correction id: what a test inspects without computing the corrections (a
lemma tagged ``"definition"`` must restate a listed definition, and the steps named as argued are the
only ones not machine-checked).

Each correction's data (:class:`~ropeproof.verify.studies.errata._correction_data.CorrectionData`) carries
the same list; the errata test compares the two.
"""

from __future__ import annotations

from collections.abc import Callable

from ropeproof.theory._letter_code_bounds import (
    largest_gap_proof,
    partial_induction_proof,
    retrieval_bound_proof,
)
from ropeproof.theory._positional_readout import readout_proof
from ropeproof.theory._proof_checks import ProofStep
from ropeproof.verify.studies.errata._index import best_theta_proof, index_proof

PROOFS: dict[str, Callable[[], list[ProofStep]]] = {
    "thm3.2.index.fixed-theta": index_proof,
    "thm3.2.index.best-theta": best_theta_proof,
    "thm3.2.index.largest-gap": index_proof,
    "thm3.2.retrieval.margin": retrieval_bound_proof,
    "thm3.2.retrieval.largest-gap": largest_gap_proof,
    "remark3.1.positional-readout": readout_proof,
    "partial-induction.one-plane": partial_induction_proof,
}
"""Correction id -> the function that lists its proof's steps."""
