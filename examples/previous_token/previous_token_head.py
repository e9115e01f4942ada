"""Barbero et al.'s previous-token head with its p-RoPE variants, as a ropeproof construction.

Barbero et al., *Round and Round We Go! What makes Rotary Positional Encodings useful?* (arXiv
2410.06205, ICLR 2025) report that positional heads such as a previous-token head use the *highest*
RoPE frequencies, that NoPE cannot build a sharp previous-token pattern while RoPE can, and propose
*p-RoPE*: keep the highest fraction ``p`` of the frequencies and set the lowest to zero rotation. What
is known of the paper here is **second-hand** (its abstract and summaries), so the construction below
is this project's reading, not the paper's (``docs/theory.md`` section 10):

- every word has the same key ``v`` in every plane, and in plane ``k`` the query is
  ``rho(theta_k)^(-1) v``, so the logit of the key ``d`` positions back is
  ``sum_k cos((d - 1) theta_k)``, largest at ``d = 1``, the previous token;
- the planes are a 32-dim rotary head's spectrum, ``theta_k = 10000^(-k / 16)``, ``k = 0 .. 15`` (GPT-J's
  spectrum at ``rotary_dim = 32``, so the head exports to ``transformers`` exactly);
- p-RoPE keeps ``theta_k`` for the ``round(16 p)`` highest frequencies (``k < round(16 p)``) and sets
  the others to 0; ``p = 0`` is NoPE.

Written only against ropeproof's public API (``from ropeproof import ...``).
"""

from __future__ import annotations

import sympy as sp

from ropeproof import Construction, Family, FamilyCase, Plane, Rotated, Token

WORDS = ("the", "cat", "sat", "on")
"""The vocabulary: four words of one kind of our own, ``"word"``."""
PLANES = 16
BASE = 10000.0
VARIANTS = (1.0, 0.75, 0.5, 0.25, 0.0)
"""The p-RoPE fractions the example compares (``1.0``: RoPE; ``0.0``: NoPE)."""
HALF = "0.343"
"""About half of full RoPE's ``n = 2`` margin (``two_token_margin(1.0) / 2 = 0.3431754...``), rounded
down; as text, a bound is this exact decimal."""

PREVIOUS = Family(
    "previous-token",
    (FamilyCase("one back", query_tokens=WORDS, target_tokens=WORDS, other_tokens=WORDS, target_distance=1),),
    "any word at n - 1; the target is the word one position back; any word elsewhere",
)
"""Every input a previous-token head must answer: one fixed offset, so complete at every length."""


def kept_planes(p: float) -> int:
    """How many of the 16 frequencies p-RoPE keeps: ``round(16 p)`` (``0 <= p <= 1``)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p={p!r}; accepted: a fraction in [0, 1]")
    return round(p * PLANES)


def frequencies(p: float) -> list[float]:
    """The planes' frequencies under p-RoPE: ``10000^(-k/16)`` for the kept ``k``, 0 for the others."""
    keep = kept_planes(p)
    return [BASE ** (-k / PLANES) if k < keep else 0.0 for k in range(PLANES)]


def previous_token_head(p: float) -> Construction:
    """The previous-token head under p-RoPE (module docstring), carrying its family."""
    thetas = sp.symbols(f"theta_0:{PLANES}", real=True)
    return Construction(
        f"previous-token-p{p:g}",
        tokens=tuple(Token(w, "word", {"id": i}) for i, w in enumerate(WORDS)),
        planes=tuple(Plane(t, 1) for t in thetas),
        query_rules={"word": lambda params, k, plane: Rotated(-plane.freq)},  # rho(theta_k)^-1 v
        key_rules={"word": lambda params, k, plane: Rotated(0)},  # v
        value=lambda token: {token.name: 1},
        generic={"word": Token("w", "word", {"id": sp.Symbol("id", integer=True)})},
        parameters=dict(zip(thetas, frequencies(p), strict=True)),
        description=f"previous-token head, {PLANES} planes, p-RoPE at p = {p:g} (Barbero et al., read here)",
        family=PREVIOUS,
    )


def two_token_margin(p: float) -> sp.Expr:
    """The head's margin at ``n = 2`` in closed form: ``sum_k (1 - cos theta_k)`` over the kept planes
    (the target one back scores ``sum_k 1``, the query itself ``sum_k cos theta_k``), with each
    frequency the exact binary value of its float (as compilation reads it)."""
    return sp.Add(*[1 - sp.cos(sp.Rational(t)) for t in frequencies(p) if t != 0.0])
