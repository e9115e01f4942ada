"""Rotary position embeddings: rotation tables, the rotation, and pre-softmax logits.

Conventions (``docs/theory.md`` section 1): positions are 0-indexed; plane ``k`` of a vector at
position ``p`` is rotated by ``p * theta_k`` with ``rho(a) = [[cos a, -sin a], [sin a, cos a]]``;
the logit between query ``i`` and key ``j`` is ``scale * (R_i q_i) . (R_j k_j)``, which equals
``scale * q_i^T R(j - i) k_j`` and so depends on positions only through ``j - i``.

How it is computed. The dims are viewed in *halves order* ``(a_0 .. a_{K-1}, b_0 .. b_{K-1})``, plane
``k`` being ``(a_k, b_k)``, as a ``[..., 2, K]`` tensor ``y = [a; b]``; then ``out = y * [cos; cos]``
and ``t = y * [sin; -sin]``, and the halves of ``t`` are added crosswise: ``out_a += t_b``,
``out_b += t_a``. Entry by entry that is ``a cos + b (-sin)`` and ``b cos + a sin``: each product
and the sum rounded once, the same floating-point operations as ``a cos - b sin`` and
``a sin + b cos``, so the result does not depend on the layout, strides or size of the input (no
fused multiply-add). The half layout with full rotary is already in halves order, the interleaved
layout is rotated in its own pair order ``[..., K, 2]`` the same way, and any other arrangement
(partial rotary in the half layout) is gathered into halves order and back. The ``cos``/``sin``
tables are formed in float64 and cast, and are cached per (frequencies, positions, device, dtype)
for the default positions and for positions given as a short Python sequence
(:func:`rotation_table`).

Inputs. Integer tensors are promoted to float64 (exact for ``|value| < 2**53``); bool and complex
tensors raise :class:`~ropeproof.machinery._errors.InputError`, and so do positions beyond ``2**53`` in
magnitude (:data:`EXACT_POSITION_LIMIT`), whose offsets float64 cannot hold. ``check=True``
(default) verifies that the result is finite (:mod:`ropeproof.verify.kernel._finite`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import real
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._angles import offset_angles
from ropeproof.verify.kernel._finite import (
    all_finite,
    finite_screen,
    non_finite_input,
    overflow_error,
    passes,
)

Positions = torch.Tensor | Sequence[int] | Sequence[float] | None

CACHE_MAX_ENTRIES = 1 << 18
"""Tables with more than this many ``(position, plane)`` entries are computed afresh, not cached."""


@dataclass(frozen=True)
class RotationTable:
    """``cos(p * theta_k)`` and ``sin(p * theta_k)``, shape ``[..., n, K]`` (``K`` planes, in
    ``spec.plane_dims`` order), and the stacked factors the rotation multiplies by.

    Shapes: cos [..., n, head_dim/2]; sin [..., n, head_dim/2]
    """

    cos: torch.Tensor
    sin: torch.Tensor

    @functools.cached_property
    def halves(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``([cos; cos], [sin; -sin])`` stacked on a new axis ``-2``: ``[..., n, 2, K]``."""
        return torch.stack((self.cos, self.cos), -2), torch.stack((self.sin, -self.sin), -2)

    @functools.cached_property
    def pairs(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``([cos, cos], [sin, -sin])`` stacked on a new last axis: ``[..., n, K, 2]``."""
        return torch.stack((self.cos, self.cos), -1), torch.stack((self.sin, -self.sin), -1)


def as_real_tensor(x: object, name: str) -> torch.Tensor:
    """``x`` as a real floating tensor: integer tensors are promoted to float64; bool, complex and
    non-tensors raise :class:`InputError` naming ``name``."""
    if not isinstance(x, torch.Tensor):
        raise InputError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dtype.is_complex or x.dtype == torch.bool:
        raise InputError(f"{name} must hold real numbers (a floating or integer dtype), got dtype {x.dtype}")
    if not x.dtype.is_floating_point:
        return x.to(torch.float64)
    return x


EXACT_POSITION_LIMIT = 2**53
"""The largest ``|position|`` accepted: positions are integers, and a float64 holds every integer up to
``2^53`` exactly (a Python float ``2^53 + 1`` would already be ``2^53``, its offset to ``2^53`` read as 0)."""


def _range_error(name: str, largest: object) -> InputError:
    return InputError(
        f"{name} must satisfy |p| <= 2^53 = {EXACT_POSITION_LIMIT}, got {largest}: float64 holds integers "
        "exactly only up to 2^53; subtract a common shift (the logit depends only on j - i)"
    )


def _integer_array(positions: object, name: str) -> np.ndarray:
    """A Python sequence of positions as an int64 numpy array, every entry checked exactly (never
    through float32, and no integer above ``2^53`` rounded on the way)."""
    try:
        arr = np.asarray(positions)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{name} must be a tensor or a sequence of integers: {exc}") from None
    finite = arr[np.isfinite(arr)] if arr.dtype.kind == "f" else arr
    if arr.dtype.kind == "O" or (arr.dtype.kind == "f" and finite.size and np.abs(finite).max() >= 2.0**53):
        # Python ints past int64, or ints and floats mixed near 2^53 (where a float64 would round them)
        try:
            exact = np.asarray(positions, dtype=object)
            flat = [v.item() if isinstance(v, np.generic) else v for v in exact.reshape(-1).tolist()]
        except (TypeError, ValueError) as exc:
            raise InputError(f"{name} must be a tensor or a sequence of integers: {exc}") from None
        for v in flat:
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise InputError(f"{name} must be integers, got {type(v).__name__} {v!r}")
            if isinstance(v, float) and not math.isfinite(v):
                raise InputError(f"{name} must be finite")
            if isinstance(v, float) and v != math.floor(v):
                raise InputError(
                    f"{name} must be integers (positions are 0-indexed token indices), got {v!r}"
                )
            if abs(v) > EXACT_POSITION_LIMIT:
                raise _range_error(name, f"{v:.17g}" if isinstance(v, float) else v)
        return np.array([int(v) for v in flat], dtype=np.int64).reshape(exact.shape)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise InputError(f"{name} must be integers, got dtype {arr.dtype}")
    if arr.dtype.kind in "iu" and arr.size:
        for v in (int(arr.max()), int(arr.min())):
            if abs(v) > EXACT_POSITION_LIMIT:
                raise _range_error(name, v)
        return arr.astype(np.int64)
    return arr.astype(np.float64)


def _integer_positions(pos: torch.Tensor, name: str) -> torch.Tensor:
    """An integer-valued tensor of positions as int64, or :class:`InputError` naming ``name``."""
    if pos.dtype.is_complex or pos.dtype == torch.bool:
        raise InputError(f"{name} must be integers, got dtype {pos.dtype}")
    if pos.dtype in (torch.uint32, torch.uint64):
        raise InputError(f"{name} must be a signed integer or floating tensor, got dtype {pos.dtype}")
    if pos.dtype.is_floating_point:
        f = pos.to(torch.float64)
        if f.numel():
            if not bool(torch.isfinite(f).all()):
                raise InputError(f"{name} must be finite")
            if not bool((f == torch.floor(f)).all()):
                bad = f[f != torch.floor(f)][0].item()
                raise InputError(
                    f"{name} must be integers (positions are 0-indexed token indices), got {bad!r}"
                )
            largest = f.abs().max().item()
            if largest > EXACT_POSITION_LIMIT:
                raise _range_error(name, f"{largest:.17g}")
        return f.to(torch.int64)
    pos = pos.to(torch.int64)
    if pos.numel() and bool(((pos > EXACT_POSITION_LIMIT) | (pos < -EXACT_POSITION_LIMIT)).any()):
        outside = pos[(pos > EXACT_POSITION_LIMIT) | (pos < -EXACT_POSITION_LIMIT)][0].item()
        raise _range_error(name, outside)
    return pos


def _positions(positions: Positions, n: int, device: torch.device, name: str = "positions") -> torch.Tensor:
    """Positions as an int64 tensor on ``device``, last dimension ``n``: every entry a finite integer with
    ``|p| <= 2^53`` (:class:`InputError` naming ``name`` otherwise). Python sequences are read exactly
    (ints as ints, floats as float64), never through torch's float32 default."""
    if positions is None:
        return torch.arange(n, device=device, dtype=torch.int64)
    if isinstance(positions, torch.Tensor):
        pos = _integer_positions(positions.to(device), name)
    else:
        pos = _integer_positions(
            torch.from_numpy(np.ascontiguousarray(_integer_array(positions, name))), name
        )
        pos = pos.to(device)
    if pos.ndim == 0 or pos.shape[-1] != n:
        raise InputError(f"{name} must have last dimension n={n}, got shape {tuple(pos.shape)}")
    return pos


def common_origin(
    given: Sequence[tuple[Positions, int]], device: torch.device, names: Sequence[str] | None = None
) -> list[Positions]:
    """The positions of ``given`` (``(positions, n)`` pairs; ``None``: ``0 .. n-1``) all shifted by one
    integer ``c``, their smallest entry (``0`` when a default is among them); ``names`` name them in
    errors (default ``positions``).

    Logits depend on positions only through ``j - i`` (``docs/theory.md`` section 1), so a common shift
    changes no logit, and it is exact: positions are int64 (:func:`_positions` refuses anything but
    integers of magnitude at most ``2^53``), so the shifted positions lie in ``0 .. 2^54``. It keeps the
    angles ``p theta`` small, so positions near ``2^53`` whose offsets are small give the logits of those
    offsets. When ``c = 0`` the positions are returned as given (so cached tables stay cached). Pass the
    result to :func:`rotation_table` with ``shifted=True``.

    The i-th result has the shape of the i-th positions, ``[..., n_i]`` (``None`` stays ``None``).
    """
    names = list(names) if names is not None else ["positions"] * len(given)
    tensors = [
        None if p is None else _positions(p, n, device, name)
        for (p, n), name in zip(given, names, strict=True)
    ]
    lows = [0 if t is None else (int(t.min()) if t.numel() else 0) for t in tensors]
    shift = min(lows) if lows else 0
    if shift == 0:
        return [p for p, _ in given]
    return [
        (torch.arange(n, device=device, dtype=torch.int64) if t is None else t) - shift
        for t, (_, n) in zip(tensors, given, strict=True)
    ]


def _build_table(
    freqs: tuple[float, ...], pos: torch.Tensor, device: torch.device, dtype: torch.dtype
) -> RotationTable:
    angles = offset_angles(pos, freqs)  # [..., n, K], m * theta reduced mod 2 pi in float64
    return RotationTable(torch.cos(angles).to(dtype), torch.sin(angles).to(dtype))


@functools.lru_cache(maxsize=32)
def _cached_table(
    freqs: tuple[float, ...], key: int | tuple[int, ...], device: torch.device, dtype: torch.dtype
) -> RotationTable:
    if isinstance(key, int):
        pos = torch.arange(key, device=device, dtype=torch.int64)
    else:
        pos = torch.tensor(key, device=device, dtype=torch.int64)
    return _build_table(freqs, pos, device, dtype)


def _cache_key(positions: Positions, n: int, planes: int) -> int | tuple[int, ...] | None:
    """The cache key of ``positions`` (``n`` for the default, a tuple of ints for a short 1-D sequence of
    integers of magnitude at most ``2^53``), or ``None`` when the table is not cached (tensors, nested or
    long sequences, anything :func:`_positions` must check)."""
    if n * planes > CACHE_MAX_ENTRIES:
        return None
    if positions is None:
        return n
    numbers = isinstance(positions, range | list | tuple) and len(positions) == n
    if numbers and all(_exact_integer(p) for p in positions):
        return tuple(int(p) for p in positions)
    return None


def _exact_integer(p: object) -> bool:
    """Whether ``p`` is a Python int, or an integer-valued float, of magnitude at most ``2^53``."""
    if isinstance(p, bool) or not isinstance(p, int | float):
        return False
    if isinstance(p, float) and not (math.isfinite(p) and p == math.floor(p)):
        return False
    return abs(p) <= EXACT_POSITION_LIMIT


@dataclass(frozen=True)
class PlaneLayout:
    """What the rotation needs from a spec: the plane frequencies, how the planes sit in the dims
    (``"interleaved"``: plane ``k`` at ``(2k, 2k+1)``; ``"halves"``: at ``(k, K + k)``; ``"gather"``:
    anything else), and the halves order (:func:`halves_order`)."""

    freqs: tuple[float, ...]
    kind: str
    order: tuple[int, ...]


@functools.lru_cache(maxsize=256)
def plane_layout(spec: RopeSpec) -> PlaneLayout:
    """The :class:`PlaneLayout` of ``spec`` (cached: specs are frozen and hashable)."""
    dims = spec.plane_dims
    order = tuple(a for a, _ in dims) + tuple(b for _, b in dims)
    if dims == [(2 * k, 2 * k + 1) for k in range(len(dims))]:
        kind = "interleaved"
    elif order == tuple(range(spec.head_dim)):
        kind = "halves"
    else:
        kind = "gather"
    return PlaneLayout(tuple(float(t) for t in spec.plane_freqs), kind, order)


def rotation_table(
    spec: RopeSpec,
    positions: Positions,
    n: int,
    device: torch.device,
    dtype: torch.dtype,
    *,
    shifted: bool = False,
) -> RotationTable:
    """The :class:`RotationTable` of ``spec`` at ``positions`` (default ``0 .. n-1``), ``[..., n, K]``.

    Angles ``p * theta_k`` are formed and reduced in float64 whatever ``dtype`` is, then cast, so
    that large positions (``p * theta`` of order 1e6) keep their accuracy in low-precision checks.
    Cached (least recently used, 32 tables) for the default positions and short position sequences;
    the cached tensors are shared, so treat them as read-only.

    ``shifted``: ``positions`` come from :func:`common_origin` (checked already; an int64 tensor there
    may span up to ``2^54``, the offsets between positions of magnitude up to ``2^53``, whose angles
    :func:`~ropeproof.verify.kernel._angles.offset_angles` forms exactly).

    Shapes: positions [..., n]; return.cos [..., n, head_dim/2]; return.sin [..., n, head_dim/2]
    """
    freqs = plane_layout(spec).freqs
    if shifted and isinstance(positions, torch.Tensor) and positions.dtype == torch.int64:
        if positions.ndim == 0 or positions.shape[-1] != n:
            raise InputError(f"positions must have last dimension n={n}, got shape {tuple(positions.shape)}")
        return _build_table(freqs, positions.to(device), device, dtype)
    key = _cache_key(positions, n, len(freqs))
    if key is None:
        return _build_table(freqs, _positions(positions, n, device), device, dtype)
    return _cached_table(freqs, key, device, dtype)


def rotation_cos_sin(
    spec: RopeSpec, positions: Positions, n: int, device: torch.device, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos(p * theta_k)`` and ``sin(p * theta_k)``, shape ``[..., n, head_dim/2]`` (see
    :func:`rotation_table`).

    Shapes: positions [..., n]; return [..., n, head_dim/2] (cos, sin)
    """
    table = rotation_table(spec, positions, n, device, dtype)
    return table.cos, table.sin


def halves_order(spec: RopeSpec) -> tuple[int, ...]:
    """The dims in halves order ``(a_0, .., a_{K-1}, b_0, .., b_{K-1})`` for planes ``(a_k, b_k)``."""
    return plane_layout(spec).order


@functools.lru_cache(maxsize=64)
def _order_index(order: tuple[int, ...], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    forward = torch.tensor(order, dtype=torch.long)
    inverse = torch.empty_like(forward)
    inverse[forward] = torch.arange(len(order))
    return forward.to(device), inverse.to(device)


def _rotate_stacked(y: torch.Tensor, c: torch.Tensor, s: torch.Tensor, axis: int) -> torch.Tensor:
    """``out = y * c``, ``t = y * s``, then ``out[0] += t[1]`` and ``out[1] += t[0]`` along ``axis``
    (size 2): four kernels, each product and sum rounded once."""
    out = y * c
    t = y * s
    out.select(axis, 0).add_(t.select(axis, 1))
    out.select(axis, 1).add_(t.select(axis, 0))
    return out


def rotate_halves(y: torch.Tensor, table: RotationTable, per_position: int = 0) -> torch.Tensor:
    """Rotate ``y`` of shape ``[..., n, 2K]`` in halves order (plane ``k`` at dims ``(k, K + k)``) by
    ``table`` (``[..., n, K]``). With ``per_position = m > 0``, ``y`` is ``[..., n, m, 2K]``: ``m``
    vectors at each position (q and k together), all rotated by that position's angles. Returns a
    new contiguous tensor. No validation: the public functions call it.

    Shapes: y [..., n, head_dim] (or [..., n, m, head_dim]); return [..., n, head_dim]
    """
    c, s = table.halves
    if per_position:
        c, s = c.unsqueeze(-3), s.unsqueeze(-3)
    return _rotate_stacked(y.unflatten(-1, (2, -1)), c, s, -2).flatten(-2)


def rotate_interleaved(y: torch.Tensor, table: RotationTable) -> torch.Tensor:
    """Rotate ``y`` of shape ``[..., 2K]`` with plane ``k`` at dims ``(2k, 2k+1)`` by ``table``.

    Shapes: y [..., n, head_dim]; return [..., n, head_dim]
    """
    c, s = table.pairs
    return _rotate_stacked(y.unflatten(-1, (-1, 2)), c, s, -1).flatten(-2)


def _check_shape(x: torch.Tensor, spec: RopeSpec, name: str) -> None:
    if x.ndim < 2:
        raise InputError(f"{name} must have shape [..., n, head_dim], got {tuple(x.shape)}")
    if x.shape[-1] != spec.head_dim:
        raise InputError(f"{name} has last dimension {x.shape[-1]}, but spec.head_dim={spec.head_dim}")
    if x.shape[-2] == 0:
        raise InputError("the sequence is empty; n must be >= 1")


def _rotate(x: torch.Tensor, spec: RopeSpec, positions: Positions, shifted: bool = False) -> torch.Tensor:
    table = rotation_table(spec, positions, x.shape[-2], x.device, x.dtype, shifted=shifted)
    return rotate_by_table(x, spec, table)


def rotate_by_table(x: torch.Tensor, spec: RopeSpec, table: RotationTable) -> torch.Tensor:
    """Rotate ``x`` of shape ``[..., n, head_dim]`` by ``table`` (``[..., n, K]``, from
    :func:`rotation_table` for ``spec``), whatever ``spec``'s plane layout: what :func:`apply_rope` and
    :func:`rope_logits` do once they have the table, for callers that reuse one table over many
    rotations. No validation.

    Shapes: x [..., n, head_dim]; return [..., n, head_dim]
    """
    layout = plane_layout(spec)
    if layout.kind == "interleaved":
        return rotate_interleaved(x, table)
    if layout.kind == "halves":
        return rotate_halves(x, table)
    forward, inverse = _order_index(layout.order, x.device)
    return rotate_halves(x.index_select(-1, forward), table).index_select(-1, inverse)


def positions_error(name: str, positions: Positions) -> InputError | None:
    """An :class:`InputError` when ``positions`` holds a NaN or inf (``name`` names it), else ``None``."""
    if positions is None:
        return None
    try:
        _positions(positions, _last_dim(positions), torch.device("cpu"), name)
    except InputError as exc:
        return exc
    return None


def _last_dim(positions: Positions) -> int:
    shape = tuple(positions.shape) if isinstance(positions, torch.Tensor) else np.shape(positions)
    return int(shape[-1]) if shape else 0


def apply_rope(
    x: torch.Tensor, spec: RopeSpec, positions: Positions = None, *, check: bool = True
) -> torch.Tensor:
    """Rotate ``x`` of shape ``[..., n, head_dim]``: plane ``k`` at position ``p`` by ``p * theta_k``.

    ``positions`` (default ``0 .. n-1``) has shape ``[n]`` or broadcasts against ``x[..., :, 0]``.
    Floating ``x`` keeps its dtype and device; integer ``x`` is promoted to float64. With ``check``
    the result is verified finite (one synchronisation), else :class:`InputError` names the bad input
    or :class:`~ropeproof.machinery._errors.NonFiniteError` reports an overflow.

    Shapes: x [..., n, head_dim]; positions [n]; return [..., n, head_dim]
    """
    x = as_real_tensor(x, "x")
    _check_shape(x, spec, "x")
    out = _rotate(x, spec, positions)
    if check and not passes(finite_screen(out), lambda: all_finite(out)):
        raise (
            non_finite_input({"x": x})
            or positions_error("positions", positions)
            or overflow_error("the rotated x", x.dtype, {"x": x})
        )
    return out


def rope_logits(
    q: torch.Tensor,
    k: torch.Tensor,
    spec: RopeSpec,
    scale: float = 1.0,
    q_positions: Positions = None,
    k_positions: Positions = None,
    *,
    check: bool = True,
) -> torch.Tensor:
    """Pre-softmax logits ``scale * (R_i q_i) . (R_j k_j)``, shape ``[..., n_q, n_k]``, unmasked.

    ``q`` is ``[..., n_q, head_dim]`` at positions ``q_positions`` (default ``0 .. n_q-1``); ``k`` is
    ``[..., n_k, head_dim]`` at ``k_positions`` (default ``0 .. n_k-1``). Both sets of positions are
    first shifted by one common integer (:func:`common_origin`: exact, and no logit changes), so the
    angles stay as small as the positions' spread allows. Integer tensors are promoted
    to float64; after that ``q`` and ``k`` must share dtype and device. With ``check`` the logits are
    verified finite (one synchronisation), else :class:`InputError` names the bad input or
    :class:`~ropeproof.machinery._errors.NonFiniteError` reports an overflow.

    Shapes: q [..., n_q, head_dim]; k [..., n_k, head_dim]; q_positions [n_q]; k_positions [n_k];
        return [..., n_q, n_k]
    """
    q, k = as_real_tensor(q, "q"), as_real_tensor(k, "k")
    if q.dtype != k.dtype or q.device != k.device:
        raise InputError(
            f"q and k must share dtype and device, got {q.dtype}/{q.device} and {k.dtype}/{k.device}"
        )
    scale = real(scale, "scale")
    _check_shape(q, spec, "q")
    _check_shape(k, spec, "k")
    same = k is q and k_positions is q_positions
    qp, kp = common_origin(
        [(q_positions, q.shape[-2]), (k_positions, k.shape[-2])], q.device, ["q_positions", "k_positions"]
    )
    rq = _rotate(q, spec, qp, shifted=True)
    rk = rq if same else _rotate(k, spec, kp, shifted=True)
    logits = scale * (rq @ rk.transpose(-1, -2))
    if check and not passes(finite_screen(logits), lambda: all_finite(logits)):
        raise (
            non_finite_input({"q": q, "k": k})
            or positions_error("q_positions", q_positions)
            or positions_error("k_positions", k_positions)
            or overflow_error("the logits", q.dtype, {"q": q, "k": k})
        )
    return logits
