"""The claim registry: every statement ``ropeproof check`` verifies, as data.

A claim is an id, a one-sentence statement, its source, its parameters, an expectation and a check
that returns an :class:`Outcome`. Adding one is one decorated function::

    from ropeproof.claims import CheckContext, Outcome, claim

    @claim(
        id="my.bound",
        statement="Delta(n) <= 1/n for my construction, n = 2..{max_n}.",
        reference="my paper, Thm 2",
        params={"theta": 0.5, "max_n": Quick(1000, 100)},
    )
    def _(ctx: CheckContext) -> Outcome:
        max_n = ctx.params["max_n"]  # the value that actually runs (100 under --quick)
        ...
        return Outcome.judge(ok=..., figures={...}, counterexample=...)

**Expectations.** ``holds`` and ``violated`` are *pinned*: the verdict must come out that way, and
every figure named in ``pins`` must come out equal to its pinned value (a finding such as "first
fails at n = 4" is pinned by its witness). ``open`` claims are reported but not pinned.
``ropeproof check --strict`` fails on any pinned verdict or pin that changes, on any ``error``
verdict, and on an ``unresolvable`` verdict of a pinned claim (:attr:`ClaimResult.regression`).

**Parameters and statements.** A parameter may differ between full and ``--quick`` runs
(:class:`Quick`); the check reads the values that run from ``ctx.params``, and the statement is
formatted with the same values (``{name}`` fields), so a quick report states what it checked.

The built-in claims live in one module per topic under :mod:`ropeproof.claims`, each with its own
:class:`ClaimSet`, loaded from the explicit list :data:`ropeproof.claims.BUILTIN_TOPICS`.
"""

from __future__ import annotations

import dataclasses
import math
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch

from ropeproof.claims._containment import contained
from ropeproof.claims._global_state import global_state_restored
from ropeproof.machinery._result_store import ResultStore
from ropeproof.verify.kernel._threads import thread_policy
from ropeproof.verify.measure._outcome import VERDICTS, Outcome

Expectation = Literal["holds", "violated", "open"]
EXPECTATIONS: tuple[str, ...] = ("holds", "violated", "open")

USER_SECTION = "Your claims"
"""The report section of your claims (those that are not :attr:`Claim.builtin`) that name no section."""


@dataclass(frozen=True)
class Quick:
    """A parameter value that differs under ``--quick``: ``full`` normally, ``quick`` in quick runs."""

    full: Any
    quick: Any

    def resolve(self, quick: bool) -> Any:
        return self.quick if quick else self.full


@dataclass(frozen=True)
class Approx:
    """A pinned float: ``value`` within relative tolerance ``rel`` (and absolute ``abs``)."""

    value: float
    rel: float = 1e-9
    abs: float = 0.0

    def matches(self, got: Any) -> bool:
        try:
            g = float(got)
        except (TypeError, ValueError):
            return False
        return math.isclose(g, self.value, rel_tol=self.rel, abs_tol=self.abs)

    def __str__(self) -> str:
        return f"{self.value:.6g} (rel {self.rel:g})"

    def to_json(self) -> dict[str, float]:
        """The pin as JSON data: ``{"value": ..., "rel": ..., "abs": ...}``."""
        return {"value": self.value, "rel": self.rel, "abs": self.abs}


def pin_matches(pinned: Any, got: Any) -> bool:
    """Whether an outcome figure equals its pin: :class:`Approx` within its tolerance; an ``int`` pin
    only by an integer of that value (a float ``4.0`` does not match ``4``); anything else by ``==``."""
    if isinstance(pinned, Approx):
        return pinned.matches(got)
    if isinstance(pinned, bool) or pinned is None:
        return got is pinned or (isinstance(got, np.bool_) and bool(got) is pinned)
    if isinstance(pinned, int):
        return isinstance(got, int | np.integer) and not isinstance(got, bool | np.bool_) and got == pinned
    return bool(got == pinned)


@dataclass(frozen=True)
class CheckContext:
    """What a check may depend on: device, dtype, ``--quick``, ``--certified``, the claim's resolved
    parameters (``params``, filled in by :func:`run_claim`) and the run's results (``store``)."""

    device: torch.device
    dtype: torch.dtype
    quick: bool = False
    certified: bool = False
    """Decide bound claims by interval arithmetic where a certified check exists."""
    params: Mapping[str, Any] = field(default_factory=dict)
    store: ResultStore = field(default_factory=ResultStore, compare=False)
    """The run's computed results (:class:`~ropeproof.machinery._result_store.ResultStore`), shared by every
    claim, correction and figure of the run: ask it, ``ctx.store.get(PRODUCT, **args)``, for what others
    compute too, and it is computed once."""


