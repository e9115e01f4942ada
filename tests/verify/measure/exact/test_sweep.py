"""Issue 18: every row of a sweep gets a decided verdict, ties by identity, checked against an
independent mpmath evaluation at 50 digits."""

from __future__ import annotations

import json
import math
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof._cli import main
from ropeproof.verify.measure.exact import _index_sweep
from ropeproof.verify.measure.exact._bound_checks import CODE
from ropeproof.verify.measure.exact._index_sweep import INDEX_TERM_IDENTITY, PinnedIdentity
from ropeproof.verify.measure.exact._sweep import (
    index_term_identity,
    index_term_sides,
    iter_index_sweep,
    retrieval_theta_zero_identity,
    sweep_index,
    sweep_retrieval,
)
from ropeproof.verify.sweep_runs._sweep_files import SweepSummary


def oracle(theta: float, max_n: int) -> dict[str, list[str]]:
    """Per reading and row: 'equal', 'below' or 'above' for Delta(n) vs min(1 - cos theta, pi^2/(2n^2)),
    from the definitions evaluated in mpmath at 50 digits (raw 1 - cos, no stable forms; 'equal' means
    the two agree to 30 significant digits, far below any float64 difference)."""
    out: dict[str, list[str]] = {"margin_inf": [], "gap_sup": []}
    with mpmath.workdps(50):
        t = mpmath.mpf(theta)
        prefix = [mpmath.inf]
        for m in range(1, max_n):
            prefix.append(min(prefix[-1], 2 * mpmath.sin(m * t / 2) ** 2))
        term1 = 1 - mpmath.cos(t)
        for n in range(2, max_n + 1):
            bound = min(term1, mpmath.pi**2 / (2 * mpmath.mpf(n) ** 2))
            for q, big_m in (("margin_inf", n - 1), ("gap_sup", (n - 1 + 1) // 2)):
                d = prefix[big_m] - bound
                scale = max(abs(prefix[big_m]), abs(bound))
                out[q].append(
                    "equal" if abs(d) <= scale * mpmath.mpf(10) ** -30 else ("above" if d > 0 else "below")
                )
    return out


@pytest.mark.parametrize("theta", [1e-3, 1e-6, 1e-9])
def test_small_theta_rows_hold_with_equality_against_mpmath(theta: float) -> None:
    max_n = 10**4
    table = sweep_index(theta, max_n)
    want = oracle(theta, max_n)
    n = table.columns["n"]
    for q in ("margin_inf", "gap_inf", "gap_sup"):
        st = table.comparisons[q].status
        expect = np.array(want["gap_sup" if q == "gap_sup" else "margin_inf"])
        assert not (st == "undecided").any()
        assert np.array_equal(st == "holds-equal", expect == "equal"), q
        assert np.array_equal(np.isin(st, ("holds", "holds-equal", "tight-holds")), expect != "above"), q
        assert np.all(st[n <= math.pi / theta] == "holds-equal")
        assert table.comparisons[q].detail["enclosure_contradictions"] == 0
    if theta == 1e-3:  # past pi/theta the pi^2/(2n^2) term is the smaller one and the bound fails
        assert (table.comparisons["margin_inf"].status[n > 3142] == "violated").any()


def test_the_reproduction_reports_every_row_holding_with_equality(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["sweep", "index", "--theta", "0.000001", "--lengths", "2:600", "--json", "--device", "cpu"])
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert [r["n"] for r in doc["rows"]] == list(range(2, 601))
    for r in doc["rows"]:
        assert r["bound_holds"] is r["bound_holds_gap_inf"] is r["bound_holds_margin_inf"] is True
        assert r["bound_status"] == r["bound_status_margin_inf"] == "holds-equal"
        assert r["margin_inf"] == r["bound"]  # g(1) and 1 - cos(theta) are evaluated by the same code
    readings = doc["summary"]["readings"]
    assert all(readings[q]["rows"] == {"holds-equal": 599} for q in readings)


def test_a_million_lengths_at_theta_1e_6_have_no_undecided_row() -> None:
    summary = SweepSummary()
    for block in iter_index_sweep(1e-6, 2, 10**6):
        summary.add_block(block)
    assert summary.rows == 10**6 - 1
    for q, r in summary.readings.items():
        assert r.rows == {"holds-equal": 10**6 - 1}, q
        assert r.undecided_reasons == {} and r.enclosure_contradictions == 0


def test_identities_are_proved_by_sympy() -> None:
    assert index_term_identity()
    assert retrieval_theta_zero_identity(8) and retrieval_theta_zero_identity(3)


def test_the_stored_index_identity_is_the_one_sympy_derives_and_proves_now() -> None:
    """The sweeps read INDEX_TERM_IDENTITY instead of proving it (no sympy in a run): its two sides are
    what the construction's closed form and Theorem 3.2's bound give today, and sympy proves them equal."""
    lhs, rhs = index_term_sides()
    assert (str(lhs), str(rhs)) == (INDEX_TERM_IDENTITY.lhs, INDEX_TERM_IDENTITY.rhs)
    assert INDEX_TERM_IDENTITY.proved is index_term_identity() is True


def test_the_index_rows_read_the_stored_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the stored proof withdrawn no row is equal by identity: the ties fall to the enclosures
    (undecided where they overlap), so the verdicts above do rest on the stored fact."""
    with_proof = sweep_index(1e-3, 300)
    assert set(with_proof.comparisons["margin_inf"].status) == {"holds-equal"}
    monkeypatch.setattr(_index_sweep, "INDEX_TERM_IDENTITY", PinnedIdentity("g(1)", "1 - cos(theta)", False))
    without = sweep_index(1e-3, 300)
    for q in ("gap_sup", "margin_inf", "gap_inf"):
        statuses = set(without.comparisons[q].status)
        assert "holds-equal" not in statuses and "undecided" in statuses, (q, statuses)
        assert without.comparisons[q].detail["identity_rows"] == 0


def test_retrieval_theta_zero_holds_with_equality_past_the_old_refinement_cap() -> None:
    """The old judge refined at most 512 rows; at theta = 0 the bound is attained at every n."""
    t = sweep_retrieval(8, 0.0, 3000)
    for q in ("margin_inf", "gap_inf"):
        assert set(t.comparisons[q].status) == {"holds-equal"}
    assert set(t.comparisons["gap_sup"].status) == {"violated"}  # the literal reading: gap about 1.7


def test_retrieval_rows_are_all_decided_and_agree_with_mpmath_witnesses() -> None:
    t = sweep_retrieval(8, 0.0027, 2000)
    margin = t.comparisons["margin_inf"]
    assert margin.undecided_n.size == 0 and t.comparisons["gap_sup"].undecided_n.size == 0
    # gap_inf is left NaN past the horizon above n = 96 (its enumeration is O(n^2)), and says so
    why = t.comparisons["gap_inf"].undecided_reasons()
    assert list(why) == [
        "gap_inf not computed: margin_inf <= 0 and n above gap_inf_limit (enumeration only below)"
    ]
    for n in (2, 24, 25, 146, 147, 1000):
        value = float(t.mp_measured(n, "margin_inf"))
        with mpmath.workdps(40):
            bound = float(1 - mpmath.cos(mpmath.pi / 4 - n * mpmath.mpf(0.0027)))
        violated = margin.status[n - 2] in ("violated", "tight-violated")
        assert violated == (value > bound)


def test_large_theta_rows_are_decided() -> None:
    t = sweep_index(1e17, 2000)
    for c in t.comparisons.values():
        assert c.undecided_n.size == 0 and c.detail["enclosure_contradictions"] == 0
    assert t.columns["margin_inf"][0] == pytest.approx(1.886, abs=5e-4)


def test_status_codes_are_consistent() -> None:
    assert CODE["holds-equal"] < 4 and CODE["violated"] >= 4


@pytest.mark.parametrize("dps", [15, 1000])
def test_retrieval_at_theta_1e_20_is_violated_whatever_the_global_precision(dps: int, capsys) -> None:
    """Issue 32, case 2: ``sweep retrieval --theta 1e-20 --lengths 2:10`` reported every row
    ``tight-holds`` (mpmath.mp.dps = 15) or ``undecided`` (1000): interval ends were converted at the
    global precision, to nearest. The exact margin exceeds the bound by 1.41e-20 at n = 2 and 7.07e-21
    at n = 3..10 (mpmath at 1000 digits; 2 theta sin(omega) - theta^2 / 2 at n = 2), so every row of
    margin_inf (and gap_inf, equal to it here) is violated, the same whatever mpmath.mp.dps was."""
    saved = mpmath.mp.prec
    try:
        mpmath.mp.dps = dps
        table = sweep_retrieval(8, 1e-20, 10)
        for q in ("margin_inf", "gap_inf"):
            assert table.comparisons[q].status.tolist() == ["tight-violated"] * 9, q
        assert main(["sweep", "retrieval", "--theta", "1e-20", "--lengths", "2:10", "--json"]) == 0
    finally:
        mpmath.mp.prec = saved
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["bound_status_margin_inf"] for r in rows] == ["tight-violated"] * 9
    with mpmath.workdps(1000):  # the reference itself: at n = 2 the target (1 back) against the query
        w, th = 2 * mpmath.pi / 8, mpmath.mpf(1e-20)
        margin_2 = mpmath.cos(th) - max(mpmath.cos(c * w) for c in range(1, 8))
        assert margin_2 - (1 - mpmath.cos(w - 2 * th)) == pytest.approx(1.41421356e-20, rel=1e-6)


@pytest.mark.parametrize("prec", [12, 4000])
def test_direct_sweeps_ignore_the_global_mpmath_precision(prec: int) -> None:
    """Every column and status of the direct sweeps is the same whatever mpmath.mp was left at (tables
    cached at import are not the point: the refinements and reductions set their own precision)."""
    from ropeproof.verify.kernel._angles import reduce_frequency

    want = [sweep_index(0.866, 200), sweep_retrieval(8, 1e-20, 12), sweep_retrieval(1000, 0.0027, 150)]
    saved = mpmath.mp.prec
    try:
        mpmath.mp.prec = prec
        reduce_frequency.cache_clear()
        got = [sweep_index(0.866, 200), sweep_retrieval(8, 1e-20, 12), sweep_retrieval(1000, 0.0027, 150)]
    finally:
        mpmath.mp.prec = saved
    for g, w in zip(got, want, strict=True):
        assert g.columns.keys() == w.columns.keys()
        for k in w.columns:
            assert np.array_equal(g.columns[k], w.columns[k], equal_nan=w.columns[k].dtype.kind == "f"), k
        for q in w.comparisons:
            assert g.comparisons[q].status.tolist() == w.comparisons[q].status.tolist(), q


def test_bad_lengths_are_one_line_input_errors() -> None:
    """Issue 32: sweep_index(0.866, None) raised TypeError from int(None)."""
    from ropeproof.machinery._errors import InputError

    for call in (
        lambda: sweep_index(0.866, None),
        lambda: sweep_retrieval(8, 0.1, None),
        lambda: sweep_index(0.866, 1.5),
        lambda: sweep_index(0.866, 1),
        lambda: sweep_retrieval(8, 0.1, 2**26),
    ):
        with pytest.raises(
            InputError, match=r"^max_n=\S+ is (not an integer|out of range); accepted: an integer"
        ):
            call()


@pytest.mark.parametrize("judge", [True, False])
def test_verdict_columns_are_built_when_read_and_equal_the_statuses(judge: bool) -> None:
    """Issue 46: a table holds its statuses as codes; ``bound_holds*`` and ``bound_status*`` are built
    (one Python object per row) when first read, in their place in the column order, equal to the
    comparisons' statuses, and a selection reads the same rows as the whole table."""
    from ropeproof.verify.measure.exact._sweep import READING_COLUMNS, STATUS_COLUMNS, SweepColumns, _Deferred

    for table in (sweep_index(0.866, 300, judge=judge), sweep_retrieval(8, 0.5, 300, judge=judge)):
        cols = table.columns
        assert isinstance(cols, SweepColumns)
        verdicts = [*READING_COLUMNS.values(), *STATUS_COLUMNS.values()]
        assert all(isinstance(dict.__getitem__(cols, k), _Deferred) for k in verdicts)  # not built yet
        order = list(cols)
        assert order[:5] == ["n", "gap_sup", "gap_inf", "margin_inf", "bound"]
        assert set(order[5:11]) == set(verdicts)
        for q in ("gap_sup", "gap_inf", "margin_inf"):
            status, holds = cols[STATUS_COLUMNS[q]], cols[READING_COLUMNS[q]]
            assert status.dtype == object and holds.dtype == object
            if judge:
                c = table.comparisons[q]
                assert status.tolist() == c.status.tolist()
                assert [h is True for h in holds] == c.holds_mask().tolist()
                assert [h is False for h in holds] == c.violated_mask().tolist()
            else:
                assert set(status.tolist()) == {None} and set(holds.tolist()) == {None}
        plain = dict(cols)  # every column read through []
        assert list(plain) == order and not any(isinstance(v, _Deferred) for v in plain.values())
        part = table.select(10, 200, 7)
        rows = table.rows()
        on_grid = [r for r in rows if 10 <= r["n"] <= 200 and ((r["n"] - 10) % 7 == 0 or r["n"] == 200)]
        assert part.rows() == on_grid and on_grid[-1]["n"] == 200  # A:B:STEP always ends at B


def previous_index_comparisons(theta: float, blk: Any) -> tuple[np.ndarray, dict[str, Any]]:
    """The T_Index comparisons as computed before issue 46 item 6, through the generic judge only: each
    term judged on its own (its own rounded ends and ratio), the identity's rows elementwise."""
    from fractions import Fraction

    from mpmath import iv

    from ropeproof.verify.measure.exact._angles import UNIT_ROUNDOFF as U
    from ropeproof.verify.measure.exact._angles import reduce_frequency
    from ropeproof.verify.measure.exact._bound_checks import RowIdentity, judge_rows, min_of_terms
    from ropeproof.verify.measure.exact._certified import iv_exact_ends, iv_precision
    from ropeproof.verify.measure.exact._index_sweep import stable_gaps_with_error
    from ropeproof.verify.measure.exact._sweep import PI2_HALF, PI2_HALF_ERROR, REFINE_BITS

    n = blk.n
    t1, t1_err = stable_gaps_with_error([theta], [1.0], np.array([1.0]))
    n2 = np.asarray(n, dtype=np.float64) ** 2
    t2 = PI2_HALF / n2
    t2_err = (U * t2 + PI2_HALF_ERROR / n2) * (1 + 8 * U) + 5e-324
    bound = np.minimum(t1[0], t2)
    red = reduce_frequency(theta)
    tp = abs(red.value) * (1 + 4 * U) + red.error
    statement = (
        "g(1) = 2 sin(theta/2)^2 = 1 - cos(theta) (sympy, from the construction's closed form); every "
        "reading is a minimum over m <= M of g(m) with m = 1 included, equal to g(1) where "
        "(M + 1)|theta mod 2pi| <= 2pi"
    )
    out = {}
    for q in ("gap_sup", "margin_inf"):
        if q == "gap_sup":
            meas, lo, hi, arg, big_m = blk.gap_sup, blk.sup_lo, blk.sup_hi, blk.closest_sup, (n - 1 + 1) // 2
        else:
            meas, lo, hi, arg, big_m = blk.margin_inf, blk.margin_lo, blk.margin_hi, blk.closest, n - 1
        m_err = np.maximum(meas - lo, hi - meas)
        everywhere = np.full(n.shape, True)
        equal = everywhere & ((big_m + 1).astype(np.float64) * tp <= 2 * math.pi * (1 - 4 * U))
        first = judge_rows(
            "1-cos(theta)", q, n, meas, m_err, t1[0], t1_err[0], RowIdentity(everywhere, equal, statement)
        )

        def refine(n_: int, arg: np.ndarray = arg, lo: np.ndarray = lo) -> tuple[Any, Any]:
            r = int(np.searchsorted(n, n_))
            with iv_precision(REFINE_BITS):
                g = 2 * iv.sin(int(arg[r]) * iv.mpf(theta) / 2) ** 2
                b = iv.pi**2 / (2 * iv.mpf(n_) ** 2)
                return (Fraction(float(lo[r])), iv_exact_ends(g)[1]), iv_exact_ends(b)

        second = judge_rows("pi^2/(2n^2)", q, n, meas, m_err, t2, t2_err, None, refine)
        out[q] = min_of_terms("min(terms)", [first, second], meas, bound)
    return bound, out


@settings(max_examples=60, deadline=None)
@given(
    theta=st.one_of(
        st.floats(-20.0, 20.0, allow_nan=False),
        st.floats(1e-12, 1e-3),
        st.sampled_from([0.0, 0.866, 2 * math.pi, 2 * math.pi / 3, math.pi, 2.399963229728653, 1e-6]),
    ),
    max_n=st.integers(2, 4000),
    block=st.integers(1, 5000),
)
def test_index_rows_are_judged_as_the_previous_computation_judged_them(theta, max_n, block) -> None:
    """Issue 46 item 6: the T_Index comparisons share each reading's rounded ends between the two terms,
    find the identity's rows by bisection and skip the terms' own ratios; every status, reason, flag,
    ratio and count equals the generic judge's, row by row, for any block size."""
    from ropeproof.verify.measure.exact._index_sweep import iter_index_blocks
    from ropeproof.verify.measure.exact._sweep import _index_comparisons

    for blk in iter_index_blocks([theta], [1.0], 2, max_n, block, with_error=True):
        bound, got = _index_comparisons(theta, blk)
        want_bound, want = previous_index_comparisons(theta, blk)
        assert np.array_equal(bound, want_bound)
        for q in ("gap_sup", "margin_inf", "gap_inf"):
            g, w = got[q], want["margin_inf" if q == "gap_inf" else q]
            assert np.array_equal(g.codes, w.codes) and np.array_equal(g.flags, w.flags), q
            assert np.array_equal(g.ratio, w.ratio, equal_nan=True), q
            assert np.array_equal(g.reason_codes, w.reason_codes) and g.reason_table == w.reason_table, q
            assert g.detail == w.detail and g.reading == q, q
