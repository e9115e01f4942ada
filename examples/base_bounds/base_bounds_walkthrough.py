"""Men et al.'s base bound checked end to end: the paper's 16k base in one call, the good and bad bases
over a range for several context lengths (a figure), and the recomputed table.

Run it (writes under ``OUT``, default ``base_bounds_out``)::

    python examples/base_bounds/base_bounds_walkthrough.py [OUT]

Every step uses ropeproof's public API only. The lines it prints are what ``docs/guides/base-bounds.md``
shows, and ``tests/test_examples.py`` checks them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from base_bounds import PAPER_TABLE, base_scan, context_length, men_spectrum, two_figures

from ropeproof import plot_parameter_scans, save_figure, sweep_spectrum

FIGURE_ROWS: tuple[str, ...] = ("1k", "2k", "4k", "8k")
"""The rows drawn (1k read as 1024), each over [paper base / 2, paper base * 3]."""
TABLE = Path(__file__).with_name("base_bounds_table.json")


def paper_16k() -> Any:
    """The paper's 16k base, b = 3.1e5, swept over m = 0 .. 16384 in one call (certified, stops at the first
    negative B_m)."""
    return sweep_spectrum(men_spectrum(3.1e5), 16384)


def scans(rows: tuple[str, ...] = FIGURE_ROWS, span: tuple[float, float] = (0.5, 3.0)) -> dict[str, Any]:
    """Every base of the 0.2% grid on [paper * span[0], paper * span[1]] for each row (1k = 1024)."""
    out = {}
    for label in rows:
        paper = PAPER_TABLE[label]
        out[label] = base_scan(context_length(label, "1024"), paper * span[0], paper * span[1])
    return out


def report(first: Any, scanned: dict[str, Any]) -> list[str]:
    lo, hi = first.witness
    lines = [
        f"b = 3.1e5, m <= 16384: first B_m < 0 at m = {first.first_violation}, "
        f"B_m in [{lo:.10f}, {hi:.10f}] (certified, {first.enclosed} rows enclosed)",
        "good bases on a 0.2% grid, 1k = 1024:",
    ]
    for label, scan in scanned.items():
        runs = ", ".join(f"[{r.lo:.5g}, {r.hi:.5g}]" for r in scan.intervals)
        below, good = scan.smallest_good
        bad, above = scan.sup_bad
        lines.append(f"  {label}: {len(scan.intervals)} runs of good bases: {runs}")
        lines.append(
            f"    smallest good {good:.6g} (bad {below:.6g} below it); every base above {bad:.6g} is good "
            f"(from {above:.6g}); paper {PAPER_TABLE[label]:g}"
        )
    return lines


def table_lines(path: Path = TABLE) -> list[str]:
    """The recomputed table (``base_bounds_table.json``): per row and reading, the smallest good base rounded
    to two figures, the bracket ratio of "every base above" to it, and the paper base's first negative m."""
    rows = json.loads(path.read_text())
    lines = ["row    L        smallest good  (2 s.f.)  paper   every-above/smallest  paper base fails at"]
    for key, row in sorted(rows.items(), key=lambda kv: kv[1]["length"]):
        good = row["smallest_good"][1]
        above = row["sup_bad"][1]
        ratio = (
            f"{above / good:.2f}"
            if above not in (None, row["range"][1])
            else f">= {row['range'][1] / good:.2f}"
        )
        fails = row["paper_base_first_negative"]
        lines.append(
            f"{key:10s} {row['length']:8d} {good:12.6g}  {two_figures(good):8.1e}  {row['paper_base']:7.1e}  "
            f"{ratio:>20s}  {'-' if fails is None else fails}"
        )
    return lines


def main(out: str | Path = "base_bounds_out", rows: tuple[str, ...] = FIGURE_ROWS) -> dict[str, Any]:
    """Run every step, print what it found, and return the results."""
    out = Path(out)
    first = paper_16k()
    scanned = scans(rows)
    lines = report(first, scanned)
    figure = plot_parameter_scans(
        {f"L = {context_length(k, '1024')}": s for k, s in scanned.items()},
        parameter="base b",
        marks={f"L = {context_length(k, '1024')}": PAPER_TABLE[k] for k in scanned},
        name="base_bounds_good_bases",
    )
    written = save_figure(figure, out / "figures")
    lines.append(f"figure: {', '.join(p.name for p in written if p.suffix == '.png')}")
    lines += table_lines()
    print("\n".join(lines))
    return {"first": first, "scans": scanned, "figures": written, "lines": lines}


if __name__ == "__main__":
    main(*sys.argv[1:2])
