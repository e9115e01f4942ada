"""Exact family extremes of a single-layer head: ``gap_sup``, ``gap_inf`` and ``margin_inf``.

For an input of length ``n`` (query at ``n - 1``) let ``l_p`` be the query row's logits.

- ``gap`` = top-1 minus top-2 of ``l``; ``gap_sup(n)`` / ``gap_inf(n)`` are its max / min over the
  family's inputs of length ``n`` ([A]'s discrepancy ``Delta(n)`` is ``gap_sup``).
- ``margin`` = ``l_target - max_{p != target} l_p`` (negative when the head is wrong);
  ``margin_inf(n)`` is its minimum, which decides correctness.

Each position's logit depends only on its token and its distance back, so per position the values
form a finite set ``V_p``, chosen independently. Then, exactly:

- ``margin_inf = min_t [min V_t - max_{p != t} max V_p]``;
- ``gap_sup = max_a [max V_a - max_{p != a} min V_p]``;
- ``gap_inf = min x - y`` over positions ``a != b``, ``x in V_a``, ``y in V_b``, ``x >= y >=
  max_{p not in {a, b}} min V_p`` (set every other position to its minimum);
- if ``margin_inf > 0`` every input has its target on top, so ``gap_inf = margin_inf`` there.

:func:`reference_extremes` evaluates these straight from the sets for one ``n``.
:func:`exact_sweep` gets every ``n`` in ``2 .. N`` in one pass from prefix top-k summaries of the
per-distance extremes (the candidates that can attain each extreme are a few top-k entries).
Both return the input that attains each value.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._memory_budget import check_allocation
from ropeproof.machinery._validate import integer
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike, resolve_dtype
from ropeproof.verify.measure.exact._explain import Explanation, explain_row
from ropeproof.verify.measure.exact._families import Family, FamilyCase
from ropeproof.verify.measure.exact._offset_logits import distance_logits
from ropeproof.verify.measure.exact._plane_logits import distance_logits_exact
from ropeproof.verify.measure.exact._prefix_topk import excluding_first, prefix_topk

QUANTITIES = ("gap_sup", "gap_inf", "margin_inf")
NEG, POS = float("-inf"), float("inf")


@dataclass
class CaseTable:
    """Logits of one case by distance: rows are groups of tokens with the same key vector.

    ``target_logits[g, d]``, ``other_logits[g, d]``: target / other groups at distance ``d``
    (``0 .. N-1``); ``self_logits[g]``: the query position's own groups at distance 0. ``errors[d]``
    (float64 tables): a bound on the error of every logit at distance ``d`` against the exact logit of
    the head's weights (``None``: not known).

    Interval tables (:mod:`ropeproof.verify.measure.exact._certified_family`) give two arrays per
    position set: the ``*_logits`` arrays feed every minimum over groups and the ``*_upper`` arrays
    (when not ``None``) every maximum, so one sweep evaluates each extreme at chosen interval ends.

    Shapes: target_logits [target groups, N]; other_logits [other groups, N]; self_logits [query groups];
        errors [N]; target_upper [target groups, N]; other_upper [other groups, N];
        self_upper [query groups]
    """

    case: FamilyCase
    target_groups: list[list[str]]
    other_groups: list[list[str]]
    self_groups: list[list[str]]
    target_logits: np.ndarray
    other_logits: np.ndarray
    self_logits: np.ndarray
    errors: np.ndarray | None = None
    target_upper: np.ndarray | None = None
    other_upper: np.ndarray | None = None
    self_upper: np.ndarray | None = None

    def logit(self, token: str, d: int, d_t: int) -> float:
        """The logit of ``token`` at distance ``d`` when the target is ``d_t`` back (``*_logits``)."""
        if d == 0:
            groups, row = self.self_groups, self.self_logits
        elif d == d_t:
            groups, row = self.target_groups, self.target_logits[:, d]
        else:
            groups, row = self.other_groups, self.other_logits[:, d]
        for g, members in enumerate(groups):
            if token in members:
                return float(row[g])
        raise InputError(f"token {token!r} may not stand {d} back in case {self.case.label} (internal)")

    def highs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(target, other, self)`` arrays that maxima over groups read."""
        return (
            self.target_logits if self.target_upper is None else self.target_upper,
            self.other_logits if self.other_upper is None else self.other_upper,
            self.self_logits if self.self_upper is None else self.self_upper,
        )


