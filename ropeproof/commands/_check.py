"""``ropeproof check``: verify every registered claim and write the report.

This module imports the claims (torch, sympy, ...) only when a run starts, after its second process
(:func:`~ropeproof._check_pool.start_second_process`) is on its way, so the two processes' start-ups
overlap."""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ropeproof.commands._arguments import (
    add_command,
    add_device,
    add_dtype,
    add_formats,
    add_json,
    add_output,
    int_in,
    positive_float,
)

if TYPE_CHECKING:
    import multiprocessing.pool

    from ropeproof.claims import CheckContext, Claim, ClaimResult
    from ropeproof.claims._corrections import Correction, CorrectionResult

DEFAULT_JOBS = 2 if (os.cpu_count() or 1) >= 2 else 1
"""``--jobs`` default: a second process shares the work when the machine has a second core."""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "check",
        example="ropeproof check --quick --out ropeproof-report --force",
        description=(
            "Verify every registered claim and write DIR/report.md, DIR/report.json and DIR/figures/;\n"
            "then compute the corrections of the refuted statements among the claims run (report.md's\n"
            "Corrections section, report.json's 'corrections'; ropeproof errata writes them alone).\n"
            "What claims and figures compute is computed once and kept in DIR/store/ (JSON), from which\n"
            "ropeproof figures --from-report DIR draws the figures again without computing.\n"
            "The report is written into a temporary directory and moved into place at the end, so DIR\n"
            "holds a complete run or is left as it was (Ctrl-C included)."
        ),
    )
    p.add_argument("--quick", action="store_true", help="the fast subset of claims, at smaller sizes")
    add_output(p, Path("ropeproof-report"), "output directory")
    add_device(p)
    add_dtype(
        p,
        "dtype of the claims' torch computations; pins are float64 facts, so in another dtype a moved pin "
        "or an undecidable verdict is reported as a difference, and only errors and flipped verdicts fail "
        "--strict",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 on any regression: a pinned verdict or witness that changed, an error, an "
        "unresolvable verdict of a pinned claim, or a correction whose status or pinned values changed",
    )
    p.add_argument(
        "--list", action="store_true", help="list the claims (id, source module, statement) and exit"
    )
    add_json(p, "the --list output")
    p.add_argument(
        "--claims",
        action="append",
        default=[],
        metavar="FILE_OR_MODULE",
        help="also load the claims of a Python file or an importable module (repeatable); they load and run "
        "in a process of their own, so nothing they change reaches the built-in claims (docs/claims.md)",
    )
    p.add_argument(
        "--claim-timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="stop a claim of yours (--claims, plugins) that runs longer than this, and report it as an "
        "error; loading them has the same limit (default: the claims process's own, DEFAULT_TIMEOUT in "
        "ropeproof.claims._claims_process)",
    )
    p.add_argument(
        "--only", action="append", default=[], metavar="PATTERN", help="run only ids matching a glob"
    )
    p.add_argument("--skip", action="append", default=[], metavar="PATTERN", help="skip ids matching a glob")
    p.add_argument(
        "--no-plugins",
        action="store_true",
        help="ignore claims registered under the ropeproof.claims entry point",
    )
    p.add_argument(
        "--certified",
        action="store_true",
        help="decide the Theorem 3.2 bound claims by interval arithmetic (Arb balls) where available",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--no-figures", action="store_true", help="skip the figures (report only)")
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="compute everything anew: neither read nor fill the cache of earlier runs' results",
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="the cache of earlier runs' results (default: $ROPEPROOF_CACHE_DIR, else ~/.cache/ropeproof): "
        "the store's values, the claims' outcomes and the figures' files, each reused only by the same code "
        "version after its SHA-256 is checked, so an unchanged rerun runs no claim and draws no figure",
    )
    add_formats(p)
    p.add_argument(
        "--jobs",
        type=int_in(1, 2),
        default=DEFAULT_JOBS,
        help="2: share the claims and figures with a second process, longest first by this machine's last "
        "computing run (both share the run's store, so nothing is computed twice; the tasks that run "
        "transformers go to the second first while they are at most half the work); it starts first thing, "
        "unless --claims is given: then none is started when only claims of yours and no figures are run, "
        "as those run in the first process; 1: one process",
    )
    p.set_defaults(run=run)


