"""Corrections of [A]'s Theorem 3.2 for T_Retrieval, computed and checked (docs/theory.md section 9).

- :func:`retrieval_margin_correction`: the worst margin (and smallest gap) against the bound of [A]'s
  shape that holds at every length, ``1 - cos(omega - (n - 1) theta)`` (``1 - cos omega`` at ``n = 2``);
- :func:`retrieval_largest_gap_correction`: the largest gap (the literal Delta) in closed form,
  ``cos theta + cos((n - 1) theta)``, which no bound of [A]'s shape can hold.

The exact quantities come from the exact sweep
(:func:`ropeproof.verify.measure.exact._sweep.sweep_retrieval`),
the
statements and proofs from :mod:`ropeproof.theory._letter_code_bounds`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ropeproof.constructions._paper import ALPHABET_SIZE, RETRIEVAL_THETA
from ropeproof.machinery._result_store import ResultStore, object_product
from ropeproof.machinery._validate import integer, real
from ropeproof.theory._letter_code_bounds import (
    largest_gap_closed_form,
    largest_gap_proof,
    retrieval_bound_proof,
    retrieval_corrected_bound,
)
from ropeproof.theory._retrieval_margin import retrieval_margin_closed_form
from ropeproof.verify.measure.exact._sweep import SweepTable, retrieval_witness_tokens, sweep_retrieval
from ropeproof.verify.studies.errata._correction_data import (
    CorrectionData,
    Series,
    first_failure,
    tolerance,
    with_steps_run,
)

LENGTHS = 100
"""[A]'s theory figure: lengths up to 100."""


def _reported(n: np.ndarray, theta: float, alphabet: int, shift: int) -> np.ndarray:
    """[A]'s ``1 - cos(omega - n theta)`` at ``n - shift`` (stable form)."""
    omega = 2 * math.pi / alphabet
    return 2 * np.sin((omega - (n - shift).astype(float) * theta) / 2) ** 2


def _check(alphabet: int, theta: float, max_n: int) -> None:
    integer(max_n, "max_n", low=3, high=10**5)
    real(theta, "theta", low=0)


def _attaining_input(table: SweepTable, quantity: str) -> Callable[[int], dict[str, Any]]:
    def describe(n: int) -> dict[str, Any]:
        w = table.witness(n, quantity)
        return {
            "tokens": w["tokens"],
            "target_position": w["target_position"],
            "explanation": w["explanation"],
        }

    return describe


def _series(
    alphabet: int, theta: float, max_n: int, column: str, corrected: Callable[[int, float, int], float]
) -> tuple[Series, SweepTable]:
    """The exact sweep's ``column`` at ``theta``, lengths ``2 .. max_n``, against [A]'s bound (``n`` as the
    length and as the largest offset) and ``corrected(n, theta, alphabet)``; with the sweep's table."""
    table = sweep_retrieval(alphabet, theta, max_n, judge=False)
    n = table.columns["n"]
    series = Series(
        f"theta = {theta:g}",
        n,
        table.columns[column],
        _reported(n, theta, alphabet, 0),
        _reported(n, theta, alphabet, 1),
        np.array([corrected(int(k), theta, alphabet) for k in n]),
    )
    return series, table


