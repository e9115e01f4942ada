"""The claim registry: every statement ``ropeproof check`` verifies, as data.

Adding a claim is one decorated function::

    from ropeproof.claims import CheckContext, Outcome, claim

    @claim(
        id="my-bound",
        statement="Delta(n) <= 1/n for my construction.",
        reference="my paper, Thm 2",
        params={"theta": 0.5, "lengths": "2..100"},
    )
    def _(ctx: CheckContext) -> Outcome:
        ...
        return Outcome.judge(ok=..., figures={...}, counterexample=...)

and importing the module that defines it before ``ropeproof check`` runs (the built-in claims live
in :mod:`ropeproof.claims.rope`).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from ropeproof.verify.runtime.threads import thread_policy

Verdict = Literal["holds", "violated", "unresolvable", "error"]
VERDICTS: tuple[str, ...] = ("holds", "violated", "unresolvable", "error")
Expectation = Literal["holds", "violated", "open"]


@dataclass(frozen=True)
class CheckContext:
    """What a check may depend on: device, dtype, ``--quick`` and ``--certified``."""

    device: torch.device
    dtype: torch.dtype
    quick: bool = False
    certified: bool = False
    """Decide bound claims by interval arithmetic where a certified check exists."""


@dataclass
class Outcome:
    """A check's result: a verdict, the figures measured, and for a violation a counterexample.

    ``key_figure`` names the entry of ``figures`` shown in the report table. ``certified`` is true
    when the verdict was proved from exact or interval arithmetic rather than floating point.
    """

    verdict: Verdict
    figures: dict[str, Any] = field(default_factory=dict)
    key_figure: str | None = None
    counterexample: Any = None
    detail: str = ""
    certified: bool = False

    @classmethod
    def judge(
        cls,
        ok: bool,
        figures: dict[str, Any],
        key_figure: str | None = None,
        counterexample: Any = None,
        resolvable: bool = True,
        detail: str = "",
        certified: bool = False,
    ) -> Outcome:
        """``holds``/``violated`` from ``ok``, or ``unresolvable`` when the dtype cannot decide."""
        verdict: Verdict = ("holds" if ok else "violated") if resolvable else "unresolvable"
        return cls(verdict, figures, key_figure, None if ok else counterexample, detail, certified)


@dataclass(frozen=True)
class Claim:
    """A registered claim: an id, a one-sentence statement, its source, parameters and check."""

    id: str
    statement: str
    reference: str
    params: dict[str, Any]
    check: Callable[[CheckContext], Outcome]
    expected: Expectation = "holds"
    quick: bool = True
    """Whether the claim also runs under ``--quick``."""


@dataclass
class ClaimResult:
    """A claim together with its outcome and the seconds its check took."""

    claim: Claim
    outcome: Outcome
    seconds: float

    @property
    def unexpected(self) -> bool:
        """True when a claim expected to hold did not (``--strict`` fails on these)."""
        return self.claim.expected == "holds" and self.outcome.verdict != "holds"


class ClaimSet:
    """An ordered collection of claims; :meth:`claim` is a decorator adding one.

    Every topic module of :mod:`ropeproof.claims` defines one ``CLAIMS = ClaimSet(...)``; ids must be
    unique within a set, and :func:`ropeproof.claims.registered_claims` checks them across sets.
    """

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self._claims: dict[str, Claim] = {}

    def __iter__(self) -> Iterator[Claim]:
        return iter(list(self._claims.values()))

    def __len__(self) -> int:
        return len(self._claims)

    def __contains__(self, claim_id: object) -> bool:
        return claim_id in self._claims

    def __getitem__(self, claim_id: str) -> Claim:
        return self._claims[claim_id]

    def add(self, c: Claim) -> Claim:
        """Add ``c``; raise ``ValueError`` if its id is taken."""
        if c.id in self._claims:
            raise ValueError(f"claim id {c.id!r} is already registered in {self.topic!r}")
        self._claims[c.id] = c
        return c

    def remove(self, claim_id: str) -> None:
        """Drop the claim ``claim_id`` (``KeyError`` if absent)."""
        del self._claims[claim_id]

    def claim(
        self,
        id: str,
        statement: str,
        reference: str,
        params: dict[str, Any] | None = None,
        expected: Expectation = "holds",
        quick: bool = True,
    ) -> Callable[[Callable[[CheckContext], Outcome]], Callable[[CheckContext], Outcome]]:
        """Decorator adding ``check`` as the claim ``id`` (see :class:`Claim` for the fields)."""

        def register(check: Callable[[CheckContext], Outcome]) -> Callable[[CheckContext], Outcome]:
            self.add(Claim(id, statement, reference, dict(params or {}), check, expected, quick))
            return check

        return register


USER_CLAIMS = ClaimSet("user")
"""Claims registered with the module-level :func:`claim` decorator (your own claims)."""


claim = USER_CLAIMS.claim
"""Decorator registering ``check`` as the user claim ``id`` in :data:`USER_CLAIMS` (the signature of
:meth:`ClaimSet.claim`)."""


@thread_policy()
def run_claim(c: Claim, ctx: CheckContext) -> ClaimResult:
    """Run one claim under the thread policy (:mod:`ropeproof.verify.runtime.threads`; the caller's
    torch threads are restored afterwards); an exception becomes an ``error`` verdict carrying the
    traceback."""
    start = time.perf_counter()
    try:
        outcome = c.check(ctx)
        if outcome.verdict not in VERDICTS:
            raise ValueError(f"check returned unknown verdict {outcome.verdict!r}")
    except Exception as exc:  # a failing check is reported, never fatal to the run
        outcome = Outcome("error", detail=f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    return ClaimResult(c, outcome, time.perf_counter() - start)


def run_claims(claims: list[Claim], ctx: CheckContext, progress: bool = True) -> Iterator[ClaimResult]:
    """Run ``claims`` in order, yielding each result, with a tqdm progress bar when ``progress``."""
    from tqdm import tqdm

    bar = tqdm(claims, desc="ropeproof check", unit="claim", disable=not progress)
    for c in bar:
        bar.set_postfix_str(c.id)
        yield run_claim(c, ctx)
