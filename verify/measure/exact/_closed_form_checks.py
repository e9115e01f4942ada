"""T_Retrieval's worst-case margin three ways, judged against each other: the exact sweep over every input
(:func:`~ropeproof.verify.measure.exact._discrepancy.exact_sweep`), the explicit finite min/max formula
(:func:`~ropeproof.verify.measure.exact._retrieval_margin.retrieval_margin_explicit`) and the two-branch
closed form with its switch point
(:func:`~ropeproof.theory._retrieval_margin.retrieval_margin_closed_form`, its identities proved by sympy).
The claim ``thm3.2.retrieval.closed-form`` states what is judged and calls
:func:`retrieval_closed_form_outcome`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import retrieval_construction
from ropeproof.machinery._validate import integer
from ropeproof.theory._retrieval_margin import (
    difference_identity,
    product_forms_hold,
    retrieval_margin_closed_form,
)
from ropeproof.verify.measure._outcome import Outcome
from ropeproof.verify.measure.exact._discrepancy import build_tables, exact_sweep
from ropeproof.verify.measure.exact._families import retrieval_family
from ropeproof.verify.measure.exact._retrieval_margin import retrieval_margin_explicit

CLOSED_FORM_TOLERANCE = 16 * float(np.finfo(np.float64).eps)
"""The absolute float64 tolerance between the three margins: 16 ulps of 1. Each margin is a difference of
two cosines (or a product of two sines) of angles built from ``theta``, ``omega = 2 pi / |ALPH|`` and
integers below ``max_n``, so it lies in ``[-2, 2]``. Each angle is a few roundings of values of its own
size, an absolute error of a few ulps of ``|angle|`` that the cosine passes on with slope at most 1; each
cosine adds one ulp of 1 and the difference one more. While the angles stay within a few multiples of
``2 pi`` (``max_n theta`` of that order, as in the claim's range) that is a few ulps of 1 per side, which
16 ulps of 1 covers for both sides; past that range the angle roundings grow with ``max_n theta`` and this
tolerance would have to grow with them. A wrong formula or branch is off by far more than rounding."""


def retrieval_closed_form_outcome(alphabet_size: int, thetas: Sequence[float], max_n: int) -> Outcome:
    """Judge, for T_Retrieval with ``alphabet_size`` letters at each angle of ``thetas``: the closed form
    against the exact sweep at every ``n = 2 .. max_n`` with ``(n - 1) theta <= omega`` (where it is proved
    to apply), and the explicit formula against the exact sweep at every ``n = 2 .. max_n``.

    ``holds`` when the sympy proofs of the closed form hold (``product_forms_hold`` and
    ``difference_identity``) and every difference is at most :data:`CLOSED_FORM_TOLERANCE`. Figures:
    ``proofs``, ``tolerance``, ``first_failure_n_at_<theta>`` (the first length whose exact margin is
    ``<= 0``, ``None`` if none up to ``max_n``) per angle, and ``max_abs_diff`` (the largest difference
    over every angle). The counterexample is the figures."""
    big = integer(max_n, "max_n", low=2)
    a = integer(alphabet_size, "alphabet_size", low=2)
    omega = 2 * math.pi / a
    tol = CLOSED_FORM_TOLERANCE
    proofs = product_forms_hold() and difference_identity()
    figures: dict[str, Any] = {"proofs": proofs, "tolerance": tol}
    worst, ok = 0.0, proofs
    for theta in thetas:
        c = retrieval_construction(a, theta, max_int=1)
        exact = exact_sweep(
            build_tables(compile_construction(c), retrieval_family(c), big), big, 0
        ).margin_inf
        explicit = retrieval_margin_explicit(big, theta, a)
        inside = [n for n in range(2, big + 1) if (n - 1) * theta <= omega]
        closed = np.array([retrieval_margin_closed_form(n, theta, a) for n in inside])
        diff = max(
            float(np.abs(explicit - exact).max()), float(np.abs(closed - exact[np.array(inside) - 2]).max())
        )
        worst = max(worst, diff)
        bad = np.nonzero(exact <= 0)[0]
        figures[f"first_failure_n_at_{theta:g}"] = int(bad[0]) + 2 if bad.size else None
        ok &= diff <= tol
    figures["max_abs_diff"] = worst
    return Outcome.judge(ok, figures, "max_abs_diff", counterexample=figures)
