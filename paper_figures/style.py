"""Shared figure style and output: every figure is a PNG, a PDF, the CSV of the plotted data, and a
caption, written deterministically (no timestamps or software tags in the files)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

COLORS = {
    "index": "#1f77b4",
    "retrieval": "#d62728",
    "retrieval0": "#ff7f0e",
    "reflexive": "#2ca02c",
    "bound": "#333333",
    "random": "#7f7f7f",
}
"""One colour per construction, shared by every figure."""


def pyplot():
    """matplotlib.pyplot on the Agg backend with the project's rcParams."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.hashsalt": "ropeproof",
            "pdf.compression": 6,
            "font.size": 9,
            "axes.titlesize": 10,
            "axes.labelsize": 9,
            "legend.fontsize": 7,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "figure.dpi": 100,
            "savefig.bbox": "tight",
        }
    )
    return plt


def _cell(v: Any) -> Any:
    if isinstance(v, float):
        return f"{v:.12g}"
    if v is None:
        return ""
    return v


def save_figure(fig, out_dir: Path, name: str, rows: Sequence[dict[str, Any]], caption: str) -> list[Path]:
    """Write ``name.png``, ``name.pdf``, ``name.csv`` (``rows``) and ``name.caption.txt``; close ``fig``."""
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    png, pdf = out_dir / f"{name}.png", out_dir / f"{name}.pdf"
    fig.savefig(png, dpi=150, metadata={"Software": None})
    fig.savefig(pdf, metadata={"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None})
    plt.close(fig)
    csv_path = out_dir / f"{name}.csv"
    fields: list[str] = []
    for row in rows:
        fields += [k for k in row if k not in fields]
    with csv_path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(row.get(k)) for k in fields})
    cap = out_dir / f"{name}.caption.txt"
    cap.write_text(caption.strip() + "\n")
    return [png, pdf, csv_path, cap]