class _Rows:
    """``e W_Q`` and ``e W_K`` of every token in float64, with bounds on their rounding errors
    (:func:`product_errors`), computed once per :func:`build_tables`. Tokens are grouped by their float
    vectors; a group's error bound covers every member's exact vector."""

    def __init__(self, head: CompiledHead) -> None:
        self.head = head
        self.q, self.k = head.W_E @ head.W_Q, head.W_E @ head.W_K
        self.dq, self.dk = product_errors(head.W_E, head.W_Q), product_errors(head.W_E, head.W_K)

    def by_query(self, tokens: Sequence[str]) -> list[list[str]]:
        """``tokens`` grouped by their float query vector."""
        out: dict[bytes, list[str]] = {}
        for t in tokens:
            out.setdefault(self.q[self.head.token_index(t)].tobytes(), []).append(t)
        return list(out.values())

    def groups(self, tokens: Sequence[str]) -> tuple[list[list[str]], np.ndarray]:
        """``tokens`` grouped by their float key vector, and the groups' keys."""
        by_key: dict[bytes, list[str]] = {}
        for t in tokens:
            by_key.setdefault(self.k[self.head.token_index(t)].tobytes(), []).append(t)
        groups = list(by_key.values())
        return groups, np.stack([self.k[self.head.token_index(g[0])] for g in groups])

    def vector_error(self, q_tokens: Sequence[str], groups: Sequence[Sequence[str]]) -> np.ndarray:
        """Per key group, a bound on the logit error caused by rounding ``q = e W_Q`` and ``k = e W_K``
        (zero for one-hot embeddings): per plane ``|dq| (|k| + |dk|) + |q| |dk|`` with 1-norms over the
        plane's two dims and ``dq``, ``dk`` the largest over the query tokens and the group's members,
        times ``|scale|``.

        Shapes: return [n_groups]
        """
        qi = [self.head.token_index(t) for t in q_tokens]
        dq = self.dq[qi].max(0)
        dk = np.stack([self.dk[[self.head.token_index(t) for t in g]].max(0) for g in groups])
        if not dq.any() and not dk.any():
            return np.zeros(len(groups))
        dims = np.asarray(self.head.spec.plane_dims)

        def norm1(x: np.ndarray) -> np.ndarray:
            return np.abs(x[..., dims[:, 0]]) + np.abs(x[..., dims[:, 1]])

        keys = np.stack([self.k[self.head.token_index(g[0])] for g in groups])
        q = self.q[qi[0]]
        per_plane = norm1(dq)[None, :] * (norm1(keys) + norm1(dk)) + norm1(q)[None, :] * norm1(dk)
        return abs(self.head.scale) * per_plane.sum(1) * (1 + 16 * 2.0**-53)


