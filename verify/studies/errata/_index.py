"""Corrections of [A]'s Theorem 3.2 for T_Index, computed and checked (docs/theory.md section 9).

- :func:`index_fixed_theta`: the worst margin (and smallest gap) at a fixed angle against
  ``min(1 - cos theta, 2 sin(pi/n)^2)``, the bound that replaces ``min(1 - cos theta, pi^2/(2 n^2))``;
- :func:`index_best_theta`: the best margin over every angle, maximised without the lemma
  (:mod:`~ropeproof.verify.studies.errata._best_angle_search`), against the lemma's ``2 sin(pi/n)^2``,
  attained at ``theta = 2 pi / n``;
- :func:`index_largest_gap`: the largest gap (the literal Delta) against
  ``min(1 - cos theta, 2 sin(pi / (ceil((n-1)/2) + 1))^2)``.

The exact quantities at a fixed angle come from the one-pass sweep
(:func:`ropeproof.verify.measure.exact._index_sweep.index_sweep`), those over every angle from
:mod:`~ropeproof.verify.studies.errata._best_angle_search`; the statements and their proof from
:mod:`ropeproof.theory._one_plane_optimum`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import cache

import numpy as np
import sympy as sp
from flint import arb

from ropeproof.constructions._paper import INDEX_THETA, index_construction
from ropeproof.machinery._result_store import ResultStore, object_product
from ropeproof.machinery._validate import integer
from ropeproof.theory._derive import derive
from ropeproof.theory._one_plane_optimum import (
    attaining_angles,
    attaining_angles_proof,
    best_value,
    competing_offsets,
    optimum_proof,
    readings_steps,
)
from ropeproof.theory._proof_checks import ProofStep, composition_step
from ropeproof.theory._trig_identity import vanishes_identically
from ropeproof.verify.measure.exact._certified import arb_precision
from ropeproof.verify.measure.exact._explain import index_explanation
from ropeproof.verify.measure.exact._index_sweep import IndexSweep, index_gap_expression, index_sweep
from ropeproof.verify.studies.errata._best_angle_search import (
    CertifiedMaximum,
    candidate_maximum,
    certified_maximum,
)
from ropeproof.verify.studies.errata._correction_data import (
    CorrectionData,
    Series,
    first_failure,
    tolerance,
    with_steps_run,
)

LENGTHS = 100
"""[A]'s theory figure: lengths up to 100."""
CERTIFIED_UP_TO = 30
"""The best-angle correction encloses the maximum over the angle by interval branch-and-bound for lengths
``n <= CERTIFIED_UP_TO`` (it finds it exactly over the candidate angles at every length)."""


def _check_max_n(max_n: int) -> None:
    integer(max_n, "max_n", low=3, high=10**6)


@cache
def construction_gap_matches() -> bool:
    """Whether sympy proves that T_Index's gap ``m`` positions off the target, derived from the
    construction's closed form (:func:`index_gap_expression`), is ``2 sin(m theta / 2)^2``."""
    gap = index_gap_expression(index_construction(theta=0.5, max_int=1, letters=1))
    m = next(s for s in gap.free_symbols if s.name == "m")
    theta = next(s for s in gap.free_symbols if s.name == "theta")
    return vanishes_identically(gap - 2 * sp.sin(m * theta / 2) ** 2)


@cache
def construction_keys_agree() -> bool:
    """Whether the construction's derived logit of the integer query against a letter key and against an
    integer key (the query's own) is the same expression of the offset: every key is the same vector."""
    d = derive(index_construction(theta=0.5, max_int=1, letters=1))
    return vanishes_identically(d.logit("integer", "letter").closed - d.logit("integer", "integer").closed)


def index_link_steps() -> list[ProofStep]:
    """The link between the proof and the construction: the gap ``g(m)`` and the keys."""
    return [
        ProofStep(
            "construction-gap",
            "T_Index's logit m positions off the target is 2 sin(m theta / 2)^2 below the target's (sympy, "
            "from the construction's derived closed form)",
            "sympy",
            construction_gap_matches,
        ),
        ProofStep(
            "same-keys",
            "the construction scores a letter key and the query's own integer key alike at one offset "
            "(sympy, from the derived closed forms): every key is the same vector, so an input's logits "
            "depend on the target position only",
            "sympy",
            construction_keys_agree,
        ),
    ]


