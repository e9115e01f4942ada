"""Prefix top-k: for every prefix ``values[:m+1]``, its ``k`` largest entries and their indices.

Computed in chunks of ``C`` entries: each row of a chunk is the carried top-k of everything before the
chunk plus the chunk's entries up to that row (the rest masked), reduced with ``torch.topk``. Cost
``O(N (k + C))`` with no Python loop per entry; exact (only comparisons, no arithmetic).
"""

from __future__ import annotations

import numpy as np
import torch


def prefix_topk(
    values: np.ndarray, k: int, largest: bool = True, chunk: int = 128
) -> tuple[np.ndarray, np.ndarray]:
    """``(top, index)``, each ``[N, k]``: row ``m`` holds the ``k`` largest (or smallest) of
    ``values[0..m]`` in order, with their indices. Missing slots (``m + 1 < k``) hold ``-inf``
    (``+inf`` when ``largest=False``) and index ``-1``.

    Shapes: values [N]; return [N, k] (top, index)
    """
    v = torch.as_tensor(np.asarray(values, dtype=np.float64))
    n = v.numel()
    fill = float("-inf") if largest else float("inf")
    top = torch.full((n, k), fill, dtype=torch.float64)
    idx = torch.full((n, k), -1, dtype=torch.int64)
    carry_v = torch.full((k,), fill, dtype=torch.float64)
    carry_i = torch.full((k,), -1, dtype=torch.int64)
    for start in range(0, n, chunk):
        block = v[start : start + chunk]
        c = block.numel()
        mask = torch.ones(c, c, dtype=torch.bool).tril()
        rows = torch.where(mask, block.expand(c, c), torch.tensor(fill, dtype=torch.float64))
        cand_v = torch.cat([carry_v.expand(c, k), rows], dim=1)
        cand_i = torch.cat([carry_i.expand(c, k), torch.arange(start, start + c).expand(c, c)], dim=1)
        got_v, where = torch.topk(cand_v, k, dim=1, largest=largest, sorted=True)
        got_i = torch.gather(cand_i, 1, where)
        got_i = torch.where(torch.isinf(got_v) & (got_v == fill), torch.tensor(-1), got_i)
        top[start : start + c], idx[start : start + c] = got_v, got_i
        carry_v, carry_i = got_v[-1], got_i[-1]
    return top.numpy(), idx.numpy()


def excluding_first(
    top: np.ndarray, idx: np.ndarray, excluded: list[np.ndarray], fill: float = float("-inf")
) -> np.ndarray:
    """Per row, the first of ``top[r, :]`` whose index is not in any ``excluded[e][r]`` (else ``fill``).

    With ``top`` from :func:`prefix_topk`, this is the extreme of the prefix with those positions
    removed, provided ``k > len(excluded)``.

    Shapes: top [N, k]; idx [N, k]; excluded [N] (each entry); return [N]
    """
    out = np.full(top.shape[0], fill)
    found = np.zeros(top.shape[0], dtype=bool)
    for j in range(top.shape[1]):
        ok = idx[:, j] >= 0
        for ex in excluded:
            ok &= idx[:, j] != ex
        take = ok & ~found
        out[take] = top[take, j]
        found |= ok
    return out
