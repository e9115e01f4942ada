"""Write ``report.md`` and ``report.json`` from claim results.

``report.json`` (format ``ropeproof-report``) identifies its run (command line, UTC time, git commit
when run from a checkout, package versions, flags) and holds one entry per claim: the statement as
run, expectation, verdict, status (finding, regression, ...), figures and counterexample.
``report.md`` leads with the findings, one section per paper result, then the corrections of the
refuted statements (:mod:`ropeproof._errata_report`; ``report.json``'s ``corrections`` and
``no_correction``), then the full table.
Everything but the ``run.created`` time and the per-claim ``seconds`` is reproducible between runs
(the searches are seeded).
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import math
import platform
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ropeproof import __version__
from ropeproof._errata_report import (
    correction_entry,
    corrections_section,
    no_correction_entry,
    readme_correction_lines,
)
from ropeproof._json_values import jsonable
from ropeproof.claims import (
    USER_SECTION,
    Approx,
    CheckContext,
    ClaimResult,
    NoCorrection,
    registered_claims,
    registered_no_corrections,
)
from ropeproof.claims._corrections import CorrectionResult
from ropeproof.machinery._errors import InputError

REPORT_FORMAT, REPORT_VERSION = "ropeproof-report", 4
"""Name and version of ``report.json`` (version 2: run metadata, status and pins per claim; version 3:
the corrections, ``corrections`` and ``no_correction``; version 4: each claim's ``origin`` (``builtin``
or ``user``), pins as JSON data of their own type (:func:`pin_data`; they were text), ``regressions``
for the built-in claims and corrections, ``unexpected`` for your claims)."""


def check_report_format(report: Any, where: str) -> None:
    """Raise :class:`InputError` unless ``report`` (a parsed ``report.json``) is a ``ropeproof-report``
    of a version this ropeproof reads: an integer from 1 to :data:`REPORT_VERSION` (a newer one, written
    by a later ropeproof, may mean something else by the same keys)."""
    if not isinstance(report, dict) or report.get("format") != REPORT_FORMAT:
        raise InputError(f"{where} is not a {REPORT_FORMAT} (no format {REPORT_FORMAT!r})")
    version = report.get("version")
    if type(version) is not int or not 1 <= version <= REPORT_VERSION:
        raise InputError(
            f"{where} is a {REPORT_FORMAT} of version {version!r}; this ropeproof reads versions 1 to "
            f"{REPORT_VERSION} (a newer ropeproof wrote it?)"
        )


STORE_DIR = "store"
"""The run's computed results inside the report directory, one JSON file per value (a
:class:`~ropeproof.machinery._result_store.ResultStore`): what ``ropeproof figures --from-report DIR`` draws
from."""

CELL_LIMIT = 160
"""Longest table cell in ``report.md``; longer values are cut with a pointer to the full value."""

PACKAGES = ("torch", "numpy", "sympy", "mpmath", "hypothesis", "matplotlib", "safetensors", "transformers")
"""Package versions recorded in the report (``null`` when not installed)."""


def _git_commit() -> str | None:
    """``HEAD`` of the checkout the package runs from (``+dirty`` if modified), or ``None``."""
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"ropeproof": __version__, "python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def run_metadata(
    ctx: CheckContext, argv: Sequence[str] | None = None, flags: dict[str, Any] | None = None
) -> dict:
    """What identifies a run: the command line, the UTC time, the git commit, versions and flags."""
    return {
        "command": ["ropeproof", *argv] if argv is not None else None,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
        "versions": _versions(),
        "flags": jsonable(
            {
                "device": str(ctx.device),
                "dtype": str(ctx.dtype).removeprefix("torch."),
                "quick": ctx.quick,
                "certified": ctx.certified,
                **(flags or {}),
            }
        ),
    }


def pin_data(value: Any) -> Any:
    """A pin as JSON data of its own type: an ``int`` pin stays an int, a ``bool`` a bool, an
    :class:`~ropeproof.claims._registry.Approx` becomes ``{"value", "rel", "abs"}``."""
    return value.to_json() if isinstance(value, Approx) else jsonable(value)


def _claim_entry(r: ClaimResult) -> dict[str, Any]:
    c = r.claim
    return {
        "id": c.id,
        "origin": "builtin" if c.builtin else "user",
        "section": c.report_section,
        "statement": c.statement_for(r.quick),
        "reference": c.reference,
        "params": jsonable(c.params_for(r.quick)),
        "expected": c.expected,
        "pins": {str(k): pin_data(v) for k, v in c.pins.items()},
        "verdict": r.outcome.verdict,
        "status": r.status,
        "regression": r.regression,
        "certified": r.outcome.certified,
        "meaning": c.meaning_for(r.quick, r.outcome.figures),
        "key_figure": r.outcome.key_figure,
        "figures": jsonable(r.outcome.figures),
        "counterexample": jsonable(r.outcome.counterexample),
        "detail": r.outcome.detail,
        "seconds": round(r.seconds, 4),
    }


def report_dict(
    results: Sequence[ClaimResult],
    ctx: CheckContext,
    figures: dict[str, list[Path]] | None = None,
    argv: Sequence[str] | None = None,
    flags: dict[str, Any] | None = None,
    corrections: Sequence[CorrectionResult] = (),
    no_correction: Sequence[NoCorrection] = (),
    figure_errors: Mapping[str, str] | None = None,
    computations: Mapping[str, int] | None = None,
    from_cache: int = 0,
    task_seconds: Mapping[str, float] | None = None,
    tasks_from_cache: int = 0,
) -> dict[str, Any]:
    """The machine-readable report: the run, counts per verdict and status, one entry per claim, and
    the corrections of the refuted statements among them (``corrections``, and ``no_correction`` for
    those that have none yet). ``regressions`` lists the built-in claims and then the corrections that
    fail ``--strict``; ``unexpected`` lists your claims (``origin: "user"``) whose result differs from
    what they expect, which fail ``--strict`` too. ``figure_errors`` (present only when some figure's
    drawing raised): ``{figure: traceback}``. ``computations`` (the run store's
    :meth:`~ropeproof.machinery._result_store.ResultStore.computation_counts`) becomes
    ``run.computations``: how many values the run computed, any computed more than once, how many it
    read from the cache of earlier runs instead (``from_cache``), and how many claims and figures it
    gave back from that cache without running or drawing them (``tasks_from_cache``,
    :mod:`ropeproof._task_cache`). ``task_seconds`` becomes ``run.task_seconds``: the wall seconds of each
    claim and figure (``"claim:ID"``, ``"figure:NAME"``), whichever process ran it, or gave it back from
    the cache."""
    counts: dict[str, int] = {}
    for r in results:
        counts[r.outcome.verdict] = counts.get(r.outcome.verdict, 0) + 1
    run = run_metadata(ctx, argv, flags)
    if computations is not None:
        run["computations"] = {
            "values": len(computations),
            "computed_more_than_once": {k: n for k, n in sorted(computations.items()) if n > 1},
            "from_cache": from_cache,
            "tasks_from_cache": tasks_from_cache,
        }
    if task_seconds is not None:
        run["task_seconds"] = {k: round(float(v), 3) for k, v in sorted(task_seconds.items())}
    return {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "run": run,
        "counts": counts,
        "regressions": [r.claim.id for r in results if r.regression is not None and r.claim.builtin]
        + [r.correction.id for r in corrections if r.regression is not None],
        "unexpected": [r.claim.id for r in results if r.regression is not None and not r.claim.builtin],
        "figures": {name: [p.name for p in paths] for name, paths in (figures or {}).items()},
        "claims": [_claim_entry(r) for r in results],
        "corrections": [correction_entry(r) for r in corrections],
        "no_correction": [no_correction_entry(nc) for nc in no_correction],
    } | ({"figure_errors": dict(figure_errors)} if figure_errors else {})


def _drop_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _drop_timings(v) for k, v in value.items() if k != "seconds" and not k.endswith("_seconds")
        }
    if isinstance(value, list):
        return [_drop_timings(v) for v in value]
    return value


def without_timings(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` minus the run time and every ``seconds`` / ``*_seconds`` entry (wall-clock times):
    what two identical runs share."""
    out = json.loads(json.dumps(report))
    out["run"].pop("created", None)
    out["run"].pop("task_seconds", None)
    out["claims"] = _drop_timings(out["claims"])
    if "corrections" in out:
        out["corrections"] = _drop_timings(out["corrections"])
    return out


