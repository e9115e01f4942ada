"""A symbolic head on the lowest RoPE planes (a "semantic channel"), as a ropeproof construction.

Barbero et al., *Round and Round We Go! What makes Rotary Positional Encodings useful?* (arXiv
2410.06205, ICLR 2025) report that Gemma 7B uses its *lowest* RoPE frequencies as "semantic channels"
and propose p-RoPE, which sets those frequencies to zero rotation so that the channels stay robust
over long contexts. What is known of the paper here is **second-hand** (its abstract and summaries),
so the head below is this project's reading (``docs/theory.md`` section 10):

- the task is *find the word*: the query ``?w`` (at ``n - 1``) must attend to the one earlier ``w``;
  every other position holds another word (:data:`FIND`);
- word ``c`` (code ``c = 0 .. 7``) has key ``rho(c omega) v`` in every plane, ``omega = 2 pi / 8``;
  the query ``?w`` has ``rho(c(w) omega) v``; a query token's own key is 0, and a word's query is 0
  (neither is used by the task). The logit of word ``c'`` ``d`` positions back is
  ``sum_k cos((c' - c(w)) omega - d theta_k)``: content first, position through ``d theta_k``;
- the planes are four planes of a 32-dim rotary head's spectrum ``theta_k = 10000^(-k/16)`` (GPT-J's at
  ``rotary_dim = 32``): the **lowest** four (``k = 12 .. 15``, ``theta`` from ``1e-3`` down to
  ``1.8e-4``), the same four under **p-RoPE** (``p = 0.75``: their frequencies set to 0), or the
  **highest** four (``k = 0 .. 3``) for contrast.

Written only against ropeproof's public API (``from ropeproof import ...``).
"""

from __future__ import annotations

import sympy as sp

from ropeproof import Construction, Family, FamilyCase, Plane, Rotated, Token

WORDS = ("a", "b", "c", "d", "e", "f", "g", "h")
"""The words; word ``WORDS[c]`` has code ``c``. The query for it is ``"?" + word``."""
QUERIES = tuple(f"?{w}" for w in WORDS)
OMEGA = 2 * sp.pi / len(WORDS)
SPECTRUM, BASE = 16, 10000.0
PLANE_SETS = {"lowest": (12, 13, 14, 15), "p-RoPE": (12, 13, 14, 15), "highest": (0, 1, 2, 3)}
"""Which planes of the spectrum each variant uses; ``"p-RoPE"`` sets their frequencies to 0."""

FIND = Family(
    "find-the-word",
    tuple(FamilyCase(f"find {w}", (f"?{w}",), (w,), tuple(x for x in WORDS if x != w), None) for w in WORDS),
    "?w at n - 1; the word w once, anywhere before; every other position another word",
)
"""Every input the head must answer: the target may stand at any distance ``1 .. n - 1``."""


def frequencies(variant: str) -> list[float]:
    """The frequencies of the variant's four planes (``theta_k = 10000^(-k/16)``; 0 under p-RoPE)."""
    if variant not in PLANE_SETS:
        raise ValueError(f"variant={variant!r}; accepted: {sorted(PLANE_SETS)}")
    return [0.0 if variant == "p-RoPE" else BASE ** (-k / SPECTRUM) for k in PLANE_SETS[variant]]


def semantic_head(variant: str) -> Construction:
    """The find-the-word head on the variant's planes (module docstring), carrying its family."""
    thetas = sp.symbols("theta_0:4", real=True)
    code = sp.Symbol("c", integer=True, nonnegative=True)
    zero = Rotated(0, 0)  # the zero vector
    return Construction(
        f"semantic-{variant}",
        tokens=(
            *(Token(w, "word", {"code": c}) for c, w in enumerate(WORDS)),
            *(Token(q, "query", {"code": c}) for c, q in enumerate(QUERIES)),
        ),
        planes=tuple(Plane(t, 1) for t in thetas),
        query_rules={
            "query": lambda p, k, plane: Rotated(p["code"] * OMEGA),
            "word": lambda p, k, plane: zero,
        },
        key_rules={"word": lambda p, k, plane: Rotated(p["code"] * OMEGA), "query": lambda p, k, plane: zero},
        value=lambda token: {token.name: 1} if token.kind == "word" else {},
        generic={"word": Token("w", "word", {"code": code}), "query": Token("?w", "query", {"code": code})},
        parameters=dict(zip(thetas, frequencies(variant), strict=True)),
        description=f"find-the-word on the {variant} planes (a semantic channel, read from Barbero et al.)",
        family=FIND,
    )


def content_margin() -> sp.Expr:
    """The margin with no rotation (p-RoPE) for ``n >= 3``: the target scores 4, a word one code away
    ``4 cos(omega)``, the query itself 0, so ``4 (1 - cos(pi/4)) = 4 - 2 sqrt(2)``."""
    return 4 * (1 - sp.cos(OMEGA))
