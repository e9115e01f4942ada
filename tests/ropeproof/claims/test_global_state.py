"""A check's changes to process-wide settings are put back when it returns (ropeproof.claims._global_state),
and run_claim applies that to every claim: issue 32 case 6 (``mpmath.mp.prec = 12`` in a claims file made
built-in claims and corrections read "contradicted")."""

from __future__ import annotations

import contextlib
import decimal
import os
import random
import sys
import warnings

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.claims import CheckContext, Claim, Outcome, run_claim
from ropeproof.claims._global_state import changed_state, global_state_restored, snapshot

ENV = "ROPEPROOF_TEST_GLOBAL_STATE"


def _set_env() -> None:
    os.environ[ENV] = "changed"
    os.environ["ROPEPROOF_MEMORY_LIMIT"] = "1"  # a variable the toolkit reads


def _drop_env() -> None:
    os.environ.pop("PATH", None)


MUTATIONS = {
    "mp_prec": lambda: setattr(mpmath.mp, "prec", 12),
    "mp_dps": lambda: setattr(mpmath.mp, "dps", 1000),
    "iv_prec": lambda: setattr(mpmath.iv, "prec", 7),
    "mp_pretty": lambda: setattr(mpmath.mp, "pretty", not mpmath.mp.pretty),
    "environ": _set_env,
    "environ_removed": _drop_env,
    "cwd": lambda: os.chdir("/"),
    "python_random": lambda: random.random(),
    "numpy_random": lambda: np.random.seed(7),
    "torch_random": lambda: torch.rand(3),
    "default_dtype": lambda: torch.set_default_dtype(torch.float16),
    "threads": lambda: torch.set_num_threads(torch.get_num_threads() + 1),
    "grad": lambda: torch.set_grad_enabled(not torch.is_grad_enabled()),
    "matmul": lambda: torch.set_float32_matmul_precision("medium"),
    "numpy_errors": lambda: np.seterr(all="raise"),
    "decimal": lambda: setattr(decimal.getcontext(), "prec", 3),
    "sys_path": lambda: sys.path.insert(0, "/nonexistent/claims"),
    "warnings": lambda: warnings.simplefilter("error"),
}


def _direct() -> dict[str, object]:
    """The settings read directly from their libraries (the reference the snapshot is checked against)."""
    return {
        "mp": (mpmath.mp.prec, mpmath.mp.dps, mpmath.mp.pretty, mpmath.iv.prec),
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "random": (random.getstate(), np.random.get_state()[1].tolist(), torch.get_rng_state().tolist()),
        "torch": (
            torch.get_default_dtype(),
            torch.get_num_threads(),
            torch.is_grad_enabled(),
            torch.get_float32_matmul_precision(),
        ),
        "numpy_errors": np.geterr(),
        "decimal": decimal.getcontext().prec,
        "sys_path": list(sys.path),
        "warnings": list(warnings.filters),
    }


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(sorted(MUTATIONS)), min_size=1, max_size=6, unique=True), st.booleans())
def test_every_setting_is_put_back(names: list[str], raises: bool) -> None:
    before, direct = snapshot(), _direct()
    with pytest.raises(RuntimeError) if raises else contextlib.nullcontext(), global_state_restored():
        for name in names:
            MUTATIONS[name]()
        assert _direct() != direct  # the block did change something
        if raises:
            raise RuntimeError("the check failed")
    assert changed_state(before, snapshot()) == []
    assert _direct() == direct


def test_changed_state_names_what_a_block_changed() -> None:
    before = snapshot()
    with global_state_restored():
        mpmath.mp.prec = 12
        os.environ[ENV] = "x"
        torch.rand(1)
        assert changed_state(before, snapshot()) == ["mp_prec", "environ", "torch_random"]
    assert mpmath.mp.prec == before.mp_prec and ENV not in os.environ


def test_run_claim_puts_back_what_a_check_changes() -> None:
    """A claim that lowers the mpmath precision, sets an environment variable the toolkit reads, seeds
    the generators and changes torch's default dtype leaves none of it to the next claim."""

    def leaky(ctx: CheckContext) -> Outcome:
        mpmath.mp.prec = 12
        os.environ["ROPEPROOF_MEMORY_LIMIT"] = "1"
        os.environ["ROPEPROOF_THREADS"] = "junk"
        random.seed(1)
        np.random.seed(1)
        torch.manual_seed(1)
        torch.set_default_dtype(torch.float32)
        return Outcome.judge(True, {})

    seen = []

    def reads(ctx: CheckContext) -> Outcome:
        seen.append((mpmath.mp.prec, os.environ.get("ROPEPROOF_MEMORY_LIMIT"), torch.get_default_dtype()))
        # an mpmath reference at the default precision: pi to 15 digits, as a float64 reads it
        return Outcome.judge(float(mpmath.pi) == 3.141592653589793, {})

    ctx = CheckContext(torch.device("cpu"), torch.float64)
    limit = os.environ.get("ROPEPROOF_MEMORY_LIMIT")
    before = snapshot()
    assert run_claim(Claim("t.leaky", "Leaks.", "here", {}, leaky), ctx).outcome.verdict == "holds"
    assert run_claim(Claim("t.reads", "Reads.", "here", {}, reads), ctx).outcome.verdict == "holds"
    assert seen == [(before.mp_prec, limit, before.default_dtype)]
    assert changed_state(before, snapshot()) == []
