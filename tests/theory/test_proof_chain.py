"""Checked composition (ropeproof.theory._proof_chain): the readout proof's chains compose, and a chain
with a link dropped, a conclusion weakened, a step argued or failing, or a fact used before it is given
has a gap that names it."""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp

from ropeproof.theory._positional_readout import _readout_steps, readout_chains
from ropeproof.theory._proof_chain import Chain, Link, chain_gaps, composition_step
from ropeproof.theory._proof_checks import ARGUMENT, MACHINE_CHECKED, PROVED, ProofStep, proof_level


def test_the_readout_chains_compose() -> None:
    steps = _readout_steps()
    assert all(chain_gaps(c, steps) == [] for c in readout_chains())


@pytest.mark.parametrize(
    "dropped",
    ["margin-below-difference", "two-inputs", "least-over-inputs", "below-every-key", "mean-weight",
     "sign-picks-the-key", "positional-weights"],
)  # fmt: skip
def test_a_dropped_link_leaves_a_gap(dropped: str) -> None:
    """(smaller-of-two is itself a linear fact, which the linear arithmetic that joins the links derives:
    dropping it leaves no gap.)"""
    steps = _readout_steps()
    for chain in readout_chains():
        cut = dataclasses.replace(chain, links=tuple(k for k in chain.links if k.step != dropped))
        assert chain_gaps(cut, steps), (chain.name, dropped)


def test_gaps_name_what_is_missing() -> None:
    a, b, c = sp.symbols("a b c", real=True)
    steps = [
        ProofStep("s1", "a <= b", "sympy", lambda: True),
        ProofStep("s2", "b <= c", "sympy", lambda: True),
    ]
    good = Chain(
        "t", (), (sp.Le(a, c),), (Link("s1", gives=(sp.Le(a, b),)), Link("s2", gives=(sp.Le(b, c),)))
    )
    assert chain_gaps(good, steps) == []
    swapped_needs = Chain(
        "t", (), (sp.Le(a, c),), (Link("s2", needs=(sp.Le(a, b),), gives=(sp.Le(b, c),)), good.links[0])
    )
    assert any("do not follow" in g for g in chain_gaps(swapped_needs, steps))
    weak = dataclasses.replace(good, conclusion=(sp.Lt(a, c),))  # strict: does not follow
    assert any("conclusion" in g for g in chain_gaps(weak, steps))
    facts = Chain("t", (), (), (Link("s1", needs_facts=("p",)),))
    assert any("not given before" in g for g in chain_gaps(facts, steps))
    argued = [dataclasses.replace(steps[0], method=ARGUMENT, check=None), steps[1]]
    assert any("not a checked step" in g for g in chain_gaps(good, argued))
    failing = [ProofStep("s1", "a <= b", "sympy", lambda: False), steps[1]]
    assert any("not machine-checked" in g for g in chain_gaps(good, failing))


def test_a_checked_composition_step_decides_the_level() -> None:
    a, b, c = sp.symbols("a b c", real=True)
    steps = [
        ProofStep("s1", "a <= b", "sympy", lambda: True),
        ProofStep("s2", "b <= c", "sympy", lambda: True),
    ]
    links = (Link("s1", gives=(sp.Le(a, b),)), Link("s2", gives=(sp.Le(b, c),)))
    composed = [*steps, composition_step("9.9", [Chain("t", (), (sp.Le(a, c),), links)], steps)]
    assert proof_level(composed)[0] == MACHINE_CHECKED
    broken = [*steps, composition_step("9.9", [Chain("t", (), (sp.Le(c, a),), links)], steps)]
    assert proof_level(broken)[0] != MACHINE_CHECKED and proof_level(broken)[0] != PROVED
