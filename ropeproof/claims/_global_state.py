"""The process-wide settings a claim's check could change, saved before it runs and put back after.

A check is code of its own (a user's ``--claims`` file, a plugin) and may set what every later
computation reads: ``mpmath.mp.prec = 12`` makes the next mpmath reference wrong, an environment
variable (``ROPEPROOF_MEMORY_LIMIT``, ``ROPEPROOF_THREADS``) changes what the toolkit allows, a
seeded or drawn random stream moves every later draw. :func:`global_state_restored` saves each of the
settings below when a block starts and sets them back when it ends (also on an exception), so what
the block changed is gone for whatever runs next:

- mpmath: the working precision of ``mpmath.mp`` (``prec``, so ``dps`` too) and of ``mpmath.iv``, and
  their ``pretty`` flags;
- ``os.environ``: every variable (added ones are removed, changed or removed ones set back);
- the working directory;
- random state: Python's ``random``, numpy's global generator, torch's CPU generator, and the CUDA
  generators when CUDA is already initialised (it is never initialised here);
- torch: the default dtype and default device, the intra-op thread count, whether gradients are
  recorded, and the float32 matmul precision;
- numpy's floating-point error handling (``numpy.seterr``);
- the ``decimal`` context, the ``warnings`` filters and ``sys.path``.

:func:`changed_state` says which of them differ between two snapshots (a test's witness).
"""

from __future__ import annotations

import decimal
import os
import random
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import torch


@dataclass(frozen=True)
class GlobalState:
    """One snapshot of the settings listed in the module docstring (:func:`snapshot`)."""

    mp_prec: int
    mp_pretty: bool
    iv_prec: int
    iv_pretty: bool
    environ: dict[str, str]
    cwd: str
    python_random: Any
    numpy_random: Any
    torch_random: torch.Tensor
    cuda_random: list[torch.Tensor] | None
    default_dtype: torch.dtype
    default_device: torch.device
    threads: int
    grad_enabled: bool
    matmul_precision: str
    numpy_errors: dict[str, str]
    decimal_context: decimal.Context
    sys_path: list[str]

    def comparable(self) -> dict[str, Any]:
        """The snapshot as plain values that compare with ``==`` (random states as bytes or tuples)."""
        np_state = self.numpy_random
        return {
            "mp_prec": self.mp_prec,
            "mp_pretty": self.mp_pretty,
            "iv_prec": self.iv_prec,
            "iv_pretty": self.iv_pretty,
            "environ": self.environ,
            "cwd": self.cwd,
            "python_random": self.python_random,
            "numpy_random": (np_state[0], np_state[1].tobytes(), *np_state[2:]),
            "torch_random": bytes(self.torch_random.numpy().tobytes()),
            "cuda_random": None
            if self.cuda_random is None
            else [bytes(t.numpy().tobytes()) for t in self.cuda_random],
            "default_dtype": self.default_dtype,
            "default_device": str(self.default_device),
            "threads": self.threads,
            "grad_enabled": self.grad_enabled,
            "matmul_precision": self.matmul_precision,
            "numpy_errors": self.numpy_errors,
            "decimal_context": repr(self.decimal_context),
            "sys_path": self.sys_path,
        }


def _cuda_states() -> list[torch.Tensor] | None:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return [t.clone() for t in torch.cuda.get_rng_state_all()]
    return None


def snapshot() -> GlobalState:
    """The current values of the settings listed in the module docstring."""
    return GlobalState(
        mp_prec=mpmath.mp.prec,
        mp_pretty=mpmath.mp.pretty,
        iv_prec=mpmath.iv.prec,
        iv_pretty=mpmath.iv.pretty,
        environ=dict(os.environ),
        cwd=os.getcwd(),
        python_random=random.getstate(),
        numpy_random=np.random.get_state(),
        torch_random=torch.get_rng_state(),
        cuda_random=_cuda_states(),
        default_dtype=torch.get_default_dtype(),
        default_device=torch.get_default_device(),
        threads=torch.get_num_threads(),
        grad_enabled=torch.is_grad_enabled(),
        matmul_precision=torch.get_float32_matmul_precision(),
        numpy_errors=dict(np.geterr()),
        decimal_context=decimal.getcontext().copy(),
        sys_path=list(sys.path),
    )


def _restore_environ(saved: dict[str, str]) -> None:
    for name in [k for k in os.environ if k not in saved]:
        del os.environ[name]
    for name, value in saved.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


def restore(state: GlobalState) -> None:
    """Set every setting of ``state`` back (the working directory only if it still exists)."""
    mpmath.mp.prec = state.mp_prec
    mpmath.mp.pretty = state.mp_pretty
    mpmath.iv.prec = state.iv_prec
    mpmath.iv.pretty = state.iv_pretty
    _restore_environ(state.environ)
    if os.getcwd() != state.cwd and os.path.isdir(state.cwd):
        os.chdir(state.cwd)
    random.setstate(state.python_random)
    np.random.set_state(state.numpy_random)
    torch.set_rng_state(state.torch_random)
    if state.cuda_random is not None:
        torch.cuda.set_rng_state_all(state.cuda_random)
    if torch.get_default_dtype() != state.default_dtype:
        torch.set_default_dtype(state.default_dtype)
    if torch.get_default_device() != state.default_device:  # None: no device mode left behind for cpu
        cpu = state.default_device == torch.device("cpu")
        torch.set_default_device(None if cpu else state.default_device)
    if torch.get_num_threads() != state.threads:
        torch.set_num_threads(state.threads)
    if torch.is_grad_enabled() != state.grad_enabled:
        torch.set_grad_enabled(state.grad_enabled)
    if torch.get_float32_matmul_precision() != state.matmul_precision:
        torch.set_float32_matmul_precision(state.matmul_precision)
    np.seterr(**state.numpy_errors)
    decimal.setcontext(state.decimal_context.copy())
    sys.path[:] = state.sys_path


def changed_state(before: GlobalState, after: GlobalState) -> list[str]:
    """The names of the settings (:meth:`GlobalState.comparable` keys) that differ, in order."""
    a, b = before.comparable(), after.comparable()
    return [name for name in a if a[name] != b[name]]


@contextmanager
def global_state_restored() -> Iterator[GlobalState]:
    """Run the block, then put back every setting of the module docstring as it was when the block
    started (also when it raises); yield the snapshot taken at the start. The ``warnings`` filters are
    restored by :class:`warnings.catch_warnings`."""
    state = snapshot()
    with warnings.catch_warnings():
        try:
            yield state
        finally:
            restore(state)
