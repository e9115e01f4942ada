"""The correction of [B]'s one-plane partial-induction statement, computed and checked (docs/theory.md
section 9).

:func:`partial_induction_correction` takes [A]'s letter code on one plane at ``theta = omega / (2 n0)``,
which solves every input up to length ``n0 + 1``, and compares its exact worst margin
(:meth:`ropeproof.verify.studies.beyond._partial_induction.OnePlaneHead.margins`) with the closed form of
:mod:`ropeproof.theory._letter_code_bounds` at every length up to its horizon, where the margin first
fails; the margin at ``n0`` is also enclosed by interval arithmetic.
"""

from __future__ import annotations

import math

import numpy as np

from ropeproof.machinery._result_store import ResultStore, object_product
from ropeproof.machinery._validate import integer
from ropeproof.theory._letter_code_bounds import (
    code_horizon,
    code_partial_induction_margin,
    partial_induction_proof,
)
from ropeproof.verify.studies.beyond._letter_codes import horizon
from ropeproof.verify.studies.beyond._partial_induction import certified_one_plane_margin, retrieval_code_head
from ropeproof.verify.studies.errata._correction_data import CorrectionData, Series, with_steps_run

ALPHABET, LENGTH = 4, 16
"""The setting of the claim ``partial-induction.one-plane.fixed-length``."""


def design_angle(alphabet: int, length: int) -> float:
    """``omega / (2 n0)``: the letter code then solves partial induction up to length ``n0 + 1``."""
    return 2 * math.pi / alphabet / (2 * length)


def partial_induction_correction(alphabet: int = ALPHABET, length: int = LENGTH) -> CorrectionData:
    """The one-plane letter code at :func:`design_angle` on partial induction: exact margins against the
    closed form at every length up to the horizon, the first failing length, and against [B]'s "one plane
    cannot" (a margin ``<= 0`` at ``length``)."""
    length = integer(length, "length", low=3, high=200)
    theta = design_angle(alphabet, length)
    head = retrieval_code_head(alphabet, theta)
    top = code_horizon(theta, alphabet)
    margins = head.margins(top + 1, cyclic=True)  # n = 2 .. top + 1
    n = np.arange(2, top + 1)
    closed = np.array([code_partial_induction_margin(int(k), theta, alphabet) for k in n])
    # [B]'s reading (a) speaks of the one length only: no one-plane head has a positive margin there
    said = np.where(n == length, 0.0, np.nan)
    s = Series(f"|ALPH| = {alphabet}, theta = omega/{2 * length}", n, margins[:-1], said, said, closed)
    lo, hi = certified_one_plane_margin(head, length)
    n2_margin = math.cos(theta) - math.cos(2 * math.pi / alphabet)
    witness = {
        "head": head.as_dict(),
        "n": length,
        "margin": float(margins[length - 2]),
        "certified_margin": [lo, hi],
        "horizon": top,
        "first_failure_n": top + 1,
        "margin_at_first_failure": float(margins[-1]),
    }
    return CorrectionData(
        quantity=f"worst margin of the one-plane letter code on partial induction, |ALPH| = {alphabet}",
        reported_label="[B] reading (a): no one-plane head solves every input at a fixed length (margin <= "
        "0)",
        corrected_label="min(2 sin(theta/2) sin(3 theta/2), margin_Retrieval(n)) > 0 for n >= 3 while "
        "(2n - 3) theta < omega; cos theta - cos omega at n = 2",
        kind="equality",
        series=[s],
        witness=witness,
        proof=partial_induction_proof(),
        checks={
            "the horizon of the exact margins is the largest n with (2n - 3) theta < omega": horizon(margins)
            == top,
            "the margin at the fixed length is certified positive by interval arithmetic": lo > 0,
            f"the fixed length {length} is inside the horizon": length <= top,
            "at n = 2 the exact margin is cos theta - cos omega (the query's own key the only "
            "competitor)": bool(abs(margins[0] - n2_margin) <= 1e-12 * abs(n2_margin)),
        },
        figures={
            "alphabet": alphabet,
            "length": length,
            "theta": theta,
            "horizon": top,
            "margin_at_length": float(margins[length - 2]),
            "margin_at_2": float(margins[0]),
        },
        failure={
            "n": length,
            "exact": float(margins[length - 2]),
            "reported": 0.0,
            "head": head.as_dict(),
            "certified_margin": [lo, hi],
        },
    )


@object_product("errata.partial-induction")
def PARTIAL_INDUCTION(store: ResultStore, alphabet: int = ALPHABET, length: int = LENGTH) -> CorrectionData:
    """:func:`partial_induction_correction` as a product of the run's store."""
    return with_steps_run(partial_induction_correction(alphabet, length))
