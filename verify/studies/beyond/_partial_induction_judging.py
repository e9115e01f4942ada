"""Judging the partial-induction statements ([B], as reported): the two-plane head against its closed-form
margin, the search for a one-plane head that solves a fixed length, and the horizons of the one-plane
letter code and the two-plane head against their inequalities. The heads and their exact margins are
those of :mod:`ropeproof.verify.studies.beyond._partial_induction`; the claims in
:mod:`ropeproof.claims._partial_induction` state what is judged and call these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ropeproof.verify.measure._outcome import Outcome
from ropeproof.verify.studies.beyond._partial_induction import (
    design_two_plane,
    one_plane_code_horizon,
    search_one_plane,
    two_plane_horizon,
    two_plane_logit_expr,
    two_plane_margin_formula,
    two_plane_margins,
    zero_frequency_tie,
)

TWO_PLANE_TOLERANCE = 1e-14
"""The absolute tolerance of the two-plane margins against their closed form. Both are a few float64
sines and cosines of arguments of order 1 combined with weights ``beta`` and ``1 - beta`` in ``[0, 1]``,
each within a few ulps of 1 (``eps``, about ``2.2e-16``) of exact; ``1e-14`` is some 45 ulps of 1, room
for every rounding on both sides."""


def two_plane_outcome(alphabets: Sequence[int], lengths: Sequence[int]) -> Outcome:
    """For every alphabet size of ``alphabets`` and design length ``n0`` of ``lengths``: the balanced
    two-plane head (:func:`~ropeproof.verify.studies.beyond._partial_induction.design_two_plane`, ``theta =
    pi/n0``) has exact margins equal to the closed form
    (:func:`~ropeproof.verify.studies.beyond._partial_induction.two_plane_margin_formula`) at every length
    ``2 .. n0 + 1`` within :data:`TWO_PLANE_TOLERANCE`, a positive margin at ``n0`` and a horizon of at
    least ``n0``.

    Figures: the logit derived by sympy, the designs (angle, weight, margin at ``n0``, horizon, ``n0^2``
    times the margin), the largest difference and the tolerance. The counterexample is the designs."""
    expr = str(two_plane_logit_expr())
    worst, rows, ok = 0.0, [], True
    for a in alphabets:
        for n0 in lengths:
            d = design_two_plane(a, n0)
            m = two_plane_margins(a, d.theta, d.beta, n0 + 8)
            formula = np.array([two_plane_margin_formula(a, d.theta, d.beta, n) for n in range(2, n0 + 2)])
            worst = max(worst, float(np.abs(m[:n0] - formula).max()))
            h = two_plane_horizon(a, d.theta, d.beta)
            rows.append(
                {
                    "alphabet": a,
                    "n0": n0,
                    "theta": d.theta,
                    "beta": d.beta,
                    "margin_at_n0": d.margin,
                    "horizon": h,
                    "n0^2 * margin": d.margin * n0**2,
                }
            )
            ok &= h >= n0 and d.margin > 0
    tol = TWO_PLANE_TOLERANCE
    return Outcome.judge(
        ok and worst <= tol,
        {"derived_logit": expr, "designs": rows, "max_diff_vs_closed_form": worst, "tolerance": tol},
        key_figure="max_diff_vs_closed_form",
        counterexample=rows,
    )


def one_plane_fixed_length_outcome(alphabet: int, length: int, trials: int) -> Outcome:
    """Whether some one-plane head solves partial induction with ``alphabet`` letters at ``length``: the
    search of :func:`~ropeproof.verify.studies.beyond._partial_induction.search_one_plane` (``trials`` random
    heads and [A]'s letter code at 24 angles, seed 5; exact float64 margins, the best one enclosed by
    interval arithmetic).

    The statement judged is that none does, so a head found makes the verdict ``violated`` (certified:
    its margin's enclosure lies above 0); ``holds`` needs none found and the sympy tie at ``theta = 0``
    (two occurrences of the same letter score alike) exactly 0. Figures: that tie, how many heads were
    tried and solved (per kind), the best margin and its enclosure, whether a head was found and whether
    it is a letter code. The counterexample is the best head."""
    tie = zero_frequency_tie()
    s = search_one_plane(alphabet, length, trials=trials, seed=5)
    found = s.counterexample_found
    figures = {
        "theta0_tie_f(Y,1)-f(Y,2)": str(tie),
        "tried": s.tried,
        "solved": s.solved,
        "by_kind": s.by_kind,
        "best_margin": s.best_margin,
        "certified_margin": s.certified_margin,
        "counterexample_found": found,
        "counterexample_is_letter_code": found and s.best.label.startswith("T_Retrieval code"),
    }
    cex = {"alphabet": alphabet, "length": length, "certified_margin": s.certified_margin, **s.best.as_dict()}
    return Outcome.judge(
        not found and tie == 0,
        figures,
        key_figure="certified_margin",
        counterexample=cex,
        certified=found,
        detail="A verdict 'violated' is certified: the counterexample head's margin is enclosed in an "
        "interval above 0.",
    )


def largest_n_below(bound: float, theta: float) -> int:
    """The largest ``n`` with ``(2n - 3) theta < bound`` (``theta > 0``), checked on both sides of the
    estimate in float64."""
    n = math.ceil((bound / theta + 3) / 2) - 1
    while (2 * (n + 1) - 3) * theta < bound:
        n += 1
    while (2 * n - 3) * theta >= bound:
        n -= 1
    return n


def uniform_horizon_outcome(alphabets: Sequence[int], thetas: Sequence[float], beta: float) -> Outcome:
    """For every angle of ``thetas`` and alphabet size of ``alphabets``: the one-plane letter code's exact
    horizon equal to :func:`largest_n_below` ``(2 pi/|ALPH|, theta)`` and the two-plane head's (weight
    ``beta``) equal to :func:`largest_n_below` ``(2 pi, theta)``, the same for every alphabet. Figures: the
    horizons per row; the counterexample is the rows."""
    rows, ok = [], True
    for theta in thetas:
        for a in alphabets:
            one = one_plane_code_horizon(a, theta)
            two = two_plane_horizon(a, theta, beta)
            want_one, want_two = largest_n_below(2 * math.pi / a, theta), largest_n_below(2 * math.pi, theta)
            rows.append({"theta": theta, "alphabet": a, "one_plane": one, "two_plane": two})
            ok &= one == want_one and two == want_two
    return Outcome.judge(ok, {"horizons": rows}, key_figure="horizons", counterexample=rows)
