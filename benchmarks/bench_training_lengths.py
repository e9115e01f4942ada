"""Benchmark: the trained models' length study forward against plain torch at batch 1, on the same inputs.

Run ``python3 benchmarks/bench_training_lengths.py [--task letter] [--config paper] [--lengths 128,850]
[--inputs 16] [--rounds 3]``. For each length, the same ``--inputs`` inputs of the study
(:func:`ropeproof.verify.studies.training._lengths.encoded`, the ``distractors`` build) are answered by

- **study**: :func:`~ropeproof.verify.studies.training._evaluation.last_answers` on the model the study
  loads (:func:`~ropeproof.verify.studies.training._lengths.length_model`: HF ``GPTJForCausalLM`` with
  SDPA attention, run by :class:`~ropeproof.verify.studies.training._last_token.LastToken`, forward
  batches of about 4,096 tokens);
- **HF**: :func:`~ropeproof.verify.studies.training._evaluation.last_predictions`, HF's own forward of the
  same model (inference mode, last position's logits only, the same batches);
- **plain torch, batch 1**: a hand-written GPT-J forward (embedding; per block layer norm, q/k/v, GPT-J's
  interleaved rotary embedding from the same sin/cos table, ``scaled_dot_product_attention`` with a
  causal mask, out projection, parallel MLP with the model's activation; final layer norm and the
  last position's logits) from the same weights, one input per call, under ``torch.inference_mode``;

round robin, and the script prints the median seconds of each and the ratios study / plain and study / HF,
of the medians and of the fastest runs (less sensitive to a loaded machine), after checking all give the
same answers. ``--sweep`` also times the study's model at
forward batches of 1, 2, 4, 8 and 16 inputs (what :data:`~ropeproof.verify.studies.training._evaluation.
TOKENS_PER_FORWARD` was chosen from).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import torch
import torch.nn.functional as F

from ropeproof.verify.studies.training._evaluation import last_answers, last_predictions
from ropeproof.verify.studies.training._lengths import encoded, length_model
from ropeproof.verify.studies.training._shipped import shipped_path


def plain_forward(model: Any) -> Any:
    """A plain-torch GPT-J forward over ``model``'s weights: ``ids [1, n] -> argmax of the last logits``."""
    from transformers.activations import ACT2FN

    cfg = model.config
    tr = model.transformer
    act = ACT2FN[cfg.activation_function]
    table = tr.rotary_emb.embed_positions
    head = cfg.n_embd // cfg.n_head
    blocks = [
        (
            b.ln_1, b.attn.q_proj.weight, b.attn.k_proj.weight, b.attn.v_proj.weight, b.attn.out_proj.weight,
            b.mlp.fc_in, b.mlp.fc_out,
        )
        for b in tr.h
    ]  # fmt: skip

    def rotate(x: torch.Tensor, sin: torch.Tensor, cos: torch.Tensor) -> torch.Tensor:
        # GPT-J rotates interleaved pairs (x0, x1), (x2, x3), ...
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)

    def forward(ids: torch.Tensor) -> torch.Tensor:
        n = ids.shape[1]
        sin, cos = table[:n].chunk(2, dim=-1)
        h = tr.wte(ids)
        for ln, wq, wk, wv, wo, fc_in, fc_out in blocks:
            x = ln(h)
            q = (x @ wq.T).view(1, n, cfg.n_head, head)
            k = (x @ wk.T).view(1, n, cfg.n_head, head)
            v = (x @ wv.T).view(1, n, cfg.n_head, head).transpose(1, 2)
            q = rotate(q, sin[None, :, None], cos[None, :, None]).transpose(1, 2)
            k = rotate(k, sin[None, :, None], cos[None, :, None]).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(1, n, -1)
            h = h + a @ wo.T + fc_out(act(fc_in(x)))
        return model.lm_head(tr.ln_f(h[:, -1])).argmax(-1)

    return forward


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="letter")
    ap.add_argument("--config", default="paper")
    ap.add_argument("--lengths", default="128,850")
    ap.add_argument("--inputs", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--generation", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = length_model(shipped_path(args.task, args.config, 0))
    plain = plain_forward(model)
    print(f"{args.task}-{args.config}: {model.config.n_layer} layers, n_embd {model.config.n_embd}, "
          f"activation {model.config.activation_function}; one intra-op thread")  # fmt: skip
    for n in (int(x) for x in args.lengths.split(",")):
        if args.generation:
            from ropeproof.verify.measure._task_lengths import long_inputs, long_task

            start = time.perf_counter()
            long_task(args.task, args.inputs, n)
            old = time.perf_counter() - start
            start = time.perf_counter()
            long_inputs(args.task, n, 0, args.inputs)
            new = time.perf_counter() - start
            print(f"n = {n}: generating {args.inputs} inputs: long_task {old:.3f} s, long_inputs {new:.4f} s")
        batch = encoded(args.task, n, 0, args.inputs, "distractors", 0, (1, 2, 3, 4))
        ids = batch.input_ids
        with torch.inference_mode():
            want = torch.cat([plain(ids[i : i + 1]) for i in range(ids.shape[0])])
        assert torch.equal(last_answers(model, ids), want), "the study and plain torch disagree"
        assert torch.equal(last_predictions(model, ids), want), "HF and plain torch disagree"
        times: dict[str, list[float]] = {"study": [], "HF": [], "plain torch, batch 1": []}
        for _ in range(args.rounds):
            start = time.perf_counter()
            last_answers(model, ids)
            times["study"].append(time.perf_counter() - start)
            start = time.perf_counter()
            last_predictions(model, ids)
            times["HF"].append(time.perf_counter() - start)
            start = time.perf_counter()
            with torch.inference_mode():
                for i in range(ids.shape[0]):
                    plain(ids[i : i + 1])
            times["plain torch, batch 1"].append(time.perf_counter() - start)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"n = {n}, {ids.shape[0]} inputs ({ids.numel()} tokens), {args.rounds} rounds, answers equal:")
        for k, v in med.items():
            print(f"  {k}: {v:.3f} s (runs {', '.join(f'{t:.3f}' for t in times[k])})")
        best = {k: min(v) for k, v in times.items()}
        ratio, ratio_min = (
            med["study"] / med["plain torch, batch 1"],
            best["study"] / best["plain torch, batch 1"],
        )
        print(f"  study / plain torch batch 1: {ratio:.3f}x (medians), {ratio_min:.3f}x (fastest runs)")
        print(
            f"  study / HF: {med['study'] / med['HF']:.3f}x (medians), "
            f"{best['study'] / best['HF']:.3f}x (fastest runs)"
        )
        if args.sweep:
            for b in (1, 2, 4, 8, 16):
                runs = []
                for _ in range(args.rounds):
                    start = time.perf_counter()
                    with torch.inference_mode():
                        for i in range(0, ids.shape[0], b):
                            model(input_ids=ids[i : i + b], use_cache=False, logits_to_keep=1)
                    runs.append(time.perf_counter() - start)
                per_input = statistics.median(runs) / ids.shape[0] * 1e3
                print(f"  HF SDPA forward batch {b:2d}: {per_input:.1f} ms/input")


if __name__ == "__main__":
    main()
