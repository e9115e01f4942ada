"""Proof steps and their grading (ropeproof.theory._proof_checks): a step's method decides whether it needs a
check, an argued step's check says what it covers, and a proof is machine-checked, proved or not proved
exactly as its steps say."""

from __future__ import annotations

import pytest
import sympy as sp

from ropeproof.theory._proof_checks import (
    COMPOSITION,
    MACHINE_CHECKED,
    NOT_PROVED,
    PROVED,
    ProofStep,
    argued_steps,
    composition_step,
    definition_step,
    monotone_on,
    proof_level,
    sign_on,
    steps_table,
)


def test_methods_and_statuses() -> None:
    with pytest.raises(ValueError, match="method='nosuch'"):
        ProofStep("s", "x", "nosuch")
    with pytest.raises(ValueError, match="needs `evidence`"):
        ProofStep("s", "x", "argument", lambda: True)
    assert ProofStep("s", "x", "argument").status == "argued, not checked"
    ranged = ProofStep("s", "x", "argument", lambda: True, evidence="q <= 9")
    ranged.run()
    assert ranged.status == "argued; checked: q <= 9" and not ranged.machine_checked
    assert ProofStep("s", "x", "sympy").status == "no check"
    checked = ProofStep("s", "x", "sympy", lambda: True)
    assert (
        checked.status == "not run"
        and checked.run()
        and checked.status == "checked"
        and checked.machine_checked
    )


def test_levels() -> None:
    def steps() -> list[ProofStep]:
        return [
            ProofStep("identity", "1 = 1", "exhaustive", lambda: True),
            definition_step("min", "a least value is at most each term", "worst-at-most-one-input"),
        ]

    assert proof_level(steps()) == (MACHINE_CHECKED, "2/2 steps machine-checked (1 definitions)")
    argued = [*steps(), ProofStep("words", "argued", "argument")]
    assert proof_level(argued)[0] == PROVED and argued_steps(argued) == ["words"]
    assert proof_level([*steps(), ProofStep("x", "x", "interval")]) == (NOT_PROVED, "no check: x")
    assert proof_level([*steps(), ProofStep("x", "x", "sympy", lambda: False)]) == (NOT_PROVED, "failed: x")
    assert proof_level([]) == (NOT_PROVED, "no steps")
    assert [r["status"] for r in steps_table(argued)] == ["checked", "checked", "argued, not checked"]
    with pytest.raises(ValueError, match="definition='nosuch'"):
        definition_step("x", "x", "nosuch")


def test_an_argued_composition_makes_every_checked_proof_proved() -> None:
    """How the steps combine is a step: argued, it keeps a proof whose every other step is checked from
    ``machine-checked`` and is named among the argued steps."""
    checked = [ProofStep("identity", "1 = 1", "sympy", lambda: True)]
    assert proof_level(checked)[0] == MACHINE_CHECKED
    composed = [*checked, composition_step("9.2")]
    level, summary = proof_level(composed)
    assert level == PROVED and summary.endswith(f"argued in docs/theory.md: {COMPOSITION}")
    assert "section 9.2" in composed[-1].statement and not composed[-1].machine_checked


def test_monotone_and_sign_from_exact_ranges() -> None:
    x = sp.Symbol("x", real=True)
    assert monotone_on(sp.sin(x), x, 0, sp.pi / 2) and not monotone_on(sp.sin(x), x, 0, sp.pi)
    assert sign_on(sp.cos(x), x, 0, sp.pi / 2) and not sign_on(sp.cos(x), x, 0, sp.pi)
    assert sign_on(sp.Integer(2), x, 0, 1) and not sign_on(sp.Integer(-2), x, 0, 1)
