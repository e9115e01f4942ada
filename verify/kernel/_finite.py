"""The finiteness policy of the torch kernel: one cheap check per public call, a precise error on
failure.

Every public function of :mod:`ropeproof.verify.kernel` that returns numbers (``apply_rope``,
``rope_logits``, ``RopeAttention.forward`` and ``RopeAttention.project``) takes ``check=True``.

- ``check=True`` (the default, and what every verdict of the toolkit runs with): the returned tensors
  are verified to be finite (masked logits: on and below the diagonal), with **one** host
  synchronisation per call. The test is a screen: :func:`finite_screen` sums every entry (one
  reduction pass per tensor, no temporaries), and IEEE arithmetic makes the sum NaN or inf whenever an
  entry is (``inf + x = inf``, ``inf - inf = nan``, ``nan + x = nan``). A finite sum therefore proves
  every entry finite; a non-finite sum (a bad entry, or an overflowing sum of finite entries) is
  confirmed entry by entry with :func:`all_finite` before anything is raised. Checking the results
  also covers the inputs: a NaN or inf in an input, or in a position, makes the result non-finite
  (``nan * 0`` is ``nan``, and every input entry enters every entry of its result row through a
  product). One exception: torch's fused attention kernel (``scaled_dot_product_attention``, behind
  ``RopeAttention``'s ``need_weights=False``) returns zeros, not NaN, for a NaN query, so that path
  screens its q, k and v as well as its output. Only when the check fails are the inputs examined,
  to say which one was bad: :class:`~ropeproof.machinery._errors.InputError` naming it, or, when every
  input is finite, :class:`~ropeproof.machinery._errors.NonFiniteError` saying that the computation
  overflowed in its dtype and how large the inputs were.
- ``check=False``: nothing is verified and nothing synchronises; a NaN or inf result is returned as is.
  For throughput loops whose caller checks (or does not need) the numbers.

``benchmarks/bench_attention.py`` measures what the check costs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch

from ropeproof.machinery._errors import InputError, NonFiniteError


def finite_screen(*tensors: torch.Tensor) -> torch.Tensor:
    """The sum of every entry of ``tensors``, a 0-d tensor on their device (no synchronisation).

    Accumulated in float64 for float64 tensors and in float32 otherwise (so half-precision sums do not
    overflow at 65504). If it is finite, every entry is finite; if not, see :func:`all_finite`.

    Shapes: tensors [...] (any shapes); return [...] (0-d)
    """
    total = None
    for t in tensors:
        part = t.sum(dtype=torch.float64 if t.dtype == torch.float64 else torch.float32)
        total = part if total is None else total + part
    return torch.zeros(()) if total is None else total


def all_finite(*tensors: torch.Tensor) -> bool:
    """Whether every entry of every tensor is finite, decided entry by entry (synchronises).

    Shapes: tensors [...] (any shapes)
    """
    return all(bool(torch.isfinite(t).all()) for t in tensors)


def passes(screen: torch.Tensor, exact: Callable[[], bool]) -> bool:
    """``True`` when the :func:`finite_screen` value is finite (one synchronisation); otherwise the
    verdict of ``exact()`` (the entry-by-entry test, run only then).

    Shapes: screen [...] (0-d)
    """
    return bool(torch.isfinite(screen)) or exact()


def non_finite_input(inputs: Mapping[str, torch.Tensor | None]) -> InputError | None:
    """An :class:`InputError` naming the first input that holds a NaN or inf, else ``None``.

    Shapes: inputs [...] (any shapes)
    """
    for name, t in inputs.items():
        if t is not None and t.is_floating_point() and not bool(torch.isfinite(t).all()):
            return InputError(f"{name} contains NaN or inf; {name} must be finite")
    return None


def overflow_error(what: str, dtype: torch.dtype, inputs: Mapping[str, torch.Tensor]) -> NonFiniteError:
    """The error for a non-finite result computed from finite ``inputs``: it overflowed in ``dtype``.

    Shapes: inputs [...] (any shapes)
    """
    sizes = ", ".join(f"max |{name}| = {float(t.abs().max()):.3g}" for name, t in inputs.items() if t.numel())
    return NonFiniteError(
        f"{what} overflowed in {dtype} although every input is finite ({sizes}); accepted: inputs whose "
        f"products stay below {torch.finfo(dtype).max:.3g} in {dtype}; rescale them or use float64"
    )