def margin_witness_tokens(alphabet: int, n: int) -> list[str]:
    """The input of the bound's proof at length ``n >= 3``: the target (left letter ``Y``) at distance
    ``n - 2``, letter ``phi(Y) + 1`` at ``n - 1``, the opposite letter elsewhere (the query included)."""
    codes = [alphabet // 2] * n
    codes[0], codes[1] = 1, 0
    return retrieval_witness_tokens(alphabet, codes)


def retrieval_margin_correction(
    alphabet: int = ALPHABET_SIZE, theta: float = RETRIEVAL_THETA, max_n: int = LENGTHS
) -> CorrectionData:
    """T_Retrieval's worst margin at ``theta`` (and at ``theta = 0``) against [A]'s bound and the corrected
    one, lengths ``2 .. max_n``."""
    _check(alphabet, theta, max_n)
    omega = 2 * math.pi / alphabet
    main, table = _series(alphabet, theta, max_n, "margin_inf", retrieval_corrected_bound)
    gap_inf = table.columns["gap_inf"]
    zero, _ = _series(alphabet, 0.0, max_n, "margin_inf", retrieval_corrected_bound)
    n = main.n
    inside = n[(n - 1) * theta <= omega]
    closed = np.array([retrieval_margin_closed_form(int(k), theta, alphabet) for k in inside])
    exact_inside = main.exact[inside - 2]
    positive = main.exact > 0
    # below n*, bound - exact = 2 sin((n - 2) theta / 2)^2 exactly (the witness input is the worst one)
    n_star = (omega / theta + 3) / 2 if theta > 0 else math.inf
    below = (n >= 3) & (n < n_star)
    rate = 2 * np.sin((n[below] - 2) * theta / 2) ** 2
    w_n = int(n[-1])
    witness = {
        "n": w_n,
        "theta": theta,
        "tokens": margin_witness_tokens(alphabet, w_n),
        "target_position": 1,
        "margin": float(main.exact[-1]),
        "bound": float(main.corrected[-1]),
        "bound_minus_margin": float(main.corrected[-1] - main.exact[-1]),
        "equality_at_theta_0": "every length: margin_inf = 1 - cos(omega) = the bound",
    }
    checks = {
        "the exact sweep equals the closed form where (n - 1) theta <= omega": bool(
            np.all(np.abs(closed - exact_inside) <= tolerance(closed))
        ),
        "gap_inf = margin_inf wherever margin_inf > 0": bool(
            np.all(np.abs(gap_inf[positive] - main.exact[positive]) <= tolerance(main.exact[positive]))
        ),
        "bound - margin = 2 sin((n - 2) theta / 2)^2 for 3 <= n < n*": bool(
            np.all(np.abs((main.corrected - main.exact)[below] - rate) <= tolerance(main.corrected[below]))
        ),
        "theta = 0 attains the bound at every length": bool(zero.holds("equality").all()),
    }
    return CorrectionData(
        quantity=f"T_Retrieval margin_inf (= gap_inf where positive), |ALPH| = {alphabet}",
        reported_label="[A]: 1 - cos(omega - n theta)",
        corrected_label="1 - cos(omega - (n - 1) theta) (n >= 3), 1 - cos(omega) (n = 2)",
        kind="bound",
        series=[main, zero],
        witness=witness,
        proof=retrieval_bound_proof(),
        checks=checks,
        figures={
            "theta": theta,
            "alphabet": alphabet,
            "first_failure_n": int(n[~positive][0]) if (~positive).any() else None,
            "max_bound_minus_margin": float(np.max(main.corrected - main.exact)),
        },
        failure=first_failure(main, _attaining_input(table, "margin_inf")),
    )


def largest_gap_witness_tokens(alphabet: int, n: int) -> list[str]:
    """The input with the largest gap at length ``n``: the target at distance 1, the opposite letter
    everywhere else (the query's own left letter included)."""
    codes = [alphabet // 2] * n
    codes[n - 2] = 0
    return retrieval_witness_tokens(alphabet, codes)


def retrieval_largest_gap_correction(
    alphabet: int = ALPHABET_SIZE, theta: float = RETRIEVAL_THETA, max_n: int = LENGTHS
) -> CorrectionData:
    """T_Retrieval's largest gap (``gap_sup``) at ``theta`` and at ``theta = 0`` against [A]'s bound and its
    closed form, lengths ``2 .. max_n`` (needs ``(max_n - 1) theta <= omega / 2``)."""
    _check(alphabet, theta, max_n)
    main, table = _series(alphabet, theta, max_n, "gap_sup", largest_gap_closed_form)
    zero, _ = _series(alphabet, 0.0, max_n, "gap_sup", largest_gap_closed_form)
    w_n = int(main.n[-1])
    witness = {
        "n": w_n,
        "theta": theta,
        "tokens": largest_gap_witness_tokens(alphabet, w_n),
        "target_position": w_n - 2,
        "gap": float(main.exact[-1]),
        "closed_form": float(main.corrected[-1]),
        "reported_bound": float(main.reported[-1]),
    }
    return CorrectionData(
        quantity=f"T_Retrieval gap_sup (the literal Delta), |ALPH| = {alphabet}",
        reported_label="[A]: 1 - cos(omega - n theta)",
        corrected_label="cos(theta) + cos((n - 1) theta) (n >= 3), 1 + cos(theta) (n = 2)",
        kind="equality",
        series=[main, zero],
        witness=witness,
        proof=largest_gap_proof(),
        checks={
            "the gap is above [A]'s bound at every length (both readings of n)": bool(
                np.all(main.exact > main.reported) and np.all(main.exact > main.reported_offset)
            ),
        },
        figures={
            "theta": theta,
            "alphabet": alphabet,
            "min_gap": float(main.exact.min()),
            "max_reported": float(max(main.reported.max(), main.reported_offset.max())),
            "gap_at_theta_0": float(zero.exact.min()),
        },
        failure=first_failure(main, _attaining_input(table, "gap_sup")),
    )


@object_product("errata.retrieval-margin")
def RETRIEVAL_MARGIN(
    store: ResultStore, alphabet: int = ALPHABET_SIZE, theta: float = RETRIEVAL_THETA, max_n: int = LENGTHS
) -> CorrectionData:
    """:func:`retrieval_margin_correction` as a product of the run's store."""
    return with_steps_run(retrieval_margin_correction(alphabet, theta, max_n))


@object_product("errata.retrieval-largest-gap")
def RETRIEVAL_LARGEST_GAP(
    store: ResultStore, alphabet: int = ALPHABET_SIZE, theta: float = RETRIEVAL_THETA, max_n: int = LENGTHS
) -> CorrectionData:
    """:func:`retrieval_largest_gap_correction` as a product of the run's store."""
    return with_steps_run(retrieval_largest_gap_correction(alphabet, theta, max_n))
