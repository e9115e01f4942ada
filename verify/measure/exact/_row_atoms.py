"""Decide one row of a bound check exactly, input by input, where the extreme's enclosure touches the bound.

A reading is a minimum or a maximum over finitely many values per row, its *atoms*:

- ``logit_inf`` / ``logit_sup`` at offset ``m``: one logit per query-key pair ``m`` apart
  (:meth:`~ropeproof.verify.measure.exact._offset_extremes.OffsetExtremes.pairs`);
- ``margin_inf`` at length ``n``: ``l(target) - l(competitor)`` for every case, target offset,
  target token, competitor position and competitor token (an input's margin is the least of these
  over its competitors, so the family's least margin is the least atom).

When the enclosure of the extreme overlaps the bound, the extreme's own witness cannot say whether
the bound holds with equality or fails (``reading >= bound`` for a minimum needs *every* atom at
least the bound; ``<`` needs one strictly below). :func:`decide_row` compares every atom: one
proven below (above, for a maximum) decides; the atoms that touch the bound are re-enclosed in Arb
(a refinement each) and, where that cannot separate them, proved equal to the bound by sympy (an
identity each; or by the refinement itself where both enclosures are the same single float). The
row is then ``"<"``, ``"="`` or ``">"`` exactly, or undecided with the reason (a budget spent, or an
atom neither separated nor proved equal). Budgets are counted per check
(:class:`Budget`), so ``undecided`` rows say honestly which budget stopped them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ropeproof.verify.measure.exact._discrepancy import CaseTable
from ropeproof.verify.measure.exact._offset_extremes import OffsetExtremes, shortest_input

MAX_ATOMS = 2_000_000
"""Most atoms enumerated for one row (a margin row of an any-distance family has ``O(n^2)``)."""


@dataclass(frozen=True)
class Atom:
    """One value of a row: the logit at ``first`` (``second is None``) or ``l(first) - l(second)`` of the
    input ``tokens`` (query last), its float64 ``value`` and a bound ``error`` on ``|value - exact|``."""

    value: float
    error: float
    tokens: tuple[str, ...]
    first: int
    second: int | None


@dataclass
class Budget:
    """Refinements (Arb re-enclosures) and identities (sympy proofs) left to one check, and how many
    were spent."""

    refine: int
    identities: int
    refined: int = 0
    proved: int = 0

    def take_refine(self) -> bool:
        if self.refined >= self.refine:
            return False
        self.refined += 1
        return True

    def take_identity(self) -> bool:
        if self.proved >= self.identities:
            return False
        self.proved += 1
        return True


def logit_atoms(offsets: OffsetExtremes, m: int, extra: float = 0.0) -> list[Atom]:
    """Every pair's logit at offset ``m``, each in a shortest input holding it (float64 tables: the
    error bound of offset ``m`` plus ``extra`` per logit)."""
    err = (0.0 if offsets.errors is None else float(offsets.errors[m])) + extra
    tables = {t.case.label: t for t in offsets.tables}
    out = []
    for label, _q, key, role, value, _hi in offsets.pairs(m):
        tokens = shortest_input(tables[label], m, role, key)
        out.append(Atom(value, err * (1 + 2**-50), tokens, len(tokens) - 1 - m, None))
    return out


def margin_atoms(
    tables: Sequence[CaseTable], n: int, extra: float = 0.0, upper: float = np.inf
) -> list[Atom] | None:
    """Every ``l(target) - l(competitor)`` of the family at length ``n`` (module docstring) that is not
    proved above ``upper`` by its float64 value (``value - error > upper``: such a value can neither
    attain a least margin at or below ``upper`` nor decide a row), or ``None`` when there are more than
    :data:`MAX_ATOMS` to compare. Error: the two logits' bounds plus ``2 extra``."""
    count = 0
    for t in tables:
        if not t.case.fits(n):
            continue
        d = t.case.target_distance
        targets = 1 if d is not None else n - 1
        count += targets * max(len(t.target_groups), len(t.self_groups)) * n * (len(t.other_groups) + 1)
    if count > MAX_ATOMS:
        return None
    out: list[Atom] = []
    for t in tables:
        if not t.case.fits(n) or t.errors is None:
            continue
        d = t.case.target_distance
        # competitors: the query itself at offset 0 (its self groups), another token at 1 .. n - 1
        offsets = np.concatenate(
            [np.zeros(len(t.self_groups), dtype=int), np.repeat(np.arange(1, n), len(t.other_groups))]
        )
        groups = np.concatenate(
            [np.arange(len(t.self_groups)), np.tile(np.arange(len(t.other_groups)), n - 1)]
        )
        values = np.concatenate([t.self_logits, t.other_logits[:, 1:n].T.reshape(-1)])
        for d_t in [d] if d is not None else range(1, n):
            t_groups, t_vals = (
                (t.self_groups, t.self_logits) if d_t == 0 else (t.target_groups, t.target_logits[:, d_t])
            )
            err = (t.errors[d_t] + t.errors[offsets] + 2 * extra) * (1 + 2**-50)
            for gt, members in enumerate(t_groups):
                diff = t_vals[gt] - values
                keep = np.nonzero((offsets != d_t) & ~(diff - err > upper))[0]
                if not keep.size:
                    continue
                tokens = [t.other_groups[0][0]] * n
                tokens[-1] = members[0] if d_t == 0 else t.case.query_tokens[0]
                if d_t:
                    tokens[n - 1 - d_t] = members[0]
                for i in keep:
                    dc, gc = int(offsets[i]), int(groups[i])
                    one = list(tokens)
                    one[n - 1 - dc] = (t.self_groups if dc == 0 else t.other_groups)[gc][0]
                    out.append(Atom(float(diff[i]), float(err[i]), tuple(one), n - 1 - d_t, n - 1 - dc))
    return out


