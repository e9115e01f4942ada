"""The heads the positional/symbolic checks score, with their inputs ("subjects").

Used by the ``ps.*`` claims, ``ropeproof ps-score``, the figures, the benchmarks and the tests:

- :func:`index_subject`: compiled T_Index ([A] Thm 3.1) on number-task inputs of 17 tokens;
- :func:`retrieval_subject`: compiled T_Retrieval on letter-task inputs of 17 pairs;
- :func:`random_subject`: :func:`~ropeproof.verify.kernel._random_heads.random_head` (``init="fan_in"``)
  on :func:`random_inputs`.

The construction heads have one RoPE plane, one-hot tokens and ``scale = 1``, so logits lie in
``[-1, 1]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import (
    ALPHABET_SIZE,
    INDEX_THETA,
    LETTER_TASK_MAX_INT,
    NUMBER_TASK_MAX_INT,
    index_construction,
    retrieval_construction,
)
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._memory_budget import check_allocation
from ropeproof.machinery._result_store import ResultStore, object_product
from ropeproof.machinery._validate import integer
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._compiled import head_module
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike, resolve_dtype
from ropeproof.verify.kernel._random_heads import random_head
from ropeproof.verify.measure._tasks import encode_tasks, letter_task, number_task

SUBJECT_LETTERS = 8
"""Letter vocabulary of the T_Index subject (a smaller vocabulary than [A]'s 120 keeps inputs light;
the head's logits do not depend on it)."""


@dataclass(frozen=True)
class Subject:
    """A head, the layer inputs to score it on (``[batch, n, d_model]``), and where it came from."""

    name: str
    head: RopeAttention
    inputs: torch.Tensor
    source: str


def index_subject(
    n_inputs: int = 100,
    theta: float = INDEX_THETA,
    seed: int = 0,
    device: DeviceLike = "cpu",
    dtype: DtypeLike = torch.float64,
) -> Subject:
    """Compiled T_Index (8 letters, integers 1..16) at angle ``theta`` on ``n_inputs`` number-task
    inputs of 17 tokens (:func:`ropeproof.verify.measure._tasks.number_task`, 1-4 hops, vocabulary of 8
    letters)."""

    compiled = compile_construction(
        index_construction(theta=theta, max_int=NUMBER_TASK_MAX_INT, letters=SUBJECT_LETTERS)
    )
    tasks = number_task(n_inputs, vocab_letters=SUBJECT_LETTERS, max_int=NUMBER_TASK_MAX_INT, seed=seed)
    inputs = encode_tasks(compiled, tasks, resolve_dtype(dtype))
    return Subject(f"T_Index(theta={theta:g})", head_module(compiled, device, dtype), inputs, "constructions")


def retrieval_subject(
    n_inputs: int = 100,
    theta: float = 0.0,
    seed: int = 0,
    device: DeviceLike = "cpu",
    dtype: DtypeLike = torch.float64,
) -> Subject:
    """Compiled T_Retrieval (``|ALPH| = 8``, ``omega = pi/4``, integers 1..8) at RoPE angle ``theta``
    on ``n_inputs`` letter-task inputs of 17 pairs (:func:`ropeproof.verify.measure._tasks.letter_task`, 1-4
    hops)."""

    compiled = compile_construction(
        retrieval_construction(alphabet_size=ALPHABET_SIZE, theta=theta, max_int=LETTER_TASK_MAX_INT)
    )
    tasks = letter_task(n_inputs, alphabet_size=ALPHABET_SIZE, max_int=LETTER_TASK_MAX_INT, seed=seed)
    inputs = encode_tasks(compiled, tasks, resolve_dtype(dtype))
    return Subject(
        f"T_Retrieval(theta={theta:g})", head_module(compiled, device, dtype), inputs, "constructions"
    )


@object_product("subjects.construction-subject")
def CONSTRUCTION_SUBJECT(
    store: ResultStore,
    kind: str,
    n_inputs: int = 100,
    theta: float | None = None,
    device: str = "cpu",
    dtype: str = "float64",
) -> Subject:
    """:func:`index_subject` (``kind="index"``, ``theta`` default ``INDEX_THETA``) or
    :func:`retrieval_subject` (``kind="retrieval"``, default ``0.0``) as a product of the run's store: the
    ``ps`` claims and figures score the same heads on the same inputs (read-only)."""
    if kind == "index":
        return index_subject(n_inputs, INDEX_THETA if theta is None else theta, device=device, dtype=dtype)
    if kind == "retrieval":
        return retrieval_subject(n_inputs, 0.0 if theta is None else theta, device=device, dtype=dtype)
    raise InputError(f"kind={kind!r} must be 'index' or 'retrieval'")


def random_inputs(
    n_inputs: int, length: int, d_model: int, shared: float = 0.0, seed: int = 0
) -> torch.Tensor:
    """``[n_inputs, length, d_model]`` inputs ``x = shared * mu + eps``, ``mu`` a fixed unit-variance
    vector shared by every token and ``eps ~ N(0, I)``.

    ``shared = 0`` gives i.i.d. tokens; a large ``shared`` mimics the common component of real
    residual streams (keys nearly equal), under which high frequencies act positionally.
    """
    length, n_inputs = integer(length, "length", low=3), integer(n_inputs, "n_inputs", low=1)
    d_model = integer(d_model, "d_model", low=1)
    # the draw and the sum, float64: two [n_inputs, length, d_model] tensors
    check_allocation(f"{n_inputs} random inputs of {length} x {d_model}", 16 * n_inputs * length * d_model)
    gen = torch.Generator().manual_seed(int(seed) + 7919)
    mu = torch.randn(1, 1, d_model, generator=gen, dtype=torch.float64)
    return shared * mu + torch.randn(n_inputs, length, d_model, generator=gen, dtype=torch.float64)


def random_subject(
    n_inputs: int = 100,
    length: int = 17,
    head_dim: int = 64,
    base: float = 10000.0,
    d_model: int = 64,
    freqs: Sequence[float] | None = None,
    layout: str = "interleaved",
    shared: float = 0.0,
    seed: int = 0,
    device: DeviceLike = "cpu",
    dtype: DtypeLike = torch.float64,
) -> Subject:
    """:func:`random_head` on :func:`random_inputs` (seeded by ``seed``)."""
    spec = RopeSpec(head_dim, base=base, freqs=freqs, layout=layout)  # type: ignore[arg-type]
    head = random_head(
        spec, d_model, seed, scale=1.0 / math.sqrt(head_dim), init="fan_in", device=device, dtype=dtype
    )
    spectrum = f"base={base:g}" if freqs is None else "freqs=" + ",".join(f"{f:.3g}" for f in freqs)
    name = f"random(head_dim={head_dim}, {spectrum}, seed={seed})"
    return Subject(name, head, random_inputs(n_inputs, length, d_model, shared, seed), "random")
