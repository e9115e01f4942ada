"""[A]'s reported observations (``docs/theory.md`` section 6) as functions of a training record, so
claims and figures read verdicts off the same numbers.

- :func:`first_learned_steps`: per hop count, the first checkpoint step whose validation accuracy is
  at least ``threshold`` (``None`` if never);
- :func:`head_label`: ``positional`` when ``S_pos > 0.5 > S_sym``, ``symbolic`` when
  ``S_sym > 0.5 > S_pos``, ``uniform`` when both exceed ``uniform_level``, else ``mixed``;
- :func:`layer_depth_groups`: [A]'s "middle" (layers 3-6 of 12) and "deep" (9-11 of 12) layers, mapped
  to a model of ``L`` layers by relative depth ``l / (L - 1)``: middle ``[3/11, 6/11]``, deep
  ``[9/11, 1]``, rounded outward to whole layers.
"""

from __future__ import annotations

import math
from typing import Any

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real
from ropeproof.verify.measure._statistics import Estimate, decide, proportion_interval
from ropeproof.verify.studies.training._trainer import TrainingRecord

HOPS = (1, 2, 3, 4)


def first_learned_steps(record: TrainingRecord, threshold: float) -> dict[int, int | None]:
    """``{hops: first checkpoint step with accuracy >= threshold, or None}``."""
    threshold = real(threshold, "threshold", low=0.0, high=1.0, low_open=True)
    out: dict[int, int | None] = {}
    for h in HOPS:
        steps = [e["step"] for e in record.evaluations if e["accuracy"].get(str(h), 0.0) >= threshold]
        out[h] = min(steps) if steps else None
    return out


def head_label(s_pos: float, s_sym: float, uniform_level: float = 0.9) -> str:
    """``positional``, ``symbolic``, ``uniform`` or ``mixed`` (module docstring)."""
    if s_pos >= uniform_level and s_sym >= uniform_level:
        return "uniform"
    if s_pos > 0.5 > s_sym:
        return "positional"
    if s_sym > 0.5 > s_pos:
        return "symbolic"
    return "mixed"


def layer_depth_groups(n_layers: int) -> dict[str, list[int]]:
    """``{"middle": [...], "deep": [...]}``: [A]'s layer ranges by relative depth (module docstring)."""
    n_layers = integer(n_layers, "n_layers", low=2)
    top = n_layers - 1
    middle = list(range(math.floor(3 / 11 * top), math.ceil(6 / 11 * top) + 1))
    deep = list(range(math.floor(9 / 11 * top), top + 1))
    return {"middle": middle, "deep": deep}


def evaluation_at(record: TrainingRecord, step: int) -> dict[str, Any]:
    """The record's evaluation of checkpoint ``step``."""
    for e in record.evaluations:
        if e["step"] == step:
            return e
    raise InputError(f"the record has no checkpoint at step {step}")


def best_evaluation(record: TrainingRecord) -> dict[str, Any]:
    """The evaluation of the best checkpoint (the shipped weights)."""
    if record.best_step is None:
        raise InputError("the run has not finished (no best_step)")
    return evaluation_at(record, record.best_step)


def layer_labels(evaluation: dict[str, Any], uniform_level: float = 0.9) -> list[str]:
    """:func:`head_label` of every layer of one evaluation's dynamics."""
    dyn = evaluation.get("dynamics")
    if dyn is None:
        raise InputError(f"checkpoint {evaluation['step']} has no dynamics record")
    return [head_label(p, s, uniform_level) for p, s in zip(dyn["S_pos"], dyn["S_sym"], strict=True)]


# --- decisions under uncertainty (verify/measure/_statistics.py): every sampled number with its 95%
# interval ---

Finding = str
"""How one run bears on one of [A]'s observations: ``"shows"``, ``"contradicts"`` or ``"undecided"``
(an interval straddles a threshold the observation depends on)."""
SHOWS, CONTRADICTS, UNDECIDED = "shows", "contradicts", "undecided"


def accuracy_at(evaluation: dict[str, Any], hop: int) -> Estimate:
    """The validation accuracy of one checkpoint at ``hop`` hops (0: all) with its Wilson interval, from
    the recorded counts."""
    counts = evaluation.get("counts")
    if counts is None:
        raise InputError(
            f"checkpoint {evaluation['step']} records no counts; rescore the run "
            "(ropeproof.verify.studies.training._rescore.rescore_run) to get intervals"
        )
    k, n = counts[str(hop)]
    return proportion_interval(int(k), int(n))


