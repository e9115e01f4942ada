"""RoFormer's long-term decay checked end to end: the bound at every offset, its first rise, the dyadic
windows' maxima, and a figure.

Run it (writes under ``OUT``, default ``roformer_out``)::

    python examples/roformer_decay/roformer_walkthrough.py [OUT] [MAX_M]

Every step uses ropeproof's public API only. The lines it prints are what
``docs/guides/roformer-decay.md`` shows, and ``tests/test_examples.py`` checks them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from roformer_decay import decay, first_window_rise, window_maxima

from ropeproof import plot_partial_sum_decay, save_figure

MAX_M = 65536


def main(out: str | Path = "roformer_out", max_m: int = MAX_M) -> dict[str, Any]:
    """Run every step, print what it found, and return the results."""
    out = Path(out)
    result = decay(int(max_m))
    r = result.first_rise
    (lo0, hi0), (lo1, hi1) = result.rise_enclosures
    lines = [
        f"d = 128, base 10^4: f(m) = (1/64) sum_j |S_j(m)| at every m <= {result.max_m}, "
        f"errors below {float(result.errors.max()):.1e}",
        f"f(0) = {result.values[0]:g}; first rise at m = {r}: f({r}) in [{lo0:.9f}, {hi0:.9f}] < "
        f"f({r + 1}) in [{lo1:.9f}, {hi1:.9f}] (certified)",
        "largest f over dyadic windows:",
    ]
    maxima = window_maxima(result)
    lines += [f"  [{w['window'][0]}, {w['window'][1]}]: {w['max']:.6f} at m = {w['at']}" for w in maxima]
    rise = first_window_rise(maxima)
    lines.append(
        f"first window whose maximum exceeds the previous one's: {None if rise is None else rise['window']}"
    )
    written = save_figure(plot_partial_sum_decay(result, name="roformer_decay"), out / "figures")
    lines.append(f"figure: {', '.join(p.name for p in written if p.suffix == '.png')}")
    print("\n".join(lines))
    return {"decay": result, "maxima": maxima, "rise": rise, "figures": written, "lines": lines}


if __name__ == "__main__":
    main(*sys.argv[1:2], *(int(x) for x in sys.argv[2:3]))
