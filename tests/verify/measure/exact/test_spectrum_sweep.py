"""Spectrum sweeps: float values within their stated bound of mpmath's, first violations equal to a
brute-force mpmath search, close rows decided by Arb (or left undecided when the sum equals the threshold
exactly), the stop at the first violation, and Men et al.'s b = 3.1e5 row."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.theory._spectrum import Spectrum
from ropeproof.verify.measure.exact._spectrum_sweep import enclose_spectrum, spectrum_values, sweep_spectrum


def mp_value(spectrum: Spectrum, m: int) -> mpmath.mpf:
    with mpmath.workdps(40):
        thetas = (
            [mpmath.mpf(sp.N(e, 45)) for e in spectrum.exact_freqs]
            if spectrum.exact_freqs is not None
            else [mpmath.mpf(t) for t in spectrum.freqs]
        )
        return mpmath.fsum(
            mpmath.mpf(a) * mpmath.cos(m * t) for t, a in zip(thetas, spectrum.amps, strict=True)
        )


spectra = st.builds(
    lambda f, a: Spectrum(tuple(f), tuple(a[: len(f)] + [1.0] * (len(f) - len(a)))),
    st.lists(st.floats(-30, 30, allow_nan=False), min_size=1, max_size=8),
    st.lists(st.floats(-2, 2, allow_nan=False), max_size=8),
)


@settings(deadline=None, max_examples=30)
@given(spectrum=spectra, max_m=st.integers(0, 3000), chunk=st.integers(1, 700))
def test_float_values_are_within_their_bound(spectrum: Spectrum, max_m: int, chunk: int) -> None:
    values, errors = spectrum_values(spectrum, max_m, chunk)
    for m in sorted({0, max_m, max_m // 2, max_m // 3, 1 % (max_m + 1)}):
        assert abs(mpmath.mpf(values[m]) - mp_value(spectrum, m)) <= errors[m]
    assert errors.max() < 1e-11 * max(1.0, spectrum.total)


@settings(deadline=None, max_examples=25)
@given(
    freqs=st.lists(st.floats(0.001, 3.2), min_size=1, max_size=5),
    threshold=st.floats(-1.5, 1.0),
    relation=st.sampled_from([">=", ">", "<=", "<"]),
)
def test_first_violation_is_the_brute_force_one(freqs: list[float], threshold: float, relation: str) -> None:
    spectrum = Spectrum(tuple(freqs))
    max_m = 400
    ops = {">=": lambda x: x >= threshold, ">": lambda x: x > threshold}
    ops |= {"<=": lambda x: x <= threshold, "<": lambda x: x < threshold}
    brute = next((m for m in range(max_m + 1) if not ops[relation](mp_value(spectrum, m))), None)
    result = sweep_spectrum(spectrum, max_m, relation, threshold, chunk=64)
    assert result.first_violation == brute and result.exact_first
    if brute is not None:
        lo, hi = result.witness
        assert lo <= mp_value(spectrum, brute) <= hi
        assert result.checked_to == brute


def test_men_et_al_b_310000_fails_its_row_at_12223() -> None:
    for spectrum in (Spectrum.from_base(3.1e5, 128), Spectrum.from_base(3.1e5, 128, exact=True)):
        result = sweep_spectrum(spectrum, 16384)
        assert result.first_violation == 12223 and result.verdict() == "violated" and result.certified
        lo, hi = result.witness
        assert lo <= mp_value(spectrum, 12223) <= hi < 0
        assert all(mp_value(spectrum, m) >= 0 for m in range(12100, 12223))  # spot check below it
    whole = sweep_spectrum(Spectrum.from_base(3.1e5, 128), 16384, stop_at_first=False, keep_values=True)
    assert whole.checked_to == 16384 and whole.first_violation == 12223 and whole.values.size == 16385
    assert int(np.nonzero(whole.values < 0)[0][0]) == 12223


def test_a_row_too_close_to_call_is_enclosed() -> None:
    # cos(fl(pi/2)) = 6.1e-17 > 0: inside the float bound, decided by the ball
    result = sweep_spectrum(Spectrum((math.pi / 2,)), 1, ">", 0.0)
    assert result.holds and result.enclosed == 1
    lo, hi = enclose_spectrum(Spectrum((math.pi / 2,)), 1)
    assert 0 < lo <= float(mpmath.cos(mpmath.mpf(math.pi / 2))) <= hi
    # the exact pi/2: B(1) = 0 exactly, which no ball decides against 0: undecided, never a pass
    exact = Spectrum.exact([sp.pi / 2])
    for relation in (
        ">=",
        ">",
    ):  # B = 1, 0, -1, 0: undecided at 1 and 3, violated at 2 after an undecided row
        result = sweep_spectrum(exact, 3, relation, 0.0, stop_at_first=False)
        assert result.undecided == (1, 3) and result.first_violation == 2 and not result.exact_first
    for relation in ("<=", "<"):  # B(0) = 1 violates at once
        result = sweep_spectrum(exact, 3, relation, 0.0)
        assert result.first_violation == 0 and result.exact_first and result.checked_to == 0
    uncertified = sweep_spectrum(Spectrum((math.pi / 2,)), 1, ">", 0.0, certified=False)
    assert uncertified.verdict() == "undecided" and uncertified.enclosed == 0


def test_bad_input_names_the_parameter() -> None:
    s = Spectrum((1.0,))
    with pytest.raises(InputError, match="relation"):
        sweep_spectrum(s, 10, "==")
    with pytest.raises(InputError, match="max_m"):
        sweep_spectrum(s, -1)
    with pytest.raises(InputError, match="spectrum"):
        sweep_spectrum([1.0], 10)  # type: ignore[arg-type]


def test_exact_frequencies_are_covered_by_the_bound() -> None:
    spectrum = Spectrum.exact(
        [sp.pi / 3, sp.sqrt(2), sp.Rational(310000) ** sp.Rational(-5, 64)], [1.0, -0.5, 2.0]
    )
    values, errors = spectrum_values(spectrum, 100_000)
    for m in (0, 1, 4097, 65_535, 99_999, 100_000):
        assert abs(mpmath.mpf(values[m]) - mp_value(spectrum, m)) <= errors[m]


@settings(deadline=None, max_examples=20)
@given(
    freqs=st.lists(st.floats(0.001, 3.2), min_size=1, max_size=4),
    threshold=st.floats(-1.0, 3.0),
    start=st.integers(0, 300),
)
def test_start_skips_the_rows_below_it(freqs: list[float], threshold: float, start: int) -> None:
    """Rows below ``start`` are not checked: the first violation is the brute-force one from ``start`` on
    (offset 0 of a sum of cosines is its largest value, so ``<=`` below it fails there without ``start``)."""
    spectrum = Spectrum(tuple(freqs))
    max_m = 400
    brute = next((m for m in range(start, max_m + 1) if mp_value(spectrum, m) > threshold), None)
    result = sweep_spectrum(spectrum, max_m, "<=", threshold, chunk=64, start=start)
    assert result.first_violation == brute and result.start == start
    assert result.minimum[0] >= start
    whole = sweep_spectrum(spectrum, max_m, "<=", threshold, chunk=64, start=start, keep_values=True)
    assert whole.values[0] == pytest.approx(sum(1.0 for _ in freqs))  # kept values still begin at 0


def test_start_out_of_range_is_named() -> None:
    with pytest.raises(InputError, match="start"):
        sweep_spectrum(Spectrum((1.0,)), 10, start=11)
