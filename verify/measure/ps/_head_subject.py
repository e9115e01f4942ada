"""Any head directory as a positional/symbolic subject: the head, and inputs drawn from its family.

The inputs of length ``n`` are ``n_inputs`` uniform draws from
:func:`~ropeproof.verify.measure.exact._head_sweep.head_family` (the family the head records, else
every sequence over the head's vocabulary), embedded with ``W_E``. ``ropeproof ps-score --head DIR``
scores them.
"""

from __future__ import annotations

import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.verify.kernel._compiled import encode, head_module
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike, resolve_dtype
from ropeproof.verify.measure._subjects import Subject
from ropeproof.verify.measure.exact._families import sample_family_inputs
from ropeproof.verify.measure.exact._head_sweep import head_family


def head_subject(
    head: CompiledHead,
    n_inputs: int,
    length: int,
    seed: int = 0,
    device: DeviceLike = "cpu",
    dtype: DtypeLike = torch.float64,
) -> Subject:
    """``head`` on ``n_inputs`` inputs of ``length`` tokens from its family (see the module docstring).

    Shapes: return.inputs [n_inputs, length, d_model].
    """
    n_inputs = integer(n_inputs, "n_inputs", low=1)
    length = integer(length, "length", low=3, note="two keys to swap and the query")
    family = head_family(head)
    limit = family.max_length()
    if limit is not None and length > limit:
        raise InputError(
            f"length={length} exceeds what the {family.name} family of {head.name!r} covers ({limit})"
        )
    samples = sample_family_inputs(family, length, n_inputs, seed)
    inputs = encode(head, [list(tokens) for tokens, _ in samples], resolve_dtype(dtype))
    return Subject(
        f"{head.name} ({family.name} family)", head_module(head, device, dtype), inputs, "head directory"
    )
