"""Fast exact sweep for (many-plane) T_Index, using its offset structure.

For T_Index with planes ``(theta_k, a_k)``, ``a_k >= 0``, the query ``s`` at ``n - 1`` has logit
``h(s - d) = sum_k a_k cos((s - d) theta_k)`` against the key ``d`` back, whatever the tokens. The
target ``d = s`` gets ``h(0) = sum_k a_k``, the largest possible value, and the other keys get
``h(m)`` for ``m = 1 .. s`` and ``m = 1 .. n - 1 - s``. With the stable gap (derived by
:func:`index_gap_expression`)

    g(m) = h(0) - h(m) = sum_k 2 a_k sin(m theta_k / 2)^2,

and its prefix minimum ``G(M) = min_{1 <= m <= M} g(m)``:

    margin_inf(n) = gap_inf(n) = G(n - 1)               (query s = n - 1),
    gap_sup(n)                 = G(ceil((n - 1) / 2))    (query s = ceil((n - 1) / 2)).

``m theta_k`` is reduced with :func:`ropeproof.verify.exact.angles.reduced_angles`, so ``g`` is accurate to
a few
ulps relative even when it is 1e-14. Cost: ``O(N K)`` for all ``n <= N``, streamed in chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ropeproof.theory.construction import Construction
from ropeproof.theory.derive import OFFSET, derive
from ropeproof.theory.errors import InputError
from ropeproof.verify.exact.angles import reduced_angles


def index_gap_expression(construction: Construction) -> sp.Expr:
    """``g(m)``: target logit minus the logit ``m`` positions off the target, in stable form.

    Derived from the construction's closed form (query integer ``s`` against a letter key at
    offsets ``-s`` and ``-s + m``), then rewritten with ``cos a - cos b = -2 sin sin``.
    """
    if construction.name != "index":
        raise InputError(f"index_gap_expression needs the index construction, got {construction.name!r}")
    d = derive(construction)
    rule = d.logit("integer", "letter")
    s = next(v for k, v in rule.query_token.params.items() if k == "s")
    m = sp.Symbol("m", integer=True, positive=True)
    from ropeproof.theory.stable import stabilize

    gap = rule.closed.subs(OFFSET, -s) - rule.closed.subs(OFFSET, -s + m)
    return stabilize(sp.expand(gap))


def planes_of(construction: Construction) -> tuple[np.ndarray, np.ndarray]:
    """``(theta_k, a_k)`` of a construction's planes, as floats."""
    freqs = np.array([construction.numeric(p.freq) for p in construction.planes])
    amps = np.array([construction.numeric(p.amplitude) for p in construction.planes])
    return freqs, amps


def stable_gaps(freqs: Sequence[float], amps: Sequence[float], m: np.ndarray) -> np.ndarray:
    """``g(m) = sum_k 2 a_k sin(m theta_k / 2)^2`` with accurately reduced angles.

    Shapes: m [...]; return [...]
    """
    out = np.zeros(np.asarray(m).shape)
    for theta, a in zip(freqs, amps, strict=True):
        out += 2.0 * a * np.sin(reduced_angles(m, float(theta)) / 2) ** 2
    return out


@dataclass
class IndexSweep:
    """Exact T_Index extremes for ``n = 2 .. N`` (arrays indexed by ``n - 2``).

    ``closest[r]`` is the offset ``m`` (from the target) of the best competing key for ``margin_inf``
    at ``n = r + 2``; the attaining input is query ``s = n - 1`` with the competitor ``m`` positions
    after the target. ``normaliser`` is ``h(0) = sum_k a_k``.

    Shapes: n [N - 1]; gap_sup [N - 1]; gap_inf [N - 1]; margin_inf [N - 1]; closest [N - 1];
        closest_sup [N - 1]
    """

    n: np.ndarray
    gap_sup: np.ndarray
    gap_inf: np.ndarray
    margin_inf: np.ndarray
    closest: np.ndarray
    closest_sup: np.ndarray
    normaliser: float

    def witness(self, n: int, quantity: str = "margin_inf") -> dict[str, int | float]:
        """The attaining input, described: query integer ``s``, target distance ``s``, and the
        competing key's offset ``m`` from the target."""
        r = n - 2
        if not 0 <= r < self.n.size:
            raise InputError(f"n={n} is outside this sweep (2..{int(self.n[-1])})")
        if quantity == "gap_sup":
            s = (n - 1 + 1) // 2
            m, value = int(self.closest_sup[r]), float(self.gap_sup[r])
            return {"n": n, "s": s, "target_position": n - 1 - s, "competitor_offset": m, "value": value}
        return {
            "n": n,
            "s": n - 1,
            "target_position": 0,
            "competitor_offset": int(self.closest[r]),
            "value": float(getattr(self, quantity)[r]),
        }


