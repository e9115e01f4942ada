"""From per-layer attention margins to a bound on a multi-hop model's readout margin (softmax attention).

``docs/theory.md`` sections 5 (softmax link) and 6 (in-place recursion);
:mod:`ropeproof.theory.multihop` gives the hard-attention recursion this perturbs.

Setting: a program of ``L`` layers whose value/output maps copy the channel with weight 1, inputs of
length ``n`` whose chain (``p_0 = n - 1, .., p_h``) has ``h`` hops, channel codes of Euclidean norm at
most ``M_0`` and unembedding vectors of norm at most ``U``. Let ``mu_l(n) > 0`` lower-bound layer ``l``'s
*margin* on every chain row (target logit minus the largest other logit, before the logit scale
``beta``; the row families are in :mod:`ropeproof.verify.exact.multihop_margins`).

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
   margin (:func:`ropeproof.theory.multihop.code_margin`). When this is positive every input of the
   family is answered correctly, in exact real arithmetic.

The functions take an ``exp`` so that the same formulas run on floats (``math.exp``), on ``mpmath.iv``
intervals (``iv.exp``) and on Arb balls (python-flint's ``arb.exp``, which the certified checks use).
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
