"""Accuracy of a trained model per hop count, whole or with one layer's attention ablated: the greedy
answer at the last position (argmax of the last-token logits over the whole vocabulary) compared with
the instance's answer."""

from __future__ import annotations

from typing import Any

import torch

from ropeproof.theory.errors import InputError
from ropeproof.verify.studies.training.data import Batch
from ropeproof.verify.studies.training.model import last_token_logits


def predictions(model: Any, input_ids: torch.Tensor, chunk: int = 512) -> torch.Tensor:
    """Greedy last-token predictions ``[batch]`` (model in eval mode, no gradients, in chunks)."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    out = []
    try:
        with torch.no_grad():
            for start in range(0, input_ids.shape[0], chunk):
                ids = input_ids[start : start + chunk].to(device)
                out.append(last_token_logits(model, ids).argmax(-1).cpu())
    finally:
        model.train(was_training)
    return torch.cat(out)


def counts_per_hop(model: Any, batch: Batch) -> dict[int, tuple[int, int]]:
    """``{hops: (answered correctly, instances)}`` per hop count, plus key ``0``: all instances (the
    counts a confidence interval needs, :func:`ropeproof.verify.measure.statistics.proportion_interval`)."""
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


def decided_accuracy_per_hop(
    model: Any,
    task: str,
    seed: int,
    threshold: float,
    start: int = 400,
    cap: int = 2400,
    ablate: int | None = None,
) -> dict[str, dict[str, Any]]:
    """Per hop count, the accuracy on the run's validation prompts measured until its 95% Wilson interval
    decides ``threshold``: the first ``start`` of ``cap`` prompts (``TaskEncoder(task).draw(cap, seed,
    VALIDATION, 0)``), then twice as many, up to ``cap``. With ``ablate``, block ``ablate``'s attention
    output is zeroed (:func:`ablated_accuracy_per_hop`'s hook).

    Returns ``{"1": row, .., "4": row}``, each row ``{"count", "correct", "accuracy", "ci_low",
    "ci_high", "side"}`` with ``side`` ``"above"``, ``"below"`` or ``"undecided"`` (at the cap).
    """
    from ropeproof.verify.measure.statistics import decide, grow_until_decided, proportion_interval
    from ropeproof.verify.studies.training.data import VALIDATION, TaskEncoder

    batch = TaskEncoder(task).draw(cap, seed, VALIDATION, 0)
    handle = None
    if ablate is not None:
        blocks = model.transformer.h
        if not 0 <= ablate < len(blocks):
            raise InputError(f"ablate={ablate} is out of range; the model has layers 0..{len(blocks) - 1}")
        handle = blocks[ablate].attn.register_forward_hook(_zero_output)
    right: list[bool] = []
    rows: dict[str, dict[str, Any]] = {}

    def measure(done: int, count: int) -> None:
        right.extend((predictions(model, batch.input_ids[done:count]) == batch.answers[done:count]).tolist())
        got, hops = torch.tensor(right), batch.hops[: len(right)]
        for h in (1, 2, 3, 4):
            sel = hops == h
            est = proportion_interval(int(got[sel].sum()), int(sel.sum()))
            rows[str(h)] = {
                "count": est.n,
                "correct": int(got[sel].sum()),
                "accuracy": est.value,
                "ci_low": est.low,
                "ci_high": est.high,
                "side": decide(est, threshold),
            }

    try:
        grow_until_decided(start, cap, measure, lambda: all(r["side"] != "undecided" for r in rows.values()))
    finally:
        if handle is not None:
            handle.remove()
    return rows


def _zero_output(module: Any, args: Any, output: Any) -> Any:
    """A forward hook that replaces a module's output (or the first element of a tuple) by zeros."""
    if isinstance(output, tuple):
        return (torch.zeros_like(output[0]), *output[1:])
    return torch.zeros_like(output)
