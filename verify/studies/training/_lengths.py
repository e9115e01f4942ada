"""Length generalisation of trained models: accuracy on inputs longer than the 17 tokens they were
trained on, built by :func:`ropeproof.verify.measure._task_lengths.long_inputs` (vectorised, i.i.d. inputs
in independently seeded chunks), each row sampled until its anytime-valid 95% interval decides its
threshold (:func:`ropeproof.verify.measure._statistics.confidence_sequence`).

**Readings** (:data:`READINGS`). [A] reports its letter model above 90% up to 850 tokens and its number
model failing soon after the training length, without saying how its long inputs were built. Each
reading is one task, build, hop counts, chain positions and threshold: the letter task on the
``distractors``, ``window`` and ``both`` builds and on the ``near`` build (the chain within 16 tokens of
the query behind a distractor prefix) with 1-hop chains and with the 1-4 hops the models were trained
on, each ">= 0.9 at every n <= 850"; the number task on ``distractors`` (the only build in its
vocabulary: it knows the integers 1..16), "below 0.5 at every n >= 64". A chain's middle steps sit
uniformly, as in training, except in the named reading ``letter-distractors-near-query``: the earlier
draw that pushes them toward the query (:data:`~ropeproof.verify.measure._task_lengths.POSITIONS`).

**Flip points** (:func:`reading_finding`). A reading reports the threshold at which its verdict would
flip only from lengths it sampled until decided: a length given one look (after a contradiction) or
undecided at the cap is "not decided", never a flip point, and every flip point names its length, its
count and its interval.

**Forwards.** Models are loaded for this study with PyTorch's scaled-dot-product attention (the study
needs only the argmax of the last position's logits; a test checks the answers equal eager attention's),
run under :func:`torch.inference_mode` with only the last position's logits computed
(:func:`~ropeproof.verify.studies.training._evaluation.last_answers`: the model's own weights and attention
kernel, op for op as HF's GPT-J, the last block's output and the logits at the last position only), in
forward batches of about :data:`~ropeproof.verify.studies.training._evaluation.TOKENS_PER_FORWARD` tokens
(measured, ``benchmarks/bench_training_lengths.py``).

**Position table.** GPT-J's sin/cos table is a buffer of ``n_positions`` rows, not a weight (RoPE
learns no positions). :func:`length_model` loads a checkpoint with the table rebuilt to
``max(n_positions, TABLE_ROWS)`` rows, so a model stored with [A]'s ``n_positions = 128`` runs at 1024
tokens; rows ``0 .. n_positions - 1`` are bit-identical to the stored model's (a test checks), and every
row records the stored ``n_positions`` and whether the input ran past it (``table_rebuilt``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real
from ropeproof.verify.measure._statistics import SequentialProportion, Side, sample_until_decided
from ropeproof.verify.measure._task_lengths import VECTOR_BUILDS, long_inputs, required_max_int
from ropeproof.verify.studies.training._data import Batch, TaskEncoder
from ropeproof.verify.studies.training._evaluation import last_answers

TABLE_ROWS = 2048
"""Rows of the sin/cos table a length-study model is loaded with (at least; module docstring)."""
LENGTHS = (17, 32, 64, 128, 256, 512, 850, 1024)
"""The lengths of the study (``--quick``: :data:`QUICK_LENGTHS`)."""
QUICK_LENGTHS = (17, 64, 850)
CAP = 1024
"""Each row is looked at after every forward batch (:func:`first_look` inputs:
:func:`~ropeproof.verify.studies.training._evaluation.forward_batch`, about
:data:`~ropeproof.verify.studies.training._evaluation.TOKENS_PER_FORWARD` tokens) and stops at the first
look where its interval decides, at most :data:`CAP` inputs (``--quick``: :data:`QUICK_CAP`)."""
QUICK_CAP = 64


@dataclass(frozen=True)
class LengthReading:
    """One reading of [A]'s length observation: ``task`` on ``build`` with chains of ``hops``, accuracy
    decided against ``threshold``; the reading holds when every length in ``[low, high]`` (``high``
    ``None``: no upper end) is decided on the side ``want``."""

    key: str
    task: str
    build: str
    hops: tuple[int, ...]
    threshold: float
    want: Side
    low: int
    high: int | None
    says: str
    lengths: tuple[int, ...] | None = None
    """The lengths this reading measures (``None``: the study's)."""
    positions: str = "uniform"
    """Where a chain's middle steps sit (:data:`~ropeproof.verify.measure._task_lengths.POSITIONS`)."""

    def applies(self, n: int) -> bool:
        return n >= self.low and (self.high is None or n <= self.high)

    def measured(self, lengths: Sequence[int]) -> list[int]:
        """The study's ``lengths`` this reading measures."""
        return [n for n in lengths if self.lengths is None or n in self.lengths]


READINGS: tuple[LengthReading, ...] = (
    LengthReading(
        "letter-distractors", "letter", "distractors", (1, 2, 3, 4), 0.9, "above", 17, 850,
        "letter model >= 0.9 at every n <= 850, [A]'s 17 tokens' 8 targets first, then n - 9 distractor "
        "pairs (1-4 hops, middle steps uniform as in training)",
    ),
    LengthReading(
        "letter-distractors-near-query", "letter", "distractors", (1, 2, 3, 4), 0.9, "above", 17, 850,
        "letter model >= 0.9 at every n <= 850, the 'distractors' build with the earlier draw that pushes a "
        "chain's middle steps toward the query (the largest h - 1 of 3 uniform positions)",
        positions="near-query",
    ),
    LengthReading(
        "letter-window", "letter", "window", (1, 2, 3, 4), 0.9, "above", 17, 850,
        "letter model >= 0.9 at every n <= 850, a target window of n - 9 pairs (1-4 hops)",
    ),
    LengthReading(
        "letter-both", "letter", "both", (1, 2, 3, 4), 0.9, "above", 17, 850,
        "letter model >= 0.9 at every n <= 850, both windows about (n - 1) / 2 (1-4 hops)",
    ),
    LengthReading(
        "letter-near", "letter", "near", (1,), 0.9, "above", 17, 850,
        "letter model >= 0.9 at every n <= 850, a 1-hop chain within [A]'s 17 tokens at the end, behind "
        "n - 17 distractor pairs (measured at 17, 64, 256 and 850)",
        (17, 64, 256, 850),
    ),
    LengthReading(
        "letter-near-all-hops", "letter", "near", (1, 2, 3, 4), 0.9, "above", 17, 850,
        "letter model >= 0.9 at every n <= 850, a chain of 1-4 hops (the hop counts it was trained on) "
        "within [A]'s 17 tokens at the end, behind n - 17 distractor pairs (measured at 17, 64, 256 and "
        "850)",
        (17, 64, 256, 850),
    ),
    LengthReading(
        "number-distractors", "number", "distractors", (1, 2, 3, 4), 0.5, "below", 64, None,
        "number model below 0.5 at every n >= 64, [A]'s 17 tokens behind n - 17 distractors (1-4 hops)",
    ),
)  # fmt: skip
"""Every reading the claim ``training.length`` reports (module docstring); all but the last are the
letter half, the last the number half."""
QUICK_READINGS = ("letter-distractors", "number-distractors")


def reading(key: str) -> LengthReading:
    """The reading called ``key``."""
    for r in READINGS:
        if r.key == key:
            return r
    raise InputError(f"reading={key!r} is unknown; accepted: {[r.key for r in READINGS]}")


def study_plan(quick: bool, full: bool = False) -> dict[str, Any]:
    """The study the claim and the figure share: ``readings`` (keys), ``lengths``, ``cap`` (rows are
    measured by :func:`reading_rows`, looked at after every forward batch, :func:`first_look`) and
    ``full``: whether the rows no verdict reads are measured too (the one-look rows of
    :func:`reading_rows`; ``ropeproof figures --full``)."""
    keys = list(QUICK_READINGS if quick else (r.key for r in READINGS))
    lengths = list(QUICK_LENGTHS if quick else LENGTHS)
    return {"readings": keys, "lengths": lengths, "cap": QUICK_CAP if quick else CAP, "full": bool(full)}


def first_look(n: int, cap: int) -> int:
    """The inputs of a row's first look, and of every look after it, at length ``n``: one forward batch
    (:func:`~ropeproof.verify.studies.training._evaluation.forward_batch`), at most ``cap``."""
    from ropeproof.verify.studies.training._evaluation import forward_batch

    return min(forward_batch(n), int(cap))


def reading_rows(
    key: str,
    lengths: Sequence[int],
    cap: int,
    measure: Callable[[int, int], dict[str, Any]],
    full: bool = False,
) -> list[dict[str, Any]]:
    """One model's rows under reading ``key``, in order of length, each with ``judged`` added:
    ``measure(n, row_cap)`` gives the row at length ``n`` sampled one forward batch at a time
    (:func:`first_look`) up to ``row_cap``. A judged length gets ``cap`` (sampled until decided); lengths
    are measured where a contradiction is likeliest first (the longest first for an above-reading, the
    shortest first for a below-reading). Once a judged length contradicts an above-reading, its verdict
    and its flip points no longer depend on the other lengths, so those are not judged, nor are the
    lengths a reading does not judge: they are measured only when ``full`` (one look, ``row_cap =
    first_look(n, cap)``: an estimate with its interval for the figure) and are absent otherwise; a
    below-reading judges every length it covers to the cap, since from which length every length is
    decided below its threshold (``decided_below_from``) reads all of them."""
    r = reading(key)
    order = sorted(r.measured(lengths), reverse=r.want == "above")
    contradicted = False
    rows: dict[int, dict[str, Any]] = {}
    for n in order:
        judged = r.applies(n) and (r.want == "below" or not contradicted)
        if not (judged or full):
            continue
        row = measure(n, cap if judged else first_look(n, cap))
        rows[n] = {**row, "judged": judged}
        contradicted |= judged and row["side"] not in (r.want, "undecided")
    return [rows[n] for n in sorted(rows)]


POINT_KEYS = ("n", "correct", "count", "accuracy", "ci_low", "ci_high", "side")
"""What a flip point or worst row names: its length, count, accuracy and interval."""


def _point(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in POINT_KEYS if k in row}


def length_model(path: str | Path, rows: int = TABLE_ROWS) -> Any:
    """The checkpoint in ``path`` for the length study: float32, eval mode, SDPA attention, the sin/cos
    table rebuilt to ``max(n_positions, rows)`` rows (module docstring). Its config keeps the stored
    ``n_positions`` as ``stored_n_positions``."""
    import json

    from ropeproof.verify.interop.hf._library import quiet_progress, require_transformers

    tf = require_transformers()
    stored = int(json.loads((Path(path) / "config.json").read_text())["n_positions"])
    table = max(stored, integer(rows, "rows", low=1))
    with quiet_progress():
        model = tf.GPTJForCausalLM.from_pretrained(
            path, dtype=torch.float32, attn_implementation="sdpa", n_positions=table
        )
    model.config.stored_n_positions = stored
    return model.eval()


def _check(model: Any, task: str, n: int, build: str) -> None:
    if build not in VECTOR_BUILDS:
        raise InputError(f"build={build!r} is unknown; accepted: {list(VECTOR_BUILDS)}")
    if task == "number" and build in ("window", "both"):
        raise InputError(
            f"build={build!r} at n={n} needs integers up to {required_max_int(task, n, build)}, outside "
            "the number model's vocabulary (1..16); use build='distractors' or 'near'"
        )
    limit = int(model.config.n_positions)
    if n > limit:
        raise InputError(
            f"n={n} exceeds the model's sin/cos table of {limit} rows; "
            "load it with length_model(path, rows=n)"
        )


def encoded(
    task: str,
    n: int,
    start: int,
    stop: int,
    build: str,
    seed: int,
    hops: Sequence[int],
    positions: str = "uniform",
) -> Batch:
    """Inputs ``start .. stop - 1`` of :func:`long_inputs` encoded for the trained models of ``task``."""
    enc = TaskEncoder(task)
    got = long_inputs(task, n, start, stop, build, seed, hops, positions)
    table = torch.as_tensor(got.table(enc.index, enc.vocab_size - 1))
    codes, answers = torch.as_tensor(got.codes), torch.as_tensor(got.answers)
    return Batch(table[codes], table[answers], torch.as_tensor(got.hops))


def decided_length_row(
    model: Any,
    task: str,
    n: int,
    threshold: float,
    first: int | None = None,
    cap: int = CAP,
    build: str = "distractors",
    hops: Sequence[int] = (1, 2, 3, 4),
    seed: int = 0,
    positions: str = "uniform",
) -> dict[str, Any]:
    """Accuracy at length ``n`` sampled until its anytime-valid 95% interval decides ``threshold``:
    inputs ``0 .. first - 1`` of :func:`long_inputs` first (``None``: one forward batch,
    :func:`first_look`), then ``first`` more at a time
    (:func:`~ropeproof.verify.measure._statistics.look_sizes`), at most ``cap``, stopping at the first
    look that decides (the inputs a row used do not depend on ``cap``).

    Returns ``{"task", "build", "hops", "positions", "n", "count", "correct", "accuracy", "ci_low", "ci_high",
    "interval", "threshold", "side", "cap", "look", "per_hop", "n_positions", "table_rebuilt"}``:
    ``count`` the inputs used, ``look`` the inputs per look, ``side`` ``"above"``, ``"below"`` or
    ``"undecided"`` (the cap reached), ``per_hop`` ``{h: [correct, count]}``, ``n_positions`` the
    model's stored table and ``table_rebuilt`` whether ``n`` exceeds it."""
    _check(model, task, n, build)
    threshold = real(threshold, "threshold", low=0.0, high=1.0)
    first = first_look(n, cap) if first is None else integer(first, "first", low=1)
    seq = SequentialProportion()
    per_hop: dict[str, list[int]] = {}

    def measure(done: int, count: int) -> None:
        batch = encoded(task, n, done, count, build, seed, hops, positions)
        right = last_answers(model, batch.input_ids) == batch.answers
        seq.add(right.numpy())
        for h, r in zip(batch.hops.tolist(), right.tolist(), strict=True):
            counts = per_hop.setdefault(str(h), [0, 0])
            counts[0] += int(r)
            counts[1] += 1

    sample_until_decided(first, cap, measure, lambda: seq.decide(threshold) != "undecided")
    stored = int(getattr(model.config, "stored_n_positions", model.config.n_positions))
    return {
        "task": task,
        "build": build,
        "hops": sorted({int(h) for h in hops}),
        "positions": positions,
        "n": int(n),
        **seq.record(threshold),
        "threshold": threshold,
        "cap": int(cap),
        "look": first,
        "per_hop": dict(sorted(per_hop.items())),
        "n_positions": stored,
        "table_rebuilt": int(n) > stored,
    }


def reading_finding(
    key: str, rows: Sequence[dict[str, Any]], lengths: Sequence[int] | None = None
) -> dict[str, Any]:
    """What one model's rows say under reading ``key``, from the rows it judged (``judged``, absent:
    judged) at the lengths it covers (of the study's ``lengths``, :meth:`LengthReading.measured`;
    ``None``: the rows' lengths; a covered length with no row is not decided): ``finding`` (``shows``
    when every judged length is decided on its side, ``contradicts`` when one is decided on the other,
    else ``undecided``), ``not_decided`` (the covered lengths not sampled to a decision: no row, one look,
    or undecided at the cap) and where the verdict would flip, each flip point from decided lengths only
    and with its row (:data:`POINT_KEYS`) beside it (``*_row``). For an ``above`` reading it contradicts
    at every threshold above ``fails_above`` (the lowest upper end over the decided lengths) and shows at
    every threshold up to ``holds_up_to`` (the lowest lower end, ``None`` unless every covered length is
    decided); for a ``below`` reading the reverse (``fails_up_to``, ``holds_above``), and
    ``decided_below_from``: the least length from which every covered length is decided below the
    threshold (``None`` if none). ``worst``: the judged row with the
    lowest lower end (``above``) or highest upper end (``below``)."""
    from ropeproof.verify.studies.training._observations import CONTRADICTS, SHOWS, UNDECIDED, combine

    r = reading(key)
    covered = [row for row in rows if r.applies(row["n"])]
    study = [row["n"] for row in rows] if lengths is None else r.measured(lengths)
    covered_n = {n for n in study if r.applies(n)} | {row["n"] for row in covered}
    judged = [row for row in covered if row.get("judged", True)]
    if not judged:
        return {"reading": key, "finding": UNDECIDED, "lengths": 0, "not_decided": sorted(covered_n)}
    sides = [row["side"] for row in judged]
    found = combine([SHOWS if s == r.want else UNDECIDED if s == "undecided" else CONTRADICTS for s in sides])
    decided = [row for row in judged if row["side"] != "undecided"]
    open_lengths = sorted(covered_n - {row["n"] for row in decided})
    out: dict[str, Any] = {
        "reading": key, "finding": found, "lengths": len(judged), "not_decided": open_lengths,
    }  # fmt: skip

    def extreme(rows: list[dict[str, Any]], end: str, pick: Callable[..., Any], name: str) -> None:
        row = pick(rows, key=lambda row: row[end]) if rows else None
        out[name] = None if row is None else row[end]
        out[f"{name}_row"] = None if row is None else _point(row)

    every = decided if not open_lengths else []
    if r.want == "above":
        extreme(decided, "ci_high", min, "fails_above")
        extreme(every, "ci_low", min, "holds_up_to")
        worst = min(judged, key=lambda row: row["ci_low"])
    else:
        extreme(decided, "ci_low", max, "fails_up_to")
        extreme(every, "ci_high", max, "holds_above")
        worst = max(judged, key=lambda row: row["ci_high"])
        below_from = None
        decided_n = {row["n"]: row["side"] for row in decided}
        for n in sorted(covered_n, reverse=True):
            if decided_n.get(n) != "below":
                break
            below_from = n
        out["decided_below_from"] = below_from
    out["worst"] = _point(worst)
    return out


def point_text(seed: str, row: dict[str, Any]) -> str:
    """One flip point or worst row with its seed, length, count and interval."""
    return (
        f"{seed} at n = {row['n']}: {row['correct']}/{row['count']} inputs, accuracy {row['accuracy']:.3f}, "
        f"anytime-valid 95% interval [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
    )


def _bound(seeds: dict[str, dict[str, Any]], name: str, pick: Callable[..., Any]) -> str | None:
    """The ``name`` flip point over ``seeds`` (``pick`` min or max) with its row, or ``None`` when some
    seed has none."""
    values = {k: v.get(name) for k, v in seeds.items()}
    if not values or None in values.values():
        return None
    seed = pick(values, key=lambda k: values[k])
    return f"{values[seed]:.3f} ({point_text(seed, seeds[seed][f'{name}_row'])})"


def _not_decided(seeds: dict[str, dict[str, Any]]) -> str:
    lists = {k: ", ".join(map(str, v["not_decided"])) for k, v in seeds.items() if v.get("not_decided")}
    if not lists:
        return "not decided"
    if len(lists) == len(seeds) > 1 and len(set(lists.values())) == 1:
        said = f"every paper seed n = {next(iter(lists.values()))}"
    else:
        said = "; ".join(f"{k} n = {v}" for k, v in lists.items())
    return f"not decided (lengths not sampled to a decision: {said})"


def flip_text(found: dict[str, Any]) -> str:
    """Where a reading's verdict lies and the thresholds at which it would flip, worst paper seed, each
    flip point with its seed, length, count and interval (:func:`point_text`), from decided lengths only:
    ``found`` is ``{"verdict", "seeds": {"{config}-seed{seed}": reading_finding(...)}}``; for an ``above``
    reading the lowest ``fails_above`` and ``holds_up_to`` over the paper seeds, for a ``below`` reading the
    highest ``fails_up_to`` and ``holds_above`` and the latest ``decided_below_from``; a flip point some
    paper seed lacks is "not decided", naming the lengths not sampled to a decision; the verdict alone when
    no paper seed was measured."""
    seeds = {k: v for k, v in found["seeds"].items() if k.startswith("paper-")}
    if not seeds:
        return found["verdict"]
    if reading(next(iter(seeds.values()))["reading"]).want == "above":
        fails = _bound(seeds, "fails_above", min)
        holds = _bound(seeds, "holds_up_to", min)
        where = f"holds for thresholds up to {holds}" if holds else f"where it holds: {_not_decided(seeds)}"
        fails = fails or "no length decided"
        return f"{found['verdict']}: fails at thresholds above {fails}; {where} (worst seed)"
    fails = _bound(seeds, "fails_up_to", max)
    holds = _bound(seeds, "holds_above", max)
    froms = [v.get("decided_below_from") for v in seeds.values()]
    since = (
        f"from n = {max(froms)}" if froms and None not in froms else f"from no length ({_not_decided(seeds)})"
    )
    where = f"holds for thresholds above {holds}" if holds else f"where it holds: {_not_decided(seeds)}"
    return (
        f"{found['verdict']}: fails at thresholds up to {fails or 'no length decided'}; {where} (worst "
        f"seed); decided below the threshold at every length {since}"
    )


def row_against(row: dict[str, Any]) -> str:
    """One row of :func:`decided_length_row` read against its threshold: where its interval lies, the
    accuracy, the interval and the inputs it used."""
    where = {"above": "above", "below": "below", "undecided": "not decided against"}[row["side"]]
    return (
        f"{where} {row['threshold']:.0%} (accuracy {row['accuracy']:.3f}, anytime-valid 95% interval "
        f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}] on {row['count']} inputs)"
    )
