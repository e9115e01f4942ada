"""``ropeproof train number|letter --config small --out DIR``: train [A]'s model (HF ``GPTJForCausalLM``)
on a task, seeded, with checkpoints every N steps and resume
(:mod:`ropeproof.verify.studies.training._trainer`).
Needs the optional ``hf`` extra."""

from __future__ import annotations

import argparse
import json

from ropeproof.commands._arguments import add_command, add_device, add_json, add_output, int_in
from ropeproof.commands._choices import TASKS
from ropeproof.machinery._atomic_output import check_output_target
from ropeproof.verify.studies.training._config import CONFIGS, MAX_SEED


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "train",
        example="ropeproof train number --config small --out runs/number-small",
        description=(
            "Train a GPTJForCausalLM on balanced 17-token task inputs (loss on the last token only, AdamW,\n"
            "linear warm-up and decay). Writes checkpoints/step-N/ every --checkpoint-every steps, the run\n"
            "record training.json, and the best checkpoint into --out itself (from_pretrained(DIR) loads\n"
            "it).\n"
            "Before it starts, the run's time (from a measured step), memory and checkpoint space are\n"
            "estimated on this machine; a run that cannot fit is refused (ROPEPROOF_TIME_LIMIT, default 30\n"
            "days, and ROPEPROOF_MEMORY_LIMIT set the limits)."
        ),
    )
    p.add_argument("task", choices=TASKS, help="number or letter task")
    p.add_argument("--config", choices=sorted(CONFIGS), default="small", help="named configuration")
    add_output(
        p,
        None,
        "run directory (checkpoints, record, best model)",
        "written as the run goes, each checkpoint and record update atomically, so --resume can continue; "
        "--force replaces an old run only once the new run's first checkpoint is in place",
    )
    p.add_argument("--steps", type=int_in(1), default=None, help="training steps (default: the config's)")
    p.add_argument(
        "--seed", type=int_in(0, MAX_SEED), default=0, help="seed of initialisation, data and dropout"
    )
    p.add_argument("--checkpoint-every", type=int_in(1), default=None, help="steps between checkpoints")
    p.add_argument("--eval-prompts", type=int_in(4), default=None, help="validation prompts per checkpoint")
    p.add_argument(
        "--score-prompts", type=int_in(0), default=None, help="layer-swap scoring prompts (0: no dynamics)"
    )
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_device(p)
    add_json(p, "the record summary")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ropeproof.verify.studies.training._trainer import train

    config = CONFIGS[args.config].with_overrides(
        args.steps, args.checkpoint_every, args.eval_prompts, args.score_prompts
    )
    if not args.resume:
        check_output_target(args.out, args.force)  # before any work; train() checks again
    record = train(
        args.task,
        config,
        args.out,
        seed=args.seed,
        device=args.device,
        resume=args.resume,
        force=args.force,
        progress=not args.no_progress,
        with_dynamics=config.score_prompts > 0,
    )
    best = next(e for e in record.evaluations if e["step"] == record.best_step)
    if args.json:
        doc = {
            "path": str(args.out),
            "task": args.task,
            "config": config.to_json(),
            "seed": args.seed,
            "best_step": record.best_step,
            "accuracy": best["accuracy"],
            "final_loss": record.losses[-1],
        }
        print(json.dumps(doc))
        return 0
    acc = best["accuracy"]
    per_hop = ", ".join(f"{h} hops {acc[str(h)]:.3f}" for h in (1, 2, 3, 4) if str(h) in acc)
    print(
        f"trained {args.task} ({config.name}, {config.steps} steps, seed {args.seed}) into {args.out}; best "
        f"step {record.best_step}: validation accuracy {acc['0']:.3f} ({per_hop}) on {config.eval_prompts} "
        "prompts"
    )
    return 0
