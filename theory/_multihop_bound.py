"""From per-layer attention margins to a bound on a multi-hop model's readout margin (softmax attention).

``docs/theory.md`` sections 5 (softmax link) and 6 (in-place recursion);
:mod:`ropeproof.theory._multihop` gives the hard-attention recursion this perturbs.

Setting: a program of ``L`` layers whose value/output maps copy the channel with weight 1, inputs of
length ``n`` whose chain (``p_0 = n - 1, .., p_h``) has ``h`` hops, channel codes of Euclidean norm at
most ``M_0`` and unembedding vectors of norm at most ``U``. Let ``mu_l(n) > 0`` lower-bound layer ``l``'s
*margin* on every chain row (target logit minus the largest other logit, before the logit scale
``beta``; the row families are in :mod:`ropeproof.verify.measure.exact._multihop_margins`).

1. **Leak.** A chain row has at most ``K = n - 1`` keys besides its target, each at least ``beta mu``
   below it after scaling, so the softmax mass off target is

       eps_l <= K exp(-beta mu_l) / (1 + K exp(-beta mu_l))           (:func:`leak_bound`)

   (``x / (1 + x)`` is increasing, and ``sum_{j != t} exp(beta (l_j - l_t)) <= K exp(-beta mu)``).
2. **Growth.** Attention rows are probability vectors, so ``max_p ||C_{l+1}[p]|| <= 2 max_p ||C_l[p]||``
   and every channel stays below ``M_l = 2^l M_0``.
3. **Propagation.** Let ``e_l(i) = C_l[p_i] - c_l(i) e`` (actual minus hard-attention channel). For a
   chain row with target ``t``, ``sum_j A_j C[j] - C[t] = sum_{j != t} A_j (C[j] - C[t])`` has norm at
   most ``eps_l 2 M_l``, so ``E_{l+1} <= 2 E_l + 2 eps_l 2^l M_0`` with ``E_l = max_i ||e_l(i)||``,
   ``E_0 = 0``, hence

       E_L <= 2^L M_0 sum_l eps_l.

4. **Readout.** The last position holds ``c e_X + e`` with ``||e|| <= E_L``; for every other token ``Y``,
   ``z_X - z_Y >= c gamma - ||e|| ||u_X - u_Y|| >= c gamma - 2 U E_L``, so

       readout margin >= c_min gamma - 2^(L + 1) M_0 U sum_l eps_l       (:func:`readout_margin_bound`)

   with ``c_min`` the smallest chain coefficient over the hop counts considered and ``gamma`` the code
   margin (:func:`ropeproof.theory._multihop.code_margin`). When this is positive every input of the
   family is answered correctly, in exact real arithmetic.

Three refinements (each sound on its own; :mod:`ropeproof.verify.measure.exact._multihop_certified` uses all
three
unless told otherwise, and reports which one matters):

1'. **Leak as a sum over offsets** (Index and positional Reflexive layers). Their keys all read the same
   vector ``v``, so a chain row's logit against a key ``u`` positions from its target is below the target's
   by exactly ``g(|u|)``, ``g(m) = sum_k 2 a_k sin(m theta_k / 2)^2``. An Index row (integer ``s`` at
   ``p <= n - 1``, target ``s`` back) sees ``u`` in ``-s .. p - s``, ``u != 0``; a letter and a positional
   Reflexive row (target: itself) see ``u = 1 .. p``. With ``T(k) = sum_{m = 1}^{k} exp(-beta g(m))``,

       off-target mass <= S / (1 + S),   S = T(n - 1) + T(floor((n - 1) / 2))   (Index)
                                         S = T(n - 1)                           (positional Reflexive)

   (the two sides have ``a + b <= n - 1`` offsets, so the shorter has at most ``(n - 1) / 2``;
   :func:`mass_bound`). Each term is at most ``exp(-beta mu)``, so this is never worse than step 1 with
   as many terms, and far better when only a few offsets come close to aliasing.
3'. **Propagation along the chain.** Track ``E_l(i) >= ||e_l(i)||`` per chain position, with ``t(i)`` the
   row's target (``min(i + 1, h)`` in a hop layer, ``i`` in a Reflexive one): ``C_l[t]`` has norm at most
   ``min(M_l, c_l(t) + E_l(t))`` and every other key at most ``M_l``, so

       E_{l+1}(i) <= E_l(i) + E_l(t) + eps_l (M_l + min(M_l, c_l(t) + E_l(t))),   E_0 = 0

   (:func:`chain_error_bound`), per hop count ``h`` with its own ``c_L(0)``, instead of one bound for all.
4'. **Readout radius.** The answer is read correctly when ``E_L(0) < c rho`` with the code's radius ``rho``
   (:func:`ropeproof.theory._multihop.code_radius`: ``sin(pi / V)`` for the cyclic code), which uses the
   size of ``u_X - u_Y`` for the closest competitor instead of ``2 U``.

The functions take an ``exp`` (or rounding hooks) so that the same formulas run on floats (``math.exp``),
on ``mpmath.iv`` intervals (``iv.exp``), on Arb balls (python-flint's ``arb.exp``, which the certified checks
use) and on float64 arrays rounded outward.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any


def leak_bound(beta: Any, margin: Any, keys: Any, exp: Callable[[Any], Any] = math.exp) -> Any:
    """``K exp(-beta mu) / (1 + K exp(-beta mu))``: the softmax mass a row with ``K = keys`` other keys,
    each at least ``mu = margin`` below the target before the scale ``beta``, can put off target."""
    x = keys * exp(-beta * margin)
    return x / (1 + x)


def propagated_error(eps: Sequence[Any], m0: Any = 1) -> Any:
    """``E_L <= 2^L M_0 sum_l eps_l``: the channel error at the last position after ``L = len(eps)``
    layers (step 3 of the module docstring)."""
    total = 0
    for e in eps:
        total = total + e
    return (2 ** len(eps)) * m0 * total


def readout_margin_bound(coefficient: Any, gamma: Any, eps: Sequence[Any], m0: Any = 1, u: Any = 1) -> Any:
    """``c gamma - 2 U E_L``: a lower bound on the readout margin (step 4 of the module docstring)."""
    return coefficient * gamma - 2 * u * propagated_error(eps, m0)


def mass_bound(total: Any) -> Any:
    """``S / (1 + S)``: the softmax mass off target when ``S >= sum_{j != t} exp(beta (l_j - l_t))`` (step 1'
    of the module docstring)."""
    return total / (1 + total)


def chain_error_bound(
    hop_pattern: Sequence[bool],
    hops: int,
    eps: Sequence[Any],
    m0: Any = 1,
    up: Callable[[Any], Any] | None = None,
    minimum: Callable[[Any, Any], Any] = min,
) -> tuple[int, Any]:
    """``(c_L(0), E_L(0))``: the hard-attention coefficient at the last position and a bound on its channel
    error for a ``hops``-hop chain, by the per-position recursion of step 3' (module docstring).

    ``eps[l]`` bounds layer ``l``'s off-target mass on every chain row; ``up`` rounds every sum and
    product upward (identity when ``None``; pass ``numpy.nextafter(x, inf)`` for outward-rounded
    float64 arrays, all quantities being non-negative) and ``minimum`` is ``min`` or ``numpy.minimum``.
    """
    if hops < 1 or len(eps) != len(hop_pattern):
        raise ValueError(f"hops={hops} must be >= 1 and eps must have one entry per layer")
    r = up if up is not None else (lambda x: x)
    c = [0] * hops + [1]
    err: list[Any] = [0] * (hops + 1)
    m = m0
    for hop, e in zip(hop_pattern, eps, strict=True):
        targets = [min(i + 1, hops) if hop else i for i in range(hops + 1)]
        new_err = []
        for i, t in enumerate(targets):
            reach = r(m + minimum(m, r(c[t] + err[t])))  # bounds ||C[j] - C[t]|| over the other keys j
            new_err.append(r(r(err[i] + err[t]) + r(e * reach)))
        c = [c[i] + c[t] for i, t in enumerate(targets)]
        err = new_err
        m = 2 * m
    return c[0], err[0]
