"""Certified enclosures of any single-layer head's family extremes: ``margin_inf``, ``gap_sup``, ``gap_inf``.

The subject is a :class:`~ropeproof.theory._construction.Construction` (its exact logits: every query
and key plane vector from the construction's rules, parameters as the exact binary values of their
floats) or a :class:`~ropeproof.constructions._head.CompiledHead` (the exact real logits of its float64
weights: ``e W_Q`` and ``e W_K`` formed exactly). Either way the logit of query token ``x`` against key
token ``y`` ``d`` positions back is (:mod:`ropeproof.verify.measure.exact._plane_logits`,
:func:`ropeproof.theory._rope_symbolic.plane_logit_coefficients`, proved equal to the raw rotated
product by :func:`ropeproof.theory._derive.derive`)

    l(d) = scale * sum_k [A_k cos(d theta_k) - B_k sin(d theta_k)],  A_k = q_k . k_k,
    B_k = q_k2 k_k1 - q_k1 k_k2.

Enclosures: ``A_k``, ``B_k``, ``theta_k`` are ``flint.arb`` balls (:func:`arb_value` evaluates sympy
exactly-valued expressions as balls); ``cos(d theta_k)`` and ``sin(d theta_k)`` are Arb's rigorous
``sin_cos`` of the ball ``d theta_k`` at ``prec`` bits plus the bits of ``d theta_k``'s integer part
(so huge angles keep ``prec`` bits after reduction); every ball is turned into float64 ends rounded
outward, and the sum over planes is formed in float64 interval arithmetic rounded outward
(``nextafter`` past every round-to-nearest result). The family extremes are minima and maxima over
these logit intervals followed by one subtraction, so one pass of
:func:`~ropeproof.verify.measure.exact._discrepancy.exact_sweep` per end, on tables whose minima read
one end and whose maxima the other, encloses them:

- ``margin_inf = min [min target - max others]``: lower end from (target lo, others hi), upper end
  from (target hi, others lo);
- ``gap_sup = max [max V_a - max_{p != a} min V_p]``: lower end from (maxima of lo, minima of hi),
  upper end from (maxima of hi, minima of lo);
- ``gap_inf = margin_inf`` wherever the margin's lower end is positive (every input then has its
  target on top); elsewhere no enclosure is given (NaN).

Each end is then stepped one float outward (the final subtraction's rounding). :func:`witness_value`
re-encloses one witness input's value (target logit minus the strongest competitor's, or top-1 minus
top-2) at a higher precision, directly as a difference of balls.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp
from flint import arb, fmpq, fmpz

from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._memory_budget import check_allocation
from ropeproof.machinery._validate import integer
from ropeproof.theory._construction import Construction
from ropeproof.theory._family import Family, FamilyCase
from ropeproof.verify.measure.exact._certified import arb_ends, arb_precision
from ropeproof.verify.measure.exact._discrepancy import CaseTable, exact_sweep, product_errors
from ropeproof.verify.measure.exact._offset_extremes import offset_extremes

PREC = 80
"""Default working precision (bits after the integer part of every angle)."""
REFINE_PREC = 256
"""Default precision of :func:`witness_value`."""


# ------------------------------------------------------------------------------ sympy -> Arb balls


def _arb_float(x: float) -> arb:
    return arb(float(x))  # a float64 is exact in Arb


_FUNCTIONS: dict[Any, Callable[..., arb]] = {
    sp.sin: lambda x: x.sin(),
    sp.cos: lambda x: x.cos(),
    sp.tan: lambda x: x.tan(),
    sp.exp: lambda x: x.exp(),
    sp.log: lambda x: x.log(),
    sp.asin: lambda x: x.asin(),
    sp.acos: lambda x: x.acos(),
    sp.atan: lambda x: x.atan(),
    sp.sinh: lambda x: x.sinh(),
    sp.cosh: lambda x: x.cosh(),
    sp.tanh: lambda x: x.tanh(),
    sp.Abs: lambda x: abs(x),
    sp.floor: lambda x: x.floor(),
    sp.ceiling: lambda x: x.ceil(),
}


def arb_value(expr: sp.Expr | float | int, values: Mapping[sp.Symbol, arb] | None = None) -> arb:
    """A ``flint.arb`` ball containing the real value of ``expr`` at the current Arb precision
    (:class:`~ropeproof.verify.measure.exact._certified.arb_precision`), with ``values`` for its free
    symbols. Numbers are exact (a sympy ``Float`` is its exact binary value); supported: ``+ - * /``,
    powers, ``pi``, ``E``, ``sqrt``, trigonometric, exponential and hyperbolic functions and their
    inverses, ``atan2``, ``Abs``, ``Min``, ``Max``, ``floor``, ``ceiling``. Anything else raises
    :class:`InputError` naming it."""
    values = dict(values or {})
    return _arb(sp.sympify(expr), values)


def _arb(e: sp.Basic, values: dict[sp.Symbol, arb]) -> arb:
    if isinstance(e, sp.Symbol):
        if e not in values:
            raise InputError(f"the expression has a free symbol {e.name!r} with no value")
        return values[e]
    if isinstance(e, sp.Integer):
        return arb(fmpz(int(e)))
    if isinstance(e, sp.Rational):
        return arb(fmpq(int(e.p), int(e.q)))
    if isinstance(e, sp.Float):
        r = sp.Rational(e)  # the exact binary value
        return arb(fmpq(int(r.p), int(r.q)))
    if e is sp.pi:
        return arb.pi()
    if e is sp.E:
        return arb(1).exp()
    if isinstance(e, sp.Add):
        total = arb(0)
        for a in e.args:
            total += _arb(a, values)
        return total
    if isinstance(e, sp.Mul):
        total = arb(1)
        for a in e.args:
            total *= _arb(a, values)
        return total
    if isinstance(e, sp.Pow):
        base, exp = e.args
        if exp == sp.Rational(1, 2):
            return _arb(base, values).sqrt()
        if isinstance(exp, sp.Integer):
            b = _arb(base, values)
            k = int(exp)
            return b**k if k >= 0 else 1 / b ** (-k)
        return (_arb(exp, values) * _arb(base, values).log()).exp()
    if isinstance(e, sp.atan2):
        return arb.atan2(_arb(e.args[0], values), _arb(e.args[1], values))
    if isinstance(e, sp.Min | sp.Max):
        balls = [_arb(a, values) for a in e.args]
        pick = arb.min if isinstance(e, sp.Min) else arb.max
        out = balls[0]
        for b in balls[1:]:
            out = pick(out, b)
        return out
    if e.func in _FUNCTIONS:
        return _FUNCTIONS[e.func](_arb(e.args[0], values))
    raise InputError(f"cannot enclose {type(e).__name__} ({e}) in interval arithmetic")


# ------------------------------------------------------------------------------- exact logit sources


@dataclass
class ExactLogits:
    """The exact logit coefficients of a construction or a head (module docstring).

    ``vectors(token, which, prec)`` gives a token's per-plane 2-D query (with the plane amplitude) or
    key vector as Arb balls; ``group_key(token, which)`` is equal for tokens with equal vectors;
    ``freqs(prec)`` the plane frequencies as balls; ``scale`` multiplies every logit.
    """

    name: str
    tokens: tuple[str, ...]
    n_planes: int
    scale: float
    _vectors: Callable[[str, str, int], list[tuple[arb, arb]]]
    _group: Callable[[str, str], Any]
    _freqs: Callable[[int], list[arb]]
    _max_freq: float
    cache: dict[tuple, Any] = field(default_factory=dict, repr=False)

    def vectors(self, token: str, which: str, prec: int) -> list[tuple[arb, arb]]:
        key = ("v", token, which, prec)
        if key not in self.cache:
            with arb_precision(prec):
                self.cache[key] = self._vectors(token, which, prec)
        return self.cache[key]

    def group_key(self, token: str, which: str) -> Any:
        return self._group(token, which)

    def freqs(self, prec: int) -> list[arb]:
        key = ("f", prec)
        if key not in self.cache:
            with arb_precision(prec):
                self.cache[key] = self._freqs(prec)
        return self.cache[key]

    def angle_prec(self, prec: int, max_d: int) -> int:
        """Bits for ``sin_cos(d theta_k)``: ``prec`` after the integer part of ``max_d * max |theta_k|``."""
        big = abs(self._max_freq) * max(int(max_d), 1)
        return prec + (math.frexp(big)[1] + 8 if big >= 1 else 0)

    def coefficients(self, q_token: str, k_token: str, prec: int) -> list[tuple[arb, arb]]:
        """``[(A_k, B_k)]`` per plane for ``q_token`` against ``k_token`` (Arb balls at ``prec``)."""
        qs, ks = self.vectors(q_token, "query", prec), self.vectors(k_token, "key", prec)
        out = []
        with arb_precision(prec):
            for (q1, q2), (k1, k2) in zip(qs, ks, strict=True):
                out.append((q1 * k1 + q2 * k2, q2 * k1 - q1 * k2))
        return out

    def logit(self, q_token: str, k_token: str, d: int, prec: int) -> arb:
        """The logit of ``q_token`` against ``k_token`` ``d`` positions back, as one Arb ball."""
        coefs = self.coefficients(q_token, k_token, prec)
        freqs = self.freqs(self.angle_prec(prec, d))
        with arb_precision(self.angle_prec(prec, d)):
            total = arb(0)
            for (a, b), th in zip(coefs, freqs, strict=True):
                if a.is_zero() and b.is_zero():
                    continue
                s, c = (d * th).sin_cos()
                total += a * c - b * s
            return total * _arb_float(self.scale)


def construction_logits(construction: Construction) -> ExactLogits:
    """:class:`ExactLogits` of a construction: plane vectors from its rules (query vectors scaled by
    the plane amplitudes), parameters substituted as exact rationals
    (:meth:`~ropeproof.theory._construction.Construction.exact_parameters`)."""
    c = construction
    params = c.exact_parameters()
    vecs: dict[tuple[str, str], list[tuple[sp.Expr, sp.Expr]]] = {}

    def sympy_vectors(token: str, which: str) -> list[tuple[sp.Expr, sp.Expr]]:
        if (token, which) not in vecs:
            planes = c.plane_vectors(c.token(token), which)  # type: ignore[arg-type]
            vecs[(token, which)] = [
                (sp.sympify(v[0]).subs(params), sp.sympify(v[1]).subs(params)) for v in planes
            ]
        return vecs[(token, which)]

    def vectors(token: str, which: str, _prec: int) -> list[tuple[arb, arb]]:
        return [(arb_value(x), arb_value(y)) for x, y in sympy_vectors(token, which)]

    def freqs(_prec: int) -> list[arb]:
        return [arb_value(sp.sympify(p.freq).subs(params)) for p in c.planes]

    max_freq = max(abs(c.numeric(p.freq)) for p in c.planes)
    return ExactLogits(
        c.name,
        tuple(c.token_names),
        len(c.planes),
        1.0,
        vectors,
        lambda token, which: tuple(sympy_vectors(token, which)),
        freqs,
        max_freq,
    )


def head_logits(head: CompiledHead) -> ExactLogits:
    """:class:`ExactLogits` of a head: ``e W_Q`` and ``e W_K`` summed in Arb from the exact float64
    entries (exact up to the ball's radius), the spec's plane dims and frequencies."""
    dims = head.spec.plane_dims
    freqs_f = [float(f) for f in head.spec.plane_freqs]

    def vectors(token: str, which: str, prec: int) -> list[tuple[arb, arb]]:
        e = head.W_E[head.token_index(token)]
        w = head.W_Q if which == "query" else head.W_K
        nz = np.nonzero(e)[0]
        out = []
        for a, b in dims:
            x, y = arb(0), arb(0)
            for i in nz:
                ei = _arb_float(e[i])
                x += ei * _arb_float(w[i, a])
                y += ei * _arb_float(w[i, b])
            out.append((x, y))
        return out

    products = {"query": head.W_E @ head.W_Q, "key": head.W_E @ head.W_K}
    exact = {
        "query": ~product_errors(head.W_E, head.W_Q).any(1),
        "key": ~product_errors(head.W_E, head.W_K).any(1),
    }

    def group(token: str, which: str) -> bytes:
        # equal exact vectors: the float product when it is exact, else the embedding row
        i = head.token_index(token)
        if exact[which][i]:
            return which.encode() + products[which][i].tobytes()
        return which.encode() + b"E" + head.W_E[i].tobytes()

    return ExactLogits(
        head.name,
        head.tokens,
        len(dims),
        float(head.scale),
        vectors,
        group,
        lambda _prec: [_arb_float(f) for f in freqs_f],
        max(abs(f) for f in freqs_f),
    )


def exact_logits(subject: Construction | CompiledHead) -> ExactLogits:
    """:func:`construction_logits` or :func:`head_logits`, by the subject's type."""
    if isinstance(subject, Construction):
        return construction_logits(subject)
    if isinstance(subject, CompiledHead):
        return head_logits(subject)
    raise InputError(f"subject must be a Construction or a CompiledHead, got {type(subject).__name__}")


# ------------------------------------------------------------------------------------ interval logits


def _down(x: np.ndarray) -> np.ndarray:
    return np.nextafter(x, -np.inf)


def _up(x: np.ndarray) -> np.ndarray:
    return np.nextafter(x, np.inf)


def _fast_ends(mid: np.ndarray, rad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float ends enclosing balls given ``float(mid)`` and ``float(rad)`` (each within an ulp of the
    ball's exact midpoint and radius): widened by two ulps of the midpoint and one of the radius."""
    r = _up(rad)
    slack = 2 * np.spacing(np.abs(mid))
    return _down(_down(mid - r) - slack), _up(_up(mid + r) + slack)


def _mul(a_lo, a_hi, b_lo, b_hi) -> tuple[np.ndarray, np.ndarray]:
    p = np.stack(np.broadcast_arrays(a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi))
    return _down(p.min(0)), _up(p.max(0))


def plane_enclosures(source: ExactLogits, planes: Sequence[int], max_d: int, prec: int) -> dict[int, tuple]:
    """Per plane ``k``: float ends ``(c_lo, c_hi, s_lo, s_hi)`` of ``cos(d theta_k)``, ``sin(d theta_k)``
    for ``d = 0 .. max_d`` (Arb ``sin_cos`` at :meth:`ExactLogits.angle_prec`)."""
    bits = source.angle_prec(prec, max_d)
    freqs = source.freqs(bits)
    out = {}
    with arb_precision(bits):
        for k in planes:
            th = freqs[k]
            cm, cr, sm, sr = (np.empty(max_d + 1) for _ in range(4))
            for d in range(max_d + 1):
                s, c = (d * th).sin_cos()
                cm[d], cr[d], sm[d], sr[d] = float(c.mid()), float(c.rad()), float(s.mid()), float(s.rad())
            c_lo, c_hi = _fast_ends(cm, cr)
            s_lo, s_hi = _fast_ends(sm, sr)
            out[k] = (
                np.maximum(c_lo, -1.0),
                np.minimum(c_hi, 1.0),
                np.maximum(s_lo, -1.0),
                np.minimum(s_hi, 1.0),
            )
    return out


def logit_intervals(
    source: ExactLogits,
    q_token: str,
    key_tokens: Sequence[str],
    trig: Mapping[int, tuple],
    prec: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)``, each ``[len(key_tokens), D]``: enclosures of the logits of ``q_token`` against each
    key token at distances ``0 .. D - 1`` (``trig`` from :func:`plane_enclosures`).

    Shapes: return [n_keys, D] (lo, hi)
    """
    size = len(next(iter(trig.values()))[0]) if trig else 1
    lo, hi = np.zeros((len(key_tokens), size)), np.zeros((len(key_tokens), size))
    scale = _arb_float(source.scale)
    for row, k_token in enumerate(key_tokens):
        for k, (a, b) in enumerate(source.coefficients(q_token, k_token, prec)):
            if a.is_zero() and b.is_zero():
                continue
            if k not in trig:
                raise InputError(f"plane {k} has a nonzero coefficient but no enclosure (internal)")
            with arb_precision(prec):
                a_lo, a_hi = arb_ends(a * scale)
                b_lo, b_hi = arb_ends(b * scale)
            c_lo, c_hi, s_lo, s_hi = trig[k]
            p = _mul(a_lo, a_hi, c_lo, c_hi)
            m = _mul(b_lo, b_hi, s_lo, s_hi)
            lo[row] = _down(_down(lo[row] + p[0]) - m[1])
            hi[row] = _up(_up(hi[row] + p[1]) - m[0])
    return lo, hi


# --------------------------------------------------------------------------------- family extremes


@dataclass
class FamilyEnclosure:
    """Enclosures ``[lo, hi]`` of ``gap_sup``, ``gap_inf``, ``margin_inf`` for ``n = 2 .. N`` (NaN where
    none is given: lengths with no input; ``gap_inf`` where the margin is not certified positive), and
    of the logit reading ``logit_inf``, ``logit_sup`` for offsets ``m = 0 .. N - 1``
    (:mod:`~ropeproof.verify.measure.exact._offset_extremes`).

    Shapes: n [N - 1]; bounds [N - 1] (per quantity: lo, hi)
    """

    subject: str
    family: Family
    n: np.ndarray
    bounds: dict[str, tuple[np.ndarray, np.ndarray]]
    prec: int
    seconds: float

    def ends(self, quantity: str) -> tuple[np.ndarray, np.ndarray]:
        if quantity not in self.bounds:
            raise InputError(f"quantity={quantity!r}; accepted: {sorted(self.bounds)}")
        return self.bounds[quantity]


def _group(source: ExactLogits, tokens: Sequence[str], which: str) -> list[list[str]]:
    groups: dict[Any, list[str]] = {}
    for t in tokens:
        groups.setdefault(source.group_key(t, which), []).append(t)
    return list(groups.values())


def _active_planes(source: ExactLogits, cases: Sequence[FamilyCase], prec: int) -> list[int]:
    """The planes where some case's query vector is not zero (the others add exact zeros)."""
    active: set[int] = set()
    for case in cases:
        for k, (x, y) in enumerate(source.vectors(case.query_tokens[0], "query", prec)):
            if not (x.is_zero() and y.is_zero()):
                active.add(k)
    return sorted(active)


def enclose_family(
    subject: Construction | CompiledHead,
    max_n: int,
    family: Family | None = None,
    prec: int = PREC,
    logits_only: bool = False,
) -> FamilyEnclosure:
    """Certified enclosures of the family extremes of ``subject`` for ``n = 2 .. max_n`` (module
    docstring). ``family`` defaults to the one the subject carries or records. ``logits_only``: only
    the logit reading by offset (the length extremes NaN, their sweeps spared)."""
    start = time.perf_counter()
    max_n = integer(max_n, "max_n", low=2, high=2**26 - 1)
    integer(prec, "prec", low=53, high=4096, note="bits")
    fam = family if family is not None else subject.family
    if fam is None:
        raise InputError(f"{subject.name!r} carries no input family; give family=")
    source = exact_logits(subject)
    fam.check_tokens(source.tokens, repr(subject.name))
    limit = fam.max_length()
    if limit is not None and max_n > limit:
        raise InputError(f"max_n={max_n} exceeds the longest length the {fam.name} family covers ({limit})")
    # a case whose query tokens have different query vectors is enclosed as one case per vector
    cases = []
    for family_case in fam.cases:
        split = _group(source, family_case.query_tokens, "query")
        for q_tokens in split:
            one = dataclasses.replace(family_case, query_tokens=tuple(q_tokens))
            cases.append(family_case if len(split) == 1 else one)
    planes = _active_planes(source, cases, prec)
    check_allocation(f"certified logit enclosures to n = {max_n}", 64 * max_n * (len(planes) + 4))
    trig = plane_enclosures(source, planes, max_n - 1, prec)
    low_tables, high_tables = [], []
    for case in cases:
        q = case.query_tokens[0]
        parts = []
        for tokens in (case.target_tokens, case.other_tokens, case.query_tokens):
            groups = _group(source, tokens, "key")
            lo, hi = logit_intervals(source, q, [g[0] for g in groups], trig, prec)
            parts.append((groups, lo, hi))
        (tg, t_lo, t_hi), (og, o_lo, o_hi), (sg, s_lo, s_hi) = parts
        # minima read the first arrays, maxima the *_upper ones (CaseTable.highs)
        low_tables.append(CaseTable(case, tg, og, sg, t_lo, o_lo, s_lo[:, 0], None, t_hi, o_hi, s_hi[:, 0]))
        high_tables.append(CaseTable(case, tg, og, sg, t_hi, o_hi, s_hi[:, 0], None, t_lo, o_lo, s_lo[:, 0]))
    n_arr = np.arange(2, max_n + 1)
    if logits_only:
        nan = np.full(max_n - 1, np.nan)
        bounds = {q: (nan, nan) for q in ("gap_sup", "gap_inf", "margin_inf")}
    else:
        # margin lo and gap_sup hi: minima of lo ends, maxima of hi ends (low_tables); the others swap
        a = exact_sweep(low_tables, max_n, gap_inf_limit=0)
        b = exact_sweep(high_tables, max_n, gap_inf_limit=0)
        with np.errstate(invalid="ignore"):
            margin = (_down(a.margin_inf), _up(b.margin_inf))
            sup = (_down(b.gap_sup), _up(a.gap_sup))
            positive = margin[0] > 0
            gap_inf = (np.where(positive, margin[0], np.nan), np.where(positive, margin[1], np.nan))
        bounds = {"gap_sup": sup, "gap_inf": gap_inf, "margin_inf": margin}
    # the logit reading by offset 0 .. max_n - 1: minima of lo / hi ends, maxima of hi / lo ends (no
    # subtraction: the logit enclosures are already rounded outward)
    low, high = offset_extremes(low_tables, max_n), offset_extremes(high_tables, max_n)
    bounds["logit_inf"] = (low.logit_inf, high.logit_inf)
    bounds["logit_sup"] = (high.logit_sup, low.logit_sup)
    return FamilyEnclosure(subject.name, fam, n_arr, bounds, prec, time.perf_counter() - start)


# ------------------------------------------------------------------------------------ witness values


def witness_value(
    subject: Construction | CompiledHead | ExactLogits,
    tokens: Sequence[str],
    first: int,
    second: int,
    prec: int = REFINE_PREC,
) -> tuple[float, float]:
    """Float ends enclosing ``l(first) - l(second)`` for the input ``tokens`` (query last): the logit
    of the query against position ``first`` minus that against position ``second``, formed as one
    difference of Arb balls at ``prec`` bits (so a near-tie keeps its digits)."""
    source = subject if isinstance(subject, ExactLogits) else exact_logits(subject)
    n = len(tokens)
    q = tokens[-1]
    la = source.logit(q, tokens[first], n - 1 - first, prec)
    lb = source.logit(q, tokens[second], n - 1 - second, prec)
    with arb_precision(source.angle_prec(prec, n)):
        return arb_ends(la - lb)


__all__ = [
    "ExactLogits",
    "FamilyEnclosure",
    "arb_value",
    "construction_logits",
    "enclose_family",
    "exact_logits",
    "head_logits",
    "logit_intervals",
    "plane_enclosures",
    "witness_value",
]
