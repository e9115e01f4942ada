"""Benchmark: saving the figures (matplotlib's layout and drawing), this checkout against a baseline.

    python3 benchmarks/bench_figure_saving.py [--baseline-python OTHER/bin/python] [--rounds 3]

Each side runs in a process of its own (``PYTHON benchmarks/bench_figure_saving.py --child``, so each
interpreter imports its own installation): it draws every ``--quick`` figure its installation can draw
from one fresh store (the data computed once, not timed), then saves them all ``--rounds`` times as PNG
(what ``check --quick`` writes) and as PNG and PDF (what the full check writes) into a temporary
directory with :func:`~ropeproof.paper_figures._style.save_figure`, alternating the two, and prints the
median CPU seconds of each. The sides run one after the other, the baseline first; the script prints both
and the ratios (this / baseline).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def child(rounds: int) -> dict[str, float]:
    """Median CPU seconds of saving every quick figure as PNG, and as PNG and PDF (module docstring)."""
    from ropeproof.machinery._result_store import ResultStore
    from ropeproof.paper_figures import available_figure_names, draw_figure
    from ropeproof.paper_figures._style import save_figure

    with tempfile.TemporaryDirectory() as tmp:
        store = ResultStore(Path(tmp) / "store")
        drawn = [draw_figure(name, True, store) for name in available_figure_names()]
        times: dict[str, list[float]] = {"png": [], "png,pdf": []}
        for r in range(rounds):
            for formats in times:
                out = Path(tmp) / f"{r}-{formats}"
                start = time.process_time()
                for result in drawn:
                    save_figure(result, out, formats.split(","))
                times[formats].append(time.process_time() - start)
    return {"figures": len(drawn), **{k: statistics.median(v) for k, v in times.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-python", default=None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.rounds)))
        return
    sides = [("baseline", args.baseline_python)] if args.baseline_python else []
    sides.append(("this", sys.executable))
    got = {}
    for name, python in sides:
        run = subprocess.run(
            [python, __file__, "--child", "--rounds", str(args.rounds)],
            check=True,
            capture_output=True,
            text=True,
            cwd=tempfile.gettempdir(),
        )
        got[name] = json.loads(run.stdout.strip().splitlines()[-1])
        print(f"{name}: {got[name]}")
    if "baseline" in got:
        for formats in ("png", "png,pdf"):
            this, base = got["this"][formats], got["baseline"][formats]
            print(f"{formats}: {this:.2f} s / {base:.2f} s = {this / base:.2f}x")


if __name__ == "__main__":
    main()
