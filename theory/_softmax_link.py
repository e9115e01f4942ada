"""The softmax link (``docs/theory.md`` section 5, "Softmax link"): from a logit margin to attention weight,
and the logit scale a target weight needs.

A query row with ``n`` keys whose target logit is at least ``D`` above every other logit, logits multiplied
by ``scale``: the target's softmax weight is

    w = 1 / (1 + sum_{j != t} exp(scale (l_j - l_t))) >= 1 / (1 + (n - 1) exp(-D scale))

(:func:`top_weight_bound`), with equality when all ``n - 1`` other keys sit exactly ``D`` below. Weight
``1 - eps`` therefore needs

    D scale >= ln((n - 1)(1 - eps) / eps)                             (:func:`required_logit_scale`)

and a shrinking ``D`` must be paid for with a growing scale. A positive *exact* margin is therefore not
enough for an exported model to answer right: it runs at one scale. At ``D = 1.2e-5`` with ``n = 3402``
keys and scale 1000 the bound guarantees the target only ``2.98e-4`` of the weight, about ``1 / n``;
weight ``1/2`` needs scale ``6.8e5``. (:mod:`ropeproof.verify.interop._worst_case_replay` replays a family's
worst-case inputs through a saved model and finds where it really answers wrong.)

:func:`~ropeproof.theory._multihop_bound.leak_bound` is the same relation read as the mass off target.
"""

from __future__ import annotations

import math

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real


def top_weight_bound(margin: float, n: int, scale: float) -> float:
    """``1 / (1 + (n - 1) exp(-margin scale))``: the least softmax weight of a target whose logit is at
    least ``margin`` above each of the other ``n - 1`` keys', logits multiplied by ``scale >= 0`` (module
    docstring). Any finite ``margin`` (a negative one gives the weaker bound it implies)."""
    d = real(margin, "margin")
    n = integer(n, "n", low=1)
    s = real(scale, "scale", low=0)
    if n == 1:
        return 1.0
    exponent = math.log(n - 1) - d * s  # log of (n - 1) exp(-D scale)
    return 0.0 if exponent > 709.0 else 1.0 / (1.0 + math.exp(exponent))


def required_logit_scale(margin: float, n: int, eps: float) -> float:
    """The least logit scale at which the softmax link guarantees the target weight ``1 - eps`` with
    margin ``margin > 0`` and ``n >= 2`` keys: ``ln((n - 1)(1 - eps) / eps) / margin`` (module docstring),
    or ``0.0`` when even scale 0 (uniform weight ``1 / n``) meets it (``1 / n >= 1 - eps``).

    ``margin`` is in the units the scale multiplies (the logits an export multiplies by its logit scale).
    """
    d = real(margin, "margin", low=0, low_open=True, note="no scale helps a target that is not on top")
    n = integer(n, "n", low=2)
    e = real(eps, "eps", low=0, high=1, low_open=True, high_open=True)
    log_ratio = math.log(n - 1) + math.log1p(-e) - math.log(e)
    if not math.isfinite(log_ratio):  # pragma: no cover - guarded by the ranges above
        raise InputError(f"eps={eps} gives no finite scale")
    return max(log_ratio, 0.0) / d