@dataclass(frozen=True)
class Claim:
    """A registered claim (see the module docstring).

    ``section`` groups claims under one paper result in the report; ``meaning`` is one sentence on
    what the verdict means, shown with the findings.
    """

    id: str
    statement: str
    reference: str
    params: dict[str, Any]
    check: Callable[[CheckContext], Outcome]
    expected: Expectation = "holds"
    quick: bool = True
    """Whether the claim also runs under ``--quick``."""
    pins: dict[str, Any] = field(default_factory=dict)
    section: str = ""
    meaning: str = ""
    report_figures: tuple[str, ...] = ()
    """The report figures that illustrate this claim (its topic's, :class:`ClaimSet`): ``check`` draws
    a figure only when a claim that names it runs."""

    def __post_init__(self) -> None:
        if self.expected not in EXPECTATIONS:
            raise ValueError(f"claim {self.id!r}: expected={self.expected!r}; accepted: {EXPECTATIONS}")
        if self.pins and self.expected == "open":
            raise ValueError(f"claim {self.id!r}: an open claim cannot pin figures")

    @property
    def pinned(self) -> bool:
        """Whether the verdict is pinned (``holds`` or ``violated``)."""
        return self.expected != "open"

    @property
    def builtin(self) -> bool:
        """Whether this is one of the toolkit's own claims, about the papers: its check is defined in
        the ``ropeproof`` package (a module of :data:`ropeproof.claims.BUILTIN_TOPICS`). A claim of
        yours (a claims file, a plugin, a notebook) is not: its result reads as expected against got,
        never as a finding about a paper or a regression of the toolkit."""
        module = str(getattr(self.check, "__module__", None) or "")
        return module == "ropeproof" or module.startswith("ropeproof.")

    @property
    def report_section(self) -> str:
        """The report section it is listed under: :attr:`section`, else :data:`USER_SECTION` for a claim
        of yours (a :class:`ClaimSet` of your own or the :func:`claim` decorator, alike), else ``""``."""
        return self.section or ("" if self.builtin else USER_SECTION)

    def params_for(self, quick: bool) -> dict[str, Any]:
        """The parameters that run: every :class:`Quick` resolved."""
        return {k: v.resolve(quick) if isinstance(v, Quick) else v for k, v in self.params.items()}

    def statement_for(self, quick: bool) -> str:
        """The statement with ``{name}`` fields filled from :meth:`params_for` and the pins."""
        values = {k: f"{v.value:.6g}" if isinstance(v, Approx) else v for k, v in self.pins.items()}
        try:
            return self.statement.format(**values, **self.params_for(quick))
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"claim {self.id!r}: statement field {exc} has no parameter or pin") from exc

    def meaning_for(self, quick: bool, figures: Mapping[str, Any]) -> str:
        """The meaning sentence with ``{name}`` fields filled from the parameters that ran and the
        outcome's figures (floats to 6 significant digits); the raw sentence if a field is missing."""
        values = {k: f"{v:.6g}" if isinstance(v, float) else v for k, v in figures.items()}
        try:
            return self.meaning.format(**{**self.params_for(quick), **values})
        except (KeyError, IndexError, ValueError):
            return self.meaning


@dataclass(frozen=True)
class NoCorrection:
    """An explicit "no correction yet" for a pinned ``violated`` claim, with the reason
    (:meth:`ClaimSet.no_correction`; corrections themselves: :mod:`ropeproof.claims._corrections`)."""

    claim: str
    reason: str