# ----------------------------------------------------------------------------------------- markdown


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


def _is_user(c: dict[str, Any]) -> bool:
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
    builtin = [c for c in report["claims"] if not _is_user(c)]
    yours = [c for c in report["claims"] if _is_user(c)]
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


def write_report(
    results: Sequence[ClaimResult],
    ctx: CheckContext,
    out: Path,
    figures: dict[str, list[Path]] | None = None,
    argv: Sequence[str] | None = None,
    flags: dict[str, Any] | None = None,
    corrections: Sequence[CorrectionResult] = (),
    no_correction: Sequence[NoCorrection] = (),
    figure_errors: Mapping[str, str] | None = None,
    computations: Mapping[str, int] | None = None,
    from_cache: int = 0,
    task_seconds: Mapping[str, float] | None = None,
    tasks_from_cache: int = 0,
) -> dict[str, Any]:
    """Write ``out/report.json`` and ``out/report.md``; return the report dict (:func:`report_dict`)."""
    out.mkdir(parents=True, exist_ok=True)
    report = report_dict(
        results,
        ctx,
        figures,
        argv,
        flags,
        corrections,
        no_correction,
        figure_errors,
        computations,
        from_cache,
        task_seconds,
        tasks_from_cache,
    )
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "report.md").write_text(render_markdown(report))
    return report


