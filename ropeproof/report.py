"""Write ``report.md`` and ``report.json`` from claim results."""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ropeproof import __version__
from ropeproof.claims import CheckContext, ClaimResult


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, int | str | bool) or value is None:
        return value
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        return _jsonable(value.item())
    if hasattr(value, "tolist"):
        return _jsonable(value.tolist())
    return str(value)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    text = json.dumps(_jsonable(value)) if not isinstance(value, str) else value
    return text if len(text) <= 160 else text[:157] + "..."


REPORT_FORMAT, REPORT_VERSION = "ropeproof-report", 1
"""Name and version of ``report.json``."""


def report_dict(
    results: Sequence[ClaimResult], ctx: CheckContext, figures: dict[str, list[Path]] | None = None
) -> dict[str, Any]:
    """The machine-readable report: environment, counts per verdict, and one entry per claim."""
    counts: dict[str, int] = {}
    for r in results:
        counts[r.outcome.verdict] = counts.get(r.outcome.verdict, 0) + 1
    return {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "ropeproof": __version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": str(ctx.device),
        "dtype": str(ctx.dtype).removeprefix("torch."),
        "quick": ctx.quick,
        "counts": counts,
        "figures": {name: [p.name for p in paths] for name, paths in (figures or {}).items()},
        "claims": [
            {
                "id": r.claim.id,
                "statement": r.claim.statement,
                "reference": r.claim.reference,
                "params": _jsonable(r.claim.params),
                "expected": r.claim.expected,
                "verdict": r.outcome.verdict,
                "certified": r.outcome.certified,
                "key_figure": r.outcome.key_figure,
                "figures": _jsonable(r.outcome.figures),
                "counterexample": _jsonable(r.outcome.counterexample),
                "detail": r.outcome.detail,
                "seconds": round(r.seconds, 4),
            }
            for r in results
        ],
    }


def render_markdown(report: dict[str, Any]) -> str:
    """``report.md``: a header, then one table row per claim."""
    lines = [
        "# ropeproof check report",
        "",
        f"ropeproof {report['ropeproof']}, torch {report['torch']}, device `{report['device']}`, "
        f"dtype `{report['dtype']}`{', quick run' if report['quick'] else ''}.",
        "",
        "Verdicts: " + ", ".join(f"{k}: {v}" for k, v in sorted(report["counts"].items())),
        "",
        "| claim | statement | reference | expected | verdict | key figure | counterexample |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in report["claims"]:
        key = c["key_figure"]
        figure = f"{key} = {_fmt(c['figures'][key])}" if key in c["figures"] else ""
        verdict = c["verdict"] + (" (certified)" if c["certified"] else "")
        cex = _fmt(c["counterexample"]) if c["counterexample"] is not None else ""
        cells = [f"`{c['id']}`", c["statement"], c["reference"], c["expected"], verdict, figure, cex]
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    if report["figures"]:
        lines += ["", "## Figures", ""]
        for name, files in report["figures"].items():
            png = next((f for f in files if f.endswith(".png")), None)
            data = next((f for f in files if f.endswith(".csv")), None)
            if png:
                lines.append(f"- `{name}`: ![{name}](figures/{png}) (data: `figures/{data}`)")
    errors = [c for c in report["claims"] if c["verdict"] == "error"]
    if errors:
        lines += ["", "## Errors", ""]
        for c in errors:
            lines += [f"### `{c['id']}`", "", "```", c["detail"].strip(), "```", ""]
    return "\n".join(lines) + "\n"


def write_report(
    results: Sequence[ClaimResult], ctx: CheckContext, out: Path, figures: dict[str, list[Path]] | None = None
) -> dict[str, Any]:
    """Write ``out/report.json`` and ``out/report.md``; return the report dict."""
    out.mkdir(parents=True, exist_ok=True)
    report = report_dict(results, ctx, figures)
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "report.md").write_text(render_markdown(report))
    return report
