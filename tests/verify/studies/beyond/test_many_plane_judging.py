"""Judging the many-plane statements: each outcome's figures against references computed here (mpmath
brute force over offsets, Theorem D's bound in integers, direct float64 sums), and each verdict turning
when what it judges is made wrong."""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
import pytest

from ropeproof.machinery._result_store import ResultStore
from ropeproof.theory._dirichlet import integer_root
from ropeproof.verify.measure.exact._index_sweep import direct_index_extremes
from ropeproof.verify.studies.beyond import _many_plane_judging as judging
from ropeproof.verify.studies.beyond._many_plane import log_lengths, many_plane_sweep, standard_frequencies
from ropeproof.verify.studies.beyond._many_plane_judging import (
    DIRECT_LENGTHS,
    INDEX_EXACT_TOLERANCE,
    PLANE_COUNTS,
    dirichlet_grid_outcome,
    dirichlet_heads,
    dirichlet_outcome,
    index_exact_outcome,
    mixed_radix_outcome,
    optimised_outcome,
    random_index_heads,
    standard_spectrum_outcome,
)


def _mp_gaps(freqs, amps, max_m: int) -> list:
    """``g(m) = sum_k 2 a_k sin(m theta_k / 2)^2`` for ``m = 1 .. max_m``, in mpmath at 30 digits."""
    with mpmath.workdps(30):
        th = [mpmath.mpf(float(t)) for t in freqs]
        am = [mpmath.mpf(float(a)) for a in amps]
        return [
            sum(2 * a * mpmath.sin(m * t / 2) ** 2 for a, t in zip(am, th, strict=True))
            for m in range(1, max_m + 1)
        ]


# ----------------------------------------------------------------------------------------- index-exact


def test_index_exact_reports_the_largest_difference_to_brute_force() -> None:
    """The figure is the largest normalised difference between the sweep and direct enumeration, recomputed
    here; the mpmath oracle puts the true extremes within the tolerance of the sweep as well."""
    heads = random_index_heads(3)
    out = index_exact_outcome(3, 600, ResultStore())
    want = 0.0
    for f, a in heads:
        sw = many_plane_sweep(f, a, 40)
        for n in DIRECT_LENGTHS:
            got = (sw.exact.gap_sup[n - 2], sw.exact.gap_inf[n - 2], sw.exact.margin_inf[n - 2])
            direct = direct_index_extremes(f, a, n)
            want = max(want, max(abs(x - y) for x, y in zip(direct, got, strict=True)) / a.sum())
            if n <= 16:
                oracle = direct_index_extremes(f, a, n, dps=30)
                assert (
                    max(abs(x - y) for x, y in zip(oracle, got, strict=True)) / a.sum()
                    <= INDEX_EXACT_TOLERANCE
                )
    assert out.verdict == "holds" and out.figures["max_normalised_diff_vs_direct"] == want
    assert out.figures["streamed_vs_full_max_diff"] == 0.0 and out.figures["streamed_to"] == 600
    assert len(heads) == 3 and all(1 <= f.size <= 8 and (a > 0).all() for f, a in heads)


def test_index_exact_is_violated_by_a_wrong_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    real = judging.direct_index_extremes
    monkeypatch.setattr(
        judging, "direct_index_extremes", lambda f, a, n: tuple(v + 1e-9 for v in real(f, a, n))
    )
    out = index_exact_outcome(2, 200, ResultStore())
    assert out.verdict == "violated" and out.figures["max_normalised_diff_vs_direct"] > 1e-11
    assert out.counterexample["head"] in (0, 1) and out.counterexample["n"] in DIRECT_LENGTHS


# ------------------------------------------------------------------------------------------ Theorem D


DIRICHLET_N = 260
"""Lengths to 260: the eight-plane heads use a box count Q >= 2 (2^8 <= 259), so every step has a witness."""


def test_too_short_a_range_leaves_the_pigeonhole_step_unwitnessed() -> None:
    out = dirichlet_outcome(120, 80)
    assert out.verdict == "violated" and out.counterexample == {"unchecked_steps": ["pigeonhole"]}


