"""Every correction's rows against the exact quantity computed here in mpmath, from the definitions (the
query row's logits of docs/theory.md section 4, input by input or position by position), without the
sweep code; and every witness attains what it is said to attain."""

from __future__ import annotations

import math

import mpmath
import pytest

from ropeproof.verify.studies.errata._index import index_best_theta, index_fixed_theta, index_largest_gap
from ropeproof.verify.studies.errata._partial_induction import design_angle, partial_induction_correction
from ropeproof.verify.studies.errata._readout import (
    PERIOD,
    positional_head,
    readout_correction,
    working_scale,
)
from ropeproof.verify.studies.errata._retrieval import (
    retrieval_largest_gap_correction,
    retrieval_margin_correction,
)

DPS = 30
TOL = 1e-13


def _index_row(n: int, s: int, theta: mpmath.mpf) -> list[mpmath.mpf]:
    """T_Index: the query integer s at n - 1 scores key j with cos((j - (n - 1) + s) theta)."""
    return [mpmath.cos((j - (n - 1) + s) * theta) for j in range(n)]


def _index_extremes(n: int, theta: mpmath.mpf) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(margin_inf, gap_sup) over every query s = 1 .. n - 1 (the target at n - 1 - s)."""
    margin, gap = mpmath.inf, -mpmath.inf
    for s in range(1, n):
        row = _index_row(n, s, theta)
        t = n - 1 - s
        margin = min(margin, row[t] - max(row[:t] + row[t + 1 :]))
        top = sorted(row, reverse=True)
        gap = max(gap, top[0] - top[1])
    return margin, gap


BRUTE_LENGTHS = [*range(2, 41), 64, 100]


@pytest.mark.parametrize("reading", ["margin_inf", "gap_sup"])
def test_index_fixed_theta_rows(reading: str) -> None:
    data = index_fixed_theta() if reading == "margin_inf" else index_largest_gap()
    rows = {r[0]: r for r in data.rows()}
    with mpmath.workdps(DPS):
        theta = mpmath.mpf(0.866)
        for n in BRUTE_LENGTHS:
            margin, gap = _index_extremes(n, theta)
            exact = margin if reading == "margin_inf" else gap
            q = n if reading == "margin_inf" else math.ceil((n - 1) / 2) + 1
            corrected = min(1 - mpmath.cos(theta), 1 - mpmath.cos(2 * mpmath.pi / q))
            assert rows[n][2] == pytest.approx(float(exact), abs=TOL), n
            assert rows[n][1] == pytest.approx(float(corrected), abs=TOL), n
            assert exact <= corrected + mpmath.mpf(10) ** -25  # the corrected statement holds
        # the witness: theta = 2 pi / q attains the corrected bound at the last length
        w = data.witness
        n = w["n"]
        q = n if reading == "margin_inf" else math.ceil((n - 1) / 2) + 1
        attained = _index_extremes(n, 2 * mpmath.pi / q)[0 if reading == "margin_inf" else 1]
        assert abs(attained - 2 * mpmath.sin(mpmath.pi / q) ** 2) < mpmath.mpf(10) ** -25
        assert w["value"] == pytest.approx(float(attained), abs=TOL)
        assert w["bound"] == pytest.approx(float(attained), abs=TOL)


def test_index_best_theta_rows() -> None:
    data = index_best_theta()
    rows = {r[0]: r for r in data.rows()}
    with mpmath.workdps(DPS):
        for n in BRUTE_LENGTHS:
            margin, _gap = _index_extremes(n, 2 * mpmath.pi / n)
            best = 2 * mpmath.sin(mpmath.pi / n) ** 2
            assert abs(margin - best) < mpmath.mpf(10) ** -25  # theta = 2 pi / n attains it
            assert rows[n][2] == pytest.approx(float(margin), abs=TOL)
            assert rows[n][1] == pytest.approx(float(best), abs=TOL)
    assert data.offset_rows()[0] == [1, *data.rows()[0][1:]]  # n read as the largest offset


def _competitor(c: int, d: int, theta: mpmath.mpf, alphabet: int) -> mpmath.mpf:
    return mpmath.cos(c * 2 * mpmath.pi / alphabet - d * theta)


def _retrieval_extremes(n: int, theta: mpmath.mpf, alphabet: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(margin_inf, gap_sup) of T_Retrieval at length n from the values each position can take (positions
    are chosen independently): the target at distance d_t scores cos(d_t theta); any other distance d
    (d = 0 the query's own key) scores cos(c omega - d theta) for a letter offset c != 0. The largest gap
    puts one position a at its largest value and every other at its least."""
    values = [[_competitor(c, d, theta, alphabet) for c in range(1, alphabet)] for d in range(n)]
    high, low = [max(v) for v in values], [min(v) for v in values]
    margin, gap = mpmath.inf, -mpmath.inf
    for d_t in range(1, n):
        target = mpmath.cos(d_t * theta)
        top = [high[d] if d != d_t else target for d in range(n)]
        bottom = [low[d] if d != d_t else target for d in range(n)]
        margin = min(margin, target - max(top[:d_t] + top[d_t + 1 :]))
        order = sorted(range(n), key=lambda d: bottom[d], reverse=True)[:2]  # the two largest least values
        for a in range(n):
            rest = bottom[order[0]] if order[0] != a else bottom[order[1]]
            gap = max(gap, top[a] - rest)
    return margin, gap


