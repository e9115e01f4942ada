"""What a correction's data establishes: machine-checked only when every step is checked and passes and
every check agrees, proved when some steps are argued; a failing check or step names itself; rows and
failures read the same numbers both ways."""

from __future__ import annotations

import numpy as np
import pytest

from ropeproof.theory._proof_checks import ProofStep, definition_step, monotone_on, proof_level, sign_on
from ropeproof.verify.studies.errata._correction_data import CorrectionData, Series, first_failure, tolerance


def _series(exact: list[float], reported: list[float], corrected: list[float]) -> Series:
    n = np.arange(2, 2 + len(exact))
    e, r, c = (np.array(x, dtype=float) for x in (exact, reported, corrected))
    return Series("s", n, e, r, r, c)


def _data(
    series: Series, steps: list[ProofStep], checks: dict[str, bool], basis: str = "proof"
) -> CorrectionData:
    return CorrectionData("q", "r", "c", "bound", [series], {}, steps, checks, basis=basis)  # type: ignore[arg-type]


def test_status_follows_steps_and_checks() -> None:
    good = _series([0.5, 0.4], [0.45, 0.5], [0.5, 0.4 + 1e-16])  # equal within the tolerance
    ok = [
        ProofStep("identity", "1 = 1", "sympy", lambda: True),
        definition_step("min", "a least value is at most each term", "worst-at-most-one-input"),
    ]
    assert _data(good, ok, {}).established() == (
        "machine-checked",
        "2/2 steps machine-checked (1 definitions)",
    )
    assert _data(good, [ProofStep("x", "x", "sympy", lambda: False)], {}).established()[0] == "not proved"
    argued = [*ok, ProofStep("words", "trust me", "argument")]
    status, why = _data(good, argued, {}).established()
    assert status == "proved" and why.endswith("argued in docs/theory.md: words")
    ranged = [
        *ok,
        ProofStep("lemma", "for every q", "argument", lambda: True, evidence="exhaustive for q <= 9"),
    ]
    assert _data(good, ranged, {}).established()[1].endswith("lemma (exhaustive for q <= 9)")
    failing = [ProofStep("lemma", "for every q", "argument", lambda: False, evidence="q <= 9")]
    assert _data(good, failing, {}).established() == ("not proved", "failed: lemma")
    status, why = _data(good, ok, {"the witness attains": False}).established()
    assert status == "contradicted" and "the witness attains" in why
    bad = _series([0.5, 0.4], [0.45, 0.5], [0.5, 0.39])  # the corrected bound is below the exact value
    assert _data(bad, ok, {}).established()[0] == "contradicted"
    assert _data(good, [], {}, basis="numerical").established()[0] == "conjectured"
    assert _data(good, [], {}, basis="interval").established()[0] == "certified"


def test_rows_failures_and_tolerance() -> None:
    s = _series([0.5, 0.4, 0.1], [0.45, 0.5, 0.05], [0.5, 0.5, 0.5])
    assert s.rows() == [[2, 0.5, 0.5], [3, 0.5, 0.4], [4, 0.5, 0.1]]
    assert [r[0] for r in s.offset_rows()] == [1, 2, 3]
    assert s.reported_fails().tolist() == [2, 4]
    assert first_failure(s, lambda n: {"input": f"length {n}"}) == {
        "n": 2, "exact": 0.5, "reported": 0.45, "input": "length 2"
    }  # fmt: skip
    assert first_failure(_series([0.1], [0.2], [0.3])) == {}
    assert tolerance(np.array([0.0, 10.0])).tolist() == pytest.approx([64 * 2.0**-52, 640 * 2.0**-52])
    data = _data(s, [], {}, basis="numerical")
    figures = data.summary_figures()
    assert figures["reported_fails_at"] == 2 and figures["reported_first_failure_n"] == 2
    assert figures["exact_at_max_n"] == 0.1 and figures["lengths"] == "2..4"


def test_proof_level_and_monotonicity_checks() -> None:
    import sympy as sp

    x = sp.Symbol("x", real=True)
    assert monotone_on(sp.sin(x), x, 0, sp.pi / 2) and not monotone_on(sp.sin(x), x, 0, sp.pi)
    assert monotone_on(sp.cos(x), x, 0, sp.pi, increasing=False)
    assert sign_on(sp.sin(x), x, 0, sp.pi) and not sign_on(sp.sin(x), x, 0, 4)
    assert sign_on(sp.cos(x), x, sp.pi / 2, sp.pi, nonnegative=False)
    assert proof_level([definition_step("d", "a definition", "best-at-least-one")]) == (
        "machine-checked",
        "1/1 steps machine-checked (1 definitions)",
    )
