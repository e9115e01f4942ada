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

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ropeproof._errata_report import (
    correction_entry,
    no_correction_entry,
)
from ropeproof._json_values import jsonable
from ropeproof._report_markdown import render_markdown
from ropeproof._run_metadata import run_metadata
from ropeproof.claims import (
    Approx,
    CheckContext,
    ClaimResult,
    NoCorrection,
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
