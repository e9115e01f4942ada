"""[A]'s Remark 3.1 as searches for counterexamples.

- A purely **symbolic** head (e.g. every plane at ``theta = 0``) cannot implement Index: take an Index
  input and move a different letter onto the target position by permuting the non-query contents. The
  two inputs hold the same multiset of tokens, so a symbolic head gives both the same answer, but their
  correct answers differ: it is wrong on one.
- A purely **positional** head (every key the same vector) cannot implement Retrieval: swap the
  matching pair with another pair. The attention pattern ignores content, so the head attends to the
  same positions in both, while the matching pair moved: it is wrong on one.

:func:`find_failure_pair` runs a hypothesis search (``hypothesis.find``, which also shrinks) for two
inputs of the family that the head does not both answer correctly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._families import Family, family_input

Answer = Callable[[Sequence[Sequence[str]]], list[str | None]]
"""``answer(batch of token lists) -> answers at the last position`` (``None``: no answer)."""


@dataclass(frozen=True)
class FailurePair:
    """Two inputs, their correct answers and the head's answers; the head is wrong on at least one."""

    inputs: tuple[tuple[str, ...], tuple[str, ...]]
    correct: tuple[str, str]
    answered: tuple[str | None, str | None]

    @property
    def wrong_on(self) -> list[int]:
        return [i for i in range(2) if self.answered[i] != self.correct[i]]


def _pair_strategy(family: Family, n: int, move: str) -> st.SearchStrategy:
    cases = family.cases_at(n)
    if not cases:
        raise InputError(f"the {family.name} family has no input of length n={n}")

    @st.composite
    def pairs(draw: st.DrawFn) -> tuple[tuple[str, ...], int, tuple[str, ...], int]:
        ci = draw(st.sampled_from(cases))
        d_t = draw(st.integers(1, n - 1))
        picks = draw(st.lists(st.integers(0, 1 << 20), min_size=n, max_size=n))
        tokens, target = family_input(family, n, ci, d_t, picks)
        allowed = family.cases[ci].target_tokens
        # content move: the token brought onto the target position must be a valid target (a letter)
        choices = [p for p in range(n - 1) if p != target and (move == "target" or tokens[p] in allowed)]
        if not choices:
            return tokens, target, tokens, target
        other = draw(st.sampled_from(choices))
        swapped = list(tokens)
        swapped[target], swapped[other] = swapped[other], swapped[target]
        new_target = target if move == "content" else other
        return tokens, target, tuple(swapped), new_target

    return pairs()


def find_failure_pair(
    answer: Answer,
    family: Family,
    n: int,
    correct: Callable[[tuple[str, ...], int], str],
    move: str,
    max_examples: int = 2000,
) -> FailurePair | None:
    """Search two length-``n`` inputs related by one swap that ``answer`` does not both get right.

    ``move="content"``: swap the target's content with another non-query position's (the target
    position stays; Index). ``move="target"``: swap the matching item elsewhere (the target moves with
    it; Retrieval). ``correct(tokens, target_position)`` gives the right answer. Returns ``None`` when
    no failure is found within ``max_examples``. The search is derandomized: the same call finds the
    same pair.
    """
    if move not in ("content", "target"):
        raise InputError(f"move={move!r}; accepted: 'content', 'target'")

    def fails(pair: tuple[tuple[str, ...], int, tuple[str, ...], int]) -> bool:
        a, ta, b, tb = pair
        ca, cb = correct(a, ta), correct(b, tb)
        if move == "content" and ca == cb:
            return False
        got = answer([list(a), list(b)])
        return got[0] != ca or got[1] != cb

    try:
        a, ta, b, tb = find(
            _pair_strategy(family, n, move),
            fails,
            settings=settings(max_examples=max_examples, deadline=None, database=None, derandomize=True,
                              suppress_health_check=list(HealthCheck)),
        )  # fmt: skip
    except NoSuchExample:
        return None
    got = answer([list(a), list(b)])
    return FailurePair((a, b), (correct(a, ta), correct(b, tb)), (got[0], got[1]))


# ------------------------------------------------------------------------------------ whole classes


@dataclass(frozen=True)
class ClassSearch:
    """A search over random heads of one class: how many were tried and the largest change a key
    permutation made (``max_change``, relative to the row's scale) against the float64 rounding
    allowance ``tolerance``."""

    kind: str
    heads: int
    max_change: float
    tolerance: float
    worst: dict

    @property
    def invariant(self) -> bool:
        return self.max_change <= self.tolerance


def class_search(kind: str, heads: int = 40, seed: int = 0) -> ClassSearch:
    """Random heads of a whole class, random sizes, one-hot inputs with two key contents swapped.

    ``kind="symbolic"``: every plane at ``theta = 0`` (``rotary_dim = 0``), random weights; the
    quantity is the last position's *output* (the permutation must leave it unchanged).
    ``kind="positional"``: every key the same vector (identical ``W_K`` rows), random RoPE angles;
    the quantity is the last position's *logit row* (it must not change). Each head runs through
    :class:`~ropeproof.verify.kernel._attention.RopeAttention` in float64. The two computations differ
    only in the order of a softmax sum, so ``tolerance = 8 n u`` relative (``u = 2^-53``).
    """
    import torch

    from ropeproof.theory._rope_spec import RopeSpec
    from ropeproof.verify.kernel._attention import RopeAttention

    if kind not in ("symbolic", "positional"):
        raise InputError(f"kind={kind!r}; accepted: 'symbolic', 'positional'")
    rng = np.random.default_rng(seed)
    worst_change, worst, tol_at = 0.0, {}, 0.0
    for i in range(heads):
        d_model = int(rng.integers(2, 12))
        head_dim = 2 * int(rng.integers(1, 6))
        n = int(rng.integers(3, 12))
        if kind == "symbolic":
            spec = RopeSpec(head_dim, rotary_dim=0)
            w_k = rng.standard_normal((d_model, head_dim))
        else:
            spec = RopeSpec(head_dim, freqs=rng.uniform(-3, 3, head_dim // 2).tolist())
            w_k = np.tile(rng.standard_normal((1, head_dim)), (d_model, 1))
        w_q, w_v = rng.standard_normal((d_model, head_dim)), rng.standard_normal((d_model, head_dim))
        w_o = rng.standard_normal((head_dim, d_model))
        head = RopeAttention(w_q, w_k, w_v, w_o, spec, float(rng.uniform(0.2, 3)), "cpu", torch.float64)
        ids = rng.integers(0, d_model, n)
        a, b = rng.choice(n - 1, 2, replace=False)
        swapped = ids.copy()
        swapped[[a, b]] = swapped[[b, a]]
        x = torch.nn.functional.one_hot(torch.as_tensor(np.stack([ids, swapped])), d_model).double()
        res = head(x)
        if kind == "symbolic":
            u, v = res.output[0, -1], res.output[1, -1]
        else:
            u, v = res.logits[0, -1], res.logits[1, -1]
        scale = float(max(u.abs().max(), v.abs().max(), 1e-300))
        change = float((u - v).abs().max()) / scale
        tol = 8 * n * 2.0**-53
        if change / tol > worst_change / max(tol_at, 1e-300) or i == 0:
            worst_change, tol_at = change, tol
            worst = {"d_model": d_model, "head_dim": head_dim, "n": n, "swapped": [int(a), int(b)]}
    return ClassSearch(kind, heads, worst_change, tol_at, worst)
