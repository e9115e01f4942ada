"""Numerically stable rewrites of cosine differences.

``cos(A) - cos(B)`` loses all relative precision when ``A`` and ``B`` are close (``1 - cos(t)``
for small ``t`` evaluates to 0 in float64 once ``t < 1e-8``). The product form

    cos(A) - cos(B) = -2 sin((A + B)/2) sin((A - B)/2),   1 - cos(t) = 2 sin(t/2)^2

is accurate to a few ulps relative, whatever the size of the result.
"""

from __future__ import annotations

import sympy as sp


def stable_cos_difference(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """``cos(a) - cos(b)`` as ``-2 sin((a+b)/2) sin((a-b)/2)`` (``2 sin(b/2)^2`` when ``a == 0``)."""
    a, b = sp.sympify(a), sp.sympify(b)
    if a == 0:
        return 2 * sp.sin(b / 2) ** 2
    if b == 0:
        return -2 * sp.sin(a / 2) ** 2
    return -2 * sp.sin(sp.expand((a + b) / 2)) * sp.sin(sp.expand((a - b) / 2))


def _as_cos_term(term: sp.Expr) -> tuple[sp.Expr, sp.Expr] | None:
    """``(c, x)`` with ``term == c * cos(x)``; constants count as ``c * cos(0)``."""
    if not term.has(sp.cos):
        return (term, sp.Integer(0)) if not term.has(sp.sin) else None
    coeff, factors = term.as_coeff_mul()
    cosines = [f for f in factors if isinstance(f, sp.cos)]
    if len(cosines) != 1:
        return None
    rest = sp.Mul(*[f for f in factors if f is not cosines[0]])
    if rest.has(sp.cos) or rest.has(sp.sin):
        return None
    return coeff * rest, cosines[0].args[0]


def stabilize(expr: sp.Expr) -> sp.Expr:
    """Rewrite the cosines of ``expr`` into stable products; the result equals ``expr`` identically.

    1. Terms ``c cos(A)`` and ``-c cos(B)`` (``A, B != 0``) become ``-2 c sin((A+B)/2) sin((A-B)/2)``.
    2. Every other ``c cos(A)`` becomes ``c - 2 c sin(A/2)^2``, and the constants are summed, so
       ``a_0 - sum_k a_k cos(x_k)`` with ``a_0 = sum_k a_k`` turns into ``sum_k 2 a_k sin(x_k/2)^2``.
    """
    terms = list(sp.Add.make_args(sp.expand(expr)))
    parsed = [_as_cos_term(t) for t in terms]
    used = [False] * len(terms)
    out = sp.Integer(0)
    constant = sp.Integer(0)
    for i, pi in enumerate(parsed):
        if used[i] or pi is None or pi[1] == 0:
            continue
        for j in range(i + 1, len(terms)):
            pj = parsed[j]
            if used[j] or pj is None or pj[1] == 0:
                continue
            if sp.simplify(pi[0] + pj[0]) == 0:
                out += pi[0] * stable_cos_difference(pi[1], pj[1])
                used[i] = used[j] = True
                break
    for t, p, u in zip(terms, parsed, used, strict=True):
        if u:
            continue
        if p is None:
            out += t
        elif p[1] == 0:
            constant += p[0]
        else:
            constant += p[0]
            out += -2 * p[0] * sp.sin(p[1] / 2) ** 2
    return sp.nsimplify(constant, rational=False) + out if constant != 0 else out