def _mp_max_ratio(max_n: int) -> float:
    """The largest margin over Theorem D's bound, both readings, every head and n = 2 .. max_n: the prefix
    minimum of g in mpmath against 2 A sin(pi / max(2, Q))^2 with Q^K <= M computed in integers."""
    best = mpmath.mpf(0)
    for _name, f, a in dirichlet_heads(max_n):
        g = _mp_gaps(f, a, max_n - 1)
        prefix = [min(g[:m]) for m in range(1, max_n)]
        with mpmath.workdps(30):
            total = sum(mpmath.mpf(float(x)) for x in a)
            for n in range(2, max_n + 1):
                for m in (n - 1, -(-(n - 1) // 2)):
                    q = max(2, integer_root(m, len(f)))
                    best = max(best, prefix[m - 1] / (2 * total * mpmath.sin(mpmath.pi / q) ** 2))
    return float(best)


def test_dirichlet_holds_certified_with_the_ratio_mpmath_finds() -> None:
    out = dirichlet_outcome(DIRICHLET_N, 80)
    assert out.verdict == "holds" and out.certified and out.figures["steps_checked"] == "6/6 checked"
    ratio = _mp_max_ratio(DIRICHLET_N)
    # the figure divides an enclosure's upper end by its bound's lower end: at least the exact ratio
    assert ratio <= out.figures["max_measured_over_bound"] <= ratio * (1 + 1e-12) <= 1
    rows = out.figures["certified_rows"]
    assert len(rows) == 2 * len(dirichlet_heads(DIRICHLET_N))
    assert all(r == {"holds": r["holds"], "violated": 0, "undecided": 0} for r in rows.values())


def _with_status(monkeypatch: pytest.MonkeyPatch, status: str) -> None:
    """Every certified_dirichlet comparison with its row n = 5 given ``status``."""
    real = judging.certified_dirichlet

    def marked(*args, **kw):
        chk = real(*args, **kw)
        for q, cmp in chk.comparisons.items():
            st = cmp.status.astype("<U12")
            st[3] = status
            chk.comparisons[q] = dataclasses.replace(cmp, status=st)
        return chk

    monkeypatch.setattr(judging, "certified_dirichlet", marked)


def test_dirichlet_is_violated_by_a_violated_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_status(monkeypatch, "violated")
    out = dirichlet_outcome(DIRICHLET_N, 80)
    assert out.verdict == "violated" and not out.certified
    assert out.counterexample["check"] == "mixed-radix K=1/margin_inf" and out.counterexample["n"] == 5


def test_dirichlet_is_unresolvable_with_an_undecided_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_status(monkeypatch, "undecided")
    out = dirichlet_outcome(DIRICHLET_N, 80)
    assert (
        out.verdict == "unresolvable"
        and out.figures["certified_rows"]["random K=3/gap_sup"]["undecided"] == 1
    )


def test_dirichlet_is_violated_by_a_missing_witness(monkeypatch: pytest.MonkeyPatch) -> None:
    real = judging.dirichlet_witnesses
    monkeypatch.setattr(
        judging, "dirichlet_witnesses", lambda f, n, prec: [] if len(f) == 3 else real(f, n, prec)
    )
    out = dirichlet_outcome(DIRICHLET_N, 80)
    assert out.verdict == "violated" and "pigeonhole" in out.counterexample["unchecked_steps"]


def test_dirichlet_grid_against_a_brute_force() -> None:
    """One plane on the grid 2 pi j / 24: the best margin at length n over every grid angle, in mpmath,
    over Theorem D's one-plane bound 2 sin(pi / max(2, n - 1))^2; lengths where n - 1 divides 24 attain
    it."""
    out = dirichlet_grid_outcome([[1, 24, 12]])
    with mpmath.workdps(30):
        ratios = []
        for n in range(2, 13):
            best = max(
                min(2 * mpmath.sin(m * mpmath.pi * j / 24) ** 2 for m in range(1, n)) for j in range(24)
            )
            ratios.append(best / (2 * mpmath.sin(mpmath.pi / max(2, n - 1)) ** 2))
    assert out.verdict == "holds"
    assert (
        out.figures["max_ratio"] == pytest.approx(float(max(ratios)), rel=1e-13) and float(max(ratios)) == 1.0
    )


def test_dirichlet_grid_is_violated_above_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    real = judging.dirichlet_normalised
    monkeypatch.setattr(judging, "dirichlet_normalised", lambda n, k: 0.99 * real(n, k))
    out = dirichlet_grid_outcome([[1, 24, 12]])
    assert out.verdict == "violated" and out.counterexample == {
        "K=1, grid=24, n<=12": pytest.approx(1 / 0.99)
    }


# ------------------------------------------------------------------------------------------ Theorem R


def test_mixed_radix_counts_the_constructions_that_apply() -> None:
    """A construction applies at n0 when b^(K-1) < n0 for the least b with b^K >= n0 (in integers)."""
    out = mixed_radix_outcome([[3, 3]], 3000, 2)
    want = 0
    for k in PLANE_COUNTS:
        for n0 in log_lengths(3, 3000, 2).tolist():
            b = integer_root(n0 - 1, k) + 1  # the least b with b^k >= n0
            want += b ** (k - 1) < n0
    assert out.verdict == "holds" and out.figures["constructions_checked"] == want > 0
    assert 0 <= out.figures["max_err_over_tolerance"] <= 1
    assert out.figures["proof_steps"]["b=3,K=3"]["residue-lemma"] == "checked"


def test_mixed_radix_is_violated_by_a_wrong_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    real = judging.mixed_radix_margin
    monkeypatch.setattr(judging, "mixed_radix_margin", lambda n, k: real(n, k) * (1 + 1e-9))
    out = mixed_radix_outcome([[3, 3]], 3000, 2)
    assert out.verdict == "violated" and out.figures["max_err_over_tolerance"] > 1
    assert out.counterexample["K"] in PLANE_COUNTS and out.counterexample["bracketed"]


# ----------------------------------------------------------------------------------- optima, spectrum


def test_optimised_one_plane_entries_are_the_optimum() -> None:
    out = optimised_outcome(False)
    assert out.verdict == "holds" and out.figures["rerun_search"] == {}
    with mpmath.workdps(30):
        for n0 in (16, 64, 256, 1024, 4096):
            want = float(2 * mpmath.sin(mpmath.pi / n0) ** 2)
            assert out.figures["table"][f"K=1,n0={n0}"]["margin"] == pytest.approx(want, rel=1e-12)
    slope = out.figures["slope_K8_optimised"]
    assert abs(slope - (-2 / 8)) <= 0.05


def test_optimised_is_violated_by_an_unbracketed_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    real = judging.best_known

    def unbracketed(k: int, n0: int):
        r = real(k, n0)
        return dataclasses.replace(r, margin=2 * r.dirichlet) if (k, n0) == (4, 64) else r

    monkeypatch.setattr(judging, "best_known", unbracketed)
    out = optimised_outcome(False)
    assert out.verdict == "violated" and out.counterexample["K"] == 4 and out.counterexample["n0"] == 64


def test_standard_spectrum_margin_is_g1_and_the_runner_up_is_brute_force() -> None:
    """g(1) / A and min_{2 <= m <= n - 1} g(m) / g(1) by direct float64 sums over every offset."""
    big = 3000
    out = standard_spectrum_outcome(big, ResultStore())
    assert out.verdict == "holds" and out.figures["decays"] is False
    for hd in (64, 128):
        f = standard_frequencies(hd)
        m = np.arange(1, big, dtype=np.float64)
        g = (2 * np.sin(np.outer(m, f) / 2) ** 2).sum(1)
        with mpmath.workdps(30):
            g1 = float(sum(2 * mpmath.sin(mpmath.mpf(float(t)) / 2) ** 2 for t in f) / (hd // 2))
        assert out.figures[f"margin_{hd}_at_max_n"] == pytest.approx(g1, rel=1e-14)
        fig = out.figures[f"head_dim={hd}"]
        assert (
            fig["runner_up_over_g1"] == pytest.approx(g[1:].min() / g[0], rel=1e-12)
            and fig["runner_up_over_g1"] > 3
        )
        assert fig["runner_up_offset"] == int(np.argmin(g[1:])) + 2 and fig["decay_onset"] is None
    assert math.isclose(out.figures["head_dim=64"]["dirichlet_at_max_n"], 2.0)  # Q_32(2999) = 1: Q = 2
