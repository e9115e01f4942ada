"""The high-precision re-enclosure of T_Retrieval rows (issue 32, case 2): margin_inf(n) and the bound
against a brute-force mpmath reference at 400 bits, ends exact, whatever the global precision."""

from __future__ import annotations

import mpmath
import pytest
from flint import ctx as flint_ctx

from ropeproof.verify.measure.exact._retrieval_refine import MAX_FOLDED, RetrievalRefiner


def brute_force(alphabet: int, theta: float, n: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """``(margin_inf(n), 1 - cos(omega - n theta))`` straight from the definition: every target distance,
    every competitor distance and code, the query itself."""
    with mpmath.workprec(400 + abs(mpmath.mpf(theta).exp if theta else 0)):
        w = 2 * mpmath.pi / alphabet
        th = mpmath.mpf(theta)
        s = max(mpmath.cos(c * w) for c in range(1, alphabet))
        h = {d: max(mpmath.cos(c * w - d * th) for c in range(1, alphabet)) for d in range(1, n)}
        margin = min(mpmath.cos(t * th) - max([s] + [h[d] for d in h if d != t]) for t in range(1, n))
        return margin, 1 - mpmath.cos(w - n * th)


@pytest.mark.parametrize(
    ("alphabet", "theta"), [(8, 1e-20), (8, 0.3), (12, 0.0027), (5, 3.0), (16, 1e12), (9, 0.0), (8, -0.7)]
)
def test_enclosures_contain_the_brute_force_values(alphabet: int, theta: float) -> None:
    ref = RetrievalRefiner(alphabet, theta)
    for n in (2, 3, 4, 7, 12):
        margin, bound = brute_force(alphabet, theta, n)
        lo, hi = ref.margin(n)  # type: ignore[misc]
        b_lo, b_hi = ref.bound(n)
        with mpmath.workprec(600):
            assert (
                mpmath.mpf(lo.numerator) / lo.denominator
                <= margin
                <= mpmath.mpf(hi.numerator) / hi.denominator
            )
            assert mpmath.mpf(b_lo.numerator) / b_lo.denominator <= bound
            assert bound <= mpmath.mpf(b_hi.numerator) / b_hi.denominator
        assert hi - lo < 1e-50 and b_hi - b_lo < 1e-50


def test_theta_1e_20_exceeds_the_bound_by_theta_sized_amounts() -> None:
    """The margin exceeds 1 - cos(omega - n theta) by 1.41e-20 at n = 2 and 7.07e-21 at n = 3..10
    (the expansion 2 theta sin(omega) - theta^2 / 2 at n = 2), far below float64's resolution of 0.29."""
    ref = RetrievalRefiner(8, 1e-20)
    lo, _hi = ref.margin(2)  # type: ignore[misc]
    _b_lo, b_hi = ref.bound(2)
    assert lo > b_hi
    assert float(lo - b_hi) == pytest.approx(2 * 1e-20 * float(mpmath.sin(mpmath.pi / 4)), rel=1e-9)
    for n in range(3, 11):
        lo, _hi = ref.margin(n)  # type: ignore[misc]
        assert float(lo - ref.bound(n)[1]) == pytest.approx(7.0710678e-21, rel=1e-6)


def test_results_do_not_depend_on_global_precision() -> None:
    """mpmath.mp and python-flint's context as a user left them change nothing (the refiner sets its
    own precision and reads its ends exactly)."""
    want = [(RetrievalRefiner(8, 1e-20).margin(n), RetrievalRefiner(8, 1e-20).bound(n)) for n in (2, 5)]
    saved = mpmath.mp.prec, flint_ctx.prec
    try:
        for dps, flint_prec in ((15, 53), (1000, 12), (5, 4000)):
            mpmath.mp.dps = dps
            flint_ctx.prec = flint_prec
            got = [
                (RetrievalRefiner(8, 1e-20).margin(n), RetrievalRefiner(8, 1e-20).bound(n)) for n in (2, 5)
            ]
            assert got == want
    finally:
        mpmath.mp.prec, flint_ctx.prec = saved


def test_rows_past_the_fold_limit_fall_back_to_the_witness() -> None:
    ref = RetrievalRefiner(8, 0.3)
    assert ref.margin(MAX_FOLDED + 2) is None
    margin, _ = brute_force(8, 0.3, 6)
    # any input is an upper end: target 1 back, the strongest competitor the query itself
    up = ref.witness_upper(1, 0, 0)
    with mpmath.workprec(300):
        assert mpmath.mpf(up.numerator) / up.denominator >= margin
    assert ref.margin(12) == RetrievalRefiner(8, 0.3).margin(12)  # asked in any order, the same ends
