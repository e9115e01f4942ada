"""check_bound: statuses per row against independent references, the exact first violation with
its witness, both relations, the certified path on many planes, and bound forms."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._head import CompiledHead
from ropeproof.constructions._paper import index_construction
from ropeproof.machinery._errors import InputError
from ropeproof.theory._construction import Construction, Plane, Rotated, Token
from ropeproof.theory._family import Family, FamilyCase
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.measure.exact._bound_checks import HOLDS
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
    excerpt = summary["first_violation"]["witness"]["excerpt"]
    assert excerpt["tokens"] == list(w.tokens) and excerpt["positions"] == [0, 1, 2, 3]  # short: whole
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
    with pytest.raises(InputError, match="relation='=='"):
        check_bound(index(), 1, 5, relation="==")
    with pytest.raises(InputError, match="max_identities=-1 is out of range"):
        check_bound(index(), 1, 5, max_identities=-1)
    with pytest.raises(InputError, match="state the bound in m, not n"):
        check_bound(index(), "1/n", 5, reading="logit_inf")
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


# ------------------------------------------------------------------------- the logit reading by offset

PLANES, BASE, OFFSETS = 8, 200, 120


def spectrum_head() -> CompiledHead:
    """One token whose query and key are (1, 1) in each of 8 planes with theta_i = 200^(-i/8): its logit
    at offset m is 2 B_m, B_m = sum_i cos(m theta_i) (Men et al.'s quantity for d = 16)."""
    h = 2 * PLANES
    freqs = [float(mpmath.mpf(BASE) ** (-mpmath.mpf(i) / PLANES)) for i in range(PLANES)]
    eye = np.eye(h)
    return CompiledHead(
        "spectrum",
        ("x",),
        np.ones((1, h)),
        eye,
        eye,
        eye,
        eye,
        np.ones((h, 1)),
        RopeSpec(h, freqs=freqs),
        1.0,
    )


SPECTRUM = Family("probe", (FamilyCase("probe", ("x",), ("x",), ("x",), None),), "one token, anywhere")


def exact_b(m: int, head: CompiledHead) -> mpmath.mpf:
    """2 sum_i cos(m theta_i) at the head's float64 frequencies, 50 digits."""
    with mpmath.workdps(50):
        return 2 * sum(mpmath.cos(m * mpmath.mpf(float(t))) for t in head.spec.plane_freqs)


@pytest.mark.parametrize("certified", [False, True])
def test_logit_reading_first_violation_is_exact(certified: bool) -> None:
    """logit_inf(m) >= 0 for this spectrum first fails at the first m with B_m < 0 (mpmath), every
    offset 0..120 judged as mpmath's sign says; the witness names the offset, the pair and the value."""
    head = spectrum_head()
    check = check_bound(head, 0, OFFSETS, "logit_inf", ">=", family=SPECTRUM, certified=certified)
    truth = [exact_b(m, head) for m in range(OFFSETS + 1)]
    negative = [m for m in range(OFFSETS + 1) if truth[m] < 0]
    assert check.n.tolist() == list(range(OFFSETS + 1)) and check.first_violation == negative[0] == 29
    for m, status in enumerate(check.status):
        assert status in (("violated", "tight-violated") if m in negative else ("holds", "tight-holds"))
    assert check.measured[29] == pytest.approx(float(truth[29]), abs=1e-12)
    first = check.summary()["first_violation"]
    assert first["m"] == 29 and first["witness"]["offset"] == 29 and first["witness"]["key_token"] == "x"
    assert first["enclosure"][0] <= float(truth[29]) <= first["enclosure"][1]
    assert check.statement() == "logit_inf(m) >= 0" and check.rows()[0]["m"] == 0
    strict = check_bound(head, "0*m", OFFSETS, "logit_inf", ">", family=SPECTRUM, certified=certified)
    assert strict.first_violation == 29


@settings(max_examples=12, deadline=None)
@given(c=st.integers(10, 18), certified=st.booleans())
def test_a_row_equal_to_the_bound_violates_only_a_strict_relation(c: int, certified: bool) -> None:
    """logit_sup(0) = 16 exactly (cos 0 = 1 in every plane) and below 16 at every m >= 1: against the
    constant c, "<=" holds iff c >= 16 and "<" iff c > 16; the equal row is decided exactly (both
    enclosures one float), never undecided."""
    head = spectrum_head()
    for relation, holds in (("<=", c >= 16), ("<", c > 16)):
        check = check_bound(head, c, 30, "logit_sup", relation, family=SPECTRUM, certified=certified)
        assert check.verdict() == ("holds" if holds else "violated")
        assert check.first_violation == (None if holds else 0)
        assert "undecided" not in check.status.tolist()


# --------------------------------------------------------------- >= proves equality rows by identity


def test_greater_equal_proves_equal_rows_by_identity_as_less_equal_does() -> None:
    """T_Index's margin equals g(1) = 1 - cos(theta) at n = 2..7 and is below it from n = 8 (mpmath):
    "<=" and ">=" both read n = 2..7 holds-equal (">=": every input's value compared, the touching ones
    proved equal by sympy); ">" is violated from n = 2, the equal rows violating a strict relation."""
    truth = exact_index_margins(20)
    with mpmath.workprec(200):
        g1 = 1 - mpmath.cos(mpmath.mpf(THETA))
        below = [n for n in range(2, 21) if truth[n - 2] < g1 - mpmath.mpf(10) ** -40]
    assert below[0] == 8
    for relation, first in (("<=", None), (">=", 8), (">", 2)):
        check = check_bound(index(), "1 - cos(theta)", 20, relation=relation, max_identities=64)
        assert check.first_violation == first and "undecided" not in check.status.tolist()
        equal = "tight-violated" if relation == ">" else "holds-equal"
        assert check.status[:6].tolist() == [equal] * 6
    few = check_bound(index(), "1 - cos(theta)", 20, relation=">=", max_identities=8)
    reasons = few.summary()["undecided_reasons"]
    undecided = int((few.status == "undecided").sum())
    assert undecided and reasons == {"identity budget reached (max_identities=8)": undecided}
    assert few.comparison.detail["identities_tried"] == "8 of max_identities=8"
    assert few.first_violation == 8 and few.verdict() == "violated"


def test_a_head_without_exact_parameters_says_why_a_touching_row_stays_open() -> None:
    """The compiled T_Index head has float weights, no sympy parameters: the equal rows of ">=" stay
    undecided, each saying that no identity applies, never a pass."""
    head = compile_construction(index())
    check = check_bound(head, "1 - cos(0.866)", 12, relation=">=")
    assert check.verdict() == "violated" and check.first_violation == 8
    reasons = check.summary()["undecided_reasons"]
    assert reasons and all("no identity applies" in why for why in reasons)


def test_a_true_bound_tight_at_the_familys_first_length_holds() -> None:
    """T_Index with the query fixed at s = 3 (the family starts at n = 4): the margin is g(1) = 1 - cos
    theta from n = 4 until a competitor 7 from the target scores closer, at n = 11 (mpmath: g(7) < g(1)).
    ">=" with the default budgets reads every row to 10 holds-equal (a true bound, tight at n = 4, is not
    unresolvable), and the first violation 11."""
    case = next(c for c in index().family.cases if c.target_distance == 3)
    three = index().with_family(Family("s = 3", (case,), "the query integer 3"))
    with mpmath.workprec(200):
        g = [2 * mpmath.sin(m * mpmath.mpf(THETA) / 2) ** 2 for m in range(1, 9)]
    assert min(g[:6]) == g[0] and g[6] < g[0]  # offsets 1..6 from the target score no closer; 7 does
    holds = check_bound(three, "1 - cos(theta)", 10, relation=">=")
    assert holds.n.tolist() == list(range(4, 11)) and holds.verdict() == "holds"
    assert holds.status.tolist() == ["holds-equal"] * 7
    assert check_bound(three, "1 - cos(theta)", 20, relation=">=").first_violation == 11


PATTERNS = {
    # how the reading compares with the bound -> the statuses of <=, <, >=, > (holds / violated)
    "<": ("H", "H", "V", "V"),
    "=": ("H", "V", "H", "V"),
    ">": ("V", "V", "H", "H"),
}


@settings(max_examples=6, deadline=None)
@given(theta=st.sampled_from([0.866, 0.5, 1.3]), certified=st.booleans())
def test_the_four_relations_agree_row_by_row(theta: float, certified: bool) -> None:
    """T_Index's least logit by offset against cos(m theta) (the letter m back from a query m + s away
    scores cos(s theta)): at every offset the four relations read one comparison, <, = or >, none
    undecided; '=' rows are proved (identity), and hold only for the non-strict relations."""
    c = index_construction(theta=theta, letters=2, max_int=6)
    checks = [
        check_bound(c, "cos(m*theta)", 5, "logit_inf", r, certified=certified) for r in ("<=", "<", ">=", ">")
    ]
    for m in range(6):
        statuses = [str(ch.status[m]) for ch in checks]
        assert "undecided" not in statuses
        got = tuple("H" if s in HOLDS else "V" for s in statuses)
        assert got in PATTERNS.values(), (m, statuses)
        if got == PATTERNS["="]:
            assert statuses[0] == statuses[2] == "holds-equal"
            assert abs(checks[0].measured[m] - math.cos(m * theta)) < 1e-12
    if theta == 0.866:  # m = 3: the letter 3 back from the query 6 scores cos(3 theta), the least there
        assert [str(ch.status[3]) for ch in checks] == ["holds-equal", "tight-violated"] * 2


def test_a_parameter_named_like_a_bound_symbol_is_refused_never_substituted() -> None:
    """A Construction parameter ``n`` (or a head's ``pi``) would replace the bound's own symbol: refused,
    naming it; the same bound without it is judged at every length."""
    import dataclasses

    c = index(8)
    shadowing = dataclasses.replace(c, parameters={**c.parameters, sp.Symbol("n"): 3.0})
    with pytest.raises(InputError, match="parameter 'n' has the name of a bound's own symbol"):
        check_bound(shadowing, "1/n", 8)
    head = compile_construction(c)
    head.metadata["parameters"] = {"pi": 3}
    with pytest.raises(InputError, match="parameter 'pi' has the name"):
        check_bound(head, "pi^2/(2*n^2)", 8)
    head.metadata["parameters"] = {"theta": float("nan")}
    with pytest.raises(InputError, match="parameter 'theta' = nan"):
        check_bound(head, "1 - cos(theta)", 8)
    stated = check_bound(c, "1/n", 8)  # the midpoint of each row's enclosure of 1/n
    assert all(
        lo <= 1 / n <= hi for n, lo, hi in zip(range(2, 9), stated.bound_lo, stated.bound_hi, strict=True)
    )
    assert np.allclose(stated.bound, [1 / n for n in range(2, 9)], rtol=1e-15, atol=0)


def test_undefined_bounds_callables_returning_inf_and_certified_must_be_a_bool() -> None:
    c = index(8)
    with pytest.raises(InputError, match="undefined at n=5: a division by zero"):
        check_bound(c, "(n-5)/(n-5)", range(4, 7))
    with pytest.raises(InputError, match="undefined at n=5"):
        check_bound(c, (sp.Symbol("n") - 5) ** -1, range(4, 7))  # a sympy expression too
    assert check_bound(c, "(n-5)/(n-5)", range(6, 9)).bound.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(InputError, match=r"bound\(3\) = inf; the bound must be finite"):
        check_bound(c, lambda n: math.inf if n == 3 else 1.0, 8)
    with pytest.raises(InputError, match="certified='yes'; accepted: True or False"):
        check_bound(c, "1", 8, certified="yes")  # type: ignore[arg-type]


def test_a_bound_beyond_float64_says_so() -> None:
    with pytest.raises(InputError, match=r"not finite in float64 at n=2 \(beyond its range"):
        check_bound(index(8), "1e400", 8)
    with pytest.raises(InputError, match="the limit is 4194304 bits"):
        check_bound(index(8), "10**10**10", 8)


_BOUND_LEAVES = st.one_of(st.integers(0, 4).map(str), st.just("n"), st.just("theta"))
_BOUND_TREES = st.recursive(
    _BOUND_LEAVES,
    lambda sub: st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*", "/"]), sub, sub),
        st.tuples(st.sampled_from(["log", "sqrt", "cos"]), sub),
    ),
    max_leaves=4,
)


