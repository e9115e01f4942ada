"""Length generalisation of trained models: accuracy on inputs longer than the 17 tokens they were
trained on, built by :func:`ropeproof.verify.measure._task_lengths.long_inputs` (vectorised, i.i.d. inputs
in independently seeded chunks), each row sampled until its anytime-valid 95% interval decides its
threshold (:func:`ropeproof.verify.measure._statistics.confidence_sequence`).

**Readings** (:data:`READINGS`). [A] reports its letter model above 90% up to 850 tokens and its number
model failing soon after the training length, without saying how its long inputs were built. Each
reading is one task, build and threshold: the letter task on the ``distractors``, ``window`` and ``both``
builds and on the ``near`` build with 1-hop chains (the chain within 16 tokens of the query behind a
distractor prefix), each ">= 0.9 at every n <= 850"; the number task on ``distractors`` (the only build
in its vocabulary: it knows the integers 1..16), "below 0.5 at every n >= 64".

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
FIRST, CAP = 16, 1024
"""Each row draws :data:`FIRST` inputs, then grows (:func:`~ropeproof.verify.measure._statistics.look_sizes`)
until its interval decides, at most :data:`CAP` (``--quick``: :data:`QUICK_FIRST`, :data:`QUICK_CAP`)."""
QUICK_FIRST, QUICK_CAP = 8, 64


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

    def applies(self, n: int) -> bool:
        return n >= self.low and (self.high is None or n <= self.high)

    def measured(self, lengths: Sequence[int]) -> list[int]:
        """The study's ``lengths`` this reading measures."""
        return [n for n in lengths if self.lengths is None or n in self.lengths]


READINGS: tuple[LengthReading, ...] = (
    LengthReading(
        "letter-distractors", "letter", "distractors", (1, 2, 3, 4), 0.9, "above", 17, 850,
        "letter model >= 0.9 at every n <= 850, [A]'s 17 tokens' 8 targets first, then n - 9 distractor "
        "pairs (1-4 hops)",
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
        "number-distractors", "number", "distractors", (1, 2, 3, 4), 0.5, "below", 64, None,
        "number model below 0.5 at every n >= 64, [A]'s 17 tokens behind n - 17 distractors (1-4 hops)",
    ),
)  # fmt: skip
"""Every reading the claim ``training.length`` reports (module docstring); the first four are the letter
half, the last the number half."""
QUICK_READINGS = ("letter-distractors", "number-distractors")


def reading(key: str) -> LengthReading:
    """The reading called ``key``."""
    for r in READINGS:
        if r.key == key:
            return r
    raise InputError(f"reading={key!r} is unknown; accepted: {[r.key for r in READINGS]}")


def study_plan(quick: bool) -> dict[str, Any]:
    """The study the claim and the figure share: ``readings`` (keys), ``lengths``, ``first`` and ``cap``
    (rows are measured by :func:`reading_rows`)."""
    keys = list(QUICK_READINGS if quick else (r.key for r in READINGS))
    lengths = list(QUICK_LENGTHS if quick else LENGTHS)
    first, cap = (QUICK_FIRST, QUICK_CAP) if quick else (FIRST, CAP)
    return {"readings": keys, "lengths": lengths, "first": first, "cap": cap}


def reading_rows(
    key: str, lengths: Sequence[int], first: int, cap: int, measure: Callable[[int, int], dict[str, Any]]
) -> list[dict[str, Any]]:
    """One model's rows under reading ``key``, in order of length: ``measure(n, row_cap)`` gives the row
    at length ``n`` sampled from ``first`` inputs up to ``row_cap``. Lengths are measured where a
    contradiction is likeliest first (the longest first for an above-reading, the shortest first for a
    below-reading); a length the reading judges gets ``cap`` until some judged length contradicts the
    reading, every other row one look (``row_cap = first``: an estimate with its interval, for the
    figure; the finding no longer depends on it)."""
    r = reading(key)
    order = sorted(r.measured(lengths), reverse=r.want == "above")
    contradicted = False
    rows: dict[int, dict[str, Any]] = {}
    for n in order:
        row_cap = cap if r.applies(n) and not contradicted else first
        rows[n] = row = measure(n, row_cap)
        contradicted |= r.applies(n) and row["side"] not in (r.want, "undecided")
    return [rows[n] for n in sorted(rows)]


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


def encoded(task: str, n: int, start: int, stop: int, build: str, seed: int, hops: Sequence[int]) -> Batch:
    """Inputs ``start .. stop - 1`` of :func:`long_inputs` encoded for the trained models of ``task``."""
    enc = TaskEncoder(task)
    got = long_inputs(task, n, start, stop, build, seed, hops)
    table = torch.as_tensor(got.table(enc.index, enc.vocab_size - 1))
    codes, answers = torch.as_tensor(got.codes), torch.as_tensor(got.answers)
    return Batch(table[codes], table[answers], torch.as_tensor(got.hops))


