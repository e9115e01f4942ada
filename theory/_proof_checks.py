"""Proof steps, how far a list of them establishes its statement (the status of a correction), and the
small checks the steps share.

A proof is a list of :class:`ProofStep` s (docs/theory.md section 9). Each step has a ``method``:

- ``"sympy"``: an identity or inequality that sympy proves for every value of its symbols (a linear
  implication included, :func:`ropeproof.theory._order_facts.implies`);
- ``"exhaustive"``: a computation over a finite set that is the whole of the step's statement (every
  residue class, every case of a finite family);
- ``"interval"``: interval arithmetic over a finite set, or over a whole compact interval by
  branch-and-bound in Arb (:mod:`ropeproof.theory._arb_bounds`), that is the whole of the step's
  statement (with any algebra it needs by sympy);
- ``"definition"``: a literal restatement of a definition of docs/theory.md section 5 (the margin, the
  gap, a least or largest value), carried as a :class:`~ropeproof.theory._order_facts.Restatement` from
  the reviewed list :data:`~ropeproof.theory._order_facts.DEFINITIONS` and checked exactly, on three
  generic terms and for every number of terms by a checked induction (:func:`definition_step`); a step
  whose content is not such a restatement is not a definition;
- ``"argument"``: argued in words in docs/theory.md, not machine-checked. An argued step may carry a
  check of part of its statement (``evidence`` says which part, such as a finite range); the check must
  pass, but the step stays argued.

:func:`proof_level` grades a list: ``machine-checked`` when every step has a check that passed and none is
argued; ``proved`` when, besides, some steps are argued (the written proof in docs/theory.md covers
them); ``not proved`` when a check fails or a step that should carry a check has none. How the steps
combine is a step of its own, :func:`composition_step`: where no code checks that each step's conclusion
is the next one's hypothesis and the last one's the statement, it is argued, and the proof is ``proved``
at best.

:func:`monotone_on` decides that a function does not decrease (or increase) on a closed interval from
the exact range of its derivative there (sympy's ``AccumBounds``, which encloses ``sin`` and ``cos`` of an
interval exactly); it answers in milliseconds where ``sympy.is_increasing`` takes a tenth of a second.
:func:`sign_on` does the same for the sign of a function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import sympy as sp

from ropeproof.theory._counting_induction import holds_for_any_count
from ropeproof.theory._order_facts import DEFINITIONS, Restatement, definition_holds

SYMPY, EXHAUSTIVE, INTERVAL, DEFINITION, ARGUMENT = (
    "sympy",
    "exhaustive",
    "interval",
    "definition",
    "argument",
)
METHODS: tuple[str, ...] = (SYMPY, EXHAUSTIVE, INTERVAL, DEFINITION, ARGUMENT)
CHECKED_METHODS: tuple[str, ...] = (SYMPY, EXHAUSTIVE, INTERVAL, DEFINITION)
"""Methods whose steps must carry a check; a proof whose steps all use them is machine-checked."""
MACHINE_CHECKED, PROVED, NOT_PROVED = "machine-checked", "proved", "not proved"


@dataclass
class ProofStep:
    """One step of a proof: what it states, how it is established (module docstring), its check, and
    whether the check passed. ``restatement`` is a definition step's content; ``evidence`` says what an
    argued step's check covers."""

    name: str
    statement: str
    method: str
    check: Callable[[], bool] | None = field(default=None, repr=False)
    passed: bool | None = None
    restatement: Restatement | None = field(default=None, repr=False)
    evidence: str = ""

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"proof step {self.name!r}: method={self.method!r}; accepted: {METHODS}")
        if self.method == ARGUMENT and self.check is not None and not self.evidence:
            raise ValueError(
                f"proof step {self.name!r}: an argued step's check needs `evidence` saying what it covers"
            )

    def run(self) -> bool | None:
        self.passed = None if self.check is None else bool(self.check())
        return self.passed

    @property
    def machine_checked(self) -> bool:
        """Whether the step is checked in full (a checked method with a check that passed)."""
        return self.method in CHECKED_METHODS and self.check is not None and self.passed is True

    @property
    def status(self) -> str:
        """``checked``, ``failed``, ``not run``, ``no check``, ``argued, not checked`` or
        ``argued; checked: <evidence>``."""
        if self.method == ARGUMENT:
            if self.check is None:
                return "argued, not checked"
            return {True: f"argued; checked: {self.evidence}", False: "failed", None: "not run"}[self.passed]
        if self.check is None:
            return "no check"
        return {True: "checked", False: "failed", None: "not run"}[self.passed]