def product_errors(e: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A bound on the float64 rounding error of ``e @ w`` per entry: ``gamma_m (|e| @ |w|)`` with ``m``
    the number of rounded operations of that entry (a product by a signed power of two is exact, a
    sum of one term is exact), ``gamma_m = m u / (1 - m u)``.

    Shapes: e [V, d_model]; w [d_model, head_dim]; return [V, head_dim]
    """
    u = 2.0**-53
    nz_e, nz_w = (e != 0).astype(np.float64), (w != 0).astype(np.float64)
    pow2 = np.abs(np.frexp(e)[0]) == 0.5  # |e| a power of two (frexp's mantissa 0.5)
    terms = nz_e @ nz_w
    inexact = (nz_e * ~pow2) @ nz_w
    m = np.maximum(terms - 1, 0) + inexact
    gamma = m * u / (1 - m * u)
    return gamma * (np.abs(e) @ np.abs(w)) * (1 + 4 * u)


def build_tables(
    head: CompiledHead,
    family: Family,
    max_n: int,
    dtype: DtypeLike = torch.float64,
    device: DeviceLike = "cpu",
) -> list[CaseTable]:
    """Per-case logit tables for distances ``0 .. max_n - 1``.

        In float64 the logits are formed plane by plane with exactly reduced angles
        (:func:`~ropeproof.verify.measure.exact._plane_logits.distance_logits_exact`, as the direct sweeps
        form ``m * theta``), and each table carries ``errors``: a bound on every logit's error against the
        exact logit of the head's weights (the rounding of ``e W_Q`` and ``e W_K`` included); they are
        computed in numpy, so ``device`` is not used. In another dtype they are computed with the module's
        arithmetic on ``device``
        (:func:`~ropeproof.verify.measure.exact._offset_logits.distance_logits`), what a model running in
        that dtype computes, and carry no error bound. Tokens are grouped by their key vectors; a case whose
    query tokens have different query vectors becomes one table per vector (the family is their union).
    """
    max_n = integer(max_n, "max_n", low=2)
    limit = family.max_length()
    if limit is not None and max_n > limit:
        raise InputError(
            f"max_n={max_n} exceeds the longest length the {family.name} family covers completely "
            f"({limit}): it asks for a target at every offset 1 .. n - 1, and its cases stop at offset "
            f"{limit - 1}; give it a case for each offset up to {max_n - 1} (for T_Index: max_int >= "
            f"{max_n - 1})"
        )
    # every case keeps a row of max_n float64 logits per key group (at most one per token), plus the
    # shared cache of those rows and exact_sweep's prefix summaries: ~4 copies
    rows = sum(len(c.target_tokens) + len(c.other_tokens) + len(c.query_tokens) for c in family.cases)
    check_allocation(f"logit tables of {len(family.cases)} cases to n = {max_n}", 32 * rows * max_n)
    exact = resolve_dtype(dtype) == torch.float64
    vectors = _Rows(head)
    cache: dict[tuple[bytes, bytes], tuple[np.ndarray, np.ndarray]] = {}
    distances = np.arange(max_n, dtype=np.float64)

    def table(q: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out, err = np.empty((len(keys), max_n)), np.zeros((len(keys), max_n))
        todo = [i for i, k in enumerate(keys) if (q.tobytes(), k.tobytes()) not in cache]
        if todo:
            if exact:
                vals, errs = distance_logits_exact(q, keys[todo], head.spec, distances, head.scale)
            else:
                vals = distance_logits(q, keys[todo], head.spec, distances, head.scale, dtype, device)
                errs = np.full(vals.shape, np.nan)
            for row, i in enumerate(todo):
                cache[(q.tobytes(), keys[i].tobytes())] = vals[row], errs[row]
        for i, k in enumerate(keys):
            out[i], err[i] = cache[(q.tobytes(), k.tobytes())]
        return out, err

    tables = []
    for family_case in family.cases:
        # a case whose query tokens have different query vectors is swept as one case per vector
        split = vectors.by_query(family_case.query_tokens)
        for q_tokens in split:
            case = family_case
            if len(split) > 1:
                case = dataclasses.replace(family_case, query_tokens=tuple(q_tokens))
            q = vectors.q[head.token_index(q_tokens[0])]
            parts = []
            for tokens in (case.target_tokens, case.other_tokens, case.query_tokens):
                groups, keys = vectors.groups(tokens)
                vals, errs = table(q, keys)
                if exact:
                    errs = errs + vectors.vector_error(q_tokens, groups)[:, None]
                parts.append((groups, vals, errs))
            (tg, t_v, t_e), (og, o_v, o_e), (sg, s_v, s_e) = parts
            errors = None
            if exact:
                errors = np.maximum(t_e.max(0), o_e.max(0))
                errors[0] = max(errors[0], float(s_e[:, 0].max()))
            tables.append(CaseTable(case, tg, og, sg, t_v, o_v, s_v[:, 0], errors))
    return tables


# ---------------------------------------------------------------------------------------------
# witnesses


@dataclass(frozen=True)
class Witness:
    """An input attaining an extreme: ``tokens`` (length ``n``), the case, the target position, and
    ``explanation``: the target's and the winning competitor's positions, offsets, tokens and logits
    (:class:`~ropeproof.verify.measure.exact._explain.Explanation`, from the sweep's float64 logits)."""

    quantity: str
    n: int
    value: float
    case: str
    target_position: int
    tokens: tuple[str, ...]
    explanation: Explanation | None = None

    def describe(self) -> str:
        """One line: the quantity, its value, and what beats the target."""
        head = f"{self.quantity}({self.n}) = {self.value:.10g} ({self.case})"
        return f"{head}: {self.explanation.describe()}" if self.explanation is not None else head


def _input(
    t: CaseTable, n: int, d_t: int, default: str, chosen: dict[int, int] | None = None
) -> tuple[str, ...]:
    """Tokens of an input of length ``n``: group ``chosen[d]`` at distance ``d``, else the
    ``default`` (``"lo"``/``"hi"``) group of each position's set."""
    chosen = chosen or {}
    pick = np.argmin if default == "lo" else np.argmax
    out = []
    for d in range(n - 1, -1, -1):
        if d == 0:
            groups, vals = t.self_groups, t.self_logits
        elif d == d_t:
            groups, vals = t.target_groups, t.target_logits[:, d]
        else:
            groups, vals = t.other_groups, t.other_logits[:, d]
        g = chosen[d] if d in chosen else int(pick(vals))
        out.append(groups[g][0])
    return tuple(out)


def _explained(
    quantity: str, n: int, value: float, t: CaseTable, d_t: int, tokens: tuple[str, ...]
) -> Witness:
    """The witness with its explanation, read from the table's logits of those tokens."""
    logits = [t.logit(tok, n - 1 - p, d_t) for p, tok in enumerate(tokens)]
    target = n - 1 - d_t
    return Witness(
        quantity, n, value, t.case.label, target, tokens, explain_row(quantity, tokens, logits, target)
    )


def _target_choice(t: CaseTable, d_t: int, default: str) -> dict[int, int]:
    vals = t.self_logits if d_t == 0 else t.target_logits[:, d_t]
    return {d_t: int(np.argmin(vals) if default == "lo" else np.argmax(vals))}


# ---------------------------------------------------------------------------------------------
# the straightforward per-n computation


def _position_sets(t: CaseTable, n: int, d_t: int) -> list[np.ndarray]:
    sets = []
    for d in range(n):
        if d == 0:
            sets.append(t.self_logits)
        elif d == d_t:
            sets.append(t.target_logits[:, d])
        else:
            sets.append(t.other_logits[:, d])
    return sets


def _gap_inf_config(sets: list[np.ndarray]) -> tuple[float, int, int, int, int]:
    """Min top1 - top2 over choices from ``sets``: ``(value, pos_a, group_a, pos_b, group_b)``."""
    lows = np.array([s.min() for s in sets])
    order = np.argsort(-lows, kind="stable")
    p1 = int(order[0])
    p2 = int(order[1]) if len(order) > 1 else -1
    l2 = lows[p2] if p2 >= 0 else NEG
    l3 = lows[int(order[2])] if len(order) > 2 else NEG
    best = (POS, -1, -1, -1, -1)

    def scan(items: list[tuple[float, int, int]], allowed) -> None:
        nonlocal best
        items.sort()
        for (y, pa, ga), (x, pb, gb) in itertools.pairwise(items):
            if pa != pb and allowed(pa, pb) and x - y < best[0]:
                best = (x - y, pb, gb, pa, ga)

    def collect(positions, threshold: float) -> list[tuple[float, int, int]]:
        return [(float(v), p, g) for p in positions for g, v in enumerate(sets[p]) if v >= threshold]

    everyone = range(len(sets))
    scan(collect([p for p in everyone if p != p1], lows[p1]), lambda a, b: True)
    if p2 >= 0:
        scan(collect([p for p in everyone if p != p2], l2), lambda a, b: p1 in (a, b))
        scan(collect([p1, p2], l3), lambda a, b: {a, b} == {p1, p2})
    return best


def _config_extremes(sets: list[np.ndarray], target: int) -> tuple[float, float, int, float, tuple]:
    his = np.array([s.max() for s in sets])
    los = np.array([s.min() for s in sets])
    others_hi = np.delete(his, target)
    margin = float(sets[target].min() - others_hi.max())
    sup_best, sup_a = NEG, -1
    for a in range(len(sets)):
        v = float(his[a] - np.delete(los, a).max())
        if v > sup_best:
            sup_best, sup_a = v, a
    inf, pa, ga, pb, gb = _gap_inf_config(sets)
    return margin, sup_best, sup_a, inf, (pa, ga, pb, gb)


@dataclass
class ExtremesRow:
    """Exact extremes at one length, with the inputs that attain them."""

    n: int
    gap_sup: float
    gap_inf: float
    margin_inf: float
    witnesses: dict[str, Witness] = field(default_factory=dict)


def reference_extremes(tables: Sequence[CaseTable], n: int) -> ExtremesRow:
    """Exact extremes at length ``n`` by enumerating every case and target distance (slow, obvious)."""
    best = {"margin_inf": (POS, None), "gap_sup": (NEG, None), "gap_inf": (POS, None)}
    for t in tables:
        if not t.case.fits(n) or t.target_logits.shape[1] < n:
            continue
        dts = [t.case.target_distance] if t.case.target_distance is not None else range(1, n)
        for d_t in dts:
            sets = _position_sets(t, n, d_t)
            margin, sup, sup_a, inf, (pa, ga, pb, gb) = _config_extremes(sets, d_t)
            if margin < best["margin_inf"][0]:
                tokens = _input(t, n, d_t, "hi", _target_choice(t, d_t, "lo"))
                best["margin_inf"] = (margin, (t, d_t, tokens))
            if sup > best["gap_sup"][0]:
                chosen = {sup_a: int(np.argmax(sets[sup_a]))}
                best["gap_sup"] = (sup, (t, d_t, _input(t, n, d_t, "lo", chosen)))
            if inf < best["gap_inf"][0]:
                best["gap_inf"] = (inf, (t, d_t, _input(t, n, d_t, "lo", {pa: ga, pb: gb})))
    if best["margin_inf"][1] is None:
        raise InputError(f"no input of length n={n} in this family")
    row = ExtremesRow(n, best["gap_sup"][0], best["gap_inf"][0], best["margin_inf"][0])
    for q, (value, (t, d_t, tokens)) in best.items():
        row.witnesses[q] = _explained(q, n, value, t, d_t, tokens)
    return row


# ---------------------------------------------------------------------------------------------
# the one-pass sweep


@dataclass
class _Plans:
    """Vectorised recipe of the attaining input per row: case, target distance, default group
    (0 = each set's lo, 1 = hi) and up to two chosen ``(distance, group)`` overrides."""

    case: np.ndarray
    d_t: np.ndarray
    default: np.ndarray
    chosen: np.ndarray  # [rows, 2, 2]: (distance, group), distance -1 = unused

    @classmethod
    def empty(cls, rows: int) -> _Plans:
        return cls(
            np.full(rows, -1), np.full(rows, -1), np.zeros(rows, dtype=np.int64), np.full((rows, 2, 2), -1)
        )

    def take(self, mask: np.ndarray, other: _Plans) -> None:
        self.case[mask] = other.case[mask]
        self.d_t[mask] = other.d_t[mask]
        self.default[mask] = other.default[mask]
        self.chosen[mask] = other.chosen[mask]


def _plan(rows: int, case: int, d_t, default: int, *chosen) -> _Plans:
    p = _Plans.empty(rows)
    p.case[:] = case
    p.d_t[:] = d_t
    p.default[:] = default
    for j, (d, g) in enumerate(chosen):
        p.chosen[:, j, 0] = d
        p.chosen[:, j, 1] = g
    return p


class _Best:
    """Running extreme over candidates, with the recipe of the input attaining it."""

    def __init__(self, rows: int, minimise: bool) -> None:
        self.value = np.full(rows, POS if minimise else NEG)
        self.plans = _Plans.empty(rows)
        self.minimise = minimise

    def offer(self, cand: np.ndarray, valid: np.ndarray, plan: _Plans) -> None:
        better = cand < self.value if self.minimise else cand > self.value
        take = valid & better
        self.value[take] = cand[take]
        self.plans.take(take, plan)


def _case_sweep(t: CaseTable, case: int, big_n: int, margin: _Best, sup: _Best) -> None:
    """Fold one case's ``margin_inf`` and ``gap_sup`` for ``n = 2 .. big_n`` into the running bests.

    Row ``r`` is ``n = r + 2``; the other positions are distances ``1 .. n - 1``, so prefix top-k
    row ``r`` summarises exactly them. Each extreme is attained by a handful of candidates taken
    from the top-k lists (enough entries that every exclusion still leaves the true extreme).
    """
    rows = big_n - 1
    kind = t.case.target_distance
    n_arr = np.arange(2, big_n + 1)
    t_up, o_up, s_up = t.highs()  # maxima read these (interval tables: other ends), minima *_logits
    s_lo, s_hi = float(t.self_logits.min()), float(s_up.max())
    s_lo_g, s_hi_g = int(np.argmin(t.self_logits)), int(np.argmax(s_up))
    o_hi, o_lo, o_hi_g = o_up.max(0), t.other_logits.min(0), o_up.argmax(0)
    t_lo, t_hi, t_lo_g, t_hi_g = (
        t.target_logits.min(0),
        t_up.max(0),
        t.target_logits.argmin(0),
        t_up.argmax(0),
    )

    hv, hi = prefix_topk(o_hi[1:big_n], 4)
    lv, li = prefix_topk(o_lo[1:big_n], 3)
    hi, li = np.where(hi >= 0, hi + 1, -1), np.where(li >= 0, li + 1, -1)

    def at(arr: np.ndarray, d: np.ndarray, fill: float | int) -> np.ndarray:
        return np.where(d >= 1, arr[np.maximum(d, 0)], fill)

    def inside(d: np.ndarray) -> np.ndarray:
        return (d >= 1) & (d <= n_arr - 1)

    def max_excl(v: np.ndarray, i: np.ndarray, excluded: list[np.ndarray]) -> np.ndarray:
        return excluding_first(v, i, excluded)

    if kind == 0:  # the query is its own target
        everywhere = np.ones(rows, dtype=bool)
        margin.offer(s_lo - hv[:, 0], everywhere, _plan(rows, case, 0, 1, (0, s_lo_g)))
        sup.offer(s_hi - lv[:, 0], everywhere, _plan(rows, case, 0, 0, (0, s_hi_g)))
        for d in (hi[:, 0], hi[:, 1], li[:, 0]):
            cand = at(o_hi, d, NEG) - np.maximum(s_lo, max_excl(lv, li, [d]))
            sup.offer(cand, inside(d), _plan(rows, case, 0, 0, (d, at(o_hi_g, d, -1))))
        return

    if kind is None:
        _tv, ti = prefix_topk(t_lo[1:big_n], 4, largest=False)
        _uv, ui = prefix_topk(t_hi[1:big_n], 2)
        ti, ui = np.where(ti >= 0, ti + 1, -1), np.where(ui >= 0, ui + 1, -1)
        dt_lo = [ti[:, j] for j in range(4)] + [li[:, 0], li[:, 1], hi[:, 0]]
        dt_hi = [ui[:, 0], ui[:, 1], li[:, 0]]
    else:
        fixed = np.where(n_arr - 1 >= kind, kind, -1)
        dt_lo, dt_hi = [fixed], [fixed]

    for d_t in dt_lo:
        # margin: T_lo(d_t) - max(S_hi, max_{d != d_t} H(d)), others at their hi
        cand = at(t_lo, d_t, POS) - np.maximum(s_hi, max_excl(hv, hi, [d_t]))
        plan = _plan(rows, case, d_t, 1, (0, s_hi_g), (d_t, at(t_lo_g, d_t, -1)))
        margin.offer(cand, inside(d_t), plan)
        # gap_sup with the query on top: S_hi - max(T_lo(d_t), max_{d != d_t} L(d))
        cand = s_hi - np.maximum(at(t_lo, d_t, POS), max_excl(lv, li, [d_t]))
        sup.offer(cand, inside(d_t), _plan(rows, case, d_t, 0, (0, s_hi_g)))
    for d_t in dt_hi:
        # gap_sup with the target on top: T_hi(d_t) - max(S_lo, max_{d != d_t} L(d))
        cand = at(t_hi, d_t, NEG) - np.maximum(s_lo, max_excl(lv, li, [d_t]))
        sup.offer(cand, inside(d_t), _plan(rows, case, d_t, 0, (d_t, at(t_hi_g, d_t, -1))))
    for d in [hi[:, j] for j in range(4)] + [li[:, 0], li[:, 1]]:
        # gap_sup with another position d on top: H(d) - max(S_lo, T_lo(d_t), max_{c not in {d, d_t}} L(c))
        for d_t in dt_lo:
            rest = np.maximum(np.maximum(s_lo, at(t_lo, d_t, POS)), max_excl(lv, li, [d, d_t]))
            ok = inside(d) & inside(d_t) & (d != d_t)
            sup.offer(at(o_hi, d, NEG) - rest, ok, _plan(rows, case, d_t, 0, (d, at(o_hi_g, d, -1))))


@dataclass
class SweepResult:
    """Exact extremes for every ``n`` in ``2 .. N`` (arrays indexed by ``n - 2``).

    ``gap_inf`` is exact wherever ``gap_inf_exact``; past the horizon (``margin_inf <= 0``) and above
    ``gap_inf_limit`` only slow enumeration could give it, so it is NaN there.

    Shapes: n [N - 1]; gap_sup [N - 1]; gap_inf [N - 1]; margin_inf [N - 1]; gap_inf_exact [N - 1]
    """

    n: np.ndarray
    gap_sup: np.ndarray
    gap_inf: np.ndarray
    margin_inf: np.ndarray
    gap_inf_exact: np.ndarray
    tables: list[CaseTable]
    plans: dict[str, _Plans] = field(repr=False, default_factory=dict)
    enumerated: dict[int, Witness] = field(repr=False, default_factory=dict)

    def witness(self, n: int, quantity: str) -> Witness:
        """The input of length ``n`` attaining ``quantity`` (``gap_sup``, ``gap_inf`` or ``margin_inf``)."""
        if quantity not in QUANTITIES:
            raise InputError(f"quantity={quantity!r}; accepted: {QUANTITIES}")
        if not 2 <= n <= int(self.n[-1]):
            raise InputError(f"n={n} is outside this sweep (2..{int(self.n[-1])})")
        r = n - 2
        if np.isnan(self.margin_inf[r]):
            raise InputError(f"the family has no input of length n={n}")
        if quantity == "gap_inf":
            if not self.gap_inf_exact[r]:
                raise InputError(f"gap_inf at n={n} was not computed (past the horizon, above the limit)")
            if n in self.enumerated:
                return self.enumerated[n]
            quantity_plan = "margin_inf"
        else:
            quantity_plan = quantity
        p = self.plans[quantity_plan]
        t = self.tables[int(p.case[r])]
        d_t = int(p.d_t[r])
        chosen = {int(d): int(g) for d, g in p.chosen[r] if d >= 0}
        tokens = _input(t, n, d_t, "hi" if p.default[r] else "lo", chosen)
        value = float(getattr(self, quantity)[r])
        return _explained(quantity, n, value, t, d_t, tokens)


def exact_sweep(tables: Sequence[CaseTable], max_n: int, gap_inf_limit: int = 96) -> SweepResult:
    """Exact ``gap_sup``, ``gap_inf``, ``margin_inf`` for every ``n`` in ``2 .. max_n``, in one pass.

    ``gap_inf`` equals ``margin_inf`` wherever the latter is positive; elsewhere it is enumerated
    (:func:`reference_extremes`) for ``n <= gap_inf_limit`` and left NaN above.
    """
    if max_n < 2:
        raise InputError(f"max_n={max_n} must be >= 2")
    if any(t.target_logits.shape[1] < max_n for t in tables):
        raise InputError(f"max_n={max_n} exceeds the tables' distances ({tables[0].target_logits.shape[1]})")
    rows = max_n - 1
    margin, sup = _Best(rows, minimise=True), _Best(rows, minimise=False)
    for index, t in enumerate(tables):
        _case_sweep(t, index, max_n, margin, sup)
    n_arr = np.arange(2, max_n + 1)
    # lengths where no case fits (a fixed target distance d needs n >= d + 1) have no input: NaN
    empty = n_arr < min(t.case.min_length for t in tables) if tables else np.ones(rows, dtype=bool)
    for best in (margin, sup):
        best.value[empty] = np.nan
    exact = margin.value > 0
    gap_inf = np.where(exact, margin.value, np.nan)
    enumerated: dict[int, Witness] = {}
    for r in np.nonzero(~exact & ~empty)[0]:
        n = int(n_arr[r])
        if n <= gap_inf_limit:
            row = reference_extremes(tables, n)
            gap_inf[r], exact[r] = row.gap_inf, True
            enumerated[n] = row.witnesses["gap_inf"]
    return SweepResult(
        n_arr,
        sup.value,
        gap_inf,
        margin.value,
        exact,
        list(tables),
        {"margin_inf": margin.plans, "gap_sup": sup.plans},
        enumerated,
    )
