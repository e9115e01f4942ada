"""Benchmark: how long an interpreter that has imported what ``ropeproof check`` imports takes to end.

    python3 benchmarks/bench_exit.py [--repeats 5]

Each round starts three fresh interpreters that import torch, sympy, matplotlib, transformers' GPT-J
model and ropeproof's claims, write the time of their last statement to a file and then end:

- ``teardown``: the interpreter's ordinary end (its collector runs over everything imported);
- ``frozen``: :func:`gc.freeze` first, as ``ropeproof`` (``ropeproof._cli.run``) does;
- ``os._exit``: no teardown at all (the floor).

The time to end is measured from that last statement to the moment the parent sees the process end;
the rounds are interleaved so drift in the machine's load hits all three alike. Prints each way's median
and its ratio to ``os._exit``'s. Without transformers the GPT-J import is left out (said in the output).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IMPORTS = [
    "import torch, sympy, matplotlib.pyplot",
    "import ropeproof.claims",
]
if importlib.util.find_spec("transformers") is not None:
    IMPORTS.append("from transformers import GPTJForCausalLM")

ENDINGS = {"teardown": "", "frozen": "import gc; gc.freeze()", "os._exit": "import os; os._exit(0)"}


def one_end(mark: Path, ending: str) -> float:
    """Seconds from the child's last statement to its end, as the parent sees it."""
    code = "\n".join([*IMPORTS, "import time", f"open({str(mark)!r}, 'w').write(repr(time.time()))", ending])
    subprocess.run([sys.executable, "-c", code], check=True)
    ended = time.time()
    return ended - float(mark.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="rounds (one interpreter of each way per round)")
    args = ap.parse_args()
    times: dict[str, list[float]] = {name: [] for name in ENDINGS}
    with tempfile.TemporaryDirectory() as tmp:
        mark = Path(tmp) / "mark"
        for _ in range(args.repeats):
            for name, ending in ENDINGS.items():
                times[name].append(one_end(mark, ending))
    print(f"imports: {'; '.join(IMPORTS)}")
    if len(IMPORTS) == 2:
        print("(transformers is not installed: its GPT-J model is not imported)")
    floor = statistics.median(times["os._exit"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:10s} median {median:.3f} s over {len(values)} runs, {median / floor:.1f}x os._exit")


if __name__ == "__main__":
    main()