def recorded_accuracy_per_hop(record: TrainingRecord, threshold: float) -> dict[str, dict[str, Any]]:
    """The run record's own accuracy per hop of its best checkpoint with 95% Wilson intervals, in the
    rows of :func:`~ropeproof.verify.studies.training._evaluation.decided_accuracy_per_hop` (no model
    runs)."""
    best = best_evaluation(record)
    rows = {}
    for h in HOPS:
        est = accuracy_at(best, h)
        k = int(best["counts"][str(h)][0])
        rows[str(h)] = {
            "count": est.n,
            "correct": k,
            "accuracy": est.value,
            "ci_low": est.low,
            "ci_high": est.high,
            "side": decide(est, threshold),
        }
    return rows


def learned_window(record: TrainingRecord, threshold: float) -> dict[int, tuple[int | None, int | None]]:
    """Per hop count, ``(earliest, latest)``: the first checkpoint whose accuracy is not decided below
    ``threshold`` (it may have been reached there) and the first whose accuracy is decided at or above it
    (it surely was; ``None`` if no checkpoint is). The first-learned step lies in this window."""
    out: dict[int, tuple[int | None, int | None]] = {}
    for h in HOPS:
        sides = [(e["step"], decide(accuracy_at(e, h), threshold)) for e in record.evaluations]
        earliest = next((s for s, side in sides if side != "below"), None)
        latest = next((s for s, side in sides if side == "above"), None)
        out[h] = (earliest, latest)
    return out


def _before(a: tuple[int | None, int | None], b: tuple[int | None, int | None], strict: bool) -> Finding:
    """Whether the first-learned step in window ``a`` is before (``strict``) or no later than the one in
    ``b``."""
    a_lo, a_hi = a
    b_lo, b_hi = b
    if a_hi is not None and b_lo is not None and (a_hi < b_lo if strict else a_hi <= b_lo):
        return SHOWS
    if b_lo is None:  # b never even possibly reached: a came first if a did
        return SHOWS if a_hi is not None else UNDECIDED
    if a_lo is None or (b_hi is not None and (b_hi <= a_lo if strict else b_hi < a_lo)):
        return CONTRADICTS
    return UNDECIDED


def combine(findings: list[Finding]) -> Finding:
    """All of ``findings`` must show: one contradiction contradicts, else one undecided leaves it open."""
    if CONTRADICTS in findings:
        return CONTRADICTS
    return UNDECIDED if UNDECIDED in findings else SHOWS


def hop_by_hop(record: TrainingRecord, threshold: float) -> Finding:
    """[A]'s number-task order: ``h + 1`` hops first learned no earlier than ``h`` hops (h = 1..3), and 4
    hops strictly after 1 hop, on the learned windows (:func:`learned_window`)."""
    w = learned_window(record, threshold)
    return combine([*(_before(w[h], w[h + 1], strict=False) for h in (1, 2, 3)), _before(w[1], w[4], True)])


def simultaneous(record: TrainingRecord, threshold: float) -> Finding:
    """[A]'s letter-task observation: every hop count first learned at the same checkpoint."""
    w = list(learned_window(record, threshold).values())
    if all(lo is not None and lo == hi for lo, hi in w) and len({lo for lo, _ in w}) == 1:
        return SHOWS
    if any(hi is None and lo is None for lo, hi in w):
        return UNDECIDED
    for _, a_hi in w:
        for b_lo, _ in w:
            if a_hi is not None and b_lo is not None and a_hi < b_lo:
                return CONTRADICTS  # one hop count surely learned before another could have been
    return UNDECIDED


def interval_label(pos: list[float] | None, sym: list[float] | None) -> str:
    """A layer's label from the 95% intervals of its scores: ``positional`` (``S_pos > 0.5 > S_sym`` for the
    whole intervals), ``symbolic`` (the reverse), ``mixed`` (decidedly neither), ``undecided`` (an interval
    straddles 0.5 so that either could hold), ``unresolved`` (the scores were not resolved)."""
    if pos is None or sym is None:
        return "unresolved"
    findings = {label: is_label(pos, sym, label) for label in ("positional", "symbolic")}
    for label, finding in findings.items():
        if finding == SHOWS:
            return label
    return "mixed" if all(f == CONTRADICTS for f in findings.values()) else "undecided"


