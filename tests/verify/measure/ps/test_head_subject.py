"""Any head directory as a positional/symbolic subject."""

from __future__ import annotations

import pytest
import torch

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction
from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.ps._head_subject import head_subject
from ropeproof.verify.measure.ps._scores import ps_scores


def test_inputs_come_from_the_family_and_index_is_positional() -> None:
    head = compile_construction(index_construction(theta=0.8660, letters=5, max_int=12))
    head.metadata["construction_args"] = {"theta": 0.8660, "letters": 5, "max_int": 12}
    subj = head_subject(head, 7, 13, seed=1)
    assert subj.inputs.shape == (7, 13, head.d_model) and subj.source == "head directory"
    rows = subj.inputs.argmax(-1)  # one-hot tokens: the last token is an integer, as in the family
    assert all(head.tokens[int(t)].isdigit() for t in rows[:, -1])
    assert torch.equal(head_subject(head, 7, 13, seed=1).inputs, subj.inputs)  # seeded
    assert ps_scores(subj.head, subj.inputs).S_pos == pytest.approx(1.0, abs=1e-12)  # every key is v


def test_errors() -> None:
    head = compile_construction(index_construction(theta=0.8660, letters=5, max_int=12))
    head.metadata["construction_args"] = {"theta": 0.8660, "letters": 5, "max_int": 12}
    with pytest.raises(InputError, match="covers"):
        head_subject(head, 2, 14)
    with pytest.raises(InputError, match="length"):
        head_subject(head, 2, 2)
    with pytest.raises(InputError, match="n_inputs"):
        head_subject(head, 0, 5)
