"""The exact worst-case readout margin of a head whose attention ignores key contents (a positional
head), over a Retrieval-style input family: what [A]'s Remark 3.1 is about, and what both the study of
the remark (``verify/studies/beyond``) and its corrected readout statement (``verify/studies/errata``)
read."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._families import Family


@dataclass(frozen=True)
class ReadoutMargin:
    """The exact worst-case readout margin of a head whose attention ignores key contents, over an
    input family at length ``n``: ``margin`` (> 0 means every input is answered correctly) and the
    case that attains it."""

    n: int
    margin: float
    witness: dict


def content_independent_readout_margin(
    head: CompiledHead, family: Family, n: int, softmax_scale: float = 1.0
) -> ReadoutMargin:
    """``min`` over the family's inputs of ``out[target] - max_{o != target} out[o]``, exactly.

    Requires every key to be the same vector (identical ``W_K`` rows), so the attention weights
    ``p_j`` depend only on positions and the query token. With ``s(c) = W_E[c] W_V W_O W_U`` the
    readout is ``out = sum_j p_j s(c_j)``; for a target ``tau`` at position ``t``, a query ``Q`` and a
    competitor ``o``, the worst contents of the other positions give
    ``p_t (s(tau)[tau] - s(tau)[o]) + p_Q (s(Q)[tau] - s(Q)[o]) + sum_{j != t, n-1} p_j m`` with
    ``m = min_{c in others} (s(c)[tau] - s(c)[o])``; minimised over ``t, tau, Q, o`` and every case.
    Needs a family whose target may sit at any distance (Retrieval).
    """
    if not np.allclose(head.W_K, head.W_K[:1], rtol=0, atol=0):
        raise InputError("content_independent_readout_margin needs identical W_K rows (constant keys)")
    import torch

    from ropeproof.verify.kernel._rope import rope_logits

    s = head.W_E @ head.W_V @ head.W_O @ head.W_U  # [V, V] readout of each token's value
    k = torch.as_tensor(np.tile(head.W_K[:1], (n, 1)))
    best = (math.inf, {})
    for case in family.cases:
        if case.target_distance is not None or not case.fits(n):
            raise InputError("the family must let the target sit at any distance (Retrieval)")
        targets = [head.token_index(t) for t in case.target_tokens]
        others = [head.token_index(t) for t in case.other_tokens]
        for qname in case.query_tokens:
            qi = head.token_index(qname)
            q = torch.as_tensor(head.W_E[qi] @ head.W_Q)[None]
            row = rope_logits(q, k, head.spec, head.scale * softmax_scale, q_positions=[n - 1])[0]
            p = torch.softmax(row, -1).numpy()
            p_q, p_keys = p[-1], p[:-1]
            tau_idx = np.array(targets)
            a = s[tau_idx, tau_idx][:, None] - s[tau_idx]  # [T, V]: s(tau)[tau] - s(tau)[o]
            b = s[qi, tau_idx][:, None] - s[qi][None, :]  # s(Q)[tau] - s(Q)[o]
            if others:
                oth = s[np.array(others)]  # [C, V]
                m = (oth[:, tau_idx][:, :, None] - oth[:, None, :]).min(axis=0)  # [T, V]
            else:
                m = np.zeros_like(a)
            # linear in p_t: the extreme positions decide
            for t in (int(np.argmin(p_keys)), int(np.argmax(p_keys))):
                value = p_keys[t] * a + p_q * b + (p_keys.sum() - p_keys[t]) * m
                value[np.arange(tau_idx.size), tau_idx] = np.inf  # o == tau is no competitor
                i, o = np.unravel_index(int(np.argmin(value)), value.shape)
                if value[i, o] < best[0]:
                    best = (
                        float(value[i, o]),
                        {"query": qname, "target": head.tokens[int(tau_idx[i])], "target_position": t,
                         "competitor": head.tokens[int(o)]},
                    )  # fmt: skip
    return ReadoutMargin(n, best[0], best[1])