def definition_step(name: str, statement: str, definition: str) -> ProofStep:
    """A definition step restating :data:`~ropeproof.theory._order_facts.DEFINITIONS` ``[definition]``,
    checked exactly on three generic terms (:meth:`~ropeproof.theory._order_facts.Restatement.holds`) and
    for every number of terms by induction
    (:func:`~ropeproof.theory._counting_induction.holds_for_any_count`)."""
    if definition not in DEFINITIONS:
        raise ValueError(
            f"definition step {name!r}: definition={definition!r}; accepted: {sorted(DEFINITIONS)}"
        )
    return ProofStep(
        name,
        statement,
        DEFINITION,
        lambda: definition_holds(definition) and holds_for_any_count(definition),
        restatement=DEFINITIONS[definition],
    )


COMPOSITION = "composition"
"""The name of the step that combines a proof's other steps into its statement."""


def composition_step(section: str) -> ProofStep:
    """The argued step ``composition``: how the other steps combine into the statement is the written
    proof of docs/theory.md section ``section``; no code checks that each step's conclusion is the next
    one's hypothesis, so a proof that carries it is ``proved``, never ``machine-checked``."""
    return ProofStep(
        COMPOSITION,
        f"the steps combine into the statement as the written proof of docs/theory.md section {section} says "
        "(each step's conclusion the next one's hypothesis, the last one's the statement): argued in words, "
        "not checked by code",
        ARGUMENT,
    )


def run_steps(steps: Sequence[ProofStep]) -> dict[str, bool | None]:
    """Run every step that has a check (once: a step already run keeps its result); ``{name: passed}``
    with ``None`` for steps without a check."""
    out: dict[str, bool | None] = {}
    for s in steps:
        if s.check is not None and s.passed is None:
            s.run()
        out[s.name] = s.passed
    return out


def argued_steps(steps: Sequence[ProofStep]) -> list[str]:
    """The names of the argued steps, each with what its check covers when it has one."""
    return [f"{s.name} ({s.evidence})" if s.evidence else s.name for s in steps if s.method == ARGUMENT]


def proof_level(steps: Sequence[ProofStep]) -> tuple[str, str]:
    """``(level, summary)``: ``machine-checked``, ``proved`` or ``not proved`` (module docstring), with
    ``"k/k steps machine-checked (d definitions)"``, the argued steps, or what stops the proof."""
    run_steps(steps)
    failed = [s.name for s in steps if s.check is not None and s.passed is not True]
    unchecked = [s.name for s in steps if s.method in CHECKED_METHODS and s.check is None]
    false_definitions = [
        s.name
        for s in steps
        if s.method == DEFINITION and (s.restatement is None or s.restatement.name not in DEFINITIONS)
    ]
    if failed or unchecked or false_definitions or not steps:
        why = [f"failed: {', '.join(failed)}"] if failed else []
        why += [f"no check: {', '.join(unchecked)}"] if unchecked else []
        why += [f"not a listed definition: {', '.join(false_definitions)}"] if false_definitions else []
        return NOT_PROVED, "; ".join(why) or "no steps"
    checked = sum(s.machine_checked for s in steps)
    definitions = sum(s.method == DEFINITION for s in steps)
    summary = f"{checked}/{len(steps)} steps machine-checked ({definitions} definitions)"
    argued = argued_steps(steps)
    if argued:
        return PROVED, f"{summary}; argued in docs/theory.md: {'; '.join(argued)}"
    return MACHINE_CHECKED, summary


def steps_table(steps: Sequence[ProofStep]) -> list[dict[str, object]]:
    """One row per step (name, statement, method, status) for reports."""
    run_steps(steps)
    return [{"name": s.name, "statement": s.statement, "method": s.method, "status": s.status} for s in steps]


def monotone_on(expr: sp.Expr, x: sp.Symbol, low: sp.Expr, high: sp.Expr, increasing: bool = True) -> bool:
    """``True`` when the derivative of ``expr`` in ``x`` is ``>= 0`` (``increasing``) or ``<= 0`` at every
    point of ``[low, high]``, decided from its exact range there (``AccumBounds``), so that ``expr`` does
    not decrease (resp. increase) on the interval; ``False`` when the range says otherwise or cannot be
    computed."""
    return sign_on(sp.diff(expr, x), x, low, high, nonnegative=increasing)


def sign_on(expr: sp.Expr, x: sp.Symbol, low: sp.Expr, high: sp.Expr, nonnegative: bool = True) -> bool:
    """``True`` when ``expr >= 0`` (``nonnegative``) or ``<= 0`` at every point of ``[low, high]`` (numeric
    ends), decided from its exact range there (``AccumBounds``); ``False`` otherwise or when the range
    cannot be computed."""
    rng = sp.sympify(expr).subs(x, sp.AccumBounds(low, high))
    if not isinstance(rng, sp.AccumBounds):
        value = sp.sympify(rng)
        if not value.is_number:
            return False
        return bool(value >= 0) if nonnegative else bool(value <= 0)
    return bool(rng.min >= 0) if nonnegative else bool(rng.max <= 0)
