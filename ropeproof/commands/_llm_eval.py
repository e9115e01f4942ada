"""``ropeproof llm-eval``: [A]'s frontier-LLM 1-hop protocol on any model
(:mod:`ropeproof.verify.studies.llm_eval`), and ``ropeproof llm-eval plot DIR...``: [A]'s figure from run
directories.

A run directory (``--out``) holds ``run.json`` (settings), ``log.jsonl`` (every request and reply, as
it arrives) and ``results.json`` (the summary). Rerunning the same command resumes: only prompts
without a reply are sent. Keys come from the environment (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``,
or the variable ``--api-key-env`` names) and never appear in any output. Exit codes: 0 every prompt
answered, 1 some prompts still without a reply (rerun to retry them), 2 bad input or a refusal by the
server, 130 interrupted (the replies so far are kept).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, NoReturn

from ropeproof.commands._arguments import (
    add_command,
    add_device,
    add_json,
    add_output,
    checked_real,
    image_formats,
    int_in,
    positive_float,
)
from ropeproof.machinery._atomic_output import atomic_directory, check_output_target
from ropeproof.machinery._errors import InputError

PROVIDERS = ("openai", "anthropic", "hf", "python")
TASK_CHOICES = ("number", "letter", "both")
FORMAT_CHOICES = ("auto", "chat", "task")
HF_DTYPES = ("float32", "bfloat16", "float16")
EXIT_INCOMPLETE = 1
EXIT_INTERRUPTED = 130
"""As :data:`ropeproof._cli.EXIT_INTERRUPTED`."""


def lengths_list(text: str) -> tuple[int, ...]:
    """``--lengths``: comma-separated integers or inclusive ranges ``A:B[:STEP]``, each in 2..4096."""
    from ropeproof.verify.studies.llm_eval._protocol import MAX_LENGTH, MIN_LENGTH

    accepted = f"comma-separated lengths or ranges A:B[:STEP], each in {MIN_LENGTH}..{MAX_LENGTH}"
    out: list[int] = []
    try:
        for part in text.split(","):
            bits = [int(b) for b in part.strip().split(":")]
            if len(bits) == 1:
                out.append(bits[0])
            elif len(bits) in (2, 3) and (len(bits) == 2 or bits[2] >= 1) and bits[0] <= bits[1]:
                out.extend(range(bits[0], bits[1] + 1, bits[2] if len(bits) == 3 else 1))
            else:
                raise ValueError(part)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of lengths; accepted: {accepted}") from None
    if not out or any(not MIN_LENGTH <= n <= MAX_LENGTH for n in out):
        raise argparse.ArgumentTypeError(f"{text!r} is out of range; accepted: {accepted}")
    if len(out) > 1000:
        raise argparse.ArgumentTypeError(f"{text!r} names {len(out)} lengths; at most 1000")
    return tuple(dict.fromkeys(out))


def temperature(text: str) -> float | None:
    """``--temperature``: a number >= 0, or ``omit`` (send none: the provider's default)."""
    if text == "omit":
        return None
    return checked_real(text, low=0.0, high=100.0, note="or 'omit'")


def json_object(text: str) -> dict[str, Any]:
    """``--extra-body``: a JSON object."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise argparse.ArgumentTypeError(f"{text!r} is not JSON") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{text!r} is not a JSON object")
    return value


class _PlotParser(argparse.ArgumentParser):
    """``llm-eval plot``'s parser: its errors are one line under the command's name, like every other
    error of ``ropeproof llm-eval``."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(message.split())
        self.exit(2, f"ropeproof llm-eval: error: {text} (see '{self.prog} --help')\n")


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "llm-eval",
        example="ropeproof llm-eval --provider openai --model gpt-4o-mini --out runs/gpt-4o-mini",
        description=(
            "Ask a model [A]'s 1-hop number and letter prompts at several lengths, zero-shot, temperature\n"
            "0, and report accuracy per length (mean and std over dataset draws, 95% Clopper-Pearson\n"
            "interval). Every reply is appended to OUT/log.jsonl as it arrives; rerunning the same command\n"
            "resumes. Keys: OPENAI_API_KEY, ANTHROPIC_API_KEY (or --api-key-env). The openai and anthropic\n"
            "providers need the llm extra (pip install 'ropeproof[llm]'), hf the hf extra. Exit codes:\n"
            "0 all answered, 1 prompts still without a reply (rerun to retry them), 2 bad input or refused\n"
            "by the server, 130 interrupted."
        ),
    )
    actions = p.add_subparsers(
        dest="action",
        metavar="{plot}",
        required=False,
        parser_class=_PlotParser,
        help="plot DIR... --out FIGDIR: draw [A]'s figure from run directories instead of running a model",
    )
    plot = actions.add_parser(
        "plot",
        help="draw [A]'s figure from one or more run directories",
        description="Accuracy against length for both tasks, one line per run (runs that share a label are\n"
        "joined), with 95% intervals, [A]'s reported levels, and each model's reading of the ordering.",
        epilog="example:\n  ropeproof llm-eval plot runs/gpt-4o-mini runs/claude --out figures/llm-eval",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    plot.add_argument(
        "runs", nargs="+", type=Path, metavar="DIR", help="run directories of ropeproof llm-eval"
    )
    add_output(plot, None, "figure directory (llm_eval.png/.pdf/.csv/.caption.txt)")
    plot.add_argument(
        "--formats",
        type=image_formats,
        default=("png", "pdf"),
        metavar="LIST",
        help="image formats, comma-separated from png,pdf",
    )
    plot.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the full traceback of an error instead of the one-line message",
    )
    add_json(plot, "the files written and the readings")
    plot.set_defaults(run=run)

    p.add_argument("--provider", choices=PROVIDERS, default=None, help="where the model runs (required)")
    p.add_argument(
        "--model",
        default=None,
        help="model name (openai, anthropic), checkpoint directory (hf), module:function or file.py:function "
        "(python) (required)",
    )
    p.add_argument("--base-url", default=None, help="server URL (openai: .../v1; anthropic: the root)")
    p.add_argument("--api-key-env", default=None, metavar="NAME", help="environment variable holding the key")
    p.add_argument(
        "--task", choices=TASK_CHOICES, default=None, help="task (default: both; a task model's own)"
    )
    p.add_argument(
        "--lengths",
        type=lengths_list,
        default="8,16,32,64,100",
        help="sequence lengths, final token included",
    )
    p.add_argument("--prompts", type=int_in(1, 100_000), default=50, help="prompts per draw and length")
    p.add_argument("--draws", type=int_in(1, 1000), default=5, help="dataset draws per task and length")
    p.add_argument("--seed", type=int_in(0), default=0, help="seed of the datasets")
    p.add_argument(
        "--format",
        choices=FORMAT_CHOICES,
        default="auto",
        help="chat: [A]'s prompts; task: the raw token sequence; auto: task for a checkpoint built for one "
        "task (its export or training record, or a task tokenizer of any size), else chat",
    )
    p.add_argument("--max-tokens", type=int_in(1, 1_000_000), default=16, help="reply length limit in tokens")
    p.add_argument("--temperature", type=temperature, default=0.0, help="sampling temperature, or 'omit'")
    p.add_argument(
        "--token-param",
        choices=("max_tokens", "max_completion_tokens"),
        default=None,
        help="openai: the body field of the token limit (default: max_completion_tokens for OpenAI's own "
        "API, max_tokens with --base-url)",
    )
    p.add_argument(
        "--extra-body",
        type=json_object,
        default=None,
        metavar="JSON",
        help='extra request body fields, e.g. \'{"reasoning_effort": "minimal"}\'',
    )
    p.add_argument("--timeout", type=positive_float, default=60.0, help="seconds per attempt of a request")
    p.add_argument(
        "--max-retries", type=int_in(0, 100), default=8, help="retries of a request (429, 5xx, timeout)"
    )
    p.add_argument(
        "--concurrency", type=int_in(1, 256), default=4, help="requests in flight (openai, anthropic, python)"
    )
    p.add_argument(
        "--max-failures", type=int_in(1), default=10, help="consecutive failed requests that stop the run"
    )
    add_device(p)
    p.add_argument("--dtype", choices=HF_DTYPES, default="float32", help="hf: the weights' dtype")
    p.add_argument("--label", default=None, help="the model's name in figures (default: the model)")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="run directory (required; resumed if it holds this run)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace --out when it holds other files or a run with other settings (a run with the same "
        "settings is always resumed)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_json(p, "the results")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "action", None) == "plot":
        return run_plot(args)
    for option in ("provider", "model", "out"):
        if getattr(args, option) is None:
            raise InputError(f"--{option} is required (see 'ropeproof llm-eval --help')")
    return run_eval(args)