def index_proof() -> list[ProofStep]:
    """The fixed-angle and largest-gap corrections' proof: the link to the construction, the readings and
    the value of :mod:`ropeproof.theory._one_plane_optimum`, and their composition (argued,
    :func:`~ropeproof.theory._proof_checks.composition_step`)."""
    return [*index_link_steps(), *readings_steps(), *optimum_proof(), composition_step("9.1")]


def best_theta_proof() -> list[ProofStep]:
    """The best-angle correction's proof: the steps of :func:`index_proof`, which angles attain
    (:func:`~ropeproof.theory._one_plane_optimum.attaining_angles_proof`, Euclid's lemma argued) and their
    composition (argued)."""
    steps = [*index_link_steps(), *readings_steps(), *optimum_proof(), *attaining_angles_proof()]
    return [*steps, composition_step("9.1")]


def index_witness_tokens(n: int, s: int, competitor_offset: int = 1) -> list[str]:
    """A T_Index input: query integer ``s`` last, letter ``A`` at the target ``n - 1 - s``, ``B``
    ``competitor_offset`` after it, ``C`` elsewhere (every key is the same vector, so only positions
    matter)."""
    tokens = ["C"] * n
    target = n - 1 - s
    tokens[target] = "A"
    if competitor_offset > 0 and target + competitor_offset < n - 1:
        tokens[target + competitor_offset] = "B"
    tokens[-1] = str(s)
    return tokens


def _best_angle_witness(n: int, reading: str) -> dict[str, object]:
    """At length ``n``: the angle ``2 pi / (M + 1)``, the input that attains the best value there, and the
    value from the sweep."""
    big_m = competing_offsets(n, reading)
    q = big_m + 1
    theta = 2 * math.pi / q
    sw = index_sweep([theta], [1.0], n)
    value = float(sw.gap_sup[-1] if reading == "gap_sup" else sw.margin_inf[-1])
    s = big_m if reading == "gap_sup" else n - 1
    return {
        "n": n,
        "reading": reading,
        "theta": f"2 pi / {q}",
        "theta_value": theta,
        "attaining_angles": f"2 pi k / {q}, gcd(k, {q}) = 1 ({len(attaining_angles(n, reading))} angles in "
        "(0, 2 pi))",
        "s": s,
        "target_position": n - 1 - s,
        "tokens": index_witness_tokens(n, s),
        "value": value,
        "bound": best_value(n, reading),
        "explanation": _explain(reading, theta, index_witness_tokens(n, s), n - 1 - s, 1),
    }


def _explain(reading: str, theta: float, tokens: list[str], target: int, m: int) -> dict[str, object]:
    """The witness's explanation (:mod:`ropeproof.verify.measure.exact._explain`): the competitor ``m``
    positions after the target (before it when that is past the query)."""
    competitor = target + m if target + m <= len(tokens) - 1 else target - m
    quantity = "gap_sup" if reading == "gap_sup" else "margin_inf"
    return index_explanation(quantity, [theta], [1.0], tokens, target, competitor).to_dict()


def _series(theta: float, max_n: int, reading: str) -> tuple[Series, IndexSweep]:
    sw = index_sweep([theta], [1.0], max_n)
    n = sw.n
    exact = sw.gap_sup if reading == "gap_sup" else sw.margin_inf
    one_minus_cos = 2 * math.sin(theta / 2) ** 2
    term = math.pi**2 / (2 * n.astype(float) ** 2)
    term_offset = math.pi**2 / (2 * (n.astype(float) - 1) ** 2)
    best = np.array([best_value(int(k), reading) for k in n])
    series = Series(
        f"theta = {theta:g}",
        n,
        exact,
        np.minimum(one_minus_cos, term),
        np.minimum(one_minus_cos, term_offset),
        np.minimum(one_minus_cos, best),
    )
    return series, sw


