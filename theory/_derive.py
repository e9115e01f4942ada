"""Derive a construction's closed-form logits with sympy.

For every pair of rules (query rule, key rule) the logit between generic tokens at offset
``u = j - i`` is stated in closed form and proved equal to the raw rotated product

    sum_k (rho(i theta_k) a_k q_k)^T (rho(j theta_k) k_k).

When the vectors are rotations of the base vector the closed form is
``sum_k a_k s_q s_k cos(u theta_k + beta_k - beta_q)``; otherwise it is the general
``sum_k |q_k||k_k| cos(u theta_k + phase_k)`` of :func:`ropeproof.theory._rope_symbolic.derive_logit`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ropeproof.theory._construction import Construction, Token
from ropeproof.theory._rope_symbolic import Backend, SymbolicRopeSpec, derive_logit, lambdify_expr, raw_logit
from ropeproof.theory._stable import stabilize
from ropeproof.theory._trig_identity import vanishes_identically

OFFSET = sp.Symbol("u", integer=True)
"""The offset symbol ``u = j - i`` (key position minus query position)."""
I_POS, J_POS = sp.symbols("i j", integer=True)


@dataclass(frozen=True)
class RuleLogit:
    """The logit of a generic ``query_rule`` token against a generic ``key_rule`` token."""

    query_rule: str
    key_rule: str
    query_token: Token
    key_token: Token
    raw: sp.Expr
    closed: sp.Expr

    def latex(self) -> str:
        return (
            rf"\ell_{{\mathrm{{{self.query_rule}}},\mathrm{{{self.key_rule}}}}}(u) = {sp.latex(self.closed)}"
        )

    def display_latex(self, equals: str = "=") -> str:
        """:meth:`latex` with the rule names' underscores escaped (``\\mathrm{pair\\_ll}``), for
        renderers that read ``_`` in ``\\mathrm`` as a subscript; ``equals`` is the relation."""
        q, k = (r.replace("_", r"\_") for r in (self.query_rule, self.key_rule))
        return rf"\ell_{{\mathrm{{{q}}},\mathrm{{{k}}}}}(u) {equals} {sp.latex(self.closed)}"

    def _repr_latex_(self) -> str:
        """Jupyter's display: the closed form as display math."""
        return f"$${self.display_latex()}$$"

    def at(self, query: Token, key: Token, construction: Construction) -> sp.Expr:
        """The closed form for two concrete tokens (parameters substituted, offset ``u`` left free)."""
        subs = {**_param_subs(self.query_token, query), **_param_subs(self.key_token, key)}
        return self.closed.subs(subs)


def renamed(token: Token, suffix: str) -> Token:
    """``token`` with every symbolic parameter ``x`` renamed ``x<suffix>`` (keeping assumptions)."""
    params = {
        name: sp.Symbol(f"{value.name}{suffix}", **value.assumptions0)
        if isinstance(value, sp.Symbol)
        else value
        for name, value in token.params.items()
    }
    return Token(token.name, token.kind, params, token.rule)


def _param_subs(generic: Token, token: Token) -> dict[Any, Any]:
    return {
        sym: token.params[name]
        for name, sym in generic.params.items()
        if isinstance(sym, sp.Basic) and name in token.params
    }


def _closed_logit(c: Construction, q: Token, k: Token) -> tuple[sp.Expr, sp.Expr]:
    spec = SymbolicRopeSpec([p.freq for p in c.planes])
    qv, kv = c.plane_vectors(q, "query"), c.plane_vectors(k, "key")
    raw = raw_logit(qv, kv, spec, I_POS, J_POS)
    q_angles, k_angles = c.plane_angles(q, "query"), c.plane_angles(k, "key")
    if q_angles is not None and k_angles is not None:
        closed = sp.Add(
            *[
                sq * sk * sp.cos(OFFSET * plane.freq + bk - bq)
                for plane, (sq, bq), (sk, bk) in zip(c.planes, q_angles, k_angles, strict=True)
            ]
        )
    else:
        closed = derive_logit(qv, kv, spec, I_POS, J_POS, OFFSET, verify=False).closed
    return raw, closed


def prove_equal_at_positions(raw: sp.Expr, closed: sp.Expr) -> bool:
    """Whether sympy proves ``raw(i, j) == closed(u = j - i)`` identically."""
    diff = raw - closed.subs(OFFSET, J_POS - I_POS)
    return vanishes_identically(diff)


@dataclass(frozen=True)
class Derivation:
    """All rule-pair logits of a construction (see :func:`derive`)."""

    construction: Construction
    logits: dict[tuple[str, str], RuleLogit]

    def logit(self, query_rule: str, key_rule: str) -> RuleLogit:
        return self.logits[(query_rule, key_rule)]

    def token_logit(self, query: str, key: str) -> sp.Expr:
        """Closed-form logit of two named tokens as a function of ``u`` (and free parameters)."""
        c = self.construction
        q, k = c.token(query), c.token(key)
        return self.logit(q.rule, k.rule).at(q, k, c)

    def gap(self, query: str, key_a: str, u_a: sp.Expr, key_b: str, u_b: sp.Expr) -> sp.Expr:
        """``logit(query, key_a at offset u_a) - logit(query, key_b at offset u_b)``, stable form."""
        la = self.token_logit(query, key_a).subs(OFFSET, u_a)
        lb = self.token_logit(query, key_b).subs(OFFSET, u_b)
        return stabilize(la - lb)

    def latex(self) -> str:
        return "\n".join(rl.latex() for rl in self.logits.values())

    def _repr_latex_(self) -> str:
        """Jupyter's display: every rule-pair logit, one aligned line each (``docs/theory.md``
        section 4), under the construction's name."""
        rows = " \\\\\n".join(rl.display_latex("&=") for rl in self.logits.values())
        name = self.construction.name.replace("_", r"\_")
        return f"$$\\text{{{name}}}:\\quad\\begin{{aligned}}\n{rows}\n\\end{{aligned}}$$"

    def numeric_logit_fn(self, query: str, key: str, backend: Backend = "numpy") -> Callable[[Any], Any]:
        """``f(u)``: the two tokens' logit with the construction's parameters substituted."""
        expr = self.token_logit(query, key).subs(self.construction.parameters)
        return lambdify_expr(expr, backend, [OFFSET])


def derive(construction: Construction, prove: bool = True) -> Derivation:
    """Closed-form logits for every (query rule, key rule) pair of ``construction``.

    With ``prove=True`` each closed form is proved equal to the raw rotated product; failure raises
    ``AssertionError`` (a wrong sign convention, for instance, is caught here).
    """
    logits: dict[tuple[str, str], RuleLogit] = {}
    for q_rule, q_generic in construction.generic.items():
        q_tok = renamed(q_generic, "_q")
        for k_rule, k_generic in construction.generic.items():
            k_tok = renamed(k_generic, "_k")
            raw, closed = _closed_logit(construction, q_tok, k_tok)
            if prove and not prove_equal_at_positions(raw, closed):
                raise AssertionError(f"{construction.name}: closed form for ({q_rule}, {k_rule}) not proved")
            logits[(q_rule, k_rule)] = RuleLogit(q_rule, k_rule, q_tok, k_tok, raw, closed)
    return Derivation(construction, logits)