class ClaimSet:
    """An ordered collection of claims; :meth:`claim` is a decorator adding one.

    Every topic module of :mod:`ropeproof.claims` defines one ``CLAIMS = ClaimSet(...)``; ids must be
    unique within a set, and :func:`ropeproof.claims.registered_claims` checks them across sets.
    """

    def __init__(self, topic: str, section: str = "", report_figures: Sequence[str] = ()) -> None:
        self.topic = topic
        self.section = section
        self.report_figures = tuple(report_figures)
        """The report figures of this topic (names of :func:`ropeproof.paper_figures.figures`); every claim
        added gets them unless it names its own."""
        self._claims: dict[str, Claim] = {}
        self.corrections: list[Any] = []
        """The corrections of this set's claims (:class:`ropeproof.claims._corrections.Correction`)."""
        self.no_corrections: list[Any] = []
        """Explicit "no correction yet" entries (:class:`NoCorrection`)."""

    def __iter__(self) -> Iterator[Claim]:
        return iter(list(self._claims.values()))

    def __len__(self) -> int:
        return len(self._claims)

    def __contains__(self, claim_id: object) -> bool:
        return claim_id in self._claims

    def __getitem__(self, claim_id: str) -> Claim:
        return self._claims[claim_id]

    def add(self, c: Claim) -> Claim:
        """Add ``c``; raise ``ValueError`` if its id is taken or its statement has an unknown field."""
        if c.id in self._claims:
            raise ValueError(f"claim id {c.id!r} is already registered in {self.topic!r}")
        if not c.section and self.section:
            c = dataclasses.replace(c, section=self.section)
        if not c.report_figures and self.report_figures:
            c = dataclasses.replace(c, report_figures=self.report_figures)
        c.statement_for(False)
        c.statement_for(True)
        self._claims[c.id] = c
        return c

    def remove(self, claim_id: str) -> None:
        """Drop the claim ``claim_id`` (``KeyError`` if absent)."""
        del self._claims[claim_id]

    def add_correction(self, correction: Any) -> Any:
        """Add a :class:`~ropeproof.claims._corrections.Correction` of claims of this set; ``ValueError``
        if its id is taken or it corrects a claim that is not (yet) in the set."""
        if any(c.id == correction.id for c in self.corrections):
            raise ValueError(f"correction id {correction.id!r} is already registered in {self.topic!r}")
        unknown = [cid for cid in correction.corrects if cid not in self._claims]
        if unknown:
            raise ValueError(f"correction {correction.id!r} corrects claims not in {self.topic!r}: {unknown}")
        self.corrections.append(correction)
        return correction

    def no_correction(self, claim_id: str, reason: str) -> None:
        """Record that the claim ``claim_id`` of this set has no correction yet, and why."""
        if claim_id not in self._claims:
            raise ValueError(f"no_correction: claim {claim_id!r} is not in {self.topic!r}")
        if not reason.strip():
            raise ValueError(f"no_correction: claim {claim_id!r} needs a reason")
        self.no_corrections.append(NoCorrection(claim_id, reason))

    def claim(
        self,
        id: str,
        statement: str,
        reference: str,
        params: dict[str, Any] | None = None,
        expected: Expectation = "holds",
        quick: bool = True,
        pins: dict[str, Any] | None = None,
        section: str = "",
        meaning: str = "",
    ) -> Callable[[Callable[[CheckContext], Outcome]], Callable[[CheckContext], Outcome]]:
        """Decorator adding ``check`` as the claim ``id`` (see :class:`Claim` for the fields)."""

        def register(check: Callable[[CheckContext], Outcome]) -> Callable[[CheckContext], Outcome]:
            self.add(
                Claim(
                    id,
                    statement,
                    reference,
                    dict(params or {}),
                    check,
                    expected,
                    quick,
                    dict(pins or {}),
                    section,
                    meaning,
                )
            )
            return check

        return register


USER_CLAIMS = ClaimSet("user", section=USER_SECTION)
"""Claims registered with the module-level :func:`claim` decorator (your own claims)."""

claim = USER_CLAIMS.claim
"""Decorator registering ``check`` as the user claim ``id`` in :data:`USER_CLAIMS` (the signature of
:meth:`ClaimSet.claim`)."""


