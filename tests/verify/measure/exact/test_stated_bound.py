"""check_bound: statuses per row against independent references, the exact first violation with
its witness, both relations, the certified path on many planes, and bound forms."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction
from ropeproof.machinery._errors import InputError
from ropeproof.theory._construction import Construction, Plane, Rotated, Token
from ropeproof.theory._family import Family, FamilyCase
from ropeproof.verify.measure.exact._index_sweep import index_sweep
from ropeproof.verify.measure.exact._stated_bound import check_bound

THETA = 0.866


def index(max_int: int = 60) -> Construction:
    return index_construction(theta=THETA, letters=2, max_int=max_int)


def exact_index_margins(max_n: int, freqs=(THETA,), amps=(1.0,)) -> list[mpmath.mpf]:
    """margin_inf(n) = min_{1 <= m < n} sum_k 2 a_k sin(m theta_k / 2)^2 in mpmath at 200 bits."""
    with mpmath.workprec(200):
        g = [
            sum(2 * a * mpmath.sin(m * mpmath.mpf(t) / 2) ** 2 for t, a in zip(freqs, amps, strict=True))
            for m in range(1, max_n)
        ]
        out, best = [], mpmath.inf
        for v in g:
            best = min(best, v)
            out.append(best)
    return out  # index n - 2


@pytest.mark.parametrize("certified", [False, True])
def test_first_violation_is_exact_with_its_witness(certified: bool) -> None:
    """pi^2/(2 n^2) is first exceeded by T_Index's margin at n = 4 (mpmath), and every row's status
    agrees with the exact comparison; the witness names the attaining input."""
    check = check_bound(index(), "pi^2/(2*n^2)", 61, certified=certified)
    truth = exact_index_margins(61)
    with mpmath.workprec(200):
        violated = [n for n in range(2, 62) if truth[n - 2] > mpmath.pi**2 / (2 * n**2)]
    assert check.first_violation == violated[0] == 4
    assert check.n.tolist() == list(range(2, 62))
    status = check.status
    for n in range(2, 62):
        assert status[n - 2] in (
            ("violated", "tight-violated") if n in violated else ("holds", "tight-holds")
        )
    w = check.witness(4)
    assert len(w.tokens) == 4 and w.tokens[-1] in {"1", "2", "3"}
    summary = check.summary()
    assert summary["first_violation"]["n"] == 4 and summary["verdict"] == "violated"
    assert summary["first_violation"]["witness"]["tokens"] == list(w.tokens)
    assert (
        summary["first_violation"]["enclosure"][0]
        <= float(truth[2])
        <= summary["first_violation"]["enclosure"][1]
    )


def test_every_length_is_searched_not_a_grid() -> None:
    """A bound violated only at n = 37 is found when the lengths asked for are (2, 60)."""
    truth = exact_index_margins(61)
    spike = 2 * float(truth[35])  # twice margin_inf(37), zero elsewhere
    check = check_bound(index(), lambda n: spike if n == 37 else 0.0, [2, 60], relation=">=")
    assert check.first_violation == 37 and check.comparison.violated_n.tolist() == [37]
    assert "callable" in check.notes[0]
    assert check_bound(index(), lambda n: 0.0, [2, 60], relation=">=").first_violation is None


def test_equality_is_proved_for_constructions_and_left_undecided_for_float_heads() -> None:
    """margin_inf(n) = 1 - cos(theta) for every n <= 7 (m = 1 is the closest competitor while 6 theta
    stays below 2 pi - theta): an identity proves holds-equal for the construction; the compiled
    head's rounded weights leave those rows undecided, never a pass."""
    check = check_bound(index(20), "1 - cos(theta)", 7)
    assert set(check.status.tolist()) == {"holds-equal"}
    head_check = check_bound(compile_construction(index(20)), "1 - cos(theta)", 7)
    assert set(head_check.status.tolist()) <= {"undecided", "tight-holds", "holds"}
    assert "undecided" in head_check.status.tolist() and head_check.verdict() == "unresolvable"


def test_lower_bounds_on_many_planes_are_certified() -> None:
    """A three-plane index head: margin_inf(n) >= 0.05 holds exactly until mpmath says it fails."""
    freqs, amps = (0.866, 0.31, 0.07), (1.0, 0.5, 0.25)
    base = index_construction(
        theta=freqs[0], letters=2, max_int=80, extra_planes=list(zip(freqs[1:], amps[1:], strict=True))
    )
    truth = exact_index_margins(81, freqs, amps)
    first = next((n for n in range(2, 82) if truth[n - 2] < 0.05), None)
    for certified in (False, True):
        check = check_bound(base, sp.Rational(1, 20), 81, relation=">=", certified=certified)
        assert check.first_violation == first
        if certified:
            lo, hi = check.measured_lo, check.measured_hi
            assert all(lo[n - 2] <= truth[n - 2] <= hi[n - 2] for n in range(2, 82))


def test_a_previous_token_head_over_its_own_family() -> None:
    """Previous-token head (every key v, every query rho(theta)^-1 v): margin_inf(n) is
    min_{1 <= j <= max(1, n - 2)} 2 sin(j theta / 2)^2; the gap_sup reading is judged too."""
    tokens = tuple(Token(x, "letter", {"phi": i}) for i, x in enumerate("AB"))
    t = sp.Symbol("theta", real=True)
    family = Family("previous", (FamilyCase("prev", ("A", "B"), ("A", "B"), ("A", "B"), 1),), "one back")
    c = Construction(
        "previous", tokens, (Plane(t, 1),), {"letter": lambda p, k, pl: Rotated(-pl.freq)},
        {"letter": lambda p, k, pl: Rotated(0)}, lambda tok: {tok.name: 1},
        {"letter": Token("X", "letter", {"phi": sp.Symbol("phi")})}, {t: 0.9}, family=family,
    )  # fmt: skip
    check = check_bound(c, "2*sin(9/20)^2", 30, relation=">=")
    expected = [min(2 * math.sin(j * 0.45) ** 2 for j in range(1, max(2, n - 1))) for n in range(2, 31)]
    np.testing.assert_allclose(check.measured, expected, rtol=0, atol=1e-15)
    first = next(n for n in range(2, 31) if expected[n - 2] < 2 * math.sin(0.45) ** 2 - 1e-12)
    assert check.first_violation == first
    sup = check_bound(c, 4, 30, reading="gap_sup")
    assert sup.verdict() == "holds" and (sup.measured <= 2).all()


def test_bad_input() -> None:
    with pytest.raises(InputError, match="reading='gap'"):
        check_bound(index(), 1, 5, reading="gap")
    with pytest.raises(InputError, match="relation='<'"):
        check_bound(index(), 1, 5, relation="<")
    with pytest.raises(InputError, match="carries no input family"):
        check_bound(index().with_family(None), 1, 5)
    with pytest.raises(InputError, match="symbols"):
        check_bound(index(), sp.Symbol("m"), 5)
    with pytest.raises(InputError, match="lengths"):
        check_bound(index(), 1, [])
    with pytest.raises(InputError, match="max_n=99"):
        check_bound(index(), 1, 99)  # T_Index's family covers up to max_int + 1


def test_against_index_sweep_values() -> None:
    check = check_bound(index(), 1, 61)
    np.testing.assert_allclose(check.measured, index_sweep([THETA], [1.0], 61).margin_inf, rtol=0, atol=1e-15)
    assert (check.measured_hi - check.measured_lo < 1e-13).all()
