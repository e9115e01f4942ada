"""[B]'s exact positional/symbolic deviations and the exclusion principle, as checks on logits.

Set-up (``docs/theory.md`` section 2). An input ``x`` has ``n`` tokens; the query is the last one,
at position ``n - 1``, and its content and position never move. The ``m = n - 1`` *keys* sit at
positions ``0 .. m-1`` with contents ``c_0 .. c_{m-1}``. ``L(c)_j`` is the pre-softmax logit of the
query against the key at position ``j``. **The row is the m key logits only**: the query's logit
against itself is not part of it (it never moves when keys are permuted, and the theorem's
normalisation ``(n-1)! (n-1)`` counts ``n - 1`` entries).

A permutation ``sigma`` of ``{0 .. m-1}`` acts on contents: ``c_sigma`` puts content ``c_{sigma(j)}``
at position ``j`` (in torch, ``x_sigma = x[perm]`` with ``perm = sigma``). Then

- ``delta_pos(sigma)_j = L(c_sigma)_j - L(c)_j``: a *positional* head's row does not change;
- ``delta_sym(sigma)_j = L(c_sigma)_j - L(c)_{sigma(j)}``: a *symbolic* head gives content
  ``c_{sigma(j)}``, now at ``j``, the logit it had at its old position ``sigma(j)``;
- ``||delta||^2 = sum_sigma sum_j delta(sigma)_j^2`` over all ``m!`` permutations;
- ``Var = (1/m) sum_j (L(c)_j - mean_j L(c)_j)^2``, the population variance of the unpermuted row.

**Exclusion principle** ([B], Theorem 1)::

    Var <= (||delta_pos||^2 + ||delta_sym||^2) / ((n-1)! (n-1))

Why it holds with exactly this convention: ``delta_pos(sigma)_j - delta_sym(sigma)_j =
L(c)_{sigma(j)} - L(c)_j``; as ``sigma`` runs over all permutations, ``sigma(j)`` takes every value
``(m-1)!`` times, so ``sum_sigma sum_j (delta_pos - delta_sym)^2 = (m-1)! sum_{j,k} (L_k - L_j)^2
= 2 m m! Var``. Hence the identity ``Var = mean_{sigma,j} (delta_pos - delta_sym)^2 / 2`` and, by
``(a - b)^2 <= 2 (a^2 + b^2)``, the inequality. Equality holds iff ``delta_pos = -delta_sym`` for
every ``sigma`` and ``j``. The proof uses nothing about attention: the inequality holds for *every*
function ``L``, so a numerical violation would be a bug in the convention or the arithmetic. Its
*tightness* ``Var / bound`` in ``[0, 1]`` is what says something about a head.

The bound is reported in the per-entry normalised form ``bound = msd_pos + msd_sym`` with
``msd = ||delta||^2 / (P m)``, ``P`` the number of permutations averaged over: ``P = m!`` for
:func:`exact_exclusion` (so ``bound`` is exactly the right-hand side above), or ``P`` random
permutations for :func:`sampled_exclusion` (an unbiased estimate, with standard errors).

A head is a :class:`~ropeproof.verify.kernel._attention.RopeAttention` or any callable mapping layer inputs
``[batch, n, d_model]`` to the last token's logit row ``[batch, n]`` (all positions; the last entry,
the query's own, is ignored) or ``[batch, n - 1]``. A
:class:`~ropeproof.verify.measure.ps._row_functions.RowFunction` must be of kind ``"logit"``; one of kind
``"attention"`` is refused (probabilities are not logits).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import torch

from ropeproof.machinery._errors import InputError, NonFiniteError
from ropeproof.machinery._memory_budget import check_allocation
from ropeproof.machinery._validate import integer
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._finite import all_finite, finite_screen, passes
from ropeproof.verify.measure.ps._row_functions import RowFunction, require_kind
from ropeproof.verify.measure.ps._rows import (
    Head,
    as_inputs,
    call_rows,
    check_chunk_size,
    key_logit_table,
)

MAX_EXACT_N = 8
"""Largest length for exact enumeration: ``(n-1)! = 5040`` permutations of ``n - 1 = 7`` keys."""
DEVIATION_BYTES = 48
"""Peak bytes per entry of the ``[batch, P, n-1]`` permuted rows and deviations (the rows, both deltas and
:func:`_report`'s temporaries): 34 measured (``VmHWM``) for a head's table path, rounded up."""
PERMUTATION_BYTES = 16
"""Bytes per entry of a ``[P, n-1]`` permutation draw (the float64 keys and the int64 argsort)."""


def permuted_logit_rows(
    head: Head, x: torch.Tensor, perms: torch.Tensor, chunk_size: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The unpermuted key-logit row and the row of every content permutation.

    ``x``: ``[batch, n, d_model]``; ``perms``: ``[P, n-1]`` integer, row ``s`` a permutation
    ``sigma_s`` of ``0 .. n-2``. Returns ``(row, rows)`` as float64 on the head's (or ``x``'s)
    device: ``row[b, j] = L(c)_j`` (``[batch, n-1]``) and ``rows[b, s, j] = L(c_{sigma_s})_j``
    (``[batch, P, n-1]``), where ``c_sigma`` has content ``c_{sigma(j)}`` at position ``j``. For a
    callable, the permuted inputs ``x[:, sigma + [n-1]]`` of all ``P`` permutations are stacked into
    one batch (``chunk_size`` sequences per call, default all).

    Shapes: x [batch, n, d_model]; perms [P, n-1]; return.row [batch, n-1]; return.rows [batch, P, n-1]
    """
    x = as_inputs(x)
    check_chunk_size(chunk_size)
    batch, n, d = x.shape
    m = n - 1
    perms = torch.as_tensor(perms)
    if perms.ndim != 2 or perms.shape[1] != m:
        raise InputError(f"perms must have shape [P, n-1={m}], got {tuple(perms.shape)}")
    if not torch.equal(perms.sort(dim=1).values.cpu(), torch.arange(m).expand(perms.shape[0], m)):
        raise InputError(f"every row of perms must be a permutation of 0 .. n-2 = {m - 1}")
    if isinstance(head, RopeAttention):
        perms = perms.to(head.device)
        table, _ = key_logit_table(head, x)
        table = table.to(torch.float64)
        pos = torch.arange(m, device=table.device)
        return table.diagonal(dim1=1, dim2=2), table[:, perms, pos]
    if not callable(head):
        raise InputError(f"head must be a RopeAttention or a callable, got {type(head).__name__}")
    require_kind(head, "logit", "the exact positional/symbolic deviations")
    perms = perms.to(x.device)
    full = torch.cat([perms, torch.full((perms.shape[0], 1), m, device=x.device, dtype=perms.dtype)], 1)
    row = call_rows(head, x, chunk_size, "a logit row").to(torch.float64)
    stacked = x[:, full].reshape(batch * perms.shape[0], n, d)
    rows = call_rows(head, stacked, chunk_size, "a logit row").to(torch.float64)
    return row, rows.reshape(batch, perms.shape[0], m).to(row.device)


def exclusion_bytes(head: Head, x: torch.Tensor, n_perms: int, chunk_size: int | None = None) -> int:
    """Estimated peak bytes of :func:`deviations` and the report over ``n_perms`` permutations of the
    inputs ``x`` (``[batch, n, d_model]``): :data:`DEVIATION_BYTES` and :data:`PERMUTATION_BYTES` per
    entry; for a callable also the stacked permuted inputs and, when it is a :class:`RowFunction` that
    declares ``bytes_per_sequence``, its working memory for one call (``chunk_size`` sequences, default
    all ``batch * P``).

    Shapes: x [batch, n, d_model]
    """
    batch, n, d = (int(s) for s in x.shape)
    m = n - 1
    total = DEVIATION_BYTES * batch * n_perms * m + PERMUTATION_BYTES * n_perms * m
    if not isinstance(head, RopeAttention):
        sequences = batch * n_perms
        total += sequences * n * d * x.element_size()
        declared = getattr(head, "bytes_per_sequence", None)
        if declared is not None:
            total += min(sequences, chunk_size or sequences) * int(declared(n))
    return total


def _check_exclusion_memory(head: Head, x: torch.Tensor, n_perms: int, chunk_size: int | None) -> None:
    batch, n = int(x.shape[0]), int(x.shape[1])
    check_allocation(
        f"the exclusion over {n_perms} permutations of {batch} inputs of length {n}",
        exclusion_bytes(head, x, n_perms, chunk_size),
    )


def all_permutations(m: int) -> torch.Tensor:
    """All ``m!`` permutations of ``0 .. m-1`` as a ``[m!, m]`` int64 tensor, identity first."""
    return torch.tensor(list(itertools.permutations(range(m))), dtype=torch.int64).reshape(-1, m)


def random_permutations(m: int, count: int, seed: int = 0) -> torch.Tensor:
    """``count`` uniform random permutations of ``0 .. m-1`` (with replacement), ``[count, m]``."""
    gen = torch.Generator().manual_seed(int(seed))
    return torch.argsort(torch.rand(count, m, generator=gen, dtype=torch.float64), dim=1)


@dataclass(frozen=True)
class ExclusionReport:
    """Deviations from positional and symbolic behaviour, and the exclusion principle, per input.

    Every tensor is float64 on the CPU with shape ``[batch]``. With ``P`` permutations averaged
    over and ``m = n - 1`` keys:

    - ``variance``: ``Var``, population variance of the unpermuted key-logit row;
    - ``msd_pos``, ``msd_sym``: ``||delta_pos||^2 / (P m)`` and ``||delta_sym||^2 / (P m)``;
    - ``delta_pos_sq``, ``delta_sym_sq``: ``||delta||^2`` over all ``m!`` permutations (exact) or
      its unbiased estimate ``m! m msd`` (sampled);
    - ``bound``: ``msd_pos + msd_sym = (||delta_pos||^2 + ||delta_sym||^2) / ((n-1)! (n-1))``;
    - ``half_msd_diff``: ``mean_{sigma,j} (delta_pos - delta_sym)^2 / 2``, equal to ``Var`` under
      exact enumeration (the identity behind the theorem), an estimate of it when sampled;
    - ``tightness``: ``Var / bound`` in ``[0, 1]``; NaN when ``bound = 0`` (then ``Var = 0``);
    - ``holds``: ``Var <= bound + tolerance``, ``tolerance`` the float64 rounding allowance
      ``16 m eps max_j L_j^2`` of computing the statistics (not a loosening of the inequality);
    - ``se_pos``, ``se_sym``: standard errors of ``msd_pos``/``msd_sym`` when sampled, else zero.

    Shapes: variance [batch]; msd_pos [batch]; msd_sym [batch]; delta_pos_sq [batch]; delta_sym_sq [batch];
        bound [batch]; half_msd_diff [batch]; tightness [batch]; tolerance [batch]; holds [batch];
        se_pos [batch]; se_sym [batch]
    """

    n: int
    n_permutations: int
    exact: bool
    variance: torch.Tensor
    msd_pos: torch.Tensor
    msd_sym: torch.Tensor
    delta_pos_sq: torch.Tensor
    delta_sym_sq: torch.Tensor
    bound: torch.Tensor
    half_msd_diff: torch.Tensor
    tightness: torch.Tensor
    tolerance: torch.Tensor
    holds: torch.Tensor
    se_pos: torch.Tensor
    se_sym: torch.Tensor

    @property
    def all_hold(self) -> bool:
        """True when the exclusion principle holds on every input."""
        return bool(self.holds.all())

    @property
    def max_tightness(self) -> float:
        """The largest ``Var / bound`` over inputs (NaN entries ignored; NaN if all are)."""
        t = self.tightness[~torch.isnan(self.tightness)]
        return float(t.max()) if t.numel() else math.nan

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form (lists of floats), for JSON."""
        out: dict[str, Any] = {"n": self.n, "n_permutations": self.n_permutations, "exact": self.exact}
        for name in (
            "variance", "msd_pos", "msd_sym", "delta_pos_sq", "delta_sym_sq", "bound", "half_msd_diff",
            "tightness", "tolerance", "holds", "se_pos", "se_sym",
        ):  # fmt: skip
            out[name] = getattr(self, name).tolist()
        return out


def deviations(
    head: Head, x: torch.Tensor, perms: torch.Tensor, chunk_size: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(row, delta_pos, delta_sym)`` for the permutations ``perms`` (``[P, n-1]``).

    ``row``: ``[batch, n-1]``; ``delta_pos[b, s, j] = L(c_{sigma_s})_j - L(c)_j`` and
    ``delta_sym[b, s, j] = L(c_{sigma_s})_j - L(c)_{sigma_s(j)}``, both ``[batch, P, n-1]`` float64.

    Shapes: x [batch, n, d_model]; perms [P, n-1]; return.row [batch, n-1]; return.delta_pos [batch, P, n-1];
        return.delta_sym [batch, P, n-1]
    """
    row, rows = permuted_logit_rows(head, x, perms, chunk_size)
    if not passes(finite_screen(row, rows), lambda: all_finite(row, rows)):
        raise NonFiniteError(
            "the head's logit rows contain NaN or inf although the inputs are finite: its logits overflowed "
            "in the head's dtype; rescale the inputs or the head's weights"
        )
    p = torch.as_tensor(perms).to(row.device)
    return row, rows - row[:, None, :], rows - row[:, p]


def _report(
    row: torch.Tensor, d_pos: torch.Tensor, d_sym: torch.Tensor, exact: bool, n: int
) -> ExclusionReport:
    m = n - 1
    n_perm = d_pos.shape[1]
    variance = row.var(dim=1, unbiased=False)
    per_pos = (d_pos**2).sum(dim=2)  # [batch, P]: sum over positions, per permutation
    per_sym = (d_sym**2).sum(dim=2)
    sum_pos, sum_sym = per_pos.sum(1), per_sym.sum(1)
    msd_pos, msd_sym = sum_pos / (n_perm * m), sum_sym / (n_perm * m)
    half = 0.5 * ((d_pos - d_sym) ** 2).mean(dim=(1, 2))
    bound = msd_pos + msd_sym
    tightness = torch.where(bound > 0, variance / torch.where(bound > 0, bound, 1.0), math.nan)
    tolerance = 16 * m * torch.finfo(torch.float64).eps * (row**2).amax(1)
    if exact or n_perm < 2:
        se_pos = se_sym = torch.zeros_like(variance)
    else:
        se_pos = per_pos.std(1) / (m * math.sqrt(n_perm))
        se_sym = per_sym.std(1) / (m * math.sqrt(n_perm))
    if exact:
        pos_sq, sym_sq = sum_pos, sum_sym
    else:
        count = math.exp(math.lgamma(m + 1)) * m  # m! m as a float (inf beyond m = 170)
        pos_sq, sym_sq = msd_pos * count, msd_sym * count

    if not all_finite(variance, msd_pos, msd_sym, half):
        raise NonFiniteError(
            f"the exclusion principle's sums overflowed in float64 (largest |logit| = "
            f"{float(row.abs().max()):.3g}; squares of deviations must stay below 1.8e308); rescale the "
            "inputs or the head's weights"
        )

    def cpu(t: torch.Tensor) -> torch.Tensor:
        return t.detach().cpu()

    return ExclusionReport(
        n=n,
        n_permutations=n_perm,
        exact=exact,
        variance=cpu(variance),
        msd_pos=cpu(msd_pos),
        msd_sym=cpu(msd_sym),
        delta_pos_sq=cpu(pos_sq),
        delta_sym_sq=cpu(sym_sq),
        bound=cpu(bound),
        half_msd_diff=cpu(half),
        tightness=cpu(tightness),
        tolerance=cpu(tolerance),
        holds=cpu(variance <= bound + tolerance),
        se_pos=cpu(se_pos),
        se_sym=cpu(se_sym),
    )


def exact_exclusion(head: Head, x: torch.Tensor, chunk_size: int | None = None) -> ExclusionReport:
    """Exact deviations over **all** ``(n-1)!`` key permutations, and the exclusion principle.

    ``x``: ``[batch, n, d_model]`` (or one ``[n, d_model]`` input) with ``2 <= n <= 8``. See the
    module docstring for the definitions; :class:`ExclusionReport` for what is returned.

    Shapes: x [batch, n, d_model]
    """
    x = as_inputs(x)
    n = x.shape[1]
    if n > MAX_EXACT_N:
        raise InputError(
            f"n={n} is too large for exact enumeration ((n-1)! = {math.factorial(n - 1)} permutations); "
            f"accepted: 2 <= n <= {MAX_EXACT_N}. Use sampled_exclusion for longer inputs."
        )
    _check_exclusion_memory(head, x, math.factorial(n - 1), chunk_size)
    perms = all_permutations(n - 1)
    row, d_pos, d_sym = deviations(head, x, perms, chunk_size)
    return _report(row, d_pos, d_sym, exact=True, n=n)


def sampled_exclusion(
    head: Head, x: torch.Tensor, n_samples: int = 1000, seed: int = 0, chunk_size: int | None = None
) -> ExclusionReport:
    """Monte-Carlo estimate of the deviations from ``n_samples`` uniform random permutations.

    ``msd_pos``/``msd_sym`` (and so ``bound``) are unbiased estimates of their exact values, with
    standard errors ``se_pos``/``se_sym``; ``variance`` is exact. ``n_permutations`` reports the
    sample count. Any ``n >= 2``; ``n_samples >= 1``. The same permutations are used for every
    input of the batch (seeded by ``seed``).

    Shapes: x [batch, n, d_model]
    """
    x = as_inputs(x)
    n_samples = integer(n_samples, "n_samples", low=1)
    n = x.shape[1]
    _check_exclusion_memory(head, x, n_samples, chunk_size)
    perms = random_permutations(n - 1, n_samples, seed)
    row, d_pos, d_sym = deviations(head, x, perms, chunk_size)
    return _report(row, d_pos, d_sym, exact=False, n=n)


def logit_row_fn(head: RopeAttention) -> RowFunction:
    """The callable form of a head: ``x -> head(x).logits[:, -1, :]`` (``[batch, n]``), a
    :class:`RowFunction` of kind ``"logit"`` (so :func:`ropeproof.verify.measure.ps._scores.ps_scores`, which
    needs attention rows, refuses it).

    Runs the full forward pass, so it is an independent path to the same logits as
    :func:`key_logit_table`.
    """

    def row(x: torch.Tensor) -> torch.Tensor:
        return head(x).logits[:, -1, :]

    return RowFunction(row, "logit", bytes_per_sequence=head.forward_bytes, name="logit_row_fn")
