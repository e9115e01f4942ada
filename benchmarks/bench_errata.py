"""Benchmark: what the corrected statements add to ``ropeproof check``.

Run ``python3 benchmarks/bench_errata.py [--repeats 3] [--json]``. Each measurement runs in a fresh
interpreter (as ``ropeproof check`` starts one), round robin, after the package is imported:

- ``claims (quick)``: the claims that have corrections, at ``--quick`` sizes: the baseline, the work
  ``check --quick`` already does for those findings;
- ``corrections (quick)``: the corrections after those claims, in the same process (what
  ``check --quick`` adds: the proof steps' sympy checks, the sweeps, the witnesses);
- ``corrections (full)``: the same at full sizes, after the claims at full sizes.

Prints the median seconds of each and the ratio of the corrections to the claims they follow.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

SNIPPET = """
import json, sys, time, torch
from ropeproof.claims import CheckContext, registered_claims, registered_corrections, run_claim
from ropeproof.claims._corrections import corrections_for, run_correction
quick = sys.argv[1] == "quick"
ctx = CheckContext(torch.device("cpu"), torch.float64, quick=quick)
corrected = {cid for c in registered_corrections() for cid in c.corrects}
claims = [c for c in registered_claims() if c.id in corrected and (c.quick or not quick)]
t = time.perf_counter()
results = [run_claim(c, ctx) for c in claims]
claims_s = time.perf_counter() - t
t = time.perf_counter()
fixes = [run_correction(c, ctx) for c in corrections_for(registered_corrections(), {c.id for c in claims})]
corrections_s = time.perf_counter() - t
ok = all(r.regression is None for r in results) and all(f.regression is None for f in fixes)
print(json.dumps({"claims": claims_s, "corrections": corrections_s, "count": len(fixes), "ok": ok}))
"""


def once(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", SNIPPET, mode], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    runs: dict[str, list[dict]] = {"quick": [], "full": []}
    for _ in range(args.repeats):
        for mode in runs:
            runs[mode].append(once(mode))
    summary = {}
    for mode, rs in runs.items():
        claims = statistics.median(r["claims"] for r in rs)
        fixes = statistics.median(r["corrections"] for r in rs)
        summary[mode] = {
            "claims_median_s": round(claims, 3),
            "corrections_median_s": round(fixes, 3),
            "corrections_over_claims": round(fixes / claims, 3),
            "corrections": rs[0]["count"],
            "no_regression": all(r["ok"] for r in rs),
            "corrections_runs_s": [round(r["corrections"], 3) for r in rs],
        }
    if args.json:
        print(json.dumps(summary))
        return
    for mode, s in summary.items():
        print(
            f"{mode:5s}: {s['corrections']} corrections {s['corrections_median_s']:.3f} s (runs "
            f"{s['corrections_runs_s']}) after their claims {s['claims_median_s']:.3f} s; ratio "
            f"{s['corrections_over_claims']:.3f}; no regression: {s['no_regression']}"
        )


if __name__ == "__main__":
    main()