def index_sweep(
    freqs: Sequence[float], amps: Sequence[float] | None = None, max_n: int = 1000, chunk: int = 1 << 20
) -> IndexSweep:
    """Exact ``gap_sup``, ``gap_inf``, ``margin_inf`` of many-plane T_Index for ``n = 2 .. max_n``."""
    freqs = np.atleast_1d(np.asarray(freqs, dtype=np.float64))
    amps = np.ones_like(freqs) if amps is None else np.atleast_1d(np.asarray(amps, dtype=np.float64))
    if freqs.shape != amps.shape or freqs.size == 0:
        raise InputError(f"freqs and amps must be equal-length, non-empty; got {freqs.size} and {amps.size}")
    if not np.all(np.isfinite(freqs)) or not np.all(np.isfinite(amps)) or np.any(amps < 0):
        raise InputError("freqs must be finite and amps finite and >= 0")
    if not 2 <= max_n < 2**26:
        raise InputError(f"max_n={max_n} must be in 2 .. 2^26 - 1")
    prefix = np.empty(max_n - 1)
    where = np.empty(max_n - 1, dtype=np.int64)
    best, best_m = np.inf, 0
    for start in range(1, max_n, chunk):
        m = np.arange(start, min(start + chunk, max_n), dtype=np.float64)
        g = stable_gaps(freqs, amps, m)
        run = np.minimum.accumulate(g)
        # argmin of each prefix: the last index where the running minimum was (re)set
        is_record = np.concatenate([[True], run[1:] < run[:-1]])
        rec_idx = np.maximum.accumulate(np.where(is_record, np.arange(g.size), 0))
        run_m = m[rec_idx].astype(np.int64)
        improve = run < best
        vals = np.where(improve, run, best)
        ms = np.where(improve, run_m, best_m)
        sl = slice(start - 1, start - 1 + g.size)
        prefix[sl], where[sl] = vals, ms
        best, best_m = float(vals[-1]), int(ms[-1])
    n = np.arange(2, max_n + 1)
    half = (n - 1 + 1) // 2  # ceil((n - 1) / 2)
    return IndexSweep(
        n=n,
        gap_sup=prefix[half - 1],
        gap_inf=prefix.copy(),
        margin_inf=prefix.copy(),
        closest=where.copy(),
        closest_sup=where[half - 1],
        normaliser=float(amps.sum()),
    )


def direct_index_extremes(
    freqs: Sequence[float], amps: Sequence[float], n: int, dps: int | None = None
) -> tuple[float, float, float]:
    """``(gap_sup, gap_inf, margin_inf)`` of K-plane T_Index at length ``n`` by brute force.

    Every query ``s = 1 .. n-1`` at position ``i = n - 1`` and every key ``j`` of its row: logit
    ``sum_k a_k cos((j - i + s) theta_k)``, target ``j = i - s``; ``gap`` is top-1 minus top-2 of
    the row, ``margin`` is the target's logit minus the best other. An ``O(n^2 K)`` oracle for the
    one-pass :func:`index_sweep`: in float64 (``dps=None``) or in mpmath at ``dps`` digits.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 2:
        raise InputError(f"n={n} must be an integer >= 2")
    f = np.asarray(freqs, dtype=np.float64).reshape(-1)
    a = np.asarray(amps, dtype=np.float64).reshape(-1)
    if f.shape != a.shape or f.size == 0:
        raise InputError(f"freqs and amps must be non-empty and of equal length, got {f.size} and {a.size}")
    gaps, margins = [], []
    if dps is None:
        j = np.arange(n, dtype=np.float64)
        for s in range(1, n):
            row = (a[None, :] * np.cos((j[:, None] - (n - 1) + s) * f[None, :])).sum(1)
            target = n - 1 - s
            margins.append(row[target] - np.delete(row, target).max())
            top = np.sort(row)[::-1]
            gaps.append(top[0] - top[1])
        return float(max(gaps)), float(min(gaps)), float(min(margins))
    import mpmath

    with mpmath.workdps(dps):
        th = [mpmath.mpf(float(t)) for t in f]
        am = [mpmath.mpf(float(x)) for x in a]
        for s in range(1, n):
            row = [
                sum(ak * mpmath.cos((jj - (n - 1) + s) * tk) for ak, tk in zip(am, th, strict=True))
                for jj in range(n)
            ]
            target = n - 1 - s
            margins.append(row[target] - max(v for p_, v in enumerate(row) if p_ != target))
            top = sorted(row, reverse=True)
            gaps.append(top[0] - top[1])
        return float(max(gaps)), float(min(gaps)), float(min(margins))