def test_retrieval_margin_rows_and_witness() -> None:
    data = retrieval_margin_correction()
    with mpmath.workdps(DPS):
        omega = 2 * mpmath.pi / 8
        for series, theta in zip(data.series, (mpmath.mpf(0.0027), mpmath.mpf(0)), strict=True):
            rows = series.rows()
            for n, corrected, exact in rows[:10] + rows[10::4] + rows[-1:]:
                margin, _gap = _retrieval_extremes(n, theta, 8)
                bound = 1 - mpmath.cos(omega - (n - 1) * theta) if n >= 3 else 1 - mpmath.cos(omega)
                assert exact == pytest.approx(float(margin), abs=TOL), n
                assert corrected == pytest.approx(float(bound), abs=TOL), n
                assert margin <= bound + mpmath.mpf(10) ** -25
        # the witness input (target at n - 2, letter phi(Y) + 1 at n - 1, the opposite letter elsewhere)
        n, theta = data.witness["n"], mpmath.mpf(0.0027)
        codes = [1, 0] + [4] * (n - 2)  # per position; the last is the query's own letter offset
        row = [_competitor(c, n - 1 - p, theta, 8) for p, c in enumerate(codes)]
        witness_margin = row[1] - max(row[:1] + row[2:])
        assert float(witness_margin) == pytest.approx(data.witness["margin"], abs=TOL)
        gap_to_bound = 1 - mpmath.cos(omega - (n - 1) * theta) - witness_margin
        assert abs(gap_to_bound - 2 * mpmath.sin((n - 2) * theta / 2) ** 2) < mpmath.mpf(10) ** -25


def test_retrieval_largest_gap_rows_and_witness() -> None:
    data = retrieval_largest_gap_correction()
    with mpmath.workdps(DPS):
        for series, theta in zip(data.series, (mpmath.mpf(0.0027), mpmath.mpf(0)), strict=True):
            for n, corrected, exact in series.rows()[::9]:
                _margin, gap = _retrieval_extremes(n, theta, 8)
                closed = mpmath.cos(theta) + mpmath.cos((n - 1) * theta) if n >= 3 else 1 + mpmath.cos(theta)
                assert exact == pytest.approx(float(gap), abs=TOL), n
                assert corrected == pytest.approx(float(closed), abs=TOL), n
        n, theta = data.witness["n"], mpmath.mpf(0.0027)
        row = [_competitor(4, n - 1 - p, theta, 8) for p in range(n)]
        row[n - 2] = mpmath.cos(theta)  # the target at distance 1
        top = sorted(row, reverse=True)
        assert float(top[0] - top[1]) == pytest.approx(data.witness["closed_form"], abs=TOL)


def test_partial_induction_rows_and_witness() -> None:
    data = partial_induction_correction()
    alphabet = 4
    theta = mpmath.mpf(design_angle(alphabet, 16))
    with mpmath.workdps(DPS):
        logit = {
            (c, d): _competitor(c, d, theta, alphabet)
            for c in range(alphabet)
            for d in range(data.witness["horizon"] + 1)
        }
        for n, corrected, exact in data.rows():
            worst = mpmath.inf
            for d_t in range(1, n):  # the target is the last Y: non-Y letters nearer, anything farther
                competitors = [logit[(c, 0)] for c in range(1, alphabet)]
                competitors += [logit[(c, d)] for d in range(1, d_t) for c in range(1, alphabet)]
                competitors += [logit[(c, d)] for d in range(d_t + 1, n) for c in range(alphabet)]
                worst = min(worst, logit[(0, d_t)] - max(competitors))
            assert exact == pytest.approx(float(worst), abs=TOL), n
            assert corrected == pytest.approx(float(worst), abs=TOL), n
            assert worst > 0
    lo, hi = data.witness["certified_margin"]
    assert lo <= data.witness["margin"] <= hi and lo > 0
    assert data.witness["margin_at_first_failure"] <= 0


def test_readout_rows_and_bound_at_length_3() -> None:
    """Every Retrieval input of length 3 for the period-65 head, in mpmath: its logit at offset u is
    sum_k cos(2 pi k u / 65), k = 1 .. 32, times the working scale."""
    n = 3
    data = readout_correction([n])
    head, family = positional_head()
    readout = head.W_E @ head.W_V @ head.W_O @ head.W_U
    with mpmath.workdps(20):
        scale = mpmath.mpf(working_scale(PERIOD))
        logits = [
            scale * sum(mpmath.cos(2 * mpmath.pi * k * (n - 1 - j) / PERIOD) for k in range(1, 33))
            for j in range(n)
        ]
        weights = [mpmath.exp(v) for v in logits]
        p = [w / sum(weights) for w in weights]
        s = [[mpmath.mpf(float(x)) for x in r] for r in readout]
        worst = mpmath.inf
        for case in family.cases:
            for q in case.query_tokens:
                for t in range(n - 1):
                    for tau in case.target_tokens:
                        for other in case.other_tokens:
                            seq = [other, other, q]
                            seq[t] = tau
                            ids = [head.token_index(x) for x in seq]
                            out = [
                                sum(p[j] * s[ids[j]][o] for j in range(n)) for o in range(len(head.tokens))
                            ]
                            ti = head.token_index(tau)
                            worst = min(worst, out[ti] - max(v for o, v in enumerate(out) if o != ti))
        bound = 1 * min(p[:-1])  # C = 1 for this head: each pair writes 1 on itself
        ((row_n, corrected, exact),) = data.rows()
        assert row_n == n
        assert exact == pytest.approx(float(worst), rel=1e-12)
        assert corrected == pytest.approx(float(bound), rel=1e-12)
        assert abs(worst - bound) < mpmath.mpf(10) ** -15  # the head attains the bound
