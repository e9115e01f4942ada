"""Judging the letter-code statements: the one-plane and orthogonal codes against their closed forms in
the alphabet size, and the one-plane code's horizon on the slowest standard planes, its boundary rows
certified by interval arithmetic. The notation is that of
:mod:`ropeproof.verify.studies.beyond._letter_codes`; the claims in :mod:`ropeproof.claims._letter_codes`
state what is judged and call these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ropeproof.machinery._result_store import ResultStore
from ropeproof.verify.measure._outcome import Outcome
from ropeproof.verify.measure.exact._certified import certified_retrieval
from ropeproof.verify.measure.exact._sweep import sweep_retrieval
from ropeproof.verify.studies.beyond._letter_codes import (
    SLOW_HORIZONS,
    alphabet_comparison,
    code_margins,
    one_plane_code,
    slow_horizon_of,
)

CLOSED_FORM_REL_TOLERANCE = 1e-13
"""The relative tolerance of the one-plane margin against ``2 sin(pi/|ALPH|)^2``. The margin is a
difference of two float64 cosines of size up to 1, within about an ulp of 1 (``eps``) of its exact value,
and the closed form is within a few ulps relative; so the relative difference is about
``eps / (2 sin(pi/|ALPH|)^2)``, which grows like ``|ALPH|^2``: this tolerance covers it for the alphabets up
to 64 the claim checks, and a larger alphabet would need a wider one."""

ENGINE_TOLERANCE = 1e-15
"""The absolute tolerance of the letter code's margins against the compiled T_Retrieval engine's: both
are differences of float64 cosines of size up to 1 taken from the same angles, so they agree to a few
ulps of 1 (``eps`` is about ``2.2e-16``)."""

ENGINE_LENGTH = 24
"""The lengths ``2 .. 24`` at which the code is cross-checked against the engine."""


def alphabet_outcome(alphabets: Sequence[int], max_n: int, cross_check: Sequence[int]) -> Outcome:
    """At ``theta = 0``, for every alphabet of ``alphabets`` (lengths ``2 .. max_n``,
    :func:`~ropeproof.verify.studies.beyond._letter_codes.alphabet_comparison`): the one-plane code's
    margin against ``2 sin(pi/|ALPH|)^2`` (relative, :data:`CLOSED_FORM_REL_TOLERANCE`) and the orthogonal
    code's margin equal to 1 exactly; for every alphabet of ``cross_check``, the one-plane code's margins
    against the compiled engine's (:func:`~ropeproof.verify.measure.exact._sweep.sweep_retrieval`) at
    lengths up to :data:`ENGINE_LENGTH` (absolute, :data:`ENGINE_TOLERANCE`).

    Figures: the rows, the largest relative error, the least orthogonal margin, the largest engine
    difference, and the one-plane margin of the last alphabet (``one_plane_margin_at_64``, named for the
    claim's last alphabet). The counterexample is the rows."""
    rows = alphabet_comparison(alphabets, max_n)
    worst = max(abs(r["one_plane_margin"] / r["one_plane_closed_form"] - 1) for r in rows)
    ortho = min(r["orthogonal_margin"] for r in rows)
    cross = 0.0
    for a in cross_check:
        engine = sweep_retrieval(a, 0.0, ENGINE_LENGTH).columns["margin_inf"]
        cross = max(cross, float(np.abs(engine - code_margins(one_plane_code(a), ENGINE_LENGTH)).max()))
    ok = worst <= CLOSED_FORM_REL_TOLERANCE and ortho == 1.0 and cross <= ENGINE_TOLERANCE
    return Outcome.judge(
        ok,
        {
            "rows": rows,
            "max_rel_err_one_plane": worst,
            "min_orthogonal_margin": ortho,
            "engine_cross_check_max_diff": cross,
            "one_plane_margin_at_64": rows[-1]["one_plane_margin"],
        },
        key_figure="one_plane_margin_at_64",
        counterexample=rows,
    )


def slow_horizon_outcome(
    alphabet: int, head_dims: Sequence[int], certified_head_dims: Sequence[int], store: ResultStore
) -> Outcome:
    """For each head_dim of ``head_dims``: the one-plane code with ``alphabet`` letters on the slowest
    standard plane (:data:`~ropeproof.verify.studies.beyond._letter_codes.SLOW_HORIZONS`, from ``store``),
    its horizon from the exact float64 margins against the formula ``largest n with (2n - 3) theta_min <
    2 pi/|ALPH|``; for the head_dims of ``certified_head_dims``, the margin at the horizon certified
    positive and the margin one length later certified at most 0 by interval arithmetic
    (:func:`~ropeproof.verify.measure.exact._certified.certified_retrieval`).

    ``holds`` when every horizon equals its formula and every boundary run is certified. Figures per
    head_dim: the slowest angle, both horizons, the orthogonal code's planes and horizon, both margins at
    length 16, the boundary enclosures; ``horizon_<head_dim>``; and ``boundaries_certified``, whether every
    head_dim's boundary was certified (the rows below a horizon are float64, so the verdict as a whole is
    not certified). The counterexample is the figures."""
    figures: dict[str, Any] = {}
    ok, all_certified = True, True
    for hd in head_dims:
        h = slow_horizon_of(store.get(SLOW_HORIZONS, head_dim=hd, alphabet=alphabet))
        cert: Any = "not run (quick)"
        if hd in certified_head_dims:
            chk = certified_retrieval(alphabet, h.one_plane_theta, h.one_plane_horizon + 1)
            cmp = chk.comparisons["margin_inf"]
            at_h = (float(cmp.measured_lo[-2]), float(cmp.measured_hi[-2]))
            after = (float(cmp.measured_lo[-1]), float(cmp.measured_hi[-1]))
            cert_ok = at_h[0] > 0 and after[1] <= 0
            cert = {"margin_at_horizon": at_h, "margin_after": after, "certified": cert_ok}
            ok &= cert_ok
        else:
            all_certified = False
        ok &= h.one_plane_horizon == h.one_plane_formula
        figures[f"head_dim={hd}"] = {
            "theta_min": h.one_plane_theta,
            "one_plane_horizon": h.one_plane_horizon,
            "formula": h.one_plane_formula,
            "orthogonal_planes": h.orthogonal_thetas,
            "orthogonal_horizon": h.orthogonal_horizon,
            "margin_at_16": {"one_plane": h.one_plane_margin_at_16, "orthogonal": h.orthogonal_margin_at_16},
            "certified_boundary": cert,
        }
        figures[f"horizon_{hd}"] = h.one_plane_horizon
    figures["boundaries_certified"] = all_certified
    return Outcome.judge(ok, figures, key_figure="horizon_128", counterexample=figures)
