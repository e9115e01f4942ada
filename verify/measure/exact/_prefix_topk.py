"""Prefix top-k: for every prefix ``values[:m+1]``, its ``k`` largest entries and their indices.

Computed in chunks of ``C`` entries: each row of a chunk is the carried top-k of everything before the
chunk plus the chunk's entries up to that row (the rest masked), reduced with ``torch.topk``. Cost
``O(N (k + C))`` with no Python loop per entry; exact (only comparisons, no arithmetic).
"""

from __future__ import annotations

import math

import numpy as np


def prefix_topk(
    values: np.ndarray, k: int, largest: bool = True, chunk: int = 128
) -> tuple[np.ndarray, np.ndarray]:
    """``(top, index)``, each ``[N, k]``: row ``m`` holds the ``k`` largest (or smallest) of
    ``values[0..m]`` in order, with their indices. Missing slots (``m + 1 < k``) hold ``-inf``
    (``+inf`` when ``largest=False``) and index ``-1``.

    Shapes: values [N]; return [N, k] (top, index)
    """
    import torch  # only here: RunningTopK is numpy alone

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


class RunningTopK:
    """Prefix top-``k`` of a stream of values fed in blocks (``largest=False``: bottom-``k``).

    :meth:`feed` returns, for every prefix ending inside the block, its ``k`` extreme values in order
    and their global indices (the earlier index first on equal values; missing slots ``-inf``, or
    ``+inf`` for bottom-``k``, with index ``-1``). Only comparisons, so exact.

    The state changes only when a value enters the top ``k``. A value that does not beat the ``k``-th
    largest of the maxima of the earlier sub-blocks (of 512 values) cannot enter, so only the others
    are visited one by one, in Python; runs of ``k`` or more consecutive records (a monotone stretch,
    where the state is just the last ``k`` values) are filled in directly. Rows in between copy the
    last state (vectorised). Typical cost: a few numpy passes plus one Python step per entering value.
    """

    SUB_BLOCK = 512

    def __init__(self, k: int, largest: bool = True) -> None:
        if k < 1:
            raise ValueError(f"k={k} must be >= 1")
        self.k = k
        self.sign = 1.0 if largest else -1.0
        self.state: list[tuple[float, int]] = [(-math.inf, -1)] * k
        self.count = 0

    def _thresholds(self, v: np.ndarray) -> np.ndarray:
        """Per value: the k-th largest of everything before its sub-block (carry included), from the
        top ``k`` of each sub-block (``np.partition``)."""
        k, b = self.k, self.SUB_BLOCK
        blocks = -(-v.size // b)
        padded = np.full(blocks * b, -np.inf)
        padded[: v.size] = v
        if b > k:
            tops = -np.partition(-padded.reshape(blocks, b), k - 1, axis=1)[:, :k]
        else:
            tops = padded.reshape(blocks, b)
        top = sorted((x for x, _ in self.state), reverse=True)
        thr = np.empty(blocks)
        for j, block_top in enumerate(tops.tolist()):
            thr[j] = top[k - 1]
            top = sorted(top + block_top, reverse=True)[:k]
        return np.repeat(thr, b)[: v.size]

    def feed(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Append ``values`` (indices continue from the previous blocks); prefix top-k per position.

        Shapes: values [block]; return.0 [block, k]; return.1 [block, k]
        """
        return self.feed_with(values, None)[:2]

    def feed_with(
        self, values: np.ndarray, payload: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """:meth:`feed`, also returning ``payload[j]`` (rows ``[len(values), ...]``) of every selected
        entry, ``[len, k, ...]`` (zeros in missing slots); the payloads of the carried entries are kept.

        Shapes: values [block]; payload [block, ...]; return.0 [block, k]; return.1 [block, k]; return.2
            [block, k, ...]
        """
        if np.asarray(values).size == 0:
            return np.empty((0, self.k)), np.empty((0, self.k), dtype=np.int64), None
        src, table_v, table_i, table_p = self.feed_states(values, payload)
        out_v, out_i = np.take(table_v, src, axis=0), np.take(table_i, src, axis=0)  # rows (take: fast)
        return out_v, out_i, None if table_p is None else np.take(table_p, src, axis=0)

    def feed_states(
        self, values: np.ndarray, payload: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """:meth:`feed_with` before its rows are written out: ``(src, top, index, payloads)`` with one
        row of ``top``, ``index`` (and ``payloads``) per distinct state (the carried one, each entering
        value's, each monotone-run row's) and ``src[j]`` the state of the prefix ending at position
        ``j``; so ``feed_with``'s rows are ``top[src]``, ``index[src]``, ``payloads[src]``, and positions
        with equal ``src`` share one state.

        Shapes: values [block]; payload [block, ...]; return.0 [block]; return.1 [states, k]; return.2
            [states, k]; return.3 [states, k, ...]
        """
        v = self.sign * np.asarray(values, dtype=np.float64).reshape(-1)
        size, k, base = v.size, self.k, self.count
        if size == 0:
            raise ValueError("feed_states needs at least one value")
        if payload is not None:
            payload = np.asarray(payload).reshape(size, -1)
            if not hasattr(self, "carry_payload"):
                self.carry_payload = np.zeros((k, payload.shape[1]), dtype=payload.dtype)
        pos = np.arange(size)
        candidate = v > self._thresholds(v)
        count = int(np.count_nonzero(candidate))
        if count <= max(64, size // 64):  # sparse: no monotone run worth filling in directly
            full = np.zeros(size, dtype=bool)
            last_full = np.full(size, -1)
        else:
            before = np.maximum.accumulate(np.concatenate([[self.state[0][0]], v]))[:-1]
            record = v > before
            last_break = np.maximum.accumulate(np.where(record, -1, pos))
            full = (pos - last_break) >= k  # the k values ending here are consecutive records
            last_full = np.maximum.accumulate(np.where(full, pos, -1))
        visit = np.nonzero(candidate & ~full)[0]
        state = list(self.state)
        events: list[int] = []
        event_states: list[list[tuple[float, int]]] = []
        handled = -1
        for j, x, f in zip(visit.tolist(), v[visit].tolist(), last_full[visit].tolist(), strict=True):
            if f > handled:  # a monotone run ended since: its last k values are the state
                state = [(float(v[f - i]), base + f - i) for i in range(k)]
            handled = j
            if x > state[k - 1][0]:
                p = k - 1
                while p > 0 and state[p - 1][0] < x:
                    p -= 1
                state = [*state[:p], (x, base + j), *state[p : k - 1]]
                events.append(j)
                event_states.append(state)
        # one source row per position: 0 the carry, 1.. the event states, then the monotone-run rows
        ev = np.asarray(events, dtype=np.int64)
        n_ev = ev.size
        last_ev = np.searchsorted(ev, pos, side="right") - 1
        ev_pos = ev[np.maximum(last_ev, 0)] if n_ev else np.full(size, -1)
        ev_pos = np.where(last_ev >= 0, ev_pos, -1)
        full_rows = np.nonzero(full)[0]
        use_full = last_full > ev_pos  # last_full = -1 when no run yet
        full_rank = np.cumsum(full) - 1  # rank of each run row among full_rows
        src = np.where(use_full, 1 + n_ev + full_rank[np.maximum(last_full, 0)], last_ev + 1)
        table_v = np.empty((1 + n_ev + full_rows.size, k))
        table_i = np.empty((1 + n_ev + full_rows.size, k), dtype=np.int64)
        table_v[0] = [x for x, _ in self.state]
        table_i[0] = [i for _, i in self.state]
        if n_ev:
            table_v[1 : 1 + n_ev] = [[x for x, _ in st] for st in event_states]
            table_i[1 : 1 + n_ev] = [[i for _, i in st] for st in event_states]
        if full_rows.size:
            back = full_rows[:, None] - np.arange(k)[None, :]
            table_v[1 + n_ev :] = v[back]
            table_i[1 + n_ev :] = base + back
        table_p = None
        if payload is not None:
            # one gather from [carry's payloads (slot order), a zero row, this block's payloads]: an
            # entry of this block reads its own row, an earlier one (always a carried entry) its slot's
            local = table_i - base
            carried = np.array([i for _, i in self.state], dtype=np.int64)
            order = np.argsort(carried)
            slot = order[np.clip(np.searchsorted(carried[order], table_i), 0, k - 1)]
            source = np.where(local >= 0, local + k + 1, np.where(table_i < 0, k, slot))
            zero = np.zeros((1, *payload.shape[1:]), dtype=payload.dtype)
            table_p = np.take(
                np.concatenate([self.carry_payload.astype(payload.dtype), zero, payload]), source, axis=0
            )
            self.carry_payload = table_p[src[-1]].copy()
        last = int(src[-1])
        self.state = list(zip(table_v[last].tolist(), table_i[last].tolist(), strict=True))
        self.count += size
        table_v *= self.sign
        return src, table_v, table_i, table_p
