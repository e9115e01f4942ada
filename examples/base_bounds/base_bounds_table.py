"""Recompute Men et al.'s table under both readings of "1k"::

    python examples/base_bounds/base_bounds_table.py OUT.json [HI_FACTOR [LABEL ...]]

For each row and reading, the base grid [paper / 4, paper * HI_FACTOR] (default 12) at 0.2% is scanned
for the smallest good base and the supremum of the bad bases (``scope="thresholds"``), and the paper's
own base is swept for its first negative B_m. The largest rows take minutes; the claims file checks the
brackets this writes, it does not trust them.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from base_bounds import PAPER_TABLE, READINGS, base_scan, context_length, first_negative


def main(out: Path, labels: list[str], hi_factor: float = 12.0) -> None:
    rows = json.loads(out.read_text()) if out.exists() else {}
    for label in labels:
        paper = PAPER_TABLE[label]
        for reading in READINGS:
            key = f"{label}/{reading}"
            if key in rows:
                continue
            length = context_length(label, reading)
            t = time.perf_counter()
            scan = base_scan(length, paper / 4, paper * hi_factor, scope="thresholds")
            rows[key] = {
                "label": label,
                "reading": reading,
                "length": length,
                "paper_base": paper,
                "range": [paper / 4, paper * hi_factor],
                "paper_base_first_negative": first_negative(paper, length),
                "smallest_good": scan.smallest_good,
                "sup_bad": scan.sup_bad,
                "counts": scan.counts(),
                "seconds": round(time.perf_counter() - t, 1),
            }
            print(key, json.dumps(rows[key]), flush=True)
            out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    factor = float(sys.argv[2]) if len(sys.argv) > 2 else 12.0
    main(Path(sys.argv[1]), sys.argv[3:] or list(PAPER_TABLE), factor)
