"""``ropeproof check``: verify every registered claim and write the report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ropeproof.claims import CheckContext, registered_claims, run_claims
from ropeproof.claims.loading import ClaimLoadError, claim_source, gather_claims, select_claims
from ropeproof.report import write_report
from ropeproof.verify.runtime.devices import resolve_device, resolve_dtype


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="verify every registered claim; write report.md/json and figures")
    p.add_argument("--quick", action="store_true", help="the fast subset (under a minute on 2 cores)")
    p.add_argument("--out", type=Path, default=Path("ropeproof-report"), help="output directory")
    p.add_argument("--device", default="auto", help="auto (CUDA if available), cpu or cuda")
    p.add_argument("--dtype", default="float64", help="float64, float32, float16 or bfloat16")
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 on any regression: a pinned verdict or witness that changed, an error, or an "
        "unresolvable verdict of a pinned claim",
    )
    p.add_argument(
        "--list", action="store_true", help="list the claims (id, source module, statement) and exit"
    )
    p.add_argument(
        "--claims",
        action="append",
        default=[],
        metavar="FILE_OR_MODULE",
        help="also load the claims of a Python file or an importable module (repeatable)",
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
        help="decide the Theorem 3.2 bound claims by interval arithmetic (mpmath.iv) where available",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--no-figures", action="store_true", help="skip the figures (report only)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        claims = gather_claims(registered_claims(), args.claims, entry_points=not args.no_plugins)
        claims = select_claims(claims, args.only, args.skip)
    except ClaimLoadError as exc:
        print(f"ropeproof check: error: {exc}", file=sys.stderr)
        return 2
    if args.list:
        for c in claims:
            print(f"{c.id:40s} {claim_source(c):32s} [{c.expected}] {c.statement_for(args.quick)}")
        return 0
    ctx = CheckContext(
        resolve_device(args.device), resolve_dtype(args.dtype), quick=args.quick, certified=args.certified
    )
    selected = [c for c in claims if c.quick or not args.quick]
    results = list(run_claims(selected, ctx, progress=not args.no_progress))
    figures: dict[str, list[Path]] = {}
    if not args.no_figures:
        from ropeproof.paper_figures import make_all

        figures = make_all(args.out / "figures", quick=args.quick)
    flags = {"strict": args.strict, "figures": not args.no_figures}
    report = write_report(results, ctx, args.out, figures, getattr(args, "argv", None), flags)
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(report["counts"].items()))
    print(f"{len(results)} claims checked ({counts}); report in {args.out}/report.md")
    regressions = [r for r in results if r.regression is not None]
    for r in regressions:
        print(f"regression: {r.claim.id}: {r.regression}", file=sys.stderr)
    return 1 if args.strict and regressions else 0
