"""What a check finds: verdicts from a condition, and only the verdicts the report knows."""

from __future__ import annotations

from ropeproof.verify.measure._outcome import VERDICTS, Outcome


def test_judge_maps_the_condition_to_a_verdict() -> None:
    assert Outcome.judge(True, {"x": 1}).verdict == "holds"
    failed = Outcome.judge(False, {"x": 1}, key_figure="x", counterexample={"n": 4})
    assert failed.verdict == "violated" and failed.counterexample == {"n": 4} and failed.key_figure == "x"
    assert Outcome.judge(True, {}, counterexample={"n": 4}).counterexample is None  # only a violation has one
    assert Outcome.judge(False, {}, resolvable=False).verdict == "unresolvable"
    assert VERDICTS == ("holds", "violated", "unresolvable", "error")
