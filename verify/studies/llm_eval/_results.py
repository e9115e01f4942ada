"""The summary of a run: per-length results, per-draw counts, the readings against [A], and the JSON
object ``ropeproof llm-eval --json`` prints and ``results.json`` holds.

Summaries are always computed from the log (the replies re-read with the current parser), so
:func:`load_run` on any run directory, finished or interrupted, gives the same numbers as the run
that wrote it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ropeproof.machinery._errors import InputError
from ropeproof.verify.studies.llm_eval._plan import Prompt, build_plan
from ropeproof.verify.studies.llm_eval._run_log import LOG_FILE, RunLog, read_settings
from ropeproof.verify.studies.llm_eval._statistics import (
    DrawResult,
    LengthResult,
    Ordering,
    ordering,
    summarise,
    tally_draws,
    threshold_checks,
)

INTERVAL = "Clopper-Pearson 95%, prompts pooled over draws"
STD = "sample standard deviation (ddof=1) of the per-draw accuracies; null for one draw"


@dataclass
class RunSummary:
    """A run's results (module docstring); ``missing`` counts planned prompts without a reply."""

    label: str
    identity: dict[str, Any]
    results: list[LengthResult]
    draws: list[DrawResult]
    missing: int
    path: str | None = None
    plan: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.missing == 0

    def ordering(self) -> Ordering:
        return ordering(self.results)

    def to_json(self) -> dict[str, Any]:
        order = self.ordering()
        return {
            "label": self.label,
            "provider": self.identity.get("provider"),
            "model": self.identity.get("model"),
            "format": self.identity.get("format"),
            "path": self.path,
            "complete": self.complete,
            "missing": self.missing,
            "interval": INTERVAL,
            "spread": STD,
            "results": [r.to_json() for r in self.results],
            "ordering": {
                "verdict": order.verdict,
                "per_length": {str(k): v for k, v in order.per_length.items()},
                "reading": order.line(),
            },
            "thresholds": threshold_checks(self.results),
            "draws": [d.to_json() for d in self.draws],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunSummary:
        """The summary :meth:`to_json` wrote: label, identity (provider, model, format), results, draws,
        missing prompts and path (the plan settings are not part of it)."""
        identity = {k: data[k] for k in ("provider", "model", "format")}
        results = [LengthResult(**r) for r in data["results"]]
        draws = [DrawResult(**d) for d in data["draws"]]
        return cls(data["label"], identity, results, draws, data["missing"], data["path"])


def summarise_log(
    plan: list[Prompt],
    log: RunLog,
    label: str,
    identity: dict[str, Any],
    plan_settings: dict[str, Any] | None = None,
    path: str | None = None,
) -> RunSummary:
    """The summary of ``plan`` from the replies in ``log``."""
    replies = log.replies()
    draws = tally_draws(plan, replies)
    missing = sum(d.planned - d.answered for d in draws)
    return RunSummary(label, identity, summarise(draws), draws, missing, path, dict(plan_settings or {}))


def plan_from_settings(settings: dict[str, Any]) -> list[Prompt]:
    """The prompts a run's settings describe."""
    plan, identity = settings["plan"], settings["identity"]
    return build_plan(
        plan["tasks"], plan["lengths"], plan["prompts"], plan["draws"], identity["seed"], identity["format"]
    )


def load_run(path: str | Path) -> RunSummary:
    """The summary of the run directory ``path``, recomputed from its settings and log."""
    path = Path(path)
    settings = read_settings(path) if path.is_dir() else None
    if settings is None:
        raise InputError(f"{path} is not an llm-eval run directory (no run.json)")
    try:
        plan = plan_from_settings(settings)
    except KeyError as exc:
        raise InputError(f"{path}/run.json lacks the setting {exc}") from None
    log = RunLog(path / LOG_FILE, repair=False)
    return summarise_log(
        plan, log, settings.get("label") or path.name, settings["identity"], settings["plan"], str(path)
    )


def merge_by_label(summaries: Sequence[RunSummary]) -> list[RunSummary]:
    """One summary per label, in first-seen order: runs that share a label (a number model and a
    letter model of one family) are joined when no task and length is in two of them."""
    groups: dict[str, list[RunSummary]] = {}
    for s in summaries:
        groups.setdefault(s.label, []).append(s)
    out = []
    for label, runs in groups.items():
        if len(runs) == 1:
            out.append(runs[0])
            continue
        seen: dict[tuple[str, int], str | None] = {}
        for r in runs:
            for x in r.results:
                if (x.task, x.length) in seen:
                    raise InputError(
                        f"two runs labelled {label!r} ({seen[(x.task, x.length)]}, {r.path}) both have the "
                        f"{x.task} task at length {x.length}; give them different labels (--label)"
                    )
                seen[(x.task, x.length)] = r.path
        identity = {
            "provider": "; ".join(dict.fromkeys(str(r.identity.get("provider")) for r in runs)),
            "model": "; ".join(str(r.identity.get("model")) for r in runs),
            "format": "; ".join(dict.fromkeys(str(r.identity.get("format")) for r in runs)),
        }
        results = [x for r in runs for x in r.results]
        draws = [x for r in runs for x in r.draws]
        path = "; ".join(r.path for r in runs if r.path) or None
        out.append(RunSummary(label, identity, results, draws, sum(r.missing for r in runs), path))
    return out