def _sweep_input(sw: IndexSweep, reading: str, theta: float) -> Callable[[int], dict[str, object]]:
    def describe(n: int) -> dict[str, object]:
        w = sw.witness(n, "gap_sup" if reading == "gap_sup" else "margin_inf")
        s, m = int(w["s"]), int(w["competitor_offset"])
        tokens = index_witness_tokens(n, s, m)
        explanation = _explain(reading, theta, tokens, n - 1 - s, m)
        return {
            "s": s,
            "target_position": n - 1 - s,
            "competitor_offset": m,
            "tokens": tokens,
            "explanation": explanation,
        }

    return describe


def _fixed_theta(theta: float, max_n: int, reading: str) -> CorrectionData:
    _check_max_n(max_n)
    s, sw = _series(theta, max_n, reading)
    witness = _best_angle_witness(max_n, reading)
    attained = s.n[np.abs(s.exact - s.corrected) <= tolerance(s.corrected)]
    figures = {
        "theta": theta,
        "attained_at_theta_lengths": int(attained.size),
        "attained_at_theta_up_to_n": int(attained.max()) if attained.size else None,
        "ratio_to_reported_at_max_n": float(s.corrected[-1] / s.reported[-1]),
    }
    label = "margin_inf (= gap_inf)" if reading != "gap_sup" else "gap_sup (largest gap)"
    denominator = "n" if reading != "gap_sup" else "ceil((n - 1)/2) + 1"
    return CorrectionData(
        quantity=f"T_Index {label} at theta = {theta:g}",
        reported_label="[A]: min(1 - cos theta, pi^2/(2 n^2))",
        corrected_label=f"min(1 - cos theta, 2 sin(pi/({denominator}))^2)",
        kind="bound",
        series=[s],
        witness=witness,
        proof=index_proof(),
        checks={
            "the witness attains the bound": bool(
                abs(witness["value"] - witness["bound"]) <= tolerance(np.array(witness["bound"]))
            ),
        },
        figures=figures,
        failure=first_failure(s, _sweep_input(sw, reading, theta)),
    )


def index_fixed_theta(theta: float = INDEX_THETA, max_n: int = LENGTHS) -> CorrectionData:
    """The worst-case margin (= smallest gap) of T_Index at ``theta``, lengths ``2 .. max_n``, against
    [A]'s ``min(1 - cos theta, pi^2/(2 n^2))`` and the corrected ``min(1 - cos theta, 2 sin(pi/n)^2)``."""
    return _fixed_theta(theta, max_n, "margin_inf")


def index_largest_gap(theta: float = INDEX_THETA, max_n: int = LENGTHS) -> CorrectionData:
    """The largest gap (``gap_sup``, the literal Delta) of T_Index at ``theta`` against [A]'s bound and
    the corrected ``min(1 - cos theta, 2 sin(pi / (ceil((n-1)/2) + 1))^2)``."""
    return _fixed_theta(theta, max_n, "gap_sup")


def _lemma_inside(enclosure: CertifiedMaximum) -> bool:
    """Whether ``2 sin(pi/(M + 1))^2``, as a ball, lies inside the certified enclosure."""
    with arb_precision(80):
        value = 2 * arb.sin_pi(arb(1) / (enclosure.big_m + 1)) ** 2
        return bool(arb(enclosure.low) <= value.lower()) and bool(value.upper() <= arb(enclosure.high))


def _unit_angles(n: int) -> set[Fraction]:
    """``theta / pi`` for ``theta = 2 pi k / n`` in ``(0, pi]`` with ``gcd(k, n) = 1``."""
    return {Fraction(2 * k, n) for k in range(1, n) if 2 * k <= n and math.gcd(k, n) == 1}


