"""Accuracy of a trained model per hop count, whole or with one layer's attention ablated: the greedy
answer at the last position (argmax of the last-token logits over the whole vocabulary) compared with
the instance's answer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from ropeproof.machinery._errors import InputError
from ropeproof.verify.studies.training._data import Batch, concatenate

TOKENS_PER_FORWARD = 4096
"""Tokens per forward batch: ``max(1, 4096 // n)`` inputs of length ``n``. Measured on the paper models
(SDPA, one thread): batches of about 2,000-4,000 tokens ran fastest per input (at 850 tokens batch 4
beat 1 and 16; at 128 tokens, 16 beat 4 and 64); ``benchmarks/bench_training_lengths.py`` prints the
sweep."""


def forward_batch(n: int) -> int:
    """Inputs of length ``n`` per forward (:data:`TOKENS_PER_FORWARD`)."""
    return max(1, TOKENS_PER_FORWARD // int(n))


def last_predictions(model: Any, input_ids: torch.Tensor) -> torch.Tensor:
    """Greedy last-token predictions ``[batch]``: under :func:`torch.inference_mode`, only the last
    position's logits (``logits_to_keep=1``), :func:`forward_batch` inputs per forward."""
    device = next(model.parameters()).device
    step = forward_batch(input_ids.shape[1])
    out = []
    with torch.inference_mode():
        for start in range(0, input_ids.shape[0], step):
            ids = input_ids[start : start + step].to(device)
            logits = model(input_ids=ids, use_cache=False, logits_to_keep=1).logits[:, -1]
            out.append(logits.argmax(-1).cpu())
    return torch.cat(out)


def last_answers(
    model: Any,
    input_ids: torch.Tensor | None = None,
    zero: Sequence[int] = (),
    states: torch.Tensor | None = None,
    start: int = 0,
) -> torch.Tensor:
    """The greedy last-token answers ``[batch]`` of an HF GPT-J model in eval mode, as
    :func:`last_predictions` computes them (the same logits bit for bit, :data:`TOKENS_PER_FORWARD` tokens
    per forward), by :class:`~ropeproof.verify.studies.training._last_token.LastToken`: the last block's
    output and the logits at the last position only; the attention outputs of the blocks in ``zero``
    zeroed (their attention skipped); from ``input_ids``, or from ``states`` entering block ``start``
    (:meth:`~ropeproof.verify.studies.training._last_token.LastToken.states`)."""
    from ropeproof.verify.studies.training._last_token import LastToken

    forward = LastToken(model)
    rows = input_ids if states is None else states
    assert rows is not None
    step = forward_batch(rows.shape[1])
    out = []
    for s in range(0, rows.shape[0], step):
        if states is None:
            logits = forward.logits(rows[s : s + step], zero)
        else:
            logits = forward.logits(zero=zero, states=rows[s : s + step], start=start)
        out.append(logits.argmax(-1).cpu())
    return torch.cat(out)


def predictions(model: Any, input_ids: torch.Tensor) -> torch.Tensor:
    """Greedy last-token predictions ``[batch]`` (the model put in eval mode for the call;
    :func:`last_predictions`: inference mode, last position's logits only, forward batches of about 4,096
    tokens)."""
    was_training = model.training
    model.eval()
    try:
        return last_predictions(model, input_ids)
    finally:
        model.train(was_training)


def counts_per_hop(model: Any, batch: Batch) -> dict[int, tuple[int, int]]:
    """``{hops: (answered correctly, instances)}`` per hop count, plus key ``0``: all instances (the
    counts a confidence interval needs, :func:`ropeproof.verify.measure._statistics.proportion_interval`)."""
    right = predictions(model, batch.input_ids) == batch.answers
    out = {0: (int(right.sum()), int(right.numel()))}
    for h in sorted(set(batch.hops.tolist())):
        sel = batch.hops == h
        out[int(h)] = (int(right[sel].sum()), int(sel.sum()))
    return out


def accuracy_per_hop(model: Any, batch: Batch) -> dict[int, float]:
    """``{hops: fraction of instances with that hop count answered correctly}`` plus key ``0``: all."""
    return {h: k / n for h, (k, n) in counts_per_hop(model, batch).items()}


def ablated_accuracy_per_hop(model: Any, batch: Batch, layer: int) -> dict[int, float]:
    """:func:`accuracy_per_hop` with block ``layer``'s attention output set to zero (a forward hook on
    the GPT-J block's ``attn`` module replaces its output tensor by zeros; the MLP still runs)."""
    blocks = model.transformer.h
    if not 0 <= layer < len(blocks):
        raise InputError(f"layer={layer} is out of range; the model has layers 0..{len(blocks) - 1}")

    handle = blocks[layer].attn.register_forward_hook(_zero_output)
    try:
        return accuracy_per_hop(model, batch)
    finally:
        handle.remove()


VALIDATION_CHUNK = 200
"""Prompts per chunk of :func:`validation_chunk`."""


def validation_chunk(task: str, seed: int, chunk: int) -> Batch:
    """Chunk ``chunk`` of the held-out prompts the claims measure accuracy on: ``TaskEncoder(task).draw(200,
    seed, VALIDATION, 1 + chunk)``, batches of the run's validation stream after the one the run selected
    its best checkpoint on (batch 0), so the shipped checkpoint's accuracy is not measured on the prompts
    it was chosen for."""
    from ropeproof.verify.studies.training._data import VALIDATION, TaskEncoder

    return TaskEncoder(task).draw(VALIDATION_CHUNK, seed, VALIDATION, 1 + chunk)


def decided_accuracy_per_hop(
    model: Any,
    task: str,
    seed: int,
    threshold: float,
    start: int = 400,
    cap: int = 2400,
    ablate: int | Sequence[int] | None = None,
    chunks: Callable[[int], Batch] | None = None,
    states: Callable[[int, int], torch.Tensor] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per hop count, the accuracy on held-out prompts sampled until its anytime-valid 95% interval
    (:class:`~ropeproof.verify.measure._statistics.SequentialProportion`) decides ``threshold`` for every
    hop count: the first ``start`` prompts, then one forward batch (:func:`forward_batch`: 240 prompts of
    17 tokens) at a time (:func:`~ropeproof.verify.measure._statistics.look_sizes`), up to ``cap``, stopping
    at the first look that decides. The prompts are the chunks of
    :func:`validation_chunk` in order (``chunks``: a function giving chunk ``k``, such as the run's store
    keeps; only the chunks used are drawn). With ``ablate`` (a layer, or a list of layers), those blocks'
    attention outputs are zeroed (what :func:`ablated_accuracy_per_hop`'s hook does, here without hooks:
    :func:`last_answers`); ``states(chunk, layer)``, if given, is the unablated model's hidden states
    entering block ``layer`` on chunk ``chunk``'s prompts, from which an ablation starts at its lowest
    zeroed block when that is not block 0 (the blocks below it are unchanged; the embeddings are not
    worth keeping).

    Each chunk is balanced over hop counts, targets and answers by cycling; the interval treats each hop
    count's prompts as i.i.d. draws, as a fixed-sample interval on them did.

    Returns ``{"1": row, .., "4": row}``, each row ``{"count", "correct", "accuracy", "ci_low",
    "ci_high", "interval", "side"}`` with ``side`` ``"above"``, ``"below"`` or ``"undecided"`` (at the
    cap).
    """
    from ropeproof.verify.measure._statistics import SequentialProportion, sample_until_decided

    chunk_of = chunks if chunks is not None else (lambda k: validation_chunk(task, seed, k))
    layers = [] if ablate is None else [ablate] if isinstance(ablate, int) else list(ablate)
    blocks = model.transformer.h
    for layer in layers:
        if not 0 <= layer < len(blocks):
            raise InputError(f"ablate={layer} is out of range; the model has layers 0..{len(blocks) - 1}")
    if model.training:
        raise InputError("the model is in training mode; decided accuracies are of the eval-mode model")
    seqs = {h: SequentialProportion() for h in (1, 2, 3, 4)}
    low = min(layers) if layers and states is not None and min(layers) > 0 else None  # 0: no block to skip

    def measure(done: int, count: int) -> None:
        first, last = done // VALIDATION_CHUNK, (count - 1) // VALIDATION_CHUNK
        batch = concatenate([chunk_of(k) for k in range(first, last + 1)])
        sel = slice(done - first * VALIDATION_CHUNK, count - first * VALIDATION_CHUNK)
        if low is None or states is None:
            got = last_answers(model, batch.input_ids[sel], layers)
        else:
            entering = torch.cat([states(k, low) for k in range(first, last + 1)])
            got = last_answers(model, zero=layers, states=entering[sel], start=low)
        right = got == batch.answers[sel]
        hops = batch.hops[sel]
        for h, seq in seqs.items():
            seq.add(right[hops == h].numpy())

    step = forward_batch(chunk_of(0).input_ids.shape[1])  # one forward batch per look after the first
    sample_until_decided(
        start, cap, measure, lambda: all(s.decide(threshold) != "undecided" for s in seqs.values()), step
    )
    return {str(h): seq.record(threshold) for h, seq in seqs.items()}


def _zero_output(module: Any, args: Any, output: Any) -> Any:
    """A forward hook that replaces a module's output (or the first element of a tuple) by zeros."""
    if isinstance(output, tuple):
        return (torch.zeros_like(output[0]), *output[1:])
    return torch.zeros_like(output)
