"""``report.md`` from a report's dict: the findings first, one section per paper result, then the
corrections of the refuted statements, then the full table (cells cut at :data:`CELL_LIMIT`)."""

from __future__ import annotations

import json
import math
from typing import Any

from ropeproof._errata_report import (
    corrections_section,
)
from ropeproof._json_values import jsonable
from ropeproof.claims import (
    USER_SECTION,
)

CELL_LIMIT = 160
"""Longest table cell in ``report.md``; longer values are cut with a pointer to the full value."""


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return value if isinstance(value, str) else json.dumps(jsonable(value))


def _cell(value: Any, claim_id: str, what: str) -> str:
    """A table cell, cut at :data:`CELL_LIMIT` characters with a pointer to the full value."""
    text = _text(value)
    if len(text) <= CELL_LIMIT:
        return text
    return text[: CELL_LIMIT - 40].rstrip() + f" ... (full {what}: [below](#{_anchor(claim_id)}))"


def _anchor(claim_id: str) -> str:
    return "full-" + "".join(ch if ch.isalnum() else "-" for ch in claim_id.lower())


def _tokens(value: Any) -> str | None:
    """An input written out as tokens, when ``value`` holds one (``tokens`` or ``input.tokens``)."""
    if isinstance(value, dict):
        for key in ("tokens", "input", "inputs"):
            if key in value:
                inner = value[key]
                if isinstance(inner, list) and inner and all(isinstance(t, str) for t in inner):
                    return " ".join(inner)
                found = _tokens(inner)
                if found:
                    return found
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        parts = [" ".join(v) for v in value if all(isinstance(t, str) for t in v)]
        return " | ".join(parts) if parts else None
    return None


_USER_NOTE = (
    "Your claims (from `--claims`, plugins or the `claim` decorator), each read as what it expects "
    "against what it got; one that differs fails `--strict`, but it is not a finding about a paper nor a "
    "regression of the toolkit."
)


def is_user_claim(c: dict[str, Any]) -> bool:
    """Whether a report entry is one of your claims (``origin``; reports before it: the section)."""
    return c.get("origin", "builtin" if c["section"] != USER_SECTION else "user") == "user"


