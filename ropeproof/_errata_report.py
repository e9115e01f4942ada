"""Corrections as JSON entries and as markdown: ``errata.json`` and ``errata.md`` (``ropeproof errata``),
and the corrections section of ``report.md`` and of docs/findings.md (``ropeproof check``).

Every entry (:func:`correction_entry`) carries the fields of a correction (docs/theory.md section 9):
``claim`` (the first claim it corrects) and ``corrects`` (all of them), ``reading``, ``statement``,
``latex``, ``offset_statement``, ``status`` (declared) and ``established`` (what the run established),
``range``, ``witness``, ``rows`` as ``[n, corrected_value, exact_value]`` with ``n`` the sequence length
(``offset_rows``: ``n`` the largest offset), the proof steps (``argued_steps`` names those not
machine-checked), the tightness and where the reported
statement fails first (``failure``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ropeproof._json_values import jsonable
from ropeproof.claims import NoCorrection
from ropeproof.claims._corrections import CorrectionResult

ERRATA_FORMAT, ERRATA_VERSION = "ropeproof-errata", 1
"""Name and version of ``errata.json``."""
CONVENTION = (
    "n is the sequence length (the query at position n - 1); offset_statement and offset_rows read n as the "
    "largest key offset, the length minus 1"
)
STATUS_LEVELS = (
    "Status levels: *machine-checked*: every step of the proof, their composition included, is an identity "
    "or inequality that sympy proves, interval arithmetic over the step's whole domain, an exhaustive "
    "computation, or a restated definition checked exactly for any number of terms, and every run checks "
    "them; *proved*: the written proof in docs/theory.md section 9 is complete and the steps named as "
    "argued (the composition, where no code checks how the steps combine) are not machine-checked; "
    "*certified*: interval arithmetic at every n of a stated range; *conjectured*: evidence over a stated "
    "range."
)
"""What each status means, as the erratum and the report say it."""
TABLE_LENGTHS = (2, 3, 4, 5, 8, 10, 16, 20, 32, 50, 64, 100)
"""Lengths shown in the markdown tables of rows (those present in a correction's rows)."""


def correction_entry(r: CorrectionResult) -> dict[str, Any]:
    """The JSON entry of one computed correction (module docstring)."""
    c, d = r.correction, r.data
    entry: dict[str, Any] = {
        "id": c.id,
        "claim": c.claim,
        "corrects": list(c.corrects),
        "reading": c.reading,
        "convention": CONVENTION,
        "statement": c.text(c.statement, r.quick),
        "latex": c.latex,
        "offset_statement": c.text(c.offset_statement, r.quick),
        "status": c.status,
        "established": r.established,
        "status_basis": r.figures.get("status_basis"),
        "range": c.text(c.range, r.quick),
        "tightness": c.text(c.tightness, r.quick),
        "proof_sketch": c.sketch,
        "reference": c.reference,
        "params": jsonable(c.params_for(r.quick)),
        "pins": {k: str(v) for k, v in c.pins.items()},
        "regression": r.regression,
        "seconds": round(r.seconds, 4),
    }
    if d is None:
        return {**entry, "error": r.error, "witness": None, "rows": [], "offset_rows": []}
    return {
        **entry,
        "quantity": d.quantity,
        "reported": d.reported_label,
        "corrected": d.corrected_label,
        "kind": d.kind,
        "witness": jsonable(d.witness),
        "failure": jsonable(d.failure),
        "rows": jsonable(d.rows()),
        "offset_rows": jsonable(d.offset_rows()),
        "series": [s.label for s in d.series],
        "checks": d.all_checks(),
        "proof": jsonable(d.proof_table()),
        "argued_steps": [row["name"] for row in d.proof_table() if row["method"] == "argument"],
        "figures": jsonable(r.figures),
    }


def no_correction_entry(nc: NoCorrection) -> dict[str, Any]:
    """The JSON entry of an explicit "no correction yet"."""
    return {"claim": nc.claim, "reason": nc.reason}


def errata_dict(
    results: Sequence[CorrectionResult], missing: Sequence[NoCorrection], quick: bool
) -> dict[str, Any]:
    """``errata.json``: format, version, whether the sizes were quick, the corrections and the claims
    that have none yet."""
    return {
        "format": ERRATA_FORMAT,
        "version": ERRATA_VERSION,
        "quick": quick,
        "regressions": [r.correction.id for r in results if r.regression is not None],
        "corrections": [correction_entry(r) for r in results],
        "no_correction": [no_correction_entry(nc) for nc in missing],
    }


# ------------------------------------------------------------------------------------------- markdown


def _num(x: Any) -> str:
    return f"{x:.6g}" if isinstance(x, float) and math.isfinite(x) else str(x)


def _failure_sentence(e: dict[str, Any]) -> str:
    f = e.get("failure") or {}
    figures = e.get("figures") or {}
    if not f:
        return "The reported statement holds on the rows computed here."
    where = (
        f"first at n = {f['n']}: the exact value {_num(f['exact'])} exceeds the reported "
        f"{_num(f['reported'])}"
    )
    tokens = f.get("tokens")
    if tokens:
        where += f" on the input `{' '.join(tokens)}`"
    count = figures.get("reported_fails_at")
    rows = figures.get("rows")
    lengths = figures.get("lengths")
    text = f"It fails at {count} of the {rows} lengths {lengths}, {where}." if count else ""
    offset = figures.get("reported_fails_at_offset")
    if offset is not None and figures.get("reported_first_failure_n_offset") is not None:
        text += (
            f" With n read as the largest offset it fails at {offset} lengths, first at length "
            f"{figures['reported_first_failure_n_offset']}."
        )
    return text or f"It fails {where}."


def _rows_table(e: dict[str, Any]) -> list[str]:
    rows = {int(r[0]): r for r in e.get("rows", [])}
    shown = [n for n in TABLE_LENGTHS if n in rows] or sorted(rows)[:8]
    if not shown:
        return []
    lines = [f"| n | exact ({e.get('quantity', '')}) | corrected |", "|---|---|---|"]
    lines += [f"| {n} | {_num(rows[n][2])} | {_num(rows[n][1])} |" for n in shown]
    return lines


Reported = dict[str, tuple[str, str]]
"""Claim id -> (reference, statement as run): the statements as reported, for the errata."""


def correction_markdown(e: dict[str, Any], reported: Reported | None = None) -> list[str]:
    """One correction as an erratum: the statement as reported (when ``reported`` has the claim), what
    fails with the witness, the corrected statement, status, proof sketch and tightness."""
    lines = [f"### `{e['id']}` ({e['status']})", ""]
    lines.append("Corrects " + ", ".join(f"`{cid}`" for cid in e["corrects"]) + ".")
    lines.append("")
    first = (reported or {}).get(e["claim"])
    if first is not None:
        lines += [f"- **As reported** ({first[0]}): {first[1]}"]
    lines += [f"- **What fails.** {_failure_sentence(e)}"]
    lines += [
        f"- **Corrected** (reading: {e['reading']}): {e['statement']}",
        "",
        f"  $$ {e['latex']} $$",
        "",
        f"  {e['offset_statement']}",
        f"- **Status**: {e['status']} ({e.get('status_basis') or 'not computed'}); established by this run: "
        f"{e['established']}. Range: {e['range']}.",
        f"- **Proof sketch** ({e['reference']}): {e['proof_sketch']}",
        f"- **Tightness**: {e['tightness']}",
    ]
    if e.get("regression"):
        lines.append(f"- **REGRESSION**: {e['regression']}")
    table = _rows_table(e)
    if table:
        lines += ["", *table]
    return [*lines, ""]


def render_errata_markdown(errata: dict[str, Any], reported: Reported | None = None) -> str:
    """``errata.md`` from :func:`errata_dict`'s content."""
    quick = bool(errata.get("quick"))
    lines: list[str] = [
        "# Errata: corrected statements for [A] and [B]",
        "",
        "Generated by `ropeproof errata"
        + (" --quick" if quick else "")
        + "`. For every statement of [A] (Urrutia et al., *Positional versus Symbolic Attention Heads*) and "
        "[B] (*Decoupling Positional and Symbolic Attention Behavior in Transformers*) that a pinned claim "
        "of `ropeproof check` refutes, what is true instead. "
        f"{STATUS_LEVELS} Convention: {CONVENTION}. The rows ([n, corrected, exact]) are in `errata.json`.",
        "",
    ]
    if errata["regressions"]:
        lines += [f"**Regressions: {', '.join(errata['regressions'])}**", ""]
    for e in errata["corrections"]:
        lines += correction_markdown(e, reported)
    if errata["no_correction"]:
        lines += ["## No correction yet", ""]
        lines += [f"- `{m['claim']}`: {m['reason']}" for m in errata["no_correction"]]
        lines.append("")
    return "\n".join(lines)


def corrections_section(report: dict[str, Any]) -> list[str]:
    """The ``## Corrections`` section of ``report.md`` (empty when the report has none)."""
    entries = report.get("corrections") or []
    missing = report.get("no_correction") or []
    if not entries and not missing:
        return []
    reported = {c["id"]: (c["reference"], c["statement"]) for c in report["claims"]}
    lines = [
        "## Corrections",
        "",
        "What is true instead of each refuted statement (docs/theory.md section 9); `ropeproof errata` "
        f"writes them as an erratum. {STATUS_LEVELS}",
        "",
    ]
    for e in entries:
        lines += correction_markdown(e, reported)
    lines += [f"- no correction yet for `{m['claim']}`: {m['reason']}" for m in missing]
    return lines


def readme_correction_lines(report: dict[str, Any]) -> dict[str, list[str]]:
    """Per claim id, the lines the findings page shows under it: each correction's statement the first
    time it appears, a pointer after that, and any "no correction yet"."""
    out: dict[str, list[str]] = {}
    shown: set[str] = set()
    by_claim: dict[str, list[dict[str, Any]]] = {}
    for e in report.get("corrections") or []:
        for cid in e["corrects"]:
            by_claim.setdefault(cid, []).append(e)
    for c in report["claims"]:
        for e in by_claim.get(c["id"], []):
            argued = f"; argued: {', '.join(e['argued_steps'])}" if e.get("argued_steps") else ""
            regression = ", REGRESSION" if e.get("regression") else ""
            mark = f"corrected ({e['status']}{argued}{regression}, `{e['id']}`)"
            if e["id"] in shown:
                out.setdefault(c["id"], []).append(f"  - {mark}: as above.")
            else:
                shown.add(e["id"])
                out.setdefault(c["id"], []).append(f"  - {mark}: {e['statement']}")
    for m in report.get("no_correction") or []:
        out.setdefault(m["claim"], []).append(f"  - no correction yet: {m['reason']}")
    return out