def _plain(value: Any) -> Any:
    """``value`` as JSON data: containers recursively, non-finite floats and other objects as text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    return str(value)


def _list(claims: list, args: argparse.Namespace) -> int:
    from ropeproof.claims._loading import claim_source

    if args.json:
        rows = [
            {
                "id": c.id,
                "source": claim_source(c),
                "statement": c.statement_for(args.quick),
                "reference": c.reference,
                "expected": c.expected,
                "quick": c.quick,
                "params": _plain(c.params),
            }
            for c in claims
        ]
        print(json.dumps({"claims": rows}))
        return 0
    for c in claims:
        print(f"{c.id:40s} {claim_source(c):32s} [{c.expected}] {c.statement_for(args.quick)}")
    return 0


def figures_of(claims: list, whole: bool) -> list[str] | None:
    """The figures a run of ``claims`` draws: ``None`` (every figure this installation can draw) for a
    whole run (no ``--only``/``--skip``), else the figures the selected claims name that this
    installation can draw
    (:attr:`~ropeproof.claims._registry.Claim.report_figures`), which may be none: ``check --claims
    FILE --only 'mine.*'`` draws no paper figure."""
    if whole:
        return None
    from ropeproof.paper_figures import available_figure_names

    available = available_figure_names()  # without the hf extra, the trained models' figures are left out
    names: list[str] = []
    for c in claims:
        names += [name for name in c.report_figures if name not in names and name in available]
    return names


def run(args: argparse.Namespace) -> int:
    """Start the second process first (:func:`_early_second_process`); load the claims of ``--claims``
    and the plugins in their own process (when there are any); run everything; stop both processes
    whatever happens."""
    second = _early_second_process(args)
    process = None
    try:
        from ropeproof.claims._loading import declared_entry_points

        plugins = [] if args.no_plugins else declared_entry_points()
        if args.claims or plugins:
            from ropeproof.claims._claims_process import ClaimsProcess

            limit = {} if args.claim_timeout is None else {"timeout": args.claim_timeout}
            process = ClaimsProcess(args.claims, entry_points=plugins, **limit)
        return _run(args, [] if process is None else process.claims, second)
    finally:
        if second is not None:
            second.terminate()  # the run's pool stopped it already, or it had nothing to take
            second.join()
        if process is not None:
            process.close()


def _early_second_process(args: argparse.Namespace) -> multiprocessing.pool.Pool | None:
    """The second process of a run that shares its work (``--jobs 2``), started before the claims are
    imported: it imports them (and the figures' modules) meanwhile. ``None`` for ``--list`` and for a run
    with ``--claims``, whose second process starts (if at all) once the selection shows that it could
    take something; a run whose selection leaves it nothing stops it unused."""
    if args.jobs < 2 or args.list or args.claims or _kept_whole(args):
        return None
    from ropeproof._check_pool import start_second_process

    return start_second_process(figures=not args.no_figures)


def _run_settings(args: argparse.Namespace) -> dict[str, Any]:
    """What selects and shapes a check's tasks (:func:`~ropeproof._task_cache.run_key`)."""
    return {
        "quick": bool(args.quick),
        "device": str(args.device),
        "dtype": str(args.dtype),
        "certified": bool(args.certified),
        "only": list(args.only),
        "skip": list(args.skip),
        "figures": not args.no_figures,
        "formats": None if args.formats is None else list(args.formats),
        "plugins": not args.no_plugins,
    }


def _kept_whole(args: argparse.Namespace) -> bool:
    """Whether the cache of earlier runs says that a check of these settings kept every task under this
    code version (:func:`~ropeproof._task_cache.kept_run`): a rerun that gives every task back from the
    cache needs no second process."""
    if args.no_cache:
        return False
    from ropeproof._task_cache import kept_run
    from ropeproof.machinery._errors import InputError
    from ropeproof.machinery._result_cache import ResultCache

    try:
        cache = ResultCache(args.cache_dir)
    except InputError:  # the run says so
        return False
    try:
        return kept_run(cache, _run_settings(args)) is not None
    finally:
        cache.close()


def _replayed(
    claims: list[Claim],
    names: list[str],
    formats: tuple[str, ...],
    corrections: list[Correction],
    ctx: CheckContext,
    out_dir: Path,
) -> tuple[dict[str, ClaimResult], dict[str, list[Path]], dict[str, CorrectionResult], dict[str, float]]:
    """The claims' results, the figures' files and the corrections' results that the cache of earlier
    runs gives back without running them (:mod:`ropeproof._task_cache`): ``({id: result}, {figure: files
    in out_dir}, {id: correction's result}, {task key: seconds})``."""
    import time

    from ropeproof._task_cache import replayed_claim, replayed_correction, replayed_figure

    results: dict[str, ClaimResult] = {}
    figures: dict[str, list[Path]] = {}
    fixes: dict[str, CorrectionResult] = {}
    seconds: dict[str, float] = {}
    if ctx.store.cache is None:
        return results, figures, fixes, seconds
    for c in claims:
        result = replayed_claim(c, ctx)
        if result is not None:
            results[c.id] = result
            seconds[f"claim:{c.id}"] = result.seconds
    for name in names:
        start = time.perf_counter()
        files = replayed_figure(name, ctx.quick, formats, ctx.store, out_dir)
        if files is not None:
            figures[name] = files
            seconds[f"figure:{name}"] = time.perf_counter() - start
    for correction in corrections:
        fixed = replayed_correction(correction, ctx)
        if fixed is not None:
            fixes[correction.id] = fixed
            seconds[f"correction:{correction.id}"] = fixed.seconds
    return results, figures, fixes, seconds


def _two_processes(
    args: argparse.Namespace,
    claims: list[Claim],
    names: list[str],
    formats: tuple[str, ...],
    ctx: CheckContext,
    out_dir: Path,
    history: Path,
    corrections: list[Correction],
    second: multiprocessing.pool.Pool | None,
) -> tuple[
    list[ClaimResult], dict[str, list[Path]], dict[str, str], dict[str, float], list[CorrectionResult]
]:
    """``claims`` and the figures ``names`` (drawn into ``out_dir``) run by this process and a second
    one (``second`` when it was started early, else a new one: :class:`~ropeproof._check_pool.CheckPool`),
    longest first by the seconds of earlier runs (:func:`~ropeproof._work_order.expected_seconds` in
    ``history``), the second taking those that run ``transformers`` first where they are at most half the
    work (:func:`~ropeproof._work_order.transformers_tasks`), with ``corrections`` computed in this
    process among them: ``(results, figures drawn,
    figures failed, seconds per task, corrections' results in the order of corrections)``. The second
    process is stopped whatever happens."""
    from tqdm import tqdm

    from ropeproof._check_pool import CheckPool
    from ropeproof._task_cache import recorded_claim
    from ropeproof._work_order import expected_seconds, transformers_tasks

    fixed: dict[str, CorrectionResult] = {}

    bar = tqdm(total=len(claims), desc="ropeproof check", unit="claim", disable=args.no_progress)

    def arrived(result: ClaimResult) -> None:
        bar.set_postfix_str(result.claim.id)
        bar.update()

    pool = CheckPool(
        claims,
        names,
        out_dir,
        ctx.store,
        args.quick,
        formats,
        getattr(args, "threads", None),
        run_here=lambda c: recorded_claim(c, ctx),
        context=(str(ctx.device), str(ctx.dtype).removeprefix("torch."), ctx.certified),
        seconds=expected_seconds(history, args.quick),
        on_claim=arrived,
        here_jobs={f"correction:{c.id}": functools.partial(_correct, c, ctx, fixed) for c in corrections},
        process=second,
        second_first=transformers_tasks((c.id for c in claims if c.builtin), names),
    )
    try:
        results, figures = pool.finish()
    finally:
        pool.cancel()
        bar.close()
    return results, figures, pool.failed, pool.seconds, [fixed[c.id] for c in corrections]


def _correct(correction: Correction, ctx: CheckContext, into: dict[str, CorrectionResult]) -> None:
    """``correction`` computed (:func:`~ropeproof.claims._corrections.run_correction`, kept in the cache of
    earlier runs: :func:`~ropeproof._task_cache.recorded_correction`) into ``into``."""
    from ropeproof._task_cache import recorded_correction

    into[correction.id] = recorded_correction(correction, ctx)


def _run(args: argparse.Namespace, yours: list, second: multiprocessing.pool.Pool | None) -> int:
    from ropeproof._report import STORE_DIR, write_report
    from ropeproof._task_cache import complete_run, kept_run, recorded_claim, recorded_correction
    from ropeproof._work_order import record_seconds
    from ropeproof.claims import (
        CheckContext,
        registered_claims,
        registered_corrections,
        registered_no_corrections,
        run_claims,
    )
    from ropeproof.claims._corrections import corrections_for
    from ropeproof.claims._loading import merge_claims, select_claims
    from ropeproof.machinery._atomic_output import atomic_directory
    from ropeproof.machinery._errors import InputError
    from ropeproof.machinery._result_cache import ResultCache, default_cache_dir
    from ropeproof.machinery._result_store import FROM_CACHE, ResultStore
    from ropeproof.verify.kernel._devices import resolve_dtype

    claims = merge_claims([*registered_claims(), *yours])
    claims = select_claims(claims, args.only, args.skip)
    if args.list:
        return _list(claims, args)
    if args.json:
        raise InputError("--json applies to --list only; a run writes its JSON to DIR/report.json")
    selected = [c for c in claims if c.quick or not args.quick]
    drawn = figures_of(selected, whole=not (args.only or args.skip))
    with atomic_directory(args.out, args.force) as staging:  # refuses a bad --out before any claim runs
        store = ResultStore(staging / STORE_DIR, cache=None if args.no_cache else ResultCache(args.cache_dir))
        ctx = CheckContext(
            args.device, resolve_dtype(args.dtype), quick=args.quick, certified=args.certified, store=store
        )
        figures: dict[str, list[Path]] = {}
        failed: dict[str, str] = {}  # figures whose drawing raised: their tracebacks (a bug)
        names: list[str] = []
        formats: tuple[str, ...] = ()
        kept_whole = None if store.cache is None or yours else kept_run(store.cache, _run_settings(args))
        if kept_whole is not None and not args.no_figures:  # the figures and formats of this very check
            names, formats = kept_whole
        elif not args.no_figures:
            from ropeproof.paper_figures import available_figure_names, default_formats
            from ropeproof.paper_figures._style import check_formats

            names = [n for n in available_figure_names() if drawn is None or n in drawn]  # report order
            formats = default_formats(args.quick) if args.formats is None else check_formats(args.formats)
        history = args.cache_dir if args.cache_dir is not None else default_cache_dir()
        ids = {c.id for c in selected}
        fixing = corrections_for(registered_corrections(), ids)
        kept, kept_figures, kept_fixes, task_seconds = _replayed(
            selected, names, formats, fixing, ctx, staging / "figures"
        )
        todo = [c for c in selected if c.id not in kept]
        to_draw = [n for n in names if n not in kept_figures]
        to_fix = [c for c in fixing if c.id not in kept_fixes]
        if args.jobs > 1 and (to_draw or any(c.builtin for c in todo)):  # else nothing it could take
            results, figures, failed, ran_seconds, corrections = _two_processes(
                args, todo, to_draw, formats, ctx, staging / "figures", history, to_fix, second
            )
            task_seconds.update(ran_seconds)
        else:
            results = list(run_claims(todo, ctx, progress=not args.no_progress, run=recorded_claim))
            if to_draw:
                from ropeproof._check_pool import draw_figures

                figures, failed = draw_figures(
                    to_draw, staging / "figures", store, args.quick, formats, seconds=task_seconds
                )
            task_seconds.update({f"claim:{r.claim.id}": r.seconds for r in results})
            corrections = [recorded_correction(c, ctx) for c in to_fix]
            task_seconds.update({f"correction:{r.correction.id}": r.seconds for r in corrections})
        by_id = {**kept, **{r.claim.id: r for r in results}}
        results = [by_id[c.id] for c in selected]  # report order
        figures = {n: kept_figures.get(n) or figures[n] for n in names if n in kept_figures or n in figures}
        fixed_by_id = {**kept_fixes, **{r.correction.id: r for r in corrections}}
        corrections = [fixed_by_id[c.id] for c in fixing]
        replayed = len(kept) + len(kept_figures) + len(kept_fixes)
        missing = [nc for nc in registered_no_corrections() if nc.claim in ids]
        computations = store.computation_counts()
        reused = sum(store.computation_counts(FROM_CACHE).values())
        # a run that read earlier results did not do the work the seconds order; --no-cache writes nothing
        if not reused and not replayed and not args.no_cache:
            record_seconds(history, args.quick, task_seconds)
        store.finish_run()
        if store.cache is not None:
            whole = not failed and all(c.builtin and r.outcome.verdict != "error" for c, r in zip(
                selected, results, strict=True)) and all(r.error is None for r in corrections)  # fmt: skip
            if whole and not yours:
                complete_run(store.cache, _run_settings(args), names, formats)
            store.cache.close()
        flags = {"strict": args.strict, "figures": not args.no_figures, "only": args.only, "skip": args.skip}
        argv = getattr(args, "argv", None)
        report = write_report(
            results,
            ctx,
            staging,
            figures,
            argv,
            flags,
            corrections,
            missing,
            failed,
            computations,
            reused,
            task_seconds,
            tasks_from_cache=replayed,
        )
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(report["counts"].items()))
    fixed = f", {len(corrections)} corrections" if corrections else ""
    print(f"{len(results)} claims checked ({counts}){fixed}; report in {args.out}/report.md")
    failing = [r for r in results if r.regression is not None]
    regressions = [(r.claim.id, r.regression) for r in failing if r.claim.builtin]
    regressions += [(f"correction {r.correction.id}", r.regression) for r in corrections if r.regression]
    unexpected = [(r.claim.id, r.regression) for r in failing if not r.claim.builtin]
    for name, why in regressions:
        print(f"regression: {name}: {why}", file=sys.stderr)
    for name, why in unexpected:  # your claims: what they expect against what they got
        print(f"your claim {name}: {why}", file=sys.stderr)
    for name, text in failed.items():  # a bug: the claims and the other figures are in the report
        last = text.strip().splitlines()[-1] if text.strip() else "no message"
        print(
            f"ropeproof check: internal error: figure {name} was not drawn ({last}); the report has its "
            f"traceback (report.md, Figure errors) and everything else; please report it",
            file=sys.stderr,
        )
    if failed:
        return 3
    return 1 if args.strict and (regressions or unexpected) else 0
