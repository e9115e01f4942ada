"""Write ``ropeproof/expected_seconds.json`` from the ``run.task_seconds`` of ``ropeproof check`` reports.

    python3 benchmarks/expected_seconds.py REPORT_DIR [REPORT_DIR ...]

Each report (``REPORT_DIR/report.json``) fills the table of its kind, ``quick`` or ``full`` (its
``run.flags.quick``); a later report of the same kind overrides an earlier one task by task. The file
orders the work of ``check``'s two processes on a machine that has no timings of its own yet
(:mod:`ropeproof._work_order`): it changes the order of the work, never a result. Measure on the project's
machine, idle, and say so in the commit.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ropeproof._work_order import SHIPPED


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("reports", nargs="+", type=Path, metavar="REPORT_DIR")
    args = parser.parse_args()
    table: dict[str, dict[str, float]] = {"quick": {}, "full": {}}
    for directory in args.reports:
        report = json.loads((directory / "report.json").read_text())
        kind = "quick" if report["run"]["flags"]["quick"] else "full"
        seconds = report["run"].get("task_seconds")
        if not seconds:
            raise SystemExit(f"{directory}/report.json has no run.task_seconds (a report of an older check)")
        table[kind].update(seconds)
        print(f"{directory}: {len(seconds)} {kind} tasks, {sum(seconds.values()):.1f} s in all")
    SHIPPED.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {SHIPPED}")


if __name__ == "__main__":
    main()
