"""Row verdicts: enclosures, identities, refinement, caps, and the min of several terms."""

from __future__ import annotations

import itertools

import mpmath
import numpy as np

from ropeproof.verify.measure.exact._bound_checks import (
    STATUSES,
    BoundComparison,
    RowIdentity,
    compare,
    judge_rows,
    min_of_terms,
)

N = np.arange(2, 8)


def test_enclosures_decide_and_overlaps_stay_open_with_a_reason() -> None:
    meas = np.array([0.5, 1.0, 2.0, 1.0 + 1e-12, np.nan, 1.0])
    c = judge_rows("t", "r", N, meas, 1e-9, np.ones(6), 1e-9)
    assert c.status.tolist() == ["holds", "undecided", "violated", "undecided", "undecided", "undecided"]
    assert c.undecided_reasons() == {
        "floating-point enclosures overlap and no identity applies": 3,
        "no value (NaN)": 1,
    }
    assert c.verdict() == "violated" and c.first_violation == 4


def test_identities_decide_ties_never_digits() -> None:
    meas, bound = np.ones(6), np.ones(6)
    equal = np.array([True, True, False, False, False, False])
    at_most = np.array([True, True, True, False, False, False])
    c = judge_rows("t", "r", N, meas, 1e-15, bound, 1e-15, RowIdentity(at_most, equal, "proof"))
    assert c.status.tolist() == ["holds-equal", "holds-equal", "holds"] + ["undecided"] * 3
    assert c.detail["enclosure_contradictions"] == 0 and c.detail["identity"] == "proof"
    # a proof that contradicts the enclosures is counted (it means an error bound is wrong)
    bad = judge_rows(
        "t",
        "r",
        N[:1],
        np.array([2.0]),
        0.0,
        np.ones(1),
        0.0,
        RowIdentity(np.ones(1, bool), np.ones(1, bool), "p"),
    )
    assert bad.detail["enclosure_contradictions"] == 1


def test_refinement_by_intervals_and_points_and_the_cap() -> None:
    meas, bound = np.ones(3), np.ones(3)
    intervals = {2: ((0.0, 0.5), (0.9, 1.1)), 3: ((1.2, 1.3), (0.9, 1.1)), 4: ((0.0, 1.0), (0.9, 1.1))}
    c = judge_rows("t", "r", N[:3], meas, 1e-9, bound, 1e-9, refine=intervals.__getitem__)
    assert c.status.tolist() == ["tight-holds", "tight-violated", "undecided"]
    assert c.detail["refined_rows"] == 3
    capped = judge_rows("t", "r", N[:3], meas, 1e-9, bound, 1e-9, refine=intervals.__getitem__, max_refine=1)
    assert capped.status.tolist() == ["tight-holds", "undecided", "undecided"]
    assert "refinement cap reached (max_refine=1)" in capped.undecided_reasons()

    # legacy point refinement: a tie to 30 digits relative to max(1, |values|)
    def points(n: int) -> tuple[mpmath.mpf, mpmath.mpf]:
        with mpmath.workdps(40):
            return mpmath.mpf(1), 1 + mpmath.mpf(10) ** -20 * (n - 2)

    legacy = compare("t", "r", N[:2], np.ones(2), np.ones(2), 1e-12, refine=points)
    assert legacy.status.tolist() == ["tight-equal", "tight-holds"]


def test_min_of_terms() -> None:
    n = np.arange(2, 7)
    meas = np.ones(5)
    first = judge_rows(
        "a",
        "r",
        n,
        meas,
        0.0,
        np.array([1.0, 2.0, 0.5, 2.0, 2.0]),
        0.0,
        RowIdentity(np.array([1, 0, 0, 0, 0], bool), np.array([1, 0, 0, 0, 0], bool), "id"),
    )
    second = judge_rows(
        "b", "r", n, meas + np.array([0, 0, 0, 0, 1e-20]), 1e-9, np.array([3.0, 3.0, 3.0, 0.5, 1.0]), 1e-9
    )
    both = min_of_terms(
        "min", [first, second], meas, np.minimum([1.0, 2.0, 0.5, 2.0, 2.0], [3.0, 3, 3, 0.5, 1])
    )
    assert both.status.tolist() == ["holds-equal", "holds", "violated", "violated", "undecided"]
    assert list(both.undecided_reasons()) == ["b: floating-point enclosures overlap and no identity applies"]
    np.testing.assert_allclose(both.ratio, [1.0, 0.5, 2.0, 2.0, 1.0])
    assert both.take(np.array([1, 1, 0, 0, 0], bool)).verdict() == "holds"


def test_min_of_terms_status_precedence_on_every_combination() -> None:
    """Every combination of three parts' statuses: the row takes the status of the last of holds,
    tight-holds, tight-equal, holds-equal, undecided, tight-violated, violated that some part has (the
    rule as first written, one mask per status, later names winning)."""
    combos = np.array(list(itertools.product(range(len(STATUSES)), repeat=3)), dtype=np.int8)
    n = np.arange(combos.shape[0])
    parts = [BoundComparison("t", "r", n, combos[:, j].copy(), np.ones(n.size)) for j in range(3)]
    got = min_of_terms("min", parts, np.ones(n.size), np.ones(n.size))
    want = np.zeros(n.size, dtype=np.int8)
    for name in ("tight-holds", "tight-equal", "holds-equal", "undecided", "tight-violated", "violated"):
        code = STATUSES.index(name)
        np.copyto(want, code, where=(combos == code).any(axis=1))
    assert got.codes.dtype == np.int8 and np.array_equal(got.codes, want)


def test_float_enclosure_ends_are_rounded_outward() -> None:
    """Issue 32: 1 + 2^-60 rounds to 1 and so does 1 - 2^-60, so measured + m_err <= bound - b_err read
    1 <= 1 and the row 'held' although the enclosures [1 - 2^-60, 1 + 2^-60] overlap. Ends are now
    rounded outward: the row is undecided (no refinement), and a separated pair still decides."""
    eps = 2.0**-60
    cmp = judge_rows(
        "t", "margin_inf", np.array([2, 3]), np.array([1.0, 1.0]), eps, np.array([1.0, 2.0]), eps
    )
    assert cmp.status.tolist() == ["undecided", "holds"]
    cmp = judge_rows("t", "margin_inf", np.array([2]), np.array([1.0]), eps, np.array([1.0]), eps)
    assert cmp.status.tolist() == ["undecided"]
    cmp = judge_rows("t", "margin_inf", np.array([2]), np.array([3.0]), eps, np.array([1.0]), eps)
    assert cmp.status.tolist() == ["violated"]
