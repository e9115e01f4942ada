"""A proof as a chain whose composition is checked by code: each step's conclusion is what the next steps
need, and the last conclusions are the statement.

A :class:`Link` uses one proof step, by name: the facts it needs and those it gives. A fact is either a
relation (``<=``, ``<``, ``>=``, ``>``, ``==``) between real symbols that stand for the proof's quantities
(a margin, a key weight, a product such as ``C p_t`` named by one symbol), or a named proposition (such
as "the attention weights depend on the positions only"). A :class:`Chain` is a statement (its
hypotheses and its conclusion) and the links in order. :func:`chain_gaps` checks the composition:

- every step a link uses is a step of the proof and machine-checked (its check passed);
- every named fact a link needs is a hypothesis of the statement or given by an earlier link;
- every relation a link needs follows, by sympy's linear real arithmetic
  (:func:`~ropeproof.theory._order_facts.implies`), from the hypotheses and the relations given so far;
- the statement's conclusion follows the same way from everything given.

What a link gives is what its step's check proves, written over the chain's symbols: the link and the
step are written side by side (the proof module), and a step whose check is itself a linear implication
checks exactly the link's relations. :func:`composition_step` makes the check a proof step,
``composition``, that is machine-checked when every chain of the proof has no gap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

from ropeproof.theory._order_facts import implies
from ropeproof.theory._proof_checks import ARGUMENT, COMPOSITION, SYMPY, ProofStep


@dataclass(frozen=True)
class Link:
    """One step used in a chain (module docstring): the facts it needs and those it gives."""

    step: str
    gives: tuple[sp.Basic, ...] = ()
    needs: tuple[sp.Basic, ...] = ()
    gives_facts: tuple[str, ...] = ()
    needs_facts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Chain:
    """A statement, ``hypotheses`` (and named ``hypothesis_facts``) => ``conclusion``, and the links that
    prove it, in order (module docstring)."""

    name: str
    hypotheses: tuple[sp.Basic, ...]
    conclusion: tuple[sp.Basic, ...]
    links: tuple[Link, ...]
    hypothesis_facts: tuple[str, ...] = ()


def chain_gaps(chain: Chain, steps: Sequence[ProofStep]) -> list[str]:
    """Why ``chain`` does not compose over ``steps`` (module docstring), one sentence per gap; ``[]`` when
    every link's needs are met, every step it uses is machine-checked and the conclusion follows."""
    by_name = {s.name: s for s in steps}
    gaps: list[str] = []
    relations = list(chain.hypotheses)
    facts = set(chain.hypothesis_facts)
    for i, link in enumerate(chain.links):
        step = by_name.get(link.step)
        if step is None or step.method == ARGUMENT:
            gaps.append(f"{chain.name}, link {i} ({link.step}): not a checked step of the proof")
        else:
            if step.check is not None and step.passed is None:
                step.run()
            if not step.machine_checked:
                gaps.append(f"{chain.name}, link {i} ({link.step}): its step is not machine-checked")
        missing = [f for f in link.needs_facts if f not in facts]
        if missing:
            gaps.append(f"{chain.name}, link {i} ({link.step}): needs {missing}, not given before")
        if link.needs and not implies(relations, list(link.needs)):
            gaps.append(
                f"{chain.name}, link {i} ({link.step}): needs {list(link.needs)}, which do not follow"
            )
        relations += link.gives
        facts |= set(link.gives_facts)
    if not implies(relations, list(chain.conclusion)):
        gaps.append(f"{chain.name}: the conclusion {list(chain.conclusion)} does not follow from the links")
    return gaps


def composition_step(section: str, chains: Sequence[Chain], steps: Sequence[ProofStep]) -> ProofStep:
    """The step ``composition``, checked: every chain of ``chains`` composes over ``steps`` (the proof's
    other steps), so how the steps combine into the statement of docs/theory.md section ``section`` is
    checked by code (:func:`chain_gaps`)."""
    names = ", ".join(c.name for c in chains)
    return ProofStep(
        COMPOSITION,
        f"the steps combine into the statement of docs/theory.md section {section}, checked: in each chain "
        f"({names}) every link's hypotheses follow from the statement's and the earlier links' conclusions "
        "(linear real arithmetic), and the statement follows from the last",
        SYMPY,
        lambda: all(not chain_gaps(c, steps) for c in chains),
    )
