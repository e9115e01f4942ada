"""The standard property battery for any construction: :func:`check_construction`.

The construction's input family is the one it carries (``Construction(..., family=...)`` or
``construction.with_family(...)``) unless ``family`` is given. ``N`` is the longest of ``lengths`` (or
``must_work_up_to`` when larger); the exact sweep covers every length ``2 .. N``.

1. **closed form vs module**: on random family inputs at each of ``lengths``, the float64 module's
   last-row logits equal the sympy closed forms evaluated in mpmath, to ``atol`` (default 1e-12);
2. **correctness**: *every* length ``2 .. must_work_up_to`` (default: the longest length given) has
   a positive exact ``margin_inf`` (from the sweep, not only the lengths given); at each of
   ``lengths`` with a positive margin random family inputs are answered correctly (the argmax logit
   is the target), and at each of ``lengths`` where it is not, the exact witness input is indeed
   answered wrongly (the sweep is checked both ways);
3. **margin bound**: ``margin_inf(n) >= margin_lower_bound(n)`` at *every* length ``2 .. N``, if a
   bound is given (float64, no tolerance: :func:`ropeproof.verify.measure.exact._stated_bound.check_bound`
   judges a bound row by row with error bounds and an exact first violation);
4. **positional / symbolic exactness**, if declared: permuting the non-query contents leaves the
   logit row unchanged (positional) or permutes it the same way (symbolic), exactly in float64, on
   random inputs at each of ``lengths``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ropeproof.constructions._compile import compile_construction
from ropeproof.machinery._errors import InputError
from ropeproof.theory._construction import Construction
from ropeproof.verify.kernel._compiled import encode, head_module
from ropeproof.verify.measure.exact._discrepancy import build_tables, exact_sweep
from ropeproof.verify.measure.exact._families import Family, family_for, sample_family_inputs
from ropeproof.verify.measure.exact._mp_reference import MpLogits


@dataclass
class PropertyResult:
    """One property: whether it held, and the figures behind the verdict."""

    name: str
    passed: bool
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class PropertyReport:
    construction: str
    results: list[PropertyResult]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def failures(self) -> list[PropertyResult]:
        return [r for r in self.results if not r.passed]


def _last_rows(head, seqs: Sequence[Sequence[str]]) -> np.ndarray:
    attn = head_module(head, device="cpu")
    return attn(encode(head, [list(s) for s in seqs])).logits[:, -1].double().numpy()


def check_construction(
    construction: Construction,
    family: Family | None = None,
    lengths: Sequence[int] = (2, 3, 5, 8, 13),
    examples: int = 8,
    margin_lower_bound: Callable[[int], float] | None = None,
    declared: str | None = None,
    must_work_up_to: int | None = None,
    atol: float = 1e-12,
    seed: int = 0,
    raise_on_failure: bool = True,
) -> PropertyReport:
    """Run the battery (see the module docstring) and return, or raise on, the results.

    ``family`` defaults to the one ``construction`` carries. ``declared`` is ``"positional"``,
    ``"symbolic"`` or ``None``. Random inputs are drawn at each of ``lengths``; the margin checks
    cover every length up to the longest (module docstring).
    """
    if declared not in (None, "positional", "symbolic"):
        raise InputError(f"declared={declared!r}; accepted: 'positional', 'symbolic', None")
    family = family_for(construction) if family is None else family
    lengths = sorted(set(int(n) for n in lengths))
    if not lengths or lengths[0] < 2:
        raise InputError(f"lengths={lengths} must be non-empty, each >= 2")
    if must_work_up_to is not None and int(must_work_up_to) < 2:
        raise InputError(f"must_work_up_to={must_work_up_to} must be >= 2")
    head = compile_construction(construction)
    mp = MpLogits(construction)
    results: list[PropertyResult] = []

    worst = 0.0
    for n in [n for n in lengths if n >= family.min_length()]:
        samples = sample_family_inputs(family, n, examples, seed + n)
        rows = _last_rows(head, [s for s, _ in samples])
        for (tokens, _), row in zip(samples, rows, strict=True):
            worst = max(worst, float(np.max(np.abs(row - np.array([float(v) for v in mp.row(tokens)])))))
    results.append(
        PropertyResult("closed form vs module", worst <= atol, {"max_abs_diff": worst, "atol": atol})
    )

    limit = lengths[-1] if must_work_up_to is None else int(must_work_up_to)
    big = max(lengths[-1], limit)
    sweep = exact_sweep(build_tables(head, family, big), big)
    every_n = np.arange(2, big + 1)
    has_input = every_n >= family.min_length()
    failing = every_n[has_input & ~(sweep.margin_inf > 0)]
    horizon = int(failing[0]) if failing.size else None  # the first length with margin_inf <= 0
    wrong, checked = [], 0
    for n in lengths:
        margin = float(sweep.margin_inf[n - 2])
        if n < family.min_length():
            continue
        if margin > 0:
            samples = sample_family_inputs(family, n, examples, seed + 7 * n)
            rows = _last_rows(head, [s for s, _ in samples])
            for (tokens, target), row in zip(samples, rows, strict=True):
                checked += 1
                if int(np.argmax(row)) != target or np.sum(row == row.max()) > 1:
                    wrong.append({"n": n, "tokens": tokens, "target": target})
        else:
            w = sweep.witness(n, "margin_inf")
            row = _last_rows(head, [w.tokens])[0]
            if int(np.argmax(row)) == w.target_position and np.sum(row == row.max()) == 1:
                wrong.append({"n": n, "witness_unexpectedly_correct": w.tokens})
    early = horizon is not None and horizon <= limit
    details = {
        "checked": checked,
        "first_failing_length": horizon,
        "must_work_up_to": limit,
        "problems": wrong[:3],
    }
    results.append(PropertyResult("correct up to the horizon", not wrong and not early, details))

    if margin_lower_bound is not None:
        bad = [
            (int(n), float(sweep.margin_inf[n - 2]), float(margin_lower_bound(int(n))))
            for n in every_n[has_input]
            if sweep.margin_inf[n - 2] < margin_lower_bound(int(n))
        ]
        details = {"violations": bad[:5], "lengths": f"every n in {family.min_length()}..{big}"}
        results.append(PropertyResult("margin bound", not bad, details))

    if declared is not None:
        rng = np.random.default_rng(seed)
        worst_dev = 0.0
        for n in [n for n in lengths if n >= family.min_length()]:
            for tokens, _ in sample_family_inputs(family, n, examples, seed + 13 * n):
                perm = rng.permutation(n - 1)
                moved = [tokens[p] for p in perm] + [tokens[-1]]
                base, new = _last_rows(head, [tokens, moved])
                expected = base[:-1] if declared == "positional" else base[:-1][perm]
                worst_dev = max(worst_dev, float(np.max(np.abs(new[:-1] - expected))))
        results.append(
            PropertyResult(f"exactly {declared}", worst_dev == 0.0, {"max_abs_deviation": worst_dev})
        )

    report = PropertyReport(construction.name, results)
    if raise_on_failure and not report.passed:
        lines = [f"{r.name}: {r.details}" for r in report.failures()]
        raise AssertionError(f"{construction.name} failed: " + "; ".join(lines))
    return report


__all__ = ["PropertyReport", "PropertyResult", "check_construction"]