def index_best_theta(max_n: int = LENGTHS, certified_up_to: int | None = None) -> CorrectionData:
    """The best worst-case margin over every angle at each length ``2 .. max_n``, found without the lemma:
    exactly over the candidate angles at every length, and enclosed by interval branch-and-bound over
    ``theta`` in ``[0, pi]`` for lengths up to ``certified_up_to`` (default ``min(CERTIFIED_UP_TO, max_n)``)
    (:mod:`~ropeproof.verify.studies.errata._best_angle_search`); against the lemma's ``2 sin(pi/n)^2``,
    attained at ``theta = 2 pi / n`` (the sweep there), and [A]'s ``pi^2/(2 n^2)``."""
    _check_max_n(max_n)
    if certified_up_to is None:
        certified_up_to = min(CERTIFIED_UP_TO, max_n)
    certified_up_to = integer(certified_up_to, "certified_up_to", low=2, high=max_n)
    n = np.arange(2, max_n + 1)
    search = [candidate_maximum(int(k) - 1) for k in n]
    exact = np.array([c.value for c in search])
    best = np.array([best_value(int(k)) for k in n])
    term = math.pi**2 / (2 * n.astype(float) ** 2)
    term_offset = math.pi**2 / (2 * (n.astype(float) - 1) ** 2)
    s = Series("max over every angle (exact, without the lemma)", n, exact, term, term_offset, best)
    swept = np.array([index_sweep([2 * math.pi / k], [1.0], int(k)).margin_inf[-1] for k in n])
    enclosures = [certified_maximum(k - 1) for k in range(2, certified_up_to + 1)]
    witness = _best_angle_witness(max_n, "margin_inf")
    ratios = best / term
    ratios_offset = best / term_offset
    return CorrectionData(
        quantity="the best worst-case margin of one-plane T_Index over every angle, maximised without the "
        "lemma",
        reported_label="[A]: pi^2/(2 n^2)",
        corrected_label="2 sin(pi/n)^2 = 1 - cos(2 pi/n)",
        kind="equality",
        series=[s],
        witness=witness,
        proof=best_theta_proof(),
        checks={
            "the largest candidate value is 1 - cos(pi x), x = 2/n exactly (rationals), every row": all(
                c.x == Fraction(2, int(k)) for c, k in zip(search, n, strict=True)
            ),
            "its maximisers in [0, pi] are exactly 2 pi k/n with gcd(k, n) = 1, every row": all(
                set(c.maximisers) == _unit_angles(int(k)) for c, k in zip(search, n, strict=True)
            ),
            f"interval branch-and-bound over theta in [0, pi] encloses 2 sin(pi/n)^2 in an interval at most "
            f"2e-10 wide, n <= {certified_up_to}": all(
                _lemma_inside(e) and e.high - e.low <= 2e-10 for e in enclosures
            ),
            "the sweep at theta = 2 pi/n attains it, every row": bool(
                np.all(np.abs(swept - best) <= tolerance(best))
            ),
            "the ratio to pi^2/(2 n^2) increases with n": bool(np.all(np.diff(ratios) > 0)),
        },
        figures={
            "ratio_at_max_n": float(ratios[-1]),
            "ratio_at_max_n_offset": float(ratios_offset[-1]),
            "ratio_limit": 4,
            "min_ratio": float(ratios.min()),
            "candidate_angles_at_max_n": search[-1].candidates,
            "certified_up_to_n": certified_up_to,
            "branch_and_bound_boxes": sum(e.boxes for e in enclosures),
        },
        failure=first_failure(s, lambda k: _best_angle_witness(k, "margin_inf")),
    )


@object_product("errata.index-fixed-theta")
def INDEX_FIXED_THETA(store: ResultStore, theta: float = INDEX_THETA, max_n: int = LENGTHS) -> CorrectionData:
    """:func:`index_fixed_theta` as a product of the run's store (its correction and its figure share it)."""
    return with_steps_run(index_fixed_theta(theta, max_n))


@object_product("errata.index-largest-gap")
def INDEX_LARGEST_GAP(store: ResultStore, theta: float = INDEX_THETA, max_n: int = LENGTHS) -> CorrectionData:
    """:func:`index_largest_gap` as a product of the run's store."""
    return with_steps_run(index_largest_gap(theta, max_n))


@object_product("errata.index-best-theta")
def INDEX_BEST_THETA(
    store: ResultStore, max_n: int = LENGTHS, certified_up_to: int | None = None
) -> CorrectionData:
    """:func:`index_best_theta` as a product of the run's store."""
    return with_steps_run(index_best_theta(max_n, certified_up_to))