def _tasks(args: argparse.Namespace, provider: Any, fmt: str) -> list[str]:
    own = getattr(provider, "task", None)
    if args.task is None:
        return [own] if fmt == "task" and own else ["number", "letter"]
    return ["number", "letter"] if args.task == "both" else [args.task]


def run_eval(args: argparse.Namespace) -> int:
    from ropeproof.verify.studies.llm_eval._choose_provider import make_provider
    from ropeproof.verify.studies.llm_eval._harness import evaluate
    from ropeproof.verify.studies.llm_eval._run_log import LOG_FILE
    from ropeproof.verify.studies.llm_eval._runner import FailureStreakError

    check_output_target(args.out, force=True)  # a file, a protected place: refused before any work
    provider = make_provider(
        args.provider,
        args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        timeout=args.timeout,
        max_retries=args.max_retries,
        token_param=args.token_param,
        extra_body=args.extra_body,
        fmt=args.format,
        device=args.device,
        dtype=args.dtype,
    )
    fmt = getattr(provider, "format", None) or ("chat" if args.format == "auto" else args.format)
    tasks = _tasks(args, provider, fmt)
    try:
        summary = evaluate(
            provider,
            tasks,
            args.lengths,
            args.prompts,
            args.draws,
            args.seed,
            fmt,
            args.out,
            args.label,
            args.concurrency,
            progress=not args.no_progress,
            force=args.force,
            max_failures=args.max_failures,
        )
    except KeyboardInterrupt:
        print(
            f"ropeproof llm-eval: interrupted; every reply received is in {args.out / LOG_FILE}; rerun the "
            "same command to continue",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except FailureStreakError as exc:  # not bad input: prompts are left without a reply, a rerun retries
        print(f"ropeproof llm-eval: {_redacted(exc, provider)}", file=sys.stderr)
        return EXIT_INCOMPLETE
    except Exception as exc:  # whatever the client raised: its message goes out without the key
        _redacted(exc, provider)
        raise
    if args.json:
        print(json.dumps(summary.to_json()))
    else:
        print(_text(summary))
    if not summary.complete:
        print(
            f"ropeproof llm-eval: {summary.missing} prompts have no reply (see the errors in "
            f"{args.out / LOG_FILE}); rerun the same command to retry them",
            file=sys.stderr,
        )
        return EXIT_INCOMPLETE
    return 0


def _redacted(exc: BaseException, provider: Any) -> BaseException:
    """``exc`` with every text argument, and those of the exceptions it was raised from, passed through
    the provider's redactor (a client error may quote the key it sent)."""
    redact = provider.redactor()
    seen: set[int] = set()
    err: BaseException | None = exc
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        err.args = tuple(redact(a) for a in err.args)
        err = err.__cause__ or err.__context__
    return exc


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _text(summary: Any) -> str:
    doc = summary.to_json()
    lines = [
        f"{doc['label']} ({doc['provider']}, {doc['format']} format) -> {doc['path']}",
        f"{'task':7} {'length':>6}  {'accuracy':>8} {'std':>6} {'n':>6}  95% interval (Clopper-Pearson)",
    ]
    for r in doc["results"]:
        lines.append(
            f"{r['task']:7} {r['length']:>6}  {_fmt(r['accuracy_mean']):>8} {_fmt(r['accuracy_std']):>6} "
            f"{r['n_prompts']:>6}  [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]"
        )
    lines.append(f"reading: {doc['ordering']['reading']}")
    for t in doc["thresholds"]:
        lines.append(f"[A] {t['task']} {t['reported']} at length {t['length']}: {t['verdict']}")
    return "\n".join(lines)


def run_plot(args: argparse.Namespace) -> int:
    from ropeproof.paper_figures._llm_eval import llm_eval_figure, readings
    from ropeproof.paper_figures._style import save_figure
    from ropeproof.verify.studies.llm_eval._results import load_run, merge_by_label

    summaries = merge_by_label([load_run(path) for path in args.runs])
    fmts = args.formats
    with atomic_directory(args.out, args.force) as staging:
        result = llm_eval_figure(summaries)
        written = save_figure(result, staging, fmts)
    files = [str(Path(args.out) / p.name) for p in written]
    lines = readings(summaries)
    if args.json:
        print(json.dumps({"files": files, "readings": lines}))
    else:
        print("\n".join([f"wrote {', '.join(files)}", *lines]))
    return 0
