"""Accuracy statistics: Clopper-Pearson bounds against independent references (mpmath's regularised
incomplete beta function, exact closed forms at k = 0 and k = n, the mean and
standard deviation over draws, and the readings against [A]."""

from __future__ import annotations

import statistics as pystats

import mpmath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.verify.studies.llm_eval._protocol import Threshold
from ropeproof.verify.studies.llm_eval._statistics import (
    DrawResult,
    LengthResult,
    clopper_pearson,
    ordering,
    summarise,
    threshold_checks,
)


def beta_bounds(k: int, n: int) -> tuple[float, float]:
    """Reference: the Beta-quantile form, solved by bisection in mpmath at 25 digits."""
    with mpmath.workdps(25):

        def solve(a: int, b: int, target: float) -> float:
            lo, hi = mpmath.mpf(0), mpmath.mpf(1)
            for _ in range(56):
                mid = (lo + hi) / 2
                if mpmath.betainc(a, b, 0, mid, regularized=True) < target:
                    lo = mid
                else:
                    hi = mid
            return float(lo)

        low = 0.0 if k == 0 else solve(k, n - k + 1, mpmath.mpf("0.025"))
        high = 1.0 if k == n else solve(k + 1, n - k, mpmath.mpf("0.975"))
    return low, high


@given(n=st.integers(1, 300), data=st.data())
def test_clopper_pearson_matches_the_beta_quantiles(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, n))
    low, high = clopper_pearson(k, n)
    ref_low, ref_high = beta_bounds(k, n)
    assert low == pytest.approx(ref_low, abs=1e-12)
    assert high == pytest.approx(ref_high, abs=1e-12)
    assert 0 <= low <= k / n <= high <= 1


@pytest.mark.parametrize("n", [1, 7, 50, 250])
def test_closed_forms_at_the_ends(n: int) -> None:
    assert clopper_pearson(0, n) == (0.0, pytest.approx(1 - 0.025 ** (1 / n), abs=1e-13))
    assert clopper_pearson(n, n) == (pytest.approx(0.025 ** (1 / n), abs=1e-13), 1.0)


def test_bad_counts_are_refused() -> None:
    with pytest.raises(InputError, match="successes=5 is out of range"):
        clopper_pearson(5, 4)
    with pytest.raises(InputError, match="level"):
        clopper_pearson(1, 4, level=1.0)


def test_mean_std_and_pooled_interval_over_draws() -> None:
    draws = [
        DrawResult("number", 32, 0, 7, 10, 10),
        DrawResult("number", 32, 1, 4, 10, 10),
        DrawResult("number", 32, 2, 9, 10, 10),
        DrawResult("letter", 32, 0, 3, 3, 4),  # one prompt without a reply
    ]
    number, letter = summarise(draws)
    assert number.accuracy_mean == pytest.approx(pystats.mean([0.7, 0.4, 0.9]), abs=1e-15)
    assert number.accuracy_std == pytest.approx(pystats.stdev([0.7, 0.4, 0.9]), abs=1e-15)
    assert number.n_prompts == 30
    assert (number.ci_low, number.ci_high) == clopper_pearson(20, 30)
    assert letter.accuracy_std is None and letter.n_prompts == 3 and letter.accuracy_mean == 1.0


def _result(task: str, length: int, low: float, high: float) -> LengthResult:
    return LengthResult(task, length, (low + high) / 2, None, 10, low, high)


def test_the_ordering_reading_can_come_out_each_way() -> None:
    shown = [_result("letter", 8, 0.8, 1.0), _result("number", 8, 0.1, 0.5)]
    assert ordering(shown).verdict == "shown"
    below = [*shown, _result("letter", 32, 0.1, 0.3), _result("number", 32, 0.5, 0.9)]
    assert ordering(below).verdict == "not shown"
    assert "letter below number at length 32" in ordering(below).line()
    overlap = [*shown, _result("letter", 32, 0.4, 0.7), _result("number", 32, 0.5, 0.9)]
    assert ordering(overlap).verdict == "unresolved"
    assert ordering(overlap).per_length == {8: "above", 32: "unresolved"}
    assert ordering(overlap).line() == (
        "ordering unresolved: letter above number at length 8; the 95% intervals overlap at length 32"
    )
    assert ordering(shown[:1]).verdict == "not measured"


def test_thresholds_are_met_missed_or_unresolved() -> None:
    rules = [
        Threshold("letter", 32, ">", 0.88),
        Threshold("number", 32, "<", 0.5),
        Threshold("number", 100, "<", 0.1),
    ]
    results = [_result("letter", 32, 0.9, 1.0), _result("number", 32, 0.4, 0.6)]
    verdicts = {(t["task"], t["length"]): t["verdict"] for t in threshold_checks(results, rules)}
    assert verdicts == {("letter", 32): "met", ("number", 32): "unresolved"}  # length 100 not measured
    missed = threshold_checks([_result("letter", 32, 0.5, 0.8)], rules)
    assert missed[0]["verdict"] == "missed"
