"""The closed-form Retrieval sweep against the generic family engine, mpmath and itself."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import retrieval_construction
from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._discrepancy import build_tables, exact_sweep, reference_extremes
from ropeproof.verify.measure.exact._families import retrieval_family
from ropeproof.verify.measure.exact._retrieval_sweep import (
    iter_retrieval_blocks,
    retrieval_sweep,
)
from ropeproof.verify.measure.exact._sweep import sweep_retrieval

U = 2.0**-53
CASES = [
    (8, 0.0027, 400),
    (8, 0.0, 60),
    (3, 0.1, 25),
    (5, 0.7, 14),
    (2, 0.05, 30),
    (4, 2.9, 12),
    (6, 0.01, 50),
]


def generic(alphabet: int, theta: float, n: int):
    c = retrieval_construction(alphabet, theta, max_int=1)
    return exact_sweep(build_tables(compile_construction(c), retrieval_family(c), n), n)


@pytest.mark.parametrize(("alphabet", "theta", "n"), CASES)
def test_equals_the_generic_engine(alphabet: int, theta: float, n: int) -> None:
    """Same extremes as today's engine (the module's arithmetic over every family case). Both are float64
    evaluations of the same closed form: the engine's angles d * theta carry u d |theta| each and its
    rotation and dot product ~10 u, a difference of two logits twice that; ours carry ``err``."""
    old, new = generic(alphabet, theta, n), retrieval_sweep(alphabet, theta, n)
    tol = 2 * U * (n * abs(theta) + 10) + np.maximum(new.err, new.sup_err)
    for q in ("gap_sup", "margin_inf", "gap_inf"):
        a, b = getattr(old, q), getattr(new, q)
        assert np.array_equal(np.isnan(a), np.isnan(b))
        ok = ~np.isnan(a)
        assert np.all(np.abs(a[ok] - b[ok]) <= tol[ok]), q


@pytest.mark.parametrize(("alphabet", "theta", "n"), [(8, 0.0027, 120), (3, 0.1, 40), (4, 2.9, 40)])
def test_witnesses_attain_the_values_in_mpmath(alphabet: int, theta: float, n: int) -> None:
    """Each row's attaining input, scored from the construction's sympy closed form at 40 digits
    (:class:`ropeproof.verify.measure.exact._mp_reference.MpLogits`), gives the row's value within ``err``."""
    table = sweep_retrieval(alphabet, theta, n)
    ex = retrieval_sweep(alphabet, theta, n)
    for m in range(2, n + 1, 3):
        for q in ("margin_inf", "gap_sup", "gap_inf"):
            if q == "gap_inf" and not ex.gap_inf_exact[m - 2]:
                continue
            err = ex.sup_err[m - 2] if q == "gap_sup" else ex.err[m - 2]
            assert abs(float(table.mp_measured(m, q)) - table.columns[q][m - 2]) <= err, (m, q)


def brute_margin(alphabet: int, theta: float, n: int) -> mpmath.mpf:
    """margin_inf(n) in mpmath by the definition: every target distance, every competitor choice."""
    with mpmath.workdps(40):
        w, t = 2 * mpmath.pi / alphabet, mpmath.mpf(theta)
        comp = [max(mpmath.cos(c * w - d * t) for c in range(1, alphabet)) for d in range(n)]
        comp[0] = max(mpmath.cos(c * w) for c in range(1, alphabet))  # the query itself
        return min(mpmath.cos(dt * t) - max(comp[d] for d in range(n) if d != dt) for dt in range(1, n))


@pytest.mark.parametrize(("alphabet", "theta"), [(8, 0.0027), (5, 1e-7), (3, 1e17), (8, 1e6)])
def test_margin_enclosure_contains_the_exact_value(alphabet: int, theta: float) -> None:
    ex = retrieval_sweep(alphabet, theta, 40)
    for n in (2, 3, 17, 40):
        exact = brute_margin(alphabet, theta, n)
        assert abs(mpmath.mpf(ex.margin_inf[n - 2]) - exact) <= ex.err[n - 2]


def test_enumerated_gap_inf_matches_the_reference() -> None:
    """Past the horizon (margin_inf <= 0) gap_inf is enumerated; compare with the generic reference."""
    c = retrieval_construction(4, 0.9, max_int=1)
    tables = build_tables(compile_construction(c), retrieval_family(c), 12)
    ex = retrieval_sweep(4, 0.9, 12)
    assert ex.enumerated  # some rows needed the enumeration
    for n in ex.enumerated:
        assert ex.gap_inf[n - 2] == pytest.approx(reference_extremes(tables, n).gap_inf, abs=1e-14)


def test_blocks_do_not_depend_on_the_cut() -> None:
    whole = retrieval_sweep(8, 0.0027, 3000)
    parts = list(iter_retrieval_blocks(8, 0.0027, 1000, 3000, block=357))
    for name in ("gap_sup", "margin_inf", "err", "margin_dt", "sup_dt"):
        assert np.array_equal(np.concatenate([getattr(p, name) for p in parts]), getattr(whole, name)[998:])


def test_bad_inputs() -> None:
    with pytest.raises(InputError, match="alphabet_size"):
        retrieval_sweep(1, 0.1, 10)
    with pytest.raises(InputError, match="theta"):
        retrieval_sweep(8, math.inf, 10)
    with pytest.raises(InputError, match="max_n"):
        retrieval_sweep(8, 0.1, 1)


@pytest.mark.parametrize(
    ("alphabet", "theta", "start", "stop"),
    [(1000, 0.866, 2, 120), (26, 3.0, 2, 60), (8, 0.0027, 2, 400), (5, 0.7, 7, 40), (64, math.pi, 30, 50)],
)
def test_streamed_gap_inf_is_the_per_length_enumeration(
    alphabet: int, theta: float, start: int, stop: int
) -> None:
    """Issue 35: the sweep's rows take gap_inf from the grown list (gap_inf_values), the in-memory
    sweep from gap_inf_enumerated per length; the two columns are the same floats, from any start."""
    from ropeproof.verify.measure.exact._sweep import iter_retrieval_sweep

    ex = retrieval_sweep(alphabet, theta, stop)
    got = np.concatenate(
        [b.columns["gap_inf"] for b in iter_retrieval_sweep(alphabet, theta, start, stop, judge=False)]
    )
    want = ex.gap_inf[start - 2 :]
    assert np.array_equal(got, want, equal_nan=True)
    assert np.isfinite(want[: max(0, 97 - start)]).all()  # rows up to the limit all enumerated or positive