def is_label(pos: list[float] | None, sym: list[float] | None, label: str) -> Finding:
    """Whether the layer is decidedly ``label`` (``positional`` or ``symbolic``), decidedly not, or open."""
    if pos is None or sym is None:
        return UNDECIDED
    high, low = (pos, sym) if label == "positional" else (sym, pos)
    if high[0] > 0.5 > low[1]:
        return SHOWS
    if high[1] <= 0.5 or low[0] >= 0.5:
        return CONTRADICTS
    return UNDECIDED


def any_of(findings: list[Finding]) -> Finding:
    """At least one of ``findings`` shows: one that shows suffices; all contradicting contradicts."""
    if SHOWS in findings:
        return SHOWS
    return UNDECIDED if UNDECIDED in findings else CONTRADICTS


def layer_roles(number: TrainingRecord, letter: TrainingRecord) -> Finding:
    """[A]'s layer roles on one seed's pair of runs (best checkpoints): some middle layer of the number
    model positional, some deep layer symbolic, and no layer of the letter model positional."""
    dyn = best_evaluation(number)["dynamics"]
    groups = layer_depth_groups(number.config.n_layer)
    ci = list(zip(dyn["S_pos_ci"], dyn["S_sym_ci"], strict=True))
    middle = any_of([is_label(*ci[i], "positional") for i in groups["middle"]])
    deep = any_of([is_label(*ci[i], "symbolic") for i in groups["deep"]])
    letter_dyn = best_evaluation(letter)["dynamics"]
    letter_ci = zip(letter_dyn["S_pos_ci"], letter_dyn["S_sym_ci"], strict=True)
    no_positional = combine([_negate(is_label(p, s, "positional")) for p, s in letter_ci])
    return combine([middle, deep, no_positional])


def _negate(finding: Finding) -> Finding:
    return {SHOWS: CONTRADICTS, CONTRADICTS: SHOWS}.get(finding, UNDECIDED)


def pure(pos: list[float] | None, sym: list[float] | None, min_gap: float) -> Finding:
    """Whether ``|S_pos - S_sym| >= min_gap`` for a layer, on the conservative interval of the difference
    ``[pos_low - sym_high, pos_high - sym_low]`` (it contains the difference of means whenever both
    intervals contain theirs)."""
    if pos is None or sym is None:
        return UNDECIDED
    low, high = pos[0] - sym[1], pos[1] - sym[0]
    if low >= min_gap or high <= -min_gap:
        return SHOWS
    if -min_gap < low and high < min_gap:
        return CONTRADICTS
    return UNDECIDED


def pure_heads(record: TrainingRecord, min_gap: float) -> Finding:
    """Every layer of the best checkpoint pure (:func:`pure`)."""
    dyn = best_evaluation(record)["dynamics"]
    return combine([pure(p, s, min_gap) for p, s in zip(dyn["S_pos_ci"], dyn["S_sym_ci"], strict=True)])


def uniform_early(record: TrainingRecord, level: float, entropy: float) -> Finding:
    """At step 0 and at the first checkpoint after it, every layer with ``S_pos >= level``, ``S_sym >=
    level`` and normalised entropy ``>= entropy``, each decided on its interval."""
    findings = []
    for step in (0, record.config.checkpoint_every):
        dyn = evaluation_at(record, step)["dynamics"]
        for key, threshold in (("S_pos_ci", level), ("S_sym_ci", level), ("entropy_ci", entropy)):
            for ci in dyn[key]:
                if ci is None:
                    findings.append(UNDECIDED)
                else:
                    findings.append(
                        SHOWS if ci[0] >= threshold else CONTRADICTS if ci[1] < threshold else UNDECIDED
                    )
    return combine(findings)


def seed_summary(findings: dict[int, Finding]) -> dict[str, Any]:
    """How many seeds show, contradict or leave open an observation, with the finding of each seed."""
    return {
        "seeds": len(findings),
        SHOWS: sum(f == SHOWS for f in findings.values()),
        CONTRADICTS: sum(f == CONTRADICTS for f in findings.values()),
        UNDECIDED: sum(f == UNDECIDED for f in findings.values()),
        "per_seed": {str(seed): f for seed, f in sorted(findings.items())},
    }


def verdict_over_seeds(findings: dict[int, Finding]) -> str:
    """The verdict of "the observation holds in every seed": ``holds`` when every seed shows it,
    ``violated`` when some seed contradicts it, else ``unresolvable`` (some seed undecided, or none)."""
    if not findings:
        return "unresolvable"
    summary = combine(list(findings.values()))
    return {SHOWS: "holds", CONTRADICTS: "violated"}.get(summary, "unresolvable")