def _finding_line(c: dict[str, Any]) -> list[str]:
    verdict = c["verdict"] + (" (certified)" if c["certified"] else "")
    lines = [f"- **{verdict}** — {c['statement']} (`{c['id']}`; {c['status']})"]
    if c["meaning"]:
        lines.append(f"  {c['meaning']}")
    cex = c["counterexample"]
    if c["verdict"] == "violated" and cex is not None:
        n = cex.get("n") if isinstance(cex, dict) else None
        tokens = _tokens(cex)
        if n is not None:
            lines.append(
                f"  Smallest counterexample: n = {n}" + (f"; input `{tokens}`" if tokens else "") + "."
            )
        else:
            lines.append(f"  Counterexample: {_cell(cex, c['id'], 'counterexample')}")
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    """``report.md``: the run, the findings (one section per paper result), the table, the figures."""
    run = report["run"]
    flags = run["flags"]
    lines = [
        "# ropeproof check report",
        "",
        f"`{' '.join(run['command']) if run['command'] else 'ropeproof check'}` at {run['created']}, "
        f"commit `{run['git_commit'] or 'unknown'}`, ropeproof {run['versions']['ropeproof']}, "
        f"torch {run['versions']['torch']}, device `{flags['device']}`, dtype `{flags['dtype']}`"
        + (", quick run" if flags.get("quick") else "")
        + (", certified" if flags.get("certified") else "")
        + ".",
        "",
        "Verdicts: "
        + ", ".join(f"{k}: {v}" for k, v in sorted(report["counts"].items()))
        + (f". **Regressions: {', '.join(report['regressions'])}**" if report["regressions"] else "")
        + (
            f". **Your claims that differ from what they expect: {', '.join(report['unexpected'])}**"
            if report.get("unexpected")
            else ""
        )
        + ("" if report["regressions"] or report.get("unexpected") else "."),
        "",
        "## Findings",
        "",
        "A pinned `violated` is a finding about the paper's statement under the reading given; a",
        "regression is a pinned verdict or witness of the toolkit that changed.",
    ]
    builtin = [c for c in report["claims"] if not is_user_claim(c)]
    yours = [c for c in report["claims"] if is_user_claim(c)]
    sections: dict[str, list[dict[str, Any]]] = {}
    for c in builtin:
        sections.setdefault(c["section"] or "Other", []).append(c)
    for name, claims in sections.items():
        lines += ["", f"### {name}", ""]
        for c in claims:
            lines += _finding_line(c)
            lines += interval_table(c["figures"])
    if yours:
        lines += ["", f"### {USER_SECTION}", "", _USER_NOTE]
        subsections: dict[str, list[dict[str, Any]]] = {}
        for c in yours:
            subsections.setdefault(c["section"] or USER_SECTION, []).append(c)
        for name, claims in subsections.items():
            lines += [""] + ([f"#### {name}", ""] if name != USER_SECTION else [])
            for c in claims:
                lines += _finding_line(c)
                lines += interval_table(c["figures"])
    corrections = corrections_section(report)
    if corrections:
        lines += ["", *corrections]
    lines += [
        "",
        "## All claims",
        "",
        "| claim | statement | reference | expected | verdict | status | key figure | counterexample |",
        "|---|---|---|---|---|---|---|---|",
    ]
    long_values: list[tuple[str, str, Any]] = []
    for c in report["claims"]:
        key = c["key_figure"]
        figure = f"{key} = {_text(c['figures'][key])}" if key in c["figures"] else ""
        figure_cell = _cell(figure, c["id"], "figures")
        cex_cell = (
            _cell(c["counterexample"], c["id"], "counterexample") if c["counterexample"] is not None else ""
        )
        if figure_cell != figure or (
            c["counterexample"] is not None and cex_cell != _text(c["counterexample"])
        ):
            long_values.append((c["id"], figure, c["counterexample"]))
        verdict = c["verdict"] + (" (certified)" if c["certified"] else "")
        cells = [f"`{c['id']}`", c["statement"], c["reference"], c["expected"], verdict, c["status"],
                 figure_cell, cex_cell]  # fmt: skip
        lines.append("| " + " | ".join(x.replace("|", "\\|").replace("\n", " ") for x in cells) + " |")
    if long_values:
        lines += ["", "## Full values of cut cells", ""]
        for claim_id, figure, cex in long_values:
            lines += [f'<a id="{_anchor(claim_id)}"></a>', "", f"`{claim_id}`:", "", "```json"]
            lines += [
                json.dumps({"key_figure": figure, "counterexample": jsonable(cex)}, indent=1),
                "```",
                "",
            ]
    if report["figures"]:
        lines += ["", "## Figures", ""]
        for name, files in report["figures"].items():
            png = next((f for f in files if f.endswith(".png")), None)
            data = next((f for f in files if f.endswith(".csv")), None)
            if png:
                lines.append(f"- `{name}`: ![{name}](figures/{png}) (data: `figures/{data}`)")
    if report.get("figure_errors"):
        lines += ["", "## Figure errors", "", "These figures were not drawn: drawing them raised (a bug)."]
        for name, text in report["figure_errors"].items():
            lines += ["", f"### `{name}`", "", "```", text.strip(), "```"]
    errors = [c for c in report["claims"] if c["verdict"] == "error"]
    if errors:
        lines += ["", "## Errors", ""]
        for c in errors:
            lines += [f"### `{c['id']}`", "", "```", c["detail"].strip(), "```", ""]
    return "\n".join(lines) + "\n"


INTERVAL_KEYS = frozenset({"correct", "count", "ci_low", "ci_high"})


def interval_table(figures: Any) -> list[str]:
    """A markdown table of a claim's sampled accuracies, or ``[]``: one row per entry of ``figures`` whose
    value maps column names (hop counts, lengths) to ``{"correct", "count", "ci_low", "ci_high", ...}``,
    each cell ``correct/count [ci_low, ci_high]`` (the 95% interval, 4 decimals, rounded outward)."""
    if not isinstance(figures, dict):
        return []
    rows = {
        name: cells
        for name, cells in figures.items()
        if isinstance(cells, dict)
        and cells
        and all(isinstance(v, dict) and v.keys() >= INTERVAL_KEYS for v in cells.values())
    }
    if not rows:
        return []
    columns = list(dict.fromkeys(k for cells in rows.values() for k in cells))

    def cell(v: dict[str, Any] | None) -> str:
        if v is None:
            return ""
        low = math.floor(float(v["ci_low"]) * 1e4) / 1e4
        high = math.ceil(float(v["ci_high"]) * 1e4) / 1e4
        return f"{v['correct']}/{v['count']} [{low:.4f}, {high:.4f}]"

    lines = ["", "| | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    lines += [
        f"| {name} | " + " | ".join(cell(cells.get(k)) for k in columns) + " |"
        for name, cells in rows.items()
    ]
    return [*lines, ""]
