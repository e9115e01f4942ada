"""Per-layer attention margins of a compiled multi-hop model: exactly (float64, with the attaining input)
and enclosed in intervals (Arb balls, ``flint.arb``) from closed forms.

Queries and keys read only the tokens' original content (``docs/theory.md`` section 6), so layer
``l``'s logit between two positions depends only on their tokens and their distance, exactly as for
a single head: :func:`layer_family` states which rows of layer ``l`` must pick their target (the
*chain rows*; the other positions may attend anywhere) as a
:class:`~ropeproof.verify.measure.exact._families.Family`
with the query at ``n - 1``, and :func:`layer_sweep` runs
:func:`~ropeproof.verify.measure.exact._discrepancy.exact_sweep` on the layer's head. A chain row at position
``p < n - 1`` sees a subset of the keys a row at ``n - 1`` sees, and the families only grow with ``n``,
so ``margin_inf(n)`` (at scale 1) lower-bounds every chain row of every input of length ``<= n``.

Chain rows by layer kind:

- **Index** (planes ``theta_k``, ``a_k``): integer ``s`` with its target ``s`` back (any token there);
  a letter (the ``s = 0`` pointer) with itself as target. Keys are all ``v``, so
  ``margin_inf(n) = min_{1 <= m <= n-1} g(m)``, ``g(m) = sum_k 2 a_k sin(m theta_k / 2)^2``.
- **Reflexive, positional**: every token with itself as target; the same ``min_{m <= n-1} g(m)``.
- **Retrieval** (one-plane code, ``omega = 2 pi / |ALPH|``): a (letter, letter) pair ``(X, Y)``,
  ``X != Y``, with the one earlier pair whose left letter is ``Y`` as target and every other pair's left
  letter ``!= Y``; a (letter, integer) pair ``(L, s)`` with itself as target and no other pair with
  left letter ``L``. With ``T(d) = cos(d theta)``, ``O(d) = max_{c=1..A-1} cos(c omega - d theta)``,
  ``S = max_c cos(c omega)``:

      margin_inf(n) = min( min_{d_t <= n-1} [T(d_t) - max(S, max_{d != d_t} O(d))],
                           1 - max_{d <= n-1} O(d) ).

  The orthogonal code has ``T(d) = cos(d theta)``, ``O(d) = |sin(d theta)|`` (a plane-mate a quarter
  turn away; letters on other planes score 0), ``S = 0``. With a frequency ``theta_i`` per plane, the rows
  of a letter on plane ``i`` see only ``theta_i`` (every other plane scores 0), so the layer's margin is
  the smallest of the one-frequency margins over its planes.
- **Reflexive, symbolic** (one plane at ``theta``, the ``self`` code of ``V`` tokens): every token with
  itself as target; a copy of the same token ``d`` back scores ``cos(d theta)``, so
  ``margin_inf(n) = a (1 - max_{d <= n-1} max_{c=0..V-1} cos(2 pi c / V - d theta))`` (0 at ``theta = 0``:
  a repeated token ties).

The enclosures follow :mod:`ropeproof.verify.measure.exact._certified` (``flint.arb`` balls for every
transcendental value, outward-rounded float64 after that; :func:`enclose_gaps` keeps ``g``'s enclosures
per spectrum) and are at scale 1: multiply by the logit scale.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from flint import arb

from ropeproof.constructions._multihop_compile import CompiledModel, LayerInfo
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.verify.measure.exact._certified import (
    arb_ends,
    arb_precision,
    enclose_index_gaps,
    enclose_retrieval_terms,
    prefix_min_interval,
    retrieval_margin_interval,
)
from ropeproof.verify.measure.exact._discrepancy import SweepResult, build_tables, exact_sweep
from ropeproof.verify.measure.exact._families import Family, FamilyCase

Enclosure = tuple[np.ndarray, np.ndarray]
"""``(lo, hi)`` float64 arrays, row ``r`` enclosing the value at ``n = r + 2``."""


class RowFamily(Family):
    """A layer's chain-row family: every length is covered (a fixed target distance ``s`` larger than
    ``n - 1`` only means that row type does not occur at length ``n``)."""

    def max_length(self) -> int | None:
        return None


def _pair_parts(model: CompiledModel) -> tuple[list[str], list[str], list[str], dict[str, str]]:
    """``(ll pairs, li pairs, all tokens, left letter of each pair)`` of a letter-task model."""
    left = {t: t[0] for t in model.tokens}
    ll = [t for t, r in zip(model.tokens, model.token_rules, strict=True) if r == "pair_ll"]
    li = [t for t, r in zip(model.tokens, model.token_rules, strict=True) if r == "pair_li"]
    return ll, li, list(model.tokens), left


def layer_family(model: CompiledModel, layer: int) -> RowFamily:
    """The chain rows of layer ``layer`` as a family with the query at ``n - 1`` (module docstring)."""
    info = _info(model, layer)
    everything = tuple(model.tokens)
    rules = model.token_rules
    if info.kind == "index":
        letters = tuple(t for t, r in zip(everything, rules, strict=True) if r == "letter")
        ints = [(t, int(t)) for t, r in zip(everything, rules, strict=True) if r == "integer"]
        cases = [FamilyCase(f"s={s}", (t,), everything, everything, s) for t, s in ints]
        cases.append(FamilyCase("letter (s = 0)", letters, letters, everything, 0))
        return RowFamily("index-rows", tuple(cases), "integer s: target s back; a letter: itself")
    if info.kind == "retrieval":
        ll, li, _all, left = _pair_parts(model)
        cases = []
        for y in sorted({left[t] for t in everything}):
            queries = tuple(t for t in ll if t[1:] == y and left[t] != y)
            targets = tuple(t for t in everything if left[t] == y)
            others = tuple(t for t in everything if left[t] != y)
            if queries:
                cases.append(FamilyCase(f"(X,{y})", queries, targets, others, None))
            own = tuple(t for t in li if left[t] == y)
            if own:
                cases.append(FamilyCase(f"({y},s) itself", own, own, others, 0))
        return RowFamily("retrieval-rows", tuple(cases), "(X, Y): the one earlier (Y, *); (L, s): itself")
    if info.variant == "positional":
        case = FamilyCase("itself", everything, everything, everything, 0)
        return RowFamily("reflexive-rows", (case,), "every token: itself")
    cases = [FamilyCase(f"self={t}", (t,), (t,), everything, 0) for t in everything]
    return RowFamily("reflexive-symbolic-rows", tuple(cases), "every token: itself (copies may repeat)")


def _info(model: CompiledModel, layer: int) -> LayerInfo:
    if not isinstance(model, CompiledModel):
        raise InputError(f"model must be a CompiledModel, got {type(model).__name__}")
    if not 0 <= layer < model.n_layers:
        raise InputError(f"layer={layer} is out of range; the model has layers 0..{model.n_layers - 1}")
    return model.layer_info[layer]


def layer_sweep(model: CompiledModel, layer: int, max_n: int) -> SweepResult:
    """Exact (float64) ``margin_inf`` of layer ``layer``'s chain rows at scale 1, for ``n = 2 .. max_n``,
    with the attaining inputs (:meth:`SweepResult.witness`)."""
    _info(model, layer)
    head = dataclasses.replace(model.layers[layer], scale=1.0)
    return exact_sweep(build_tables(head, layer_family(model, layer), max_n), max_n, gap_inf_limit=0)


GAP_CACHE_BYTES = 256 * 2**20
"""How many bytes of enclosures :func:`enclose_gaps` keeps, over the most recently used ``(freqs, amps)``
spectra (the one just used is kept whatever its size)."""
_GAP_CACHE: OrderedDict[tuple[tuple[float, ...], tuple[float, ...]], tuple[np.ndarray, np.ndarray]] = (
    OrderedDict()
)


def enclose_gaps(freqs: Sequence[float], amps: Sequence[float], max_m: int) -> Enclosure:
    """Enclosures of ``g(m) = sum_k 2 a_k sin(m theta_k / 2)^2`` for ``m = 1 .. max_m``:
    :func:`~ropeproof.verify.measure.exact._certified.enclose_index_gaps` (Arb balls, rounded outward),
    kept for the most recently used ``(freqs, amps)`` of the process (:data:`GAP_CACHE_BYTES`) and
    extended on demand (``first_m``: each ``g(m)`` is enclosed on its own, so an extension encloses it
    as one call would)."""
    f = tuple(float(x) for x in freqs)
    a = tuple(float(x) for x in amps)
    if not f or len(f) != len(a) or any(x < 0 for x in a) or not np.all(np.isfinite(f + a)):
        raise InputError("freqs and amps must be equal-length, finite, non-empty; amps >= 0")
    key = (f, a)
    lo, hi = _GAP_CACHE.get(key, (np.empty(0), np.empty(0)))
    if lo.size < max_m:
        new_lo, new_hi = enclose_index_gaps(f, a, max_m, first_m=lo.size + 1)
        lo, hi = np.concatenate([lo, new_lo]), np.concatenate([hi, new_hi])
    _GAP_CACHE[key] = (lo, hi)
    _GAP_CACHE.move_to_end(key)
    kept = sum(x.nbytes for pair in _GAP_CACHE.values() for x in pair)
    while len(_GAP_CACHE) > 1 and kept > GAP_CACHE_BYTES:
        kept -= sum(x.nbytes for x in _GAP_CACHE.popitem(last=False)[1])
    return lo[:max_m].copy(), hi[:max_m].copy()


def _down(x: np.ndarray) -> np.ndarray:
    return np.nextafter(x, -np.inf)


def _up(x: np.ndarray) -> np.ndarray:
    return np.nextafter(x, np.inf)


def _scaled(enc: Enclosure, a: float) -> Enclosure:
    lo, hi = enc
    p, q = lo * a, hi * a
    return _down(np.minimum(p, q)), _up(np.maximum(p, q))


def _one_minus_prefix_max(o_lo: np.ndarray, o_hi: np.ndarray) -> Enclosure:
    """Enclosure of ``1 - max_{d <= r + 1} O(d)`` per row ``r``."""
    return _down(1.0 - np.maximum.accumulate(o_hi)), _up(1.0 - np.maximum.accumulate(o_lo))


def _orthogonal_terms(theta: float, max_d: int, prec: int) -> tuple[Enclosure, Enclosure]:
    """Enclosures of ``T(d) = cos(d theta)`` and ``O(d) = |sin(d theta)|`` for ``d = 1 .. max_d``: Arb's
    ``sin_cos`` of the exact ``d theta`` at ``prec`` bits, rounded outward by
    :func:`~ropeproof.verify.measure.exact._certified.arb_ends`; ``|.|`` of an enclosure ``[lo, hi]`` is
    ``[lo, hi]``, ``[-hi, -lo]`` or ``[0, max(-lo, hi)]`` by the signs of its ends."""
    t, o = np.empty((2, max_d)), np.empty((2, max_d))
    with arb_precision(prec):
        th = arb(float(theta))
        for d in range(1, max_d + 1):
            sin_d, cos_d = (d * th).sin_cos()
            t[:, d - 1] = arb_ends(cos_d)
            lo, hi = arb_ends(sin_d)
            if lo >= 0:
                o[:, d - 1] = (lo, hi)
            elif hi <= 0:
                o[:, d - 1] = (-hi, -lo)
            else:
                o[:, d - 1] = (0.0, max(-lo, hi))
    return (t[0], t[1]), (o[0], o[1])


def layer_margin_enclosure(
    info: LayerInfo, max_n: int, prec: int = 80, vocab_size: int | None = None
) -> Enclosure:
    """Enclosure of the layer's chain-row ``margin_inf(n)`` at scale 1 for ``n = 2 .. max_n`` (closed forms
    in the module docstring; ``vocab_size`` is the ``self`` code's size, needed for symbolic Reflexive)."""
    max_n = integer(max_n, "max_n", low=2)
    if info.kind == "index" or (info.kind == "reflexive" and info.variant == "positional"):
        return prefix_min_interval(*enclose_gaps(info.freqs, info.amps, max_n - 1))
    if info.kind == "retrieval":
        if any(a != 1.0 for a in info.amps):
            raise InputError("a Retrieval layer's planes must each have amplitude 1")
        if info.code == "one-plane":
            if len(info.freqs) != 1:
                raise InputError("a one-plane Retrieval layer has exactly one plane")
            t, o, s = enclose_retrieval_terms(info.alphabet, info.freqs[0], max_n - 1, prec)
            ll_lo, ll_hi, _ = retrieval_margin_interval(t, o, s)
            li_lo, li_hi = _one_minus_prefix_max(*o)
            return np.minimum(ll_lo, li_lo), np.minimum(ll_hi, li_hi)
        if info.code != "orthogonal":
            raise InputError(f"letter code {info.code!r} has no enclosure; accepted: one-plane, orthogonal")
        lo, hi = np.full(max_n - 1, np.inf), np.full(max_n - 1, np.inf)
        for theta in sorted(set(info.freqs)):  # a letter's rows see only its own plane
            t, o = _orthogonal_terms(theta, max_n - 1, prec)
            ll_lo, ll_hi, _ = retrieval_margin_interval(t, o, (0.0, 0.0))
            li_lo, li_hi = _one_minus_prefix_max(*o)
            lo, hi = np.minimum(lo, np.minimum(ll_lo, li_lo)), np.minimum(hi, np.minimum(ll_hi, li_hi))
        return lo, hi
    if len(info.freqs) != 1:
        raise InputError("a symbolic Reflexive layer is enclosed only with one plane")
    if vocab_size is None:
        raise InputError("vocab_size (the self code's size, >= 2) is needed for a symbolic Reflexive layer")
    vocab_size = integer(vocab_size, "vocab_size", low=2, note="the self code's size")
    t, o, _s = enclose_retrieval_terms(vocab_size, info.freqs[0], max_n - 1, prec)
    worst = (np.maximum(t[0], o[0]), np.maximum(t[1], o[1]))  # c = 0 (a copy) or c != 0
    return _scaled(_one_minus_prefix_max(*worst), info.amps[0])


def model_margin_enclosures(model: CompiledModel, max_n: int, prec: int = 80) -> list[Enclosure]:
    """:func:`layer_margin_enclosure` of every layer (computed once per distinct layer)."""
    done: dict[LayerInfo, Enclosure] = {}
    out = []
    for info in model.layer_info:
        if info not in done:
            done[info] = layer_margin_enclosure(info, max_n, prec, model.vocab_size)
        out.append(done[info])
    return out


def distinct_layers(model: CompiledModel) -> list[int]:
    """The first layer of every distinct :class:`LayerInfo`, in order."""
    seen: set[LayerInfo] = set()
    out = []
    for i, info in enumerate(model.layer_info):
        if info not in seen:
            seen.add(info)
            out.append(i)
    return out


def margins_at(enclosures: Sequence[Enclosure], n: int) -> list[tuple[float, float]]:
    """Each layer's enclosure at length ``n``."""
    return [(float(lo[n - 2]), float(hi[n - 2])) for lo, hi in enclosures]
