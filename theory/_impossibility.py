"""[A]'s Remark 3.1 as identities about whole classes of heads, proved with sympy.

A one-layer head's output at the query (last position ``n - 1``) is

    out = sum_j p_j v(x_j),   p = softmax_j(l_j),   l_j = q(x_{n-1})^T R(j - (n - 1)) k(x_j).

- **Symbolic heads** (every plane at ``theta = 0``, so ``R = I``): ``l_j = q^T k(x_j)`` depends on
  the key's content only, so permuting the key contents permutes ``(l_j, v(x_j))`` together and
  ``out`` (a sum over those pairs) does not change. :func:`symbolic_output_is_permutation_invariant`
  proves ``out(x_a, x_b, x_q) == out(x_b, x_a, x_q)`` for generic weight matrices (every entry a
  symbol) and generic token vectors, with a rotation at ``theta = 0``.
- **Positional heads** (every key the same vector ``k``): ``l_j = q^T R(j - (n-1)) k`` does not
  depend on the key contents at all. :func:`positional_logits_ignore_key_content` proves that the
  whole logit row of ``(x_a, x_b, x_q)`` equals that of ``(x_b, x_a, x_q)`` for generic weights and a
  symbolic angle.

With an exhibited pair of task inputs (same key multiset or same query, different correct answers or
target positions) these identities are the impossibility arguments; the tests in
:mod:`ropeproof.verify.studies.beyond._impossibility` pair them with searches over random heads of random
sizes.
"""

from __future__ import annotations

import sympy as sp

from ropeproof.theory._rope_symbolic import rotation
from ropeproof.theory._trig_identity import disproved_by_witness


def _matrix(name: str, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i}{j}", real=True))


def _vector(name: str, size: int) -> sp.Matrix:
    return sp.Matrix(1, size, lambda _i, j: sp.Symbol(f"{name}_{j}", real=True))


def _head_output(
    xs: list[sp.Matrix], wq: sp.Matrix, wk: sp.Matrix, wv: sp.Matrix, theta: sp.Expr
) -> tuple[list[sp.Expr], sp.Matrix]:
    """``(logits, output)`` of the last position for one 2-D rotary plane at angle ``theta``."""
    n = len(xs)
    q = xs[-1] * wq
    logits = [(q * rotation((j - (n - 1)) * theta) * (x * wk).T)[0, 0] for j, x in enumerate(xs)]
    weights = [sp.exp(lg) for lg in logits]
    total = sp.Add(*weights)
    out = sp.zeros(1, wv.shape[1])
    for w, x in zip(weights, xs, strict=True):
        out += w * (x * wv)
    return logits, out / total


def symbolic_output_is_permutation_invariant(d_model: int = 2, theta: sp.Expr | int = 0) -> bool:
    """Prove: at ``theta = 0`` the output for keys ``(x_a, x_b)`` and query ``x_q`` equals the output
    for ``(x_b, x_a)`` (generic ``W_Q, W_K`` of shape ``[d_model, 2]``, ``W_V`` of ``[d_model, 2]``).

    At any other ``theta`` (a symbol, say) the identity fails, which is what makes RoPE positional."""
    wq, wk, wv = _matrix("q", d_model, 2), _matrix("k", d_model, 2), _matrix("v", d_model, 2)
    xa, xb, xq = _vector("a", d_model), _vector("b", d_model), _vector("c", d_model)
    _, out_ab = _head_output([xa, xb, xq], wq, wk, wv, sp.sympify(theta))
    _, out_ba = _head_output([xb, xa, xq], wq, wk, wv, sp.sympify(theta))
    return all(_is_identically_zero(d) for d in out_ab - out_ba)


def positional_logits_ignore_key_content(d_model: int = 2) -> bool:
    """Prove: with one key vector ``k`` for every token (``x W_K = k``) the logit row of
    ``(x_a, x_b, x_q)`` equals that of ``(x_b, x_a, x_q)`` at any angle ``theta``."""
    theta = sp.Symbol("theta", real=True)
    wq = _matrix("q", d_model, 2)
    k = _vector("k", 2)
    xa, xb, xq = _vector("a", d_model), _vector("b", d_model), _vector("c", d_model)
    n = 3

    def row(xs: list[sp.Matrix]) -> list[sp.Expr]:
        q = xs[-1] * wq
        return [(q * rotation((j - (n - 1)) * theta) * k.T)[0, 0] for j in range(len(xs))]

    pairs = zip(row([xa, xb, xq]), row([xb, xa, xq]), strict=True)
    return all(_is_identically_zero(x - y) for x, y in pairs)


def _is_identically_zero(expr: sp.Expr, witnesses: int = 3) -> bool:
    """Decide ``expr == 0`` for all real values of its symbols.

    ``True`` only when sympy reduces ``expr`` to zero (canonical form first, then ``simplify``).
    ``False`` as soon as a witness disproves it: ``expr`` evaluated at seeded rational points with
    60-digit arithmetic is far above that precision (``|expr| > 1e-40``), which is a proof of
    non-identity that does not need ``simplify`` (which can run for hours on these expressions).
    """
    expr = sp.expand(expr) if expr.is_polynomial() else expr
    if expr == 0:
        return True
    if disproved_by_witness(expr, witnesses):
        return False
    return bool(sp.simplify(expr) == 0)
