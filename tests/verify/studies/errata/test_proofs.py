"""Every correction's proof (docs/theory.md section 9): a step tagged "definition" restates one of the
reviewed definitions and is checked exactly; the lemmas a referee found tagged "definition" are checked
steps now; only the steps named as argued are not machine-checked."""

from __future__ import annotations

import pytest

from ropeproof.theory._order_facts import DEFINITIONS, order_only
from ropeproof.theory._proof_checks import (
    ARGUMENT,
    DEFINITION,
    MACHINE_CHECKED,
    NOT_PROVED,
    PROVED,
    ProofStep,
    definition_step,
    proof_level,
)
from ropeproof.verify.studies.errata._proofs import PROOFS

SUBSTANTIVE = (
    "competitor-lemma",
    "worst-input",
    "least-competitor",
    "target-on-top",
    "equality-case",
    "readings",
    "independent-positions",
)
"""Lemmas once tagged "definition" (issue 34): none may be a definition."""

REVIEWED_DEFINITIONS: dict[str, str] = {
    "gap-is-margin": "gap-is-margin-on-top",
    "prefix-minimum": "worst-over-more-is-smaller",
    "least-over-inputs": "worst-at-most-one-input",
    "least-above-a-bound": "worst-above-a-common-bound",
    "largest-over-inputs": "best-at-least-one",
    "largest-below-a-bound": "best-below-a-common-bound",
    "first-term": "worst-at-most-one-input",
    "margin-below-one-competitor": "margin-at-most-one-competitor",
    "best-competitor-below-a-bound": "best-below-a-common-bound",
    "best-above-one-competitor": "best-at-least-one",
    "margin-below-difference": "margin-at-most-one-competitor",
    "below-every-key": "worst-above-a-common-bound",
    "least-key-term": "worst-at-most-one-input",
}
"""Every definition step of every correction, by step name, and the definition it restates (reviewed:
a new definition step fails the test until it is added here)."""

ARGUED: dict[str, list[str]] = {cid: ["composition"] for cid in PROOFS} | {
    "thm3.2.index.best-theta": ["attaining-angles", "composition"],
    "partial-induction.one-plane": ["independent-positions", "composition"],
    "remark3.1.positional-readout": [],
}
"""The argued steps of each correction (every other step is machine-checked): ``composition`` is argued
wherever no chain checks how the steps combine (all but the readout correction)."""

ONCE_ON_TRUST = (
    "ratio-increasing",
    "averaging",
    "above-the-bound",
    "readout-linear",
    "positional-weights",
    "mean-weight",
    "worst-input",
    "switch",
)
"""Steps whose check once covered only part of their statement (issue 45): each is now checked over its
whole domain (a sympy fact for every value, an induction for any number of terms, or interval
branch-and-bound over a compact interval), never argued."""


@pytest.mark.parametrize("cid", sorted(PROOFS))
def test_definition_steps_restate_reviewed_definitions(cid: str) -> None:
    for step in PROOFS[cid]():
        assert not (step.name in SUBSTANTIVE and step.method == DEFINITION), (cid, step.name)
        if step.method != DEFINITION:
            continue
        assert step.restatement is not None, (cid, step.name)
        assert REVIEWED_DEFINITIONS.get(step.name) == step.restatement.name, (cid, step.name)
        r = step.restatement
        assert DEFINITIONS[r.name] is r and all(order_only(x) for x in (r.lhs, r.rhs))
        assert step.run() is True, (cid, step.name)


@pytest.mark.parametrize("cid", sorted(PROOFS))
def test_each_correction_names_exactly_its_argued_steps(cid: str) -> None:
    steps = PROOFS[cid]()
    level, summary = proof_level(steps)
    assert [s.name for s in steps if s.method == ARGUMENT] == ARGUED[cid]
    assert level == (PROVED if ARGUED[cid] else MACHINE_CHECKED), summary
    assert all(s.machine_checked for s in steps if s.method != ARGUMENT)
    assert len({s.name for s in steps}) == len(steps), "step names are unique within a proof"