def _bound_text(tree: object) -> str:
    if isinstance(tree, str):
        return tree
    op, *args = tree  # type: ignore[misc]
    return (
        f"{op}({_bound_text(args[0])})"
        if len(args) == 1
        else f"({_bound_text(args[0])}){op}({_bound_text(args[1])})"
    )


def _bound_oracle(tree: object, n: int) -> mpmath.mpf | None:
    """The bound at ``n`` in mpmath at 200 bits (rational steps exact), ``None`` where a step is
    undefined (a division by zero, a logarithm of a number that is not positive, a negative root)."""
    from fractions import Fraction

    def value(t: object) -> Fraction | mpmath.mpf | None:
        if isinstance(t, str):
            return Fraction(n) if t == "n" else Fraction(THETA) if t == "theta" else Fraction(int(t))
        op, *args = t  # type: ignore[misc]
        vals = [value(a) for a in args]
        if any(v is None for v in vals):
            return None
        if op in "+-*/":
            a, b = vals
            if op == "/" and b == 0:
                return None
            if not (isinstance(a, Fraction) and isinstance(b, Fraction)):
                a, b = (
                    mpmath.mpf(v.numerator) / v.denominator if isinstance(v, Fraction) else v for v in vals
                )
            return a + b if op == "+" else a - b if op == "-" else a * b if op == "*" else a / b
        (x,) = (mpmath.mpf(v.numerator) / v.denominator if isinstance(v, Fraction) else v for v in vals)
        if (op == "log" and x <= 0) or (op == "sqrt" and x < 0):
            return None
        return {"log": mpmath.log, "sqrt": mpmath.sqrt, "cos": mpmath.cos}[op](x)

    with mpmath.workprec(200):
        v = value(tree)
        return (
            None if v is None else mpmath.mpf(v.numerator) / v.denominator if isinstance(v, Fraction) else v
        )


@settings(max_examples=8, deadline=None)
@given(_BOUND_TREES)
def test_fuzz_check_bound_against_an_mpmath_oracle(tree: object) -> None:
    """Random bounds in n and the construction's theta through check_bound: refused exactly where the
    oracle finds a step undefined at a judged length; otherwise every row's bound enclosure holds the
    oracle's value."""
    text = _bound_text(tree)
    truth = {n: _bound_oracle(tree, n) for n in range(2, 9)}
    try:
        check = check_bound(index(8), text, 8)
    except InputError as exc:
        assert any(v is None for v in truth.values()), (text, str(exc))
        return
    assert all(v is not None for v in truth.values()), text
    for n, lo, hi in zip(check.n.tolist(), check.bound_lo, check.bound_hi, strict=True):
        assert lo <= float(truth[n]) <= hi or math.isclose(float(truth[n]), lo, rel_tol=1e-15), (text, n)