Enclose = Callable[[Atom], tuple[float, float]]
Identical = Callable[[Atom], bool] | None


def decide_row(
    atoms: Sequence[Atom],
    minimum: bool,
    bound: tuple[float, float],
    enclose: Enclose,
    identical: Identical,
    budget: Budget,
) -> tuple[str | None, str]:
    """``(relation, reason)``: how the row's extreme (the least atom if ``minimum``, else the greatest)
    compares with the bound enclosed by ``bound = (lo, hi)``: ``"<"``, ``"="`` or ``">"``, or ``None``
    with the reason (module docstring). ``enclose(atom)``: a high-precision enclosure of its value;
    ``identical(atom)``: whether sympy proves it equal to the bound (``None``: no identity applies)."""
    b_lo, b_hi = bound
    sign = 1.0 if minimum else -1.0
    if not minimum:
        b_lo, b_hi = -b_hi, -b_lo
    # orient so that the extreme is a minimum: "beyond" = strictly below the bound
    vals = np.array([sign * a.value for a in atoms])
    errs = np.array([a.error for a in atoms])
    beyond, other = ("<", ">") if minimum else (">", "<")
    if (vals + errs < b_lo).any():
        return beyond, ""
    touching = [a for a, v, e in zip(atoms, vals, errs, strict=True) if not v - e > b_hi]
    equal, unknown = False, ""
    for a in touching:
        if budget.take_refine():
            lo, hi = enclose(a)
            lo, hi = (lo, hi) if minimum else (-hi, -lo)
            if hi < b_lo:
                return beyond, ""
            if lo > b_hi:
                continue
            if lo == hi == b_lo == b_hi:  # both enclosures are one float: the values are equal exactly
                equal = True
                continue
            why = "an input's value touches the bound at the refinement's precision"
        else:
            why = f"refinement budget reached (max_refine={budget.refine})"
        if identical is None:
            unknown = unknown or f"{why}; no identity applies (a head's float weights)"
            continue
        if not budget.take_identity():
            unknown = unknown or f"identity budget reached (max_identities={budget.identities})"
            continue
        if identical(a):
            equal = True
        else:
            unknown = unknown or f"{why}; sympy proves no identity"
    if unknown:
        return None, unknown
    return ("=" if equal else other), ""


__all__ = ["MAX_ATOMS", "Atom", "Budget", "decide_row", "logit_atoms", "margin_atoms"]
