"""Benchmark: ``ropeproof sweep`` from the command line against one numpy pass (issue 35 item 4).

    python3 benchmarks/bench_sweeps_anchor.py [--repeats 3] [--lengths 1000000] [--step 1000] [--full]

For ``sweep index --theta 0.866`` and ``sweep retrieval --alphabet 1000 --theta 0.866`` over
``n = 2 .. lengths + 1`` (every row computed and judged; the rows ``2, 2 + step, ...`` written as JSON
Lines), prints in one run, round robin over ``--repeats`` rounds, medians:

- the command as a process (``python -m ropeproof sweep ...``: interpreter start, imports, the sweep,
  the verdicts, the file), wall and CPU seconds;
- the anchor as a process (``benchmarks/sweep_anchors.py``: interpreter start, numpy, the toolkit's
  angle and code modules, one numpy pass for the margins, the same rows written), wall and CPU seconds;
- computation only, in this process: the sweep's row iterator (every row, judged) against the anchor's
  numpy pass, CPU seconds;
- whether the written margins are the anchor's, bit for bit;
- with ``--full``, the command of issue 35 as stated, writing every row as its text table
  (``ropeproof sweep ... --lengths 2:N+1 --out F``), against the anchor writing every row's margin
  (``sweep_anchors.py ... STEP=1``), both as processes, wall and CPU seconds; the full anchor's
  margins are compared with the command's JSON Lines rows (at ``--step``), bit for bit.

The ratios command / anchor are the figures of issue 35 (target: within 2x including the command's
start). The machine's load average is printed before and after each case.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import sweep_anchors  # noqa: E402


def run_process(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system of the child) seconds of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cases(lengths: int) -> list[dict[str, Any]]:
    top = lengths + 1
    return [
        {
            "name": f"sweep index --theta 0.866, {lengths} lengths",
            "cli": ["sweep", "index", "--theta", "0.866"],
            "anchor": ["index", "0.866", str(top)],
            "rows": lambda: _iter("index", top),
            "numpy": lambda: sweep_anchors.index_margins(0.866, top),
        },
        {
            "name": f"sweep retrieval --alphabet 1000 --theta 0.866, {lengths} lengths",
            "cli": ["sweep", "retrieval", "--alphabet", "1000", "--theta", "0.866"],
            "anchor": ["retrieval", "0.866", str(top), "--alphabet", "1000"],
            "rows": lambda: _iter("retrieval", top),
            "numpy": lambda: sweep_anchors.retrieval_margins(1000, 0.866, top),
        },
    ]


def _iter(kind: str, top: int) -> int:
    from ropeproof.verify.measure.exact._sweep import iter_index_sweep, iter_retrieval_sweep

    blocks = iter_index_sweep(0.866, 2, top) if kind == "index" else iter_retrieval_sweep(1000, 0.866, 2, top)
    return sum(int(b.columns["n"].size) for b in blocks)


def cpu(fn: Any) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--lengths", type=int, default=10**6)
    p.add_argument("--step", type=int, default=1000)
    p.add_argument("--full", action="store_true", help="also the command writing every row as text")
    args = p.parse_args()
    env_note = f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"
    print("# ropeproof sweep (command) against one numpy pass (anchor); medians of", args.repeats, "rounds")
    print(f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}, {env_note}")
    print(f"load average before: {load()}")
    top = args.lengths + 1
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases(args.lengths):
            out_cli, out_anchor, out_text = (str(Path(tmp) / f) for f in ("cli.jsonl", "anchor.txt", "t.txt"))
            lengths = f"2:{top}:{args.step}"
            cli = [sys.executable, "-m", "ropeproof", *case["cli"], "--lengths", lengths, "--jsonl"]
            cli += ["--out", out_cli, "--force", "--no-progress"]
            anchor = [sys.executable, str(HERE / "sweep_anchors.py"), *case["anchor"][:2]]
            anchor += [case["anchor"][2], str(args.step), out_anchor, *case["anchor"][3:]]
            full = [sys.executable, "-m", "ropeproof", *case["cli"], "--lengths", f"2:{top}"]
            full += ["--out", out_text, "--force", "--no-progress"]
            out_full_anchor = str(Path(tmp) / "anchor_full.txt")
            full_anchor = [sys.executable, str(HERE / "sweep_anchors.py"), *case["anchor"][:2]]
            full_anchor += [case["anchor"][2], "1", out_full_anchor, *case["anchor"][3:]]
            times: dict[str, list[tuple[float, float]]] = {
                "command": [],
                "anchor": [],
                "full": [],
                "full anchor": [],
            }
            comp: dict[str, list[float]] = {"rows": [], "numpy": []}
            for _ in range(args.repeats):
                times["command"].append(run_process(cli))
                times["anchor"].append(run_process(anchor))
                if args.full:
                    times["full"].append(run_process(full))
                    times["full anchor"].append(run_process(full_anchor))
                comp["rows"].append(cpu(case["rows"]))
                comp["numpy"].append(cpu(case["numpy"]))
            rows = [json.loads(line) for line in Path(out_cli).read_text().splitlines()]
            got = {r["n"]: r["margin_inf"] for r in rows if "n" in r}
            want = {
                int(a): float(b)
                for a, b in (line.split() for line in Path(out_anchor).read_text().splitlines())
            }
            same = got == want and len(got) > 0
            if args.full:
                every = {}
                for line in Path(out_full_anchor).read_text().splitlines():
                    a, b = line.split()
                    if int(a) in got:
                        every[int(a)] = float(b)
                same &= every == got
            med = {
                k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
                for k, v in times.items()
                if v
            }
            cmed = {k: statistics.median(v) for k, v in comp.items()}
            print(f"\n## {case['name']} ({len(got)} rows written; margins the anchor's, bit for bit: {same})")
            print(f"load average: {load()}")
            for k in med:
                print(f"{k}: wall {med[k][0]:.2f} s, CPU {med[k][1]:.2f} s")
            print(
                f"command / anchor: wall {med['command'][0] / med['anchor'][0]:.1f}x, "
                f"CPU {med['command'][1] / med['anchor'][1]:.1f}x"
            )
            if args.full:
                wall_ratio = med["full"][0] / med["full anchor"][0]
                cpu_ratio = med["full"][1] / med["full anchor"][1]
                print(f"full (every row written) / full anchor: wall {wall_ratio:.2f}x, CPU {cpu_ratio:.2f}x")
            print(
                f"computation only (CPU, in process): sweep rows {cmed['rows']:.2f} s, numpy pass "
                f"{cmed['numpy']:.2f} s, ratio {cmed['rows'] / cmed['numpy']:.1f}x"
            )
    print(f"\nload average after: {load()}")


if __name__ == "__main__":
    main()
