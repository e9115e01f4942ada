"""The finiteness policy of the torch kernel: one cheap check per public call, a precise error on
failure.

Every public function of :mod:`ropeproof.verify.runtime` that returns numbers (``apply_rope``,
``rope_logits``, ``RopeAttention.forward`` and ``RopeAttention.project``) takes ``check=True``.

- ``check=True`` (the default, and what every verdict of the toolkit runs with): the returned tensors
  are verified to be finite (masked logits: on and below the diagonal). The test is one reduction
  per checked tensor and **one** host synchronisation per call, never one per input. It also covers
  the inputs: a NaN or inf in an input, or in a position, makes the result non-finite (``nan * 0`` is
  ``nan``, ``inf - inf`` is ``nan``, and every input entry enters every entry of its result row
  through a product), so checking the result is enough. One exception: torch's fused attention
  kernel (``scaled_dot_product_attention``, behind ``RopeAttention``'s ``need_weights=False``)
  returns zeros, not NaN, for a NaN query, so that path checks its q, k and v as well as its output.
  Only when the check fails are the inputs examined, to say which one was bad:
  :class:`~ropeproof.theory.errors.InputError` naming it, or, when every input is finite,
  :class:`~ropeproof.theory.errors.NonFiniteError` saying that the computation overflowed in its
  dtype and how large the inputs were.
- ``check=False``: nothing is verified and nothing synchronises; a NaN or inf result is returned as is.
  For throughput loops whose caller checks (or does not need) the numbers.

``benchmarks/bench_attention.py`` measures what the check costs.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ropeproof.theory.errors import InputError, NonFiniteError


def all_finite(*tensors: torch.Tensor) -> torch.Tensor:
    """A 0-d boolean tensor, on the tensors' device: every entry of every tensor is finite.

    Does not synchronise; read it with ``bool(...)`` once, after all the work is queued.
    """
    ok = torch.isfinite(tensors[0]).all()
    for t in tensors[1:]:
        ok = ok & torch.isfinite(t).all()
    return ok


def non_finite_input(inputs: Mapping[str, torch.Tensor | None]) -> InputError | None:
    """An :class:`InputError` naming the first input that holds a NaN or inf, else ``None``."""
    for name, t in inputs.items():
        if t is not None and t.is_floating_point() and not bool(torch.isfinite(t).all()):
            return InputError(f"{name} contains NaN or inf; {name} must be finite")
    return None


def overflow_error(what: str, dtype: torch.dtype, inputs: Mapping[str, torch.Tensor]) -> NonFiniteError:
    """The error for a non-finite result computed from finite ``inputs``: it overflowed in ``dtype``."""
    sizes = ", ".join(f"max |{name}| = {float(t.abs().max()):.3g}" for name, t in inputs.items() if t.numel())
    return NonFiniteError(
        f"{what} overflowed in {dtype} although every input is finite ({sizes}); accepted: inputs whose "
        f"products stay below {torch.finfo(dtype).max:.3g} in {dtype}; rescale them or use float64"
    )