def test_a_lemma_tagged_definition_is_refused() -> None:
    """A substantive statement cannot pass as a definition: no listed restatement says it, a step without
    one does not count, and a restatement that is not built from the definitions is refused."""
    import sympy as sp

    from ropeproof.theory._order_facts import Restatement

    with pytest.raises(ValueError, match="accepted"):
        definition_step("competitor-lemma", "cos(c omega - x) <= cos(omega - x)", "competitor-lemma")
    bare = ProofStep("competitor-lemma", "cos(c omega - x) <= cos(omega - x)", DEFINITION)
    assert proof_level([bare]) == (
        NOT_PROVED,
        "no check: competitor-lemma; not a listed definition: competitor-lemma",
    )
    x = sp.Symbol("x", real=True)
    with pytest.raises(ValueError, match="is a lemma, not a definition"):
        Restatement("cos-below-one", sp.cos(x), "<=", sp.Integer(1))
    forged = ProofStep("m", "a min", DEFINITION, lambda: True, restatement=Restatement("x", x, "<=", x))
    assert proof_level([forged])[0] == NOT_PROVED  # a restatement outside the reviewed list


def _section_9() -> str:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[4] / "docs" / "theory.md").read_text()
    return text.split("## 9. Corrected statements", 1)[1]


@pytest.mark.parametrize("cid", sorted(PROOFS))
def test_the_written_proof_names_every_step(cid: str) -> None:
    """docs/theory.md section 9 writes each proof out with its steps named, so a machine-checked step and
    an argued one can both be found in the written proof."""
    section = _section_9()
    missing = [s.name for s in PROOFS[cid]() if f"`{s.name}`" not in section]
    assert not missing, f"{cid}: docs/theory.md section 9 does not name the steps {missing}"


def test_the_status_table_matches_the_registered_corrections() -> None:
    from ropeproof.claims import registered_corrections

    section = _section_9()
    for c in registered_corrections():
        argued = ARGUED[c.id]
        row = next(line for line in section.splitlines() if line.startswith(f"| `{c.id}` |"))
        assert row.split("|")[2].strip() == c.status, c.id
        assert all(f"`{name}`" in row for name in argued) and (("none" in row) == (not argued)), c.id
        assert [n for n in argued if n not in c.sketch] == [], f"{c.id}: the text does not name {argued}"


def test_the_steps_once_on_trust_are_checked_over_their_whole_domain() -> None:
    found = {s.name: s for steps in (f() for f in PROOFS.values()) for s in steps if s.name in ONCE_ON_TRUST}
    assert sorted(found) == sorted(ONCE_ON_TRUST)
    assert all(s.method != ARGUMENT and s.run() is True for s in found.values())
    assert found["ratio-increasing"].method == "interval"  # Arb branch-and-bound on sin x / x's slope


def test_a_declared_machine_checked_correction_with_an_argued_step_is_refused() -> None:
    """Plant an argued step in a correction declared machine-checked: the run establishes ``proved``,
    which is a regression of the declared status, and so fails ``--strict``; no registered correction
    declares ``machine-checked`` with an argued step."""
    import dataclasses

    from ropeproof.claims import registered_corrections
    from ropeproof.claims._corrections import run_correction
    from ropeproof.claims._registry import CheckContext
    from ropeproof.machinery._result_store import ResultStore
    from ropeproof.verify.studies.errata._index import index_fixed_theta

    checked = [s for s in PROOFS["thm3.2.index.fixed-theta"]() if s.method != ARGUMENT]
    assert proof_level(checked)[0] == MACHINE_CHECKED
    planted = [*checked, ProofStep("planted", "a step argued in words", ARGUMENT)]
    assert proof_level(planted) == (PROVED, proof_level(planted)[1])
    assert "planted" in proof_level(planted)[1]

    fixed = next(c for c in registered_corrections() if c.id == "thm3.2.index.fixed-theta")

    def with_plant(ctx: CheckContext) -> object:
        data = index_fixed_theta(theta=ctx.params["theta"], max_n=12)
        return dataclasses.replace(data, proof=planted)

    declared = dataclasses.replace(fixed, status="machine-checked", compute=with_plant)
    import torch

    ctx = CheckContext(torch.device("cpu"), torch.float64, quick=True, store=ResultStore())
    result = run_correction(declared, ctx)
    assert result.established == PROVED
    assert result.regression is not None and result.regression.startswith("declared machine-checked")
    for c in registered_corrections():
        if c.status == MACHINE_CHECKED:
            assert not [s for s in PROOFS[c.id]() if s.method == ARGUMENT], c.id


def test_the_euclid_range_is_stated_as_checked() -> None:
    from ropeproof.claims import registered_corrections
    from ropeproof.theory._one_plane_optimum import EUCLID_RANGE

    best = next(c for c in registered_corrections() if c.id == "thm3.2.index.best-theta")
    assert f"checked exhaustively for n <= {EUCLID_RANGE}" in best.sketch
    assert f"checked exhaustively for `n <= {EUCLID_RANGE}`" in _section_9()
    assert f"checked exhaustively for `M + 1 <= {EUCLID_RANGE}`" in _section_9()
