"""The claim registry: claim sets, the explicit topic list, user claims and certified outcomes."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch

import ropeproof.claims._letter_codes
import ropeproof.claims._llm_eval
import ropeproof.claims._many_plane
import ropeproof.claims._multihop
import ropeproof.claims._partial_induction
import ropeproof.claims._remark31
import ropeproof.claims._rope
import ropeproof.claims._thm31
import ropeproof.claims._thm32
import ropeproof.claims._training
from ropeproof.claims import BUILTIN_TOPICS, USER_CLAIMS, USER_SECTION, registered_claims
from ropeproof.claims._registry import (
    Approx,
    CheckContext,
    Claim,
    ClaimResult,
    ClaimSet,
    Outcome,
    Quick,
    claim,
    run_claim,
)
from ropeproof.verify.measure.exact._bound_judging import certified_outcome
from ropeproof.verify.measure.exact._certified import CertifiedComparison

TOPIC_PREFIX = {
    ropeproof.claims._rope: "rope.",
    ropeproof.claims._thm31: "thm3.1.",
    ropeproof.claims._thm32: "thm3.2.",
    ropeproof.claims._remark31: "remark3.1.",
    ropeproof.claims._many_plane: "many-plane.",
    ropeproof.claims._letter_codes: "letter-codes.",
    ropeproof.claims._partial_induction: "partial-induction.",
    ropeproof.claims._multihop: "multihop.",
    ropeproof.claims._training: "training.",
    ropeproof.claims._llm_eval: "llm-eval.",
}


def test_topics_load_in_the_listed_order_with_their_own_ids() -> None:
    assert len(BUILTIN_TOPICS) == 11
    for module, prefix in TOPIC_PREFIX.items():
        assert module.__name__ in BUILTIN_TOPICS
        ids = [c.id for c in module.CLAIMS]
        assert ids and all(i.startswith(prefix) for i in ids), (module.__name__, ids)
    order = [c.id for c in registered_claims()]
    firsts = [next(iter(importlib.import_module(t).CLAIMS)).id for t in BUILTIN_TOPICS]
    assert [order.index(f) for f in firsts] == sorted(order.index(f) for f in firsts)
    assert len(order) == len(set(order))


def test_claim_sets_refuse_duplicates_and_user_claims_come_last() -> None:
    s = ClaimSet("t")

    @s.claim(id="t.a", statement="A.", reference="here")
    def _a(ctx: CheckContext) -> Outcome:
        return Outcome.judge(True, {})

    with pytest.raises(ValueError, match="already registered"):
        s.claim(id="t.a", statement="again", reference="here")(_a)
    assert [c.id for c in s] == ["t.a"] and "t.a" in s and len(s) == 1

    @claim(id="user.test-claim", statement="B.", reference="here")
    def _b(ctx: CheckContext) -> Outcome:
        return Outcome.judge(False, {"x": 1.0}, "x", counterexample={"n": 3})

    try:
        assert registered_claims()[-1].id == "user.test-claim"
        result = run_claim(USER_CLAIMS["user.test-claim"], CheckContext(torch.device("cpu"), torch.float64))
        assert result.outcome.verdict == "violated" and result.outcome.counterexample == {"n": 3}
    finally:
        USER_CLAIMS.remove("user.test-claim")


def test_a_raising_check_becomes_an_error_verdict() -> None:
    def boom(ctx: CheckContext) -> Outcome:
        raise RuntimeError("kaput")

    c = Claim("t.boom", "Raises.", "here", {}, boom)
    result = run_claim(c, CheckContext(torch.device("cpu"), torch.float64))
    assert result.outcome.verdict == "error" and "kaput" in result.outcome.detail


def _comparison(status: list[str], first_n: int = 2) -> CertifiedComparison:
    n = np.arange(first_n, first_n + len(status))
    lo = np.linspace(0.1, 0.2, len(status))
    return CertifiedComparison(
        "term", "margin_inf", n, lo, lo + 1e-9, lo - 0.05, lo - 0.05 + 1e-9, np.array(status)
    )


def test_certified_outcome_aggregates_comparisons() -> None:
    ok = certified_outcome({"a": _comparison(["holds", "holds-equal"])})
    assert ok.verdict == "holds" and ok.certified and ok.figures["violated_rows"] == 0
    undecided = certified_outcome({"a": _comparison(["holds", "undecided"])})
    assert undecided.verdict == "unresolvable"
    bad = certified_outcome(
        {"a": _comparison(["holds", "undecided"]), "b": _comparison(["holds", "violated", "violated"], 5)},
        witness=lambda label, n: {"label": label, "n": n},
    )
    assert bad.verdict == "violated" and bad.figures["violated_rows"] == 2
    assert bad.figures["first_violation_n"] == 6
    assert bad.counterexample["check"] == "b" and bad.counterexample["input"] == {"label": "b", "n": 6}


def _result(
    expected: str,
    verdict: str,
    figures: dict,
    pins: dict | None = None,
    dtype: str = "float64",
    builtin: bool = False,
) -> ClaimResult:
    def check(ctx: CheckContext) -> Outcome:
        return Outcome(verdict)  # type: ignore[arg-type]

    if builtin:  # a check defined in the package: one of the toolkit's own claims
        check.__module__ = "ropeproof.claims._thm32"
    c = Claim("t.x", "S.", "here", {}, check, expected, pins=pins or {})  # type: ignore[arg-type]
    return ClaimResult(c, Outcome(verdict, figures), 0.0, dtype=dtype)  # type: ignore[arg-type]


def test_pins_are_float64_facts_and_other_dtypes_report_differences() -> None:
    """check --quick --dtype float16 used to report 34 regressions: float64 pins compared at rel 1e-9,
    and rows float16 cannot resolve counted against the pin."""
    half = {"dtype": "float16"}
    unresolved = _result("holds", "unresolvable", {}, **half)
    assert unresolved.regression is None
    assert unresolved.dtype_difference == "float16 cannot decide it (expected holds in float64)"
    moved = _result("violated", "violated", {"rows": 50}, {"rows": 53}, **half)
    assert (
        moved.regression is None
        and moved.dtype_difference == "rows is 50 in float16, pinned at 53 in float64"
    )
    assert moved.status.startswith("differs from the float64 pins (not a regression)")
    assert _result("violated", "violated", {"rows": 53}, {"rows": 53}, **half).dtype_difference is None
    # a flipped verdict contradicts the float64 fact in any dtype, and an error is always one
    assert _result("holds", "violated", {}, **half).regression == "expected holds, got violated"
    assert _result("violated", "holds", {}, **half).regression == "expected violated, got holds"
    assert _result("holds", "error", {}, **half).regression == "the check raised an error"
    assert _result("open", "unresolvable", {}, **half).dtype_difference is None
    assert _result("holds", "unresolvable", {}).dtype_difference is None  # float64: a regression


def test_regressions_follow_the_expectation_and_the_pins() -> None:
    assert _result("holds", "holds", {}).regression is None
    assert _result("holds", "violated", {}).regression == "expected holds, got violated"
    assert _result("holds", "unresolvable", {}).regression == "expected holds, got unresolvable"
    assert (
        _result("violated", "violated", {"first_violation_n": 4}, {"first_violation_n": 4}).regression is None
    )
    moved = _result("violated", "violated", {"first_violation_n": 5}, {"first_violation_n": 4})
    assert moved.regression == "first_violation_n pinned at 4, got 5"
    assert _result("violated", "violated", {"first_violation_n": 4.0}, {"first_violation_n": 4}).regression
    assert _result("open", "violated", {}).regression is None
    assert _result("open", "unresolvable", {}).regression is None
    assert _result("open", "error", {}).regression == "the check raised an error"
    detail = "ValueError: no\nTraceback ..."
    raised = ClaimResult(_result("holds", "error", {}).claim, Outcome("error", detail=detail), 0)
    assert raised.regression == "the check raised an error (ValueError: no)"  # the first line of the detail
    assert (
        _result("violated", "violated", {"x": 1.0 + 1e-12}, {"x": Approx(1.0, rel=1e-9)}).regression is None
    )
    assert _result("violated", "violated", {"x": 1.1}, {"x": Approx(1.0, rel=1e-9)}).regression
    assert _result("violated", "violated", {}, {"x": True}).regression == "x pinned at True, got <missing>"
    assert _result("violated", "violated", {}, builtin=True).status == "finding about the paper (pinned)"


def test_your_claims_read_as_expected_against_got_and_the_toolkits_as_findings() -> None:
    """Issue 33: a user claim declared expected="violated" was labelled "finding about the paper", and
    one that failed "REGRESSION"; both are neutral now, and --strict still fails on the change."""
    yours = {
        ("violated", "violated"): "expected violated, got violated",
        ("holds", "holds"): "expected holds, got holds",
        ("holds", "violated"): "expected holds, got violated",
        ("violated", "holds"): "expected violated, got holds",
        ("holds", "error"): "the check raised an error",
        ("open", "violated"): "reported (open, not pinned)",
    }
    for (expected, verdict), status in yours.items():
        r = _result(expected, verdict, {})
        assert not r.claim.builtin and r.status == status
        assert r.unexpected == (expected != "open" and expected != verdict)  # --strict semantics kept
    moved = _result("violated", "violated", {"n": 5}, {"n": 4})
    assert moved.status == "n pinned at 4, got 5" and moved.unexpected
    toolkit = {
        ("violated", "violated"): "finding about the paper (pinned)",
        ("holds", "holds"): "as expected (pinned)",
        ("holds", "violated"): "REGRESSION: expected holds, got violated",
        ("holds", "error"): "REGRESSION: the check raised an error",
    }
    for (expected, verdict), status in toolkit.items():
        r = _result(expected, verdict, {}, builtin=True)
        assert r.claim.builtin and r.status == status
    assert all(c.builtin for c in registered_claims())  # every built-in topic's claim reads as the toolkit's
    assert all(c.report_section != "Your claims" for c in registered_claims())


def test_claim_sets_of_yours_land_in_your_section() -> None:
    mine = ClaimSet("mine")
    mine.claim(id="mine.a", statement="A.", reference="me")(lambda ctx: Outcome("holds"))
    named = ClaimSet("mine2", section="Lemma 2")
    named.claim(id="mine.b", statement="B.", reference="me")(lambda ctx: Outcome("holds"))
    assert mine["mine.a"].report_section == USER_SECTION == "Your claims"
    assert named["mine.b"].report_section == "Lemma 2"  # a section you name is kept (under yours)

    @claim(id="user.section-test", statement="C.", reference="me")
    def _c(ctx: CheckContext) -> Outcome:
        return Outcome("holds")

    try:
        assert USER_CLAIMS["user.section-test"].report_section == USER_SECTION
    finally:
        USER_CLAIMS.remove("user.section-test")


def test_quick_parameters_reach_the_check_and_the_statement() -> None:
    seen = []

    def check(ctx: CheckContext) -> Outcome:
        seen.append(ctx.params["max_n"])
        return Outcome.judge(True, {})

    s = ClaimSet("t")
    s.claim(id="t.q", statement="up to n = {max_n}", reference="here", params={"max_n": Quick(100, 10)})(
        check
    )
    c = s["t.q"]
    assert c.statement_for(False) == "up to n = 100" and c.statement_for(True) == "up to n = 10"
    run_claim(c, CheckContext(torch.device("cpu"), torch.float64, quick=True))
    run_claim(c, CheckContext(torch.device("cpu"), torch.float64, quick=False))
    assert seen == [10, 100]
    with pytest.raises(ValueError, match="statement field 'nope'"):
        s.claim(id="t.bad", statement="{nope}", reference="here")(check)
    with pytest.raises(ValueError, match="open claim cannot pin"):
        Claim("t.open", "S.", "here", {}, check, "open", pins={"x": 1})
