"""A head given as a function of its layer inputs, with the kind of row it returns made explicit.

The positional/symbolic checks take a head either as a
:class:`~ropeproof.verify.kernel._attention.RopeAttention` or as a function
``f(x: [batch, n, d_model]) -> row`` returning the last token's row. Two kinds of row exist, and
confusing them gives plausible wrong numbers (an attention-row score computed on logits):

- ``"attention"``: the softmax output, a probability vector over positions ``0 .. n-1`` (what
  :func:`ropeproof.verify.measure.ps._scores.ps_scores` needs);
- ``"logit"``: the pre-softmax logits (what :mod:`ropeproof.verify.measure.ps._exact` needs).

:class:`RowFunction` carries the kind, so a check refuses the wrong one before calling it. Plain
callables are still accepted; their attention rows are then validated by
:func:`check_probability_rows` on every call.

Row shapes: ``[batch, n]`` (every position, the query's own entry last) or ``[batch, n - 1]`` (the
non-query positions) for one head; ``[batch, H, n]`` or ``[batch, H, n - 1]`` for a function that
returns ``H`` heads at once (``n_heads=H``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer

RowKind = Literal["attention", "logit"]
ROW_KINDS: tuple[str, ...] = ("attention", "logit")


@dataclass(frozen=True)
class RowFunction:
    """``fn(x: [batch, n, d_model]) -> rows``, the last token's row, and what that row is.

    ``kind``: ``"attention"`` (softmax probabilities) or ``"logit"`` (pre-softmax logits).
    ``n_heads``: ``None`` when ``fn`` returns one head's rows (``[batch, n]`` or ``[batch, n-1]``),
    else the number ``H`` of heads it returns at once (``[batch, H, n]`` or ``[batch, H, n-1]``).
    ``softmax_dtype``: the floating format ``fn`` runs its softmax in, which sets the tolerance of
    :func:`check_probability_rows` (``None``: assume float32, or the returned dtype if that is less
    precise). ``bytes_per_sequence``: ``n -> bytes`` of working memory ``fn`` allocates per input
    sequence of ``n`` tokens, used to size chunks under a memory budget (``None``: unknown, only the
    inputs and returned rows are counted). ``name``: for messages.

    Shapes: fn [batch, n, d_model] (its input, returning rows [batch, n] or [batch, H, n])
    """

    fn: Callable[[torch.Tensor], torch.Tensor]
    kind: RowKind
    n_heads: int | None = None
    softmax_dtype: torch.dtype | None = None
    bytes_per_sequence: Callable[[int], int] | None = None
    name: str = "row function"

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise InputError(f"RowFunction fn must be callable, got {type(self.fn).__name__}")
        if self.kind not in ROW_KINDS:
            raise InputError(f"RowFunction kind={self.kind!r} is unknown; accepted: {list(ROW_KINDS)}")
        if self.n_heads is not None:
            integer(self.n_heads, "RowFunction n_heads", low=1, note="or None")
        if self.softmax_dtype is not None and not (
            isinstance(self.softmax_dtype, torch.dtype) and self.softmax_dtype.is_floating_point
        ):
            raise InputError(
                f"RowFunction softmax_dtype={self.softmax_dtype!r} must be a floating torch dtype"
            )

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)


def row_kind(head: object) -> str | None:
    """The declared row kind of ``head`` (a :class:`RowFunction`), ``None`` for a plain callable."""
    return head.kind if isinstance(head, RowFunction) else None


def require_kind(head: object, kind: RowKind, where: str) -> None:
    """Raise :class:`InputError` when ``head`` is a :class:`RowFunction` of another kind than ``kind``."""
    declared = row_kind(head)
    if declared is not None and declared != kind:
        fix = (
            "ropeproof.verify.measure.ps._scores.attention_row_fn / last_row_fn, "
            "or RowFunction(fn, kind='attention')"
            if kind == "attention"
            else "ropeproof.verify.measure.ps._exact.logit_row_fn, or RowFunction(fn, kind='logit')"
        )
        raise InputError(
            f"{where} needs the last token's {kind} row, but head is a RowFunction of kind={declared!r} "
            f"({getattr(head, 'name', '')}); pass a {kind} row function instead: {fix}"
        )


def softmax_tolerance(n: int, row_dtype: torch.dtype, softmax_dtype: torch.dtype | None = None) -> float:
    """How far from 1 the sum of a correctly computed softmax row of ``n`` entries may be.

    A softmax ``p_j = e_j / sum_k e_k`` evaluated with unit roundoff ``u_c`` has a normaliser with
    relative error at most ``(n - 1) u_c`` (recursive summation) and one more rounding per quotient,
    so ``|sum_j p_j - 1| <= (n + 1) u_c`` to first order; rounding each entry to the returned format
    adds ``u_r sum_j p_j = u_r``, and our float64 sum adds ``(n - 1) u_64``. The bound returned is
    ``2 n u_c + u_r + n u_64`` (a factor 2 over the first-order terms covers their second-order
    rest). ``u = eps / 2`` of each format; ``u_c`` from ``softmax_dtype``, defaulting to the less
    precise of float32 and ``row_dtype``.
    """
    if softmax_dtype is None:
        softmax_dtype = (
            row_dtype if torch.finfo(row_dtype).eps > torch.finfo(torch.float32).eps else torch.float32
        )
    u_c = torch.finfo(softmax_dtype).eps / 2
    u_r = torch.finfo(row_dtype).eps / 2 if row_dtype.is_floating_point else 0.0
    u_64 = torch.finfo(torch.float64).eps / 2
    return 2 * n * u_c + u_r + n * u_64


def check_probability_rows(
    rows: torch.Tensor, n: int, softmax_dtype: torch.dtype | None = None, name: str = "the head"
) -> None:
    """Raise :class:`InputError` unless every row (last axis) is an attention row of an ``n``-token input.

    Checked: every entry finite and ``>= 0`` (exact: a softmax never rounds below zero); a full row
    (``n`` entries) sums to 1 within :func:`softmax_tolerance`; a row of the ``n - 1`` non-query
    entries sums to at most ``1 +`` that tolerance (the query's own share is unknown, so only the
    upper side is checked). A logit row fails these unless it happens to look like probabilities.

    Shapes: rows [..., m] (m = n or n - 1)
    """
    if not torch.isfinite(rows).all():
        raise InputError(f"{name} returned a row with NaN or inf; attention rows must be finite")
    low = rows.amin() if rows.numel() else torch.tensor(0.0)
    hint = (
        "ps_scores needs the last token's attention row (softmax probabilities); was a logit row "
        "function passed (e.g. logit_row_fn)? Use attention_row_fn / last_row_fn or "
        "RowFunction(fn, kind='attention')"
    )
    if float(low) < 0:
        raise InputError(f"{name} returned a row with a negative entry ({float(low):.6g}); {hint}")
    tol = softmax_tolerance(n, rows.dtype, softmax_dtype)
    sums = rows.to(torch.float64).sum(-1)
    if rows.shape[-1] == n:
        dev = (sums - 1).abs()
        worst = int(dev.argmax())
        if float(dev.flatten()[worst]) > tol:
            raise InputError(
                f"{name} returned a row summing to {float(sums.flatten()[worst]):.12g}, not 1 "
                f"(tolerance {tol:.3g} for n={n}); {hint}"
            )
    elif float(sums.max()) > 1 + tol:
        raise InputError(
            f"{name} returned non-query entries summing to {float(sums.max()):.12g} > 1 "
            f"(tolerance {tol:.3g} for n={n}); {hint}"
        )


def attention_rows(
    fn: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    n_heads: int | None = None,
    softmax_dtype: torch.dtype | None = None,
    name: str = "the head",
) -> torch.Tensor:
    """Call ``fn`` on ``x`` (``[batch, n, d_model]``) and return its attention rows, checked, as a
    float64 ``[batch, H, n - 1]`` tensor of the non-query entries (``H = 1`` when ``n_heads`` is
    ``None``).

    ``fn`` must return ``[batch, n]`` or ``[batch, n-1]`` (one head) or ``[batch, H, n]`` /
    ``[batch, H, n-1]`` (``n_heads = H``); every row is checked by :func:`check_probability_rows`.
    Raises :class:`InputError` naming the shape returned and the shapes accepted.

    Shapes: fn [batch, n, d_model] (its input); x [batch, n, d_model]; return [batch, H, n - 1]
    """
    batch, n = x.shape[0], x.shape[1]
    rows = fn(x)
    if not isinstance(rows, torch.Tensor):
        try:
            rows = torch.as_tensor(np.asarray(rows))
        except (TypeError, ValueError) as exc:
            raise InputError(f"{name} returned {type(rows).__name__}, not a tensor of rows") from exc
    want = 2 if n_heads is None else 3
    ok = rows.ndim == want and rows.shape[0] == batch and rows.shape[-1] in (n, n - 1)
    if ok and n_heads is not None:
        ok = rows.shape[1] == n_heads
    if not ok:
        expect = (
            f"[batch={batch}, n={n}] or [batch={batch}, n-1={n - 1}]"
            if n_heads is None
            else f"[batch={batch}, heads={n_heads}, n={n}] or [batch={batch}, heads={n_heads}, n-1={n - 1}]"
        )
        raise InputError(f"{name} returned an attention row of shape {tuple(rows.shape)}; expected {expect}")
    if not rows.dtype.is_floating_point:
        raise InputError(f"{name} returned rows of dtype {rows.dtype}; expected a real floating dtype")
    check_probability_rows(rows, n, softmax_dtype, name)
    rows = rows[..., : n - 1].to(torch.float64)
    return rows if n_heads is not None else rows[:, None, :]