@dataclass
class ClaimResult:
    """A claim together with its outcome, the seconds its check took and whether it ran quick."""

    claim: Claim
    outcome: Outcome
    seconds: float
    quick: bool = False
    dtype: str = "float64"
    """The dtype of the claim's torch computations (``check --dtype``). Pins are float64 facts: in
    another dtype a pin that differs, or a verdict the dtype cannot decide (``unresolvable``), is a
    :attr:`dtype_difference`, not a regression; a verdict that flips (holds <-> violated) still is."""

    @property
    def pin_mismatches(self) -> dict[str, tuple[Any, Any]]:
        """``{figure: (pinned, got)}`` for every pin the outcome does not match."""
        figures = self.outcome.figures
        return {
            k: (v, figures.get(k, "<missing>"))
            for k, v in self.claim.pins.items()
            if not pin_matches(v, figures.get(k))
        }

    @property
    def regression(self) -> str | None:
        """Why this result fails ``--strict``, or ``None``.

        An ``error`` always fails (``"the check raised an error"``, followed by the first line of its
        detail in parentheses when it has one: the exception, or the time limit a claim of yours ran
        past); a pinned claim fails when its verdict differs from the expected one (``unresolvable``
        included) or when a pinned figure changed; an open claim fails only on ``error``.
        """
        verdict = self.outcome.verdict
        if verdict == "error":
            first = str(self.outcome.detail).strip().split("\n", 1)[0].strip()
            return "the check raised an error" + (f" ({first})" if first else "")
        if not self.claim.pinned or self.dtype_difference is not None:
            return None
        if verdict != self.claim.expected:
            return f"expected {self.claim.expected}, got {verdict}"
        mismatched = self.pin_mismatches
        if mismatched:
            return "; ".join(f"{k} pinned at {v[0]}, got {v[1]}" for k, v in mismatched.items())
        return None

    @property
    def dtype_difference(self) -> str | None:
        """In a dtype other than float64, how a pinned claim's result differs from its float64 pins
        without contradicting them (the dtype could not decide the verdict, or a pinned figure moved),
        else ``None``. A verdict that flips between ``holds`` and ``violated`` is not such a difference:
        it is a :attr:`regression` in every dtype."""
        if self.dtype == "float64" or not self.claim.pinned:
            return None
        verdict = self.outcome.verdict
        if verdict == "error" or (verdict != self.claim.expected and verdict != "unresolvable"):
            return None
        if verdict == "unresolvable" and self.claim.expected != "unresolvable":
            return f"{self.dtype} cannot decide it (expected {self.claim.expected} in float64)"
        mismatched = self.pin_mismatches
        if mismatched:
            return "; ".join(
                f"{k} is {v[1]} in {self.dtype}, pinned at {v[0]} in float64" for k, v in mismatched.items()
            )
        return None

    @property
    def unexpected(self) -> bool:
        """True when :attr:`regression` is set (``--strict`` fails on these)."""
        return self.regression is not None

    @property
    def status(self) -> str:
        """How to read the verdict. A built-in claim (:attr:`Claim.builtin`): a regression, a finding
        about the paper (pinned ``violated``), confirmed (pinned ``holds``) or reported (``open``).
        A claim of yours, in neutral words: ``"expected violated, got violated"``, ``"expected holds,
        got violated"`` (a change, which fails ``--strict`` all the same), the pin that moved, or
        ``"the check raised an error"``; never "finding about the paper" or "REGRESSION"."""
        builtin = self.claim.builtin
        expected, verdict = self.claim.expected, self.outcome.verdict
        if self.regression is not None:
            return ("REGRESSION: " if builtin else "") + self.regression
        if self.dtype_difference is not None:
            return f"differs from the float64 pins (not a regression): {self.dtype_difference}"
        if not self.claim.pinned:
            return "reported (open, not pinned)"
        if not builtin:
            return f"expected {expected}, got {verdict}"
        if expected == "violated":
            return "finding about the paper (pinned)"
        return "as expected (pinned)"

    def _repr_markdown_(self) -> str:
        from ropeproof.claims._display import result_markdown

        return result_markdown(self)

    def _repr_html_(self) -> str:
        from ropeproof.claims._display import result_html

        return result_html(self)


@thread_policy()
def run_claim(c: Claim, ctx: CheckContext) -> ClaimResult:
    """Run one claim with its resolved parameters; an exception becomes an ``error`` verdict
    carrying the traceback, and so does a check that calls ``sys.exit``/``os._exit`` or leaves the
    working directory changed (:mod:`ropeproof.claims._containment`). Whatever process-wide setting the
    check changes (mpmath precision, environment, random state, torch defaults, ...) is set back when
    it returns (:func:`ropeproof.claims._global_state.global_state_restored`)."""
    start = time.perf_counter()
    run_ctx = dataclasses.replace(ctx, params=c.params_for(ctx.quick))
    try:
        with global_state_restored(), contained():
            outcome = c.check(run_ctx)
        if not isinstance(outcome, Outcome) or outcome.verdict not in VERDICTS:
            raise ValueError(f"check returned {outcome!r}, not an Outcome with a verdict in {VERDICTS}")
    except Exception as exc:  # a failing check is reported, never fatal to the run
        outcome = Outcome("error", detail=f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    return ClaimResult(
        c, outcome, time.perf_counter() - start, ctx.quick, str(ctx.dtype).removeprefix("torch.")
    )


def run_claims(
    claims: list[Claim],
    ctx: CheckContext,
    progress: bool = True,
    run: Callable[[Claim, CheckContext], ClaimResult] = run_claim,
) -> Iterator[ClaimResult]:
    """Run ``claims`` in order with ``run`` (default :func:`run_claim`), yielding each result, with a tqdm
    progress bar when ``progress``."""
    from tqdm import tqdm

    bar = tqdm(claims, desc="ropeproof check", unit="claim", disable=not progress)
    for c in bar:
        bar.set_postfix_str(c.id)
        yield run(c, ctx)
