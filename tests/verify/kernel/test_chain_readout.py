"""The last-position readout from the backward recursion equals the full module's, and refuses models
without the multi-hop structure."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ropeproof.constructions._multihop_compile import CompiledModel, compile_program
from ropeproof.constructions._multihop_programs import letter_program, number_program
from ropeproof.machinery._errors import InputError
from ropeproof.verify.kernel._chain_readout import last_readout, long_answers, readout_weights
from ropeproof.verify.kernel._multilayer import model_module
from ropeproof.verify.measure._task_lengths import long_task


@pytest.fixture(scope="module")
def models() -> list[CompiledModel]:
    return [
        compile_program(number_program(index_planes=((1.0, 0.6), (0.2, 0.4)))),
        compile_program(letter_program(retrieval_theta=0.0027, reflexive_planes=((1.0, 1.0),))),
    ]


@pytest.mark.parametrize("n", [17, 45, 120])
def test_equals_the_full_module(n: int, models) -> None:
    for model in models:
        insts = long_task(model.task, 6, n, build="distractors", seed=n)
        seqs = [i.tokens for i in insts]
        full = model_module(model, device="cpu").run(seqs).readout[:, -1].numpy()
        for drop in (0.0, 1e-30):
            fast, dropped = last_readout(model, seqs, drop=drop, batch_size=4, block=16)
            # same float64 sums in another order; readouts reach ~4e3
            np.testing.assert_allclose(fast, full, rtol=0, atol=1e-9)
            assert np.all(dropped >= 0) and (drop > 0 or np.all(dropped == 0))
        assert long_answers(model, seqs) == model.decode(full)


def test_mixed_lengths_and_weights(models) -> None:
    model = models[0]
    a, b = long_task("number", 2, 17, seed=1), long_task("number", 2, 30, seed=1)
    seqs = [a[0].tokens, b[0].tokens, a[1].tokens]
    readout, _ = last_readout(model, seqs)
    assert readout.shape == (3, model.vocab_size)
    v, _dropped = readout_weights(model, [a[0].tokens])
    assert v.shape == (1, 17) and float(v[0, -1]) >= 1  # the last position keeps (at least) itself
    assert last_readout(model, [])[0].shape == (0, model.vocab_size)


def test_errors(models) -> None:
    model = models[0]
    seq = long_task("number", 1, 17)[0].tokens
    with pytest.raises(InputError, match="block"):
        readout_weights(model, [seq], block=0)
    with pytest.raises(InputError, match="drop"):
        readout_weights(model, [seq], drop=1.0)
    with pytest.raises(InputError, match="batch_size"):
        last_readout(model, [seq], batch_size=0)
    head = model.layers[0]
    bad_q = head.W_Q.copy()
    bad_q[model.feature_dims("channel")] = 1.0  # a query reading the channel breaks the linear recursion
    broken = dataclasses.replace(model, layers=(dataclasses.replace(head, W_Q=bad_q), *model.layers[1:]))
    with pytest.raises(InputError, match="multi-hop structure"):
        readout_weights(broken, [seq])