def decided_length_row(
    model: Any,
    task: str,
    n: int,
    threshold: float,
    first: int = FIRST,
    cap: int = CAP,
    build: str = "distractors",
    hops: Sequence[int] = (1, 2, 3, 4),
    seed: int = 0,
) -> dict[str, Any]:
    """Accuracy at length ``n`` sampled until its anytime-valid 95% interval decides ``threshold``:
    inputs ``0 .. first - 1`` of :func:`long_inputs` first, then more at the sizes of
    :func:`~ropeproof.verify.measure._statistics.look_sizes`, at most ``cap`` (the inputs a row used do not
    depend on ``cap``).

    Returns ``{"task", "build", "hops", "n", "count", "correct", "accuracy", "ci_low", "ci_high",
    "interval", "threshold", "side", "cap", "per_hop", "n_positions", "table_rebuilt"}``: ``count`` the
    inputs used, ``side`` ``"above"``, ``"below"`` or ``"undecided"`` (the cap reached), ``per_hop`` ``{h:
    [correct, count]}``, ``n_positions`` the model's stored table and ``table_rebuilt`` whether ``n``
    exceeds it."""
    _check(model, task, n, build)
    threshold = real(threshold, "threshold", low=0.0, high=1.0)
    seq = SequentialProportion()
    per_hop: dict[str, list[int]] = {}

    def measure(done: int, count: int) -> None:
        batch = encoded(task, n, done, count, build, seed, hops)
        right = last_answers(model, batch.input_ids) == batch.answers
        seq.add(right.numpy())
        for h, r in zip(batch.hops.tolist(), right.tolist(), strict=True):
            counts = per_hop.setdefault(str(h), [0, 0])
            counts[0] += int(r)
            counts[1] += 1

    sample_until_decided(first, cap, measure, lambda: seq.decide(threshold) != "undecided")
    est = seq.estimate()
    stored = int(getattr(model.config, "stored_n_positions", model.config.n_positions))
    return {
        "task": task,
        "build": build,
        "hops": sorted({int(h) for h in hops}),
        "n": int(n),
        "count": est.n,
        "correct": seq.successes,
        "accuracy": est.value,
        "ci_low": est.low,
        "ci_high": est.high,
        "interval": est.method,
        "threshold": threshold,
        "side": seq.decide(threshold),
        "cap": int(cap),
        "per_hop": dict(sorted(per_hop.items())),
        "n_positions": stored,
        "table_rebuilt": int(n) > stored,
    }


def reading_finding(key: str, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What one model's rows say under reading ``key``: ``finding`` (``shows`` when every length the
    reading covers is decided on its side, ``contradicts`` when one is decided on the other, else
    ``undecided``) and where the verdict would flip: for an ``above`` reading it shows at every threshold
    up to ``holds_up_to`` (the lowest interval end over the covered lengths) and contradicts at every
    threshold above ``fails_above`` (the lowest upper end); for a ``below`` reading the reverse
    (``holds_above``, ``fails_up_to``), and ``decided_below_from``: the least length from which every
    measured length is decided below the threshold (``None`` if none)."""
    from ropeproof.verify.studies.training._observations import CONTRADICTS, SHOWS, UNDECIDED, combine

    r = reading(key)
    covered = [row for row in rows if r.applies(row["n"])]
    if not covered:
        return {"reading": key, "finding": UNDECIDED, "lengths": 0}
    sides = [row["side"] for row in covered]
    found = combine([SHOWS if s == r.want else UNDECIDED if s == "undecided" else CONTRADICTS for s in sides])
    out: dict[str, Any] = {"reading": key, "finding": found, "lengths": len(covered)}
    if r.want == "above":
        out["holds_up_to"] = min(row["ci_low"] for row in covered)
        out["fails_above"] = min(row["ci_high"] for row in covered)
        worst = min(covered, key=lambda row: row["ci_low"])
    else:
        out["holds_above"] = max(row["ci_high"] for row in covered)
        out["fails_up_to"] = max(row["ci_low"] for row in covered)
        worst = max(covered, key=lambda row: row["ci_high"])
        below_from = None
        for row in sorted(rows, key=lambda row: -row["n"]):
            if row["side"] != "below":
                break
            below_from = row["n"]
        out["decided_below_from"] = below_from
    out["worst"] = {k: worst[k] for k in ("n", "accuracy", "ci_low", "ci_high", "count", "side")}
    return out


def flip_text(found: dict[str, Any]) -> str:
    """Where a reading's verdict lies and the thresholds at which it would flip, worst paper seed:
    ``found`` is ``{"verdict", "seeds": {"{config}-seed{seed}": reading_finding(...)}}``; for an
    ``above`` reading the lowest ``holds_up_to`` and ``fails_above`` over the paper seeds, for a ``below``
    reading the highest ``holds_above`` and ``fails_up_to`` and the latest ``decided_below_from`` ("never"
    when some paper seed has none); the verdict alone when no paper seed was measured."""
    seeds = {k: v for k, v in found["seeds"].items() if k.startswith("paper-")}
    if not seeds:
        return found["verdict"]
    if "holds_up_to" in next(iter(seeds.values())):
        low = min(v.get("holds_up_to", 1.0) for v in seeds.values())
        high = min(v.get("fails_above", 1.0) for v in seeds.values())
        return (
            f"{found['verdict']}: holds for thresholds up to {low:.3f}, fails above {high:.3f} (worst seed)"
        )
    high = max(v.get("holds_above", 0.0) for v in seeds.values())
    low = max(v.get("fails_up_to", 0.0) for v in seeds.values())
    froms = [v.get("decided_below_from") for v in seeds.values()]
    since = "never" if None in froms else f"from n = {max(froms)}"
    return (
        f"{found['verdict']}: holds for thresholds above {high:.3f}, fails up to {low:.3f} (worst seed); "
        f"decided below the threshold at every measured length {since}"
    )


def row_against(row: dict[str, Any]) -> str:
    """One row of :func:`decided_length_row` read against its threshold: where its interval lies, the
    accuracy, the interval and the inputs it used."""
    where = {"above": "above", "below": "below", "undecided": "not decided against"}[row["side"]]
    return (
        f"{where} {row['threshold']:.0%} (accuracy {row['accuracy']:.3f}, anytime-valid 95% interval "
        f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}] on {row['count']} inputs)"
    )
