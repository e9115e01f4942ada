"""Benchmark: training steps per second of ``ropeproof train`` against an HF ``Trainer`` run of the same
model and data, measured in the same invocation.

Run ``python3 benchmarks/bench_training.py [--config small] [--steps 50] [--rounds 3] [--device auto]
[--whole-job]``. Each round trains ``--steps`` steps with

- **ours**: :mod:`ropeproof.verify.studies.training._trainer` (the loop ``ropeproof train`` runs, without its
  checkpoint evaluations);
- **HF Trainer**: ``transformers.Trainer`` on the same freshly initialised ``GPTJForCausalLM`` (same
  seed), the same batches (an ``IterableDataset`` over the same seeded stream), AdamW with the same
  learning rate, betas, weight decay and linear warm-up schedule, and a ``compute_loss`` that takes the
  cross-entropy of the last token only; no logging, saving or evaluation;

one after the other (round robin), and prints the median steps per second of each and the ratio
ours / Trainer, plus both runs' first losses (same model, same first batch: they agree to float32
rounding). ``--whole-job`` also times the full ``ropeproof train`` job (every step, checkpoint,
evaluation and learning-dynamics record) once and prints its accuracy per hop.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from typing import Any

import torch

from ropeproof.verify.kernel._devices import resolve_device
from ropeproof.verify.studies.training._config import get_config
from ropeproof.verify.studies.training._data import TRAIN, TaskEncoder
from ropeproof.verify.studies.training._model import build_model, last_token_logits
from ropeproof.verify.studies.training._trainer import new_run, train, train_step


def ours(task: str, config: Any, steps: int, device: torch.device) -> tuple[float, float]:
    """Seconds for ``steps`` steps of the training loop, and the first loss."""
    run = new_run(task, config, 0, device)
    start = time.perf_counter()
    first = train_step(run)
    for _ in range(steps - 1):
        train_step(run)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - start, first


def hf_trainer(task: str, config: Any, steps: int, device: torch.device) -> tuple[float, float]:
    """Seconds for ``steps`` steps of ``transformers.Trainer`` on the same model and data, and the first
    loss."""
    import transformers

    enc = TaskEncoder(task)

    class Stream(torch.utils.data.IterableDataset):
        def __iter__(self) -> Any:
            for k in range(steps):
                batch = enc.draw(config.batch_size, 0, TRAIN, k)
                for ids, ans in zip(batch.input_ids, batch.answers, strict=True):
                    yield {"input_ids": ids, "labels": ans}

    losses: list[float] = []

    class LastTokenTrainer(transformers.Trainer):
        def compute_loss(self, model: Any, inputs: Any, return_outputs: bool = False, **kwargs: Any) -> Any:
            logits = last_token_logits(model, inputs["input_ids"])
            loss = torch.nn.functional.cross_entropy(logits.float(), inputs["labels"])
            if not losses:
                losses.append(float(loss.detach()))
            return (loss, logits) if return_outputs else loss

    model = build_model(config, enc.vocab_size, 0)
    with tempfile.TemporaryDirectory() as tmp:
        args = transformers.TrainingArguments(
            output_dir=tmp,
            per_device_train_batch_size=config.batch_size,
            max_steps=steps,
            learning_rate=config.lr,
            adam_beta1=config.betas[0],
            adam_beta2=config.betas[1],
            weight_decay=config.weight_decay,
            warmup_steps=min(config.warmup_steps, steps),
            lr_scheduler_type="linear",
            logging_strategy="no",
            save_strategy="no",
            report_to=[],
            disable_tqdm=True,
            dataloader_num_workers=0,
            remove_unused_columns=False,
            use_cpu=device.type == "cpu",
            seed=0,
            fp16=config.mixed_precision and device.type == "cuda",
        )
        trainer = LastTokenTrainer(model=model, args=args, train_dataset=Stream())
        start = time.perf_counter()
        trainer.train()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        return time.perf_counter() - start, losses[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--config", default="small", choices=["small", "paper"])
    parser.add_argument("--task", default="number", choices=["number", "letter"])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--whole-job", action="store_true")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    config = get_config(args.config).with_overrides(steps=args.steps)  # both schedules end at --steps
    print(
        f"{args.config} config, {args.task} task, {args.steps} steps per run, {args.rounds} rounds, "
        f"{device}, torch {torch.__version__}, {torch.get_num_threads()} intra-op threads"
    )
    times: dict[str, list[float]] = {"ours": [], "HF Trainer": []}
    firsts: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, fn in (("ours", ours), ("HF Trainer", hf_trainer)):
            seconds, first = fn(args.task, config, args.steps, device)
            times[name].append(seconds)
            firsts[name] = first
    med = {name: args.steps / statistics.median(t) for name, t in times.items()}
    for name, t in times.items():
        runs = ", ".join(f"{args.steps / s:.2f}" for s in t)
        print(f"{name:>10}: median {med[name]:.2f} steps/s (runs: {runs}); first loss {firsts[name]:.6f}")
    print(f"ours / HF Trainer: {med['ours'] / med['HF Trainer']:.2f}x steps per second")
    if args.whole_job:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            record = train(args.task, get_config(args.config), f"{tmp}/run", device=device, progress=False)
            seconds = time.perf_counter() - start
        best = next(e for e in record.evaluations if e["step"] == record.best_step)
        print(
            f"whole job ({get_config(args.config).steps} steps, checkpoints, evaluations, dynamics): "
            f"{seconds:.1f} s; best step {record.best_step}, accuracy per hop {best['accuracy']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