# ------------------------------------------------------------- the findings page (docs/findings.md)

README_BEGIN = "<!-- findings:begin -->"
README_END = "<!-- findings:end -->"


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


def render_readme_findings(report: dict[str, Any]) -> str:
    """The findings page's section (docs/findings.md): per paper result, each claim's verdict and
    meaning, and under each refuted statement its corrected statement (or why it has none yet).

    Generated from a report (``ropeproof findings REPORT``); every number in it comes from the
    report's parameters or from figures that the claim or correction pins.
    """
    run = report["run"]
    flags = run["flags"]
    lines = [
        f"Generated by `ropeproof findings` from `ropeproof check{' --quick' if flags.get('quick') else ''}` "
        f"(dtype {flags['dtype']}); `tests/ropeproof/test_findings.py` fails when this section and a fresh "
        "report disagree. *Finding* marks a pinned `violated`: a statement of the papers that fails under "
        "the reading given; *corrected* gives what is true instead, with its status (docs/theory.md "
        "section 9; `ropeproof errata` writes them as an erratum).",
    ]
    corrected = readme_correction_lines(report)
    sections: dict[str, list[dict[str, Any]]] = {}
    for c in report["claims"]:
        if _is_user(c):
            continue
        sections.setdefault(c["section"] or "Other", []).append(c)
    for name, claims in sections.items():
        lines += ["", f"**{name}**", ""]
        for c in claims:
            mark = (
                "finding: violated"
                if c["expected"] == "violated" and c["verdict"] == "violated"
                else c["verdict"]
            )
            if c["regression"]:
                mark += " (REGRESSION)"
            lines.append(f"- {mark} (`{c['id']}`): {c['meaning'] or c['statement']}")
            lines += interval_table(c["figures"])
            lines += corrected.get(c["id"], [])
    if flags.get("quick"):
        lines += full_check_only_lines({c["id"] for c in report["claims"]})
    return "\n".join(lines) + "\n"


def full_check_only_lines(ran: set[str]) -> list[str]:
    """Findings-page lines for the built-in claims a ``--quick`` run skips (ids not in ``ran``): each
    with its expected verdict and the pins that ``ropeproof check --strict`` holds it to (per reading
    where the claim judges several readings, the first being the verdict's), and its no-correction
    reason; empty when every claim ran."""
    reasons = {nc.claim: nc.reason for nc in registered_no_corrections()}
    skipped = [c for c in registered_claims() if c.id not in ran and not c.quick]
    if not skipped:
        return []
    lines = [
        "",
        "**Judged by the full check only** (`ropeproof check`; `--quick` skips them, and `--strict` fails "
        "when a verdict or pin below changes)",
        "",
    ]
    for c in skipped:
        mark = "finding: violated" if c.expected == "violated" else c.expected
        readings = c.pins.get("reading_verdicts")
        if readings:
            said = "; ".join(f"reading '{k}' {v}" for k, v in readings.items())
            pinned = f" Pinned per reading (the verdict is the first's): {said}."
            if "configuration_changes" in c.pins:
                changed = ", ".join(c.pins["configuration_changes"]) or "none"
                pinned += (
                    " Readings whose verdict over the seeds trained in [A]'s configuration differs from that "
                    f"over the earlier seeds: {changed}."
                )
        elif c.pins:
            pinned = " Pinned: " + "; ".join(f"{k} = {v}" for k, v in c.pins.items()) + "."
        else:
            pinned = ""
        lines.append(f"- {mark} (`{c.id}`, expected): {c.reference}.{pinned}")
        if c.id in reasons:
            lines.append(f"  - no correction: {reasons[c.id]}")
    return lines


def replace_readme_findings(readme: str, body: str) -> str:
    """``readme`` with the text between :data:`README_BEGIN` and :data:`README_END` replaced."""
    if README_BEGIN not in readme or README_END not in readme:
        raise ValueError(f"the file has no {README_BEGIN} ... {README_END} section")
    head, rest = readme.split(README_BEGIN, 1)
    _old, tail = rest.split(README_END, 1)
    return f"{head}{README_BEGIN}\n{body}{README_END}{tail}"


def readme_findings(readme: str) -> str:
    """The body currently between the markers."""
    _head, rest = readme.split(README_BEGIN, 1)
    return rest.split(README_END, 1)[0].lstrip("\n")
