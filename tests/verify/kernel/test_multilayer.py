"""The multi-layer module: against an independent numpy reference, the hard-attention chain recursion
on the real models, [A]'s tasks at 17 tokens, dtypes and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ropeproof.constructions._multihop_compile import CompiledModel, compile_program
from ropeproof.constructions._multihop_programs import letter_program, number_program
from ropeproof.machinery._errors import InputError
from ropeproof.verify.kernel._multilayer import MultiLayerRopeModel, answer_model, model_module
from ropeproof.verify.measure._tasks import follow_letter_chain, follow_number_chain, letter_task, number_task


@pytest.fixture(scope="module")
def number_model() -> CompiledModel:
    return compile_program(number_program(index_planes=((1.0, 1.0),)))


@pytest.fixture(scope="module")
def letter_model() -> CompiledModel:
    return compile_program(letter_program(retrieval_theta=0.001, reflexive_planes=((1.0, 1.0),)))


def _reference(model: CompiledModel, tokens: list[str]) -> tuple[list[np.ndarray], np.ndarray]:
    """Residual recursion with explicit per-position plane rotations and a max-shifted softmax (numpy)."""
    x = model.W_E[model.ids(tokens)]
    n = len(tokens)
    patterns = []
    for head in model.layers:
        q, k, v = x @ head.W_Q, x @ head.W_K, x @ head.W_V
        rq, rk = np.zeros_like(q), np.zeros_like(k)
        for (a, b), f in zip(head.spec.plane_dims, head.spec.plane_freqs, strict=True):
            for p in range(n):
                c, s = math.cos(p * f), math.sin(p * f)
                rq[p, a], rq[p, b] = c * q[p, a] - s * q[p, b], s * q[p, a] + c * q[p, b]
                rk[p, a], rk[p, b] = c * k[p, a] - s * k[p, b], s * k[p, a] + c * k[p, b]
        logits = head.scale * rq @ rk.T
        logits[np.triu_indices(n, 1)] = -np.inf
        pat = np.exp(logits - logits.max(1, keepdims=True))
        pat /= pat.sum(1, keepdims=True)
        patterns.append(pat)
        x = x + pat @ v @ head.W_O
    return patterns, x


def test_module_equals_the_numpy_reference(number_model, letter_model) -> None:
    for model, task in ((number_model, number_task(3, seed=5)), (letter_model, letter_task(3, seed=5))):
        module = model_module(model, device="cpu")
        for inst in task:
            res = module.run([inst.tokens])
            pats, final = _reference(model, list(inst.tokens))
            for got, want in zip(res.patterns, pats, strict=True):
                # logits of size 1000 carry float64 rounding ~1000 * 1e-16; a softmax moves by at most
                # that much times its derivative (<= 1/4)
                np.testing.assert_allclose(got[0].numpy(), want, atol=1e-11)
            # channels grow to ~2^12, so absolute rounding ~2^12 * 1e-11
            np.testing.assert_allclose(res.residual[-1, 0].numpy(), final, atol=1e-7)
            assert res.residual.shape == (model.n_layers + 1, 1, len(inst.tokens), model.d_model)


@pytest.mark.parametrize("hops", [1, 2, 3, 4])
def test_last_position_holds_the_chain_coefficient_times_the_answer(hops, number_model, letter_model) -> None:
    for model, tasks in (
        (number_model, number_task(16, hops=(hops,), seed=hops)),
        (letter_model, letter_task(16, hops=(hops,), seed=hops)),
    ):
        module = model_module(model, device="cpu")
        res = module.run([t.tokens for t in tasks])
        chan = model.feature_dims("channel")
        c = model.chain_coefficient(hops)
        for b, inst in enumerate(tasks):
            code = model.W_U[chan, model.token_index(inst.answer)]
            got = res.residual[-1, b, -1, chan].numpy()
            # at logit scale 1000 every chain row leaks below 1e-10 of its mass (certified margins), so
            # the channel is c * code to relative 1e-6 (generous)
            np.testing.assert_allclose(got, c * code, rtol=0, atol=1e-6 * c)


def test_answers_on_the_paper_tasks(number_model, letter_model) -> None:
    tasks = number_task(96, seed=11)
    assert [follow_number_chain(t.tokens) for t in tasks] == [t.answer for t in tasks]
    assert answer_model(number_model, [t.tokens for t in tasks], device="cpu") == [t.answer for t in tasks]
    tasks = letter_task(96, seed=11)
    assert [follow_letter_chain(t.tokens) for t in tasks] == [t.answer for t in tasks]
    assert answer_model(letter_model, [t.tokens for t in tasks], device="cpu", batch_size=40) == [
        t.answer for t in tasks
    ]


def test_float32_and_block(number_model) -> None:
    tasks = number_task(24, seed=3)
    m32 = MultiLayerRopeModel(number_model, device="cpu", dtype="float32")
    assert m32.answer([t.tokens for t in tasks]) == [t.answer for t in tasks]
    m64 = model_module(number_model, device="cpu")
    x = m64.embed([t.tokens for t in tasks[:2]])
    res = m64(x)
    again, att = m64.block(5, res.residual[5])
    torch.testing.assert_close(again, res.residual[6], rtol=0, atol=0)
    torch.testing.assert_close(att.pattern, res.patterns[5], rtol=0, atol=0)
    with pytest.raises(InputError, match="layer"):
        m64.block(12, x)
    with pytest.raises(InputError, match="CompiledModel"):
        MultiLayerRopeModel("number")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="batch_size"):
        answer_model(number_model, [tasks[0].tokens], batch_size=0)


@pytest.mark.cuda
def test_cuda_matches_cpu(number_model) -> None:
    tasks = number_task(8, seed=4)
    cpu = model_module(number_model, device="cpu").run([t.tokens for t in tasks])
    gpu = model_module(number_model, device="cuda").run([t.tokens for t in tasks])
    torch.testing.assert_close(gpu.residual.cpu(), cpu.residual, rtol=1e-9, atol=1e-9)
