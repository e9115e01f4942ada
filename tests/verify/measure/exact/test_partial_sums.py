"""RoFormer's relative upper bound: float values within their bound of mpmath's, the first rise equal to a
brute-force mpmath search, RoFormer's f(0) = (K + 1) / 2 and a close step decided by Arb."""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.theory._spectrum import Spectrum
from ropeproof.verify.measure.exact._partial_sums import enclose_partial_sums, partial_sum_decay


def mp_f(spectrum: Spectrum, m: int) -> mpmath.mpf:
    with mpmath.workdps(40):
        s, total = mpmath.mpc(0), mpmath.mpf(0)
        for t, a in zip(spectrum.freqs, spectrum.amps, strict=True):
            s += mpmath.mpf(a) * mpmath.expj(m * mpmath.mpf(t))
            total += abs(s)
        return total / len(spectrum.freqs)


@settings(deadline=None, max_examples=20)
@given(
    freqs=st.lists(st.floats(-4, 4, allow_nan=False), min_size=1, max_size=6),
    amps=st.lists(st.floats(-2, 2, allow_nan=False), min_size=6, max_size=6),
)
def test_values_and_first_rise_match_mpmath(freqs: list[float], amps: list[float]) -> None:
    spectrum = Spectrum(tuple(freqs), tuple(amps[: len(freqs)]))
    result = partial_sum_decay(spectrum, 60)
    exact = [mp_f(spectrum, m) for m in range(61)]
    assert all(abs(mpmath.mpf(result.values[m]) - exact[m]) <= result.errors[m] for m in range(61))
    brute = next((m for m in range(60) if exact[m + 1] > exact[m]), None)
    if result.exact_first:
        assert result.first_rise == brute
    else:  # an undecided step (equal values) came first; the reported rise is still a rise
        assert result.first_rise is None or exact[result.first_rise + 1] > exact[result.first_rise]


def test_roformer_spectrum_starts_at_k_plus_one_over_two() -> None:
    result = partial_sum_decay(Spectrum.from_base(10000.0, 128), 100)
    assert result.values[0] == 32.5 and result.errors.max() < 1e-11
    m = result.first_rise
    assert m is not None and result.exact_first
    assert mp_f(result.spectrum, m + 1) > mp_f(result.spectrum, m)
    assert all(mp_f(result.spectrum, k + 1) <= mp_f(result.spectrum, k) for k in range(m))
    (lo0, hi0), (lo1, hi1) = result.rise_enclosures
    assert lo0 <= mp_f(result.spectrum, m) <= hi0 < lo1 <= mp_f(result.spectrum, m + 1) <= hi1


def test_equal_steps_are_enclosed() -> None:
    # theta = 0: f(m) = 1 exactly at every m; the balls are exact, so each step is certified not rising
    result = partial_sum_decay(Spectrum((0.0,)), 5)
    assert (
        result.first_rise is None and result.undecided == () and result.enclosed == 5 and result.exact_first
    )
    assert enclose_partial_sums(Spectrum((0.0,)), 3) == (1.0, 1.0)
    # theta = pi exactly: f(m) = 1 too, but the balls of cos(m pi), sin(m pi) have a radius: undecided
    result = partial_sum_decay(Spectrum.exact([sp.pi]), 4)
    assert result.first_rise is None and result.undecided == (0, 1, 2, 3) and not result.exact_first


def test_bad_input() -> None:
    with pytest.raises(InputError, match="max_m"):
        partial_sum_decay(Spectrum((1.0,)), 0)
    with pytest.raises(InputError, match="spectrum"):
        partial_sum_decay((1.0,), 5)  # type: ignore[arg-type]


def test_exact_frequencies_are_covered_by_the_bound() -> None:
    spectrum = Spectrum.exact([sp.pi / 3, sp.sqrt(2), sp.Rational(1, 7)])
    result = partial_sum_decay(spectrum, 3000)
    with mpmath.workdps(40):
        thetas = [mpmath.mpf(sp.N(e, 45)) for e in spectrum.exact_freqs]
        for m in (0, 1, 17, 999, 2999, 3000):
            s, total = mpmath.mpc(0), mpmath.mpf(0)
            for t in thetas:
                s += mpmath.expj(m * t)
                total += abs(s)
            assert abs(mpmath.mpf(result.values[m]) - total / 3) <= result.errors[m]
