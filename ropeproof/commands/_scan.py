"""``ropeproof scan base|scale|angle``: scan a spectrum's parameter over a grid; per value the first offset
where ``B(m) = sum_k a_k cos(m theta_k)`` breaks the relation, and the good set as it is (its runs, the
smallest good value and the supremum of the bad values, reported separately).

- ``base``: ``theta_i = x^(-2i/dim)``, ``i < dim/2`` (``Spectrum.from_base(x, dim)``);
- ``scale``: that spectrum at ``--base`` with every frequency divided by ``x`` (linear scaling);
- ``angle``: one plane at ``theta = x``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ropeproof.commands._arguments import add_command, add_json, finite_float, int_in, positive_float
from ropeproof.machinery._errors import InputError

PARAMETERS = ("base", "scale", "angle")


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "scan", example="ropeproof scan base --range 2000:20000 --resolution 0.002 --max-m 1024"
    )
    p.add_argument(
        "parameter",
        choices=PARAMETERS,
        help="what x is: the base, a scale dividing every frequency, an angle",
    )
    p.add_argument(
        "--range",
        dest="interval",
        required=True,
        metavar="LO:HI",
        type=_interval,
        help="the interval scanned",
    )
    p.add_argument(
        "--resolution",
        type=positive_float,
        required=True,
        help="grid step: a ratio 1 + r (log) or r (linear)",
    )
    p.add_argument("--spacing", choices=("log", "linear"), default="log", help="grid spacing (default: log)")
    p.add_argument("--max-m", type=int_in(0), required=True, help="offsets m = 0 .. MAX_M")
    p.add_argument(
        "--dim", type=int_in(2, even=True), default=128, help="head dimension: dim/2 planes (default 128)"
    )
    p.add_argument(
        "--base", type=positive_float, default=10000.0, help="the base for 'scale' (default 10000)"
    )
    p.add_argument("--relation", choices=(">=", ">", "<=", "<"), default=">=", help="B(m) RELATION THRESHOLD")
    p.add_argument("--threshold", type=finite_float, default=0.0, help="default 0")
    p.add_argument(
        "--scope",
        choices=("all", "thresholds", "smallest"),
        default="all",
        help="sweep every value (default), what both thresholds need, or what the smallest good value needs",
    )
    add_json(p, "the scan's summary")
    p.set_defaults(run=run)


def _interval(text: str) -> tuple[float, float]:
    parts = text.split(":")
    try:
        lo, hi = (float(x) for x in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not LO:HI (two numbers)") from None
    if not lo <= hi:
        raise argparse.ArgumentTypeError(f"{text!r}: LO must be <= HI")
    return lo, hi


def _builder(args: argparse.Namespace) -> Any:
    from ropeproof.theory._spectrum import Spectrum  # sympy: imported when a run starts, not for --help

    if args.parameter == "base":
        return lambda x: Spectrum.from_base(x, args.dim)
    if args.parameter == "scale":
        freqs = Spectrum.from_base(args.base, args.dim).freqs

        def scaled(x: float) -> Spectrum:
            if not x > 0:
                raise InputError(f"scale={x!r} is out of range; accepted: a real number > 0")
            return Spectrum(tuple(f / x for f in freqs))

        return scaled
    return lambda x: Spectrum((x,))


def run(args: argparse.Namespace) -> int:
    from ropeproof.verify.measure.exact._parameter_scan import scan_parameter

    scan = scan_parameter(
        _builder(args),
        args.max_m,
        interval=args.interval,
        resolution=args.resolution,
        spacing=args.spacing,
        relation=args.relation,
        threshold=args.threshold,
        scope=args.scope,
    )
    summary = {"parameter": args.parameter, **scan.summary()}
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"{args.parameter}: {summary['relation']}; grid {summary['grid']} values, {summary['resolution']}")
    print(f"verdicts (certified): {summary['counts']}")
    if scan.is_interval is None:
        print("good set: not known (values left unscanned by --scope)")
    else:
        print(f"good set: {len(scan.intervals)} run(s){'' if scan.is_interval else ' (not an interval)'}")
        for r in scan.intervals:
            ends = f"below: {_near(r.below, r.below_verdict)}  above: {_near(r.above, r.above_verdict)}"
            print(f"  [{r.lo:.10g}, {r.hi:.10g}]  {ends}")
    if scan.smallest_good is None:
        print("smallest good value: none on the grid")
    else:
        below, good = scan.smallest_good
        print(f"smallest good value at this resolution: {good:.10g} (below it: {_near(below, 'bad')})")
    if scan.sup_bad is None:
        print("supremum of the bad values: none on the grid")
    else:
        bad, above = scan.sup_bad
        tail = (
            f"every grid value from {above:.10g} up is good"
            if above is not None
            else "the top of the grid is bad"
        )
        print(f"supremum of the bad values: {bad:.10g} ({tail})")
    return 0


def _near(value: float | None, verdict: str | None) -> str:
    return "the grid's end" if value is None else f"{value:.10g} ({verdict})"
