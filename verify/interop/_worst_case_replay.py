"""Replay a family's worst-case inputs through a saved export: where does the model a user loads first
answer wrong, beside the length where the construction's exact margin first fails?

A positive exact margin says the head puts its largest logit on the right key; whether the exported model
*answers* right also depends on the logit scale it runs at (the softmax link,
:func:`~ropeproof.theory._softmax_link.required_logit_scale`, ``docs/theory.md`` section 5) and on the
library's arithmetic. For every length ``n`` this check takes the family's input attaining ``margin_inf``
(the exact float64 sweep's witness, :func:`~ropeproof.verify.measure.exact._head_sweep.sweep_head`: the
target at its place and the strongest competitor everywhere else), lets every competitor vote for one
wrong answer without changing a logit (:func:`answer_adversary`: a token with the same key row and another
answer), writes it as text and asks the saved directory for its next token:

- an HF export (``ropeproof export gptj|llama``) is loaded by ``transformers`` alone:
  ``AutoTokenizer.from_pretrained`` (the export's ``tokenizer.json``) and
  ``AutoModelForCausalLM.from_pretrained`` (``attn_implementation`` as given: ``"eager"`` by default,
  ``from_pretrained``'s own default is ``"sdpa"``);
- a TransformerLens export (``ropeproof export tl``) by
  :func:`~ropeproof.verify.interop.tl._checkpoint.load_hooked_transformer`, with the same tokenizer.

The expected answer is the head's own answer with all attention on the target (hard attention: the
argmax of ``W_E[target] W_V W_O W_U``, :meth:`~ropeproof.constructions._head.CompiledHead.value_readout`).

:func:`replay_worst_cases` reports, per length, the exact margin (``resolved`` when it is above float64's
resolution for the head, :func:`~ropeproof.verify.kernel._resolution.logit_error_bound`), the expected and
the given answer, the attention weights the saved model puts on the target and on its strongest other
position (read from the model: an eager HF load's ``output_attentions``, a TransformerLens
``hook_pattern``; ``None`` under SDPA, which computes no weights) and the logit scale the softmax link
needs for target weight ``1 - eps``; and beside each other the **first wrong length** (exact among the
lengths replayed: every length of the family from its shortest input, ``Family.min_length``, to
``max_n`` unless ``lengths`` says otherwise, and the summary says which) and the **exact horizon** (the
last ``n`` before the first length of the family whose margin is not resolved positive; lengths below the
family's shortest input have no input and do not count). A wrong answer at or below the horizon is the
export's scale or arithmetic failing where the construction is right. A right answer on the worst-margin
input does not prove every input of that length: it is one input per length, the one the margin ranks
worst.

The family comes from :func:`worst_case_family` (one place that picks it: a given family, the standard
family of a given construction, or the head's own, :func:`~ropeproof.verify.measure.exact._head_sweep.
head_family`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._validate import integer, real
from ropeproof.theory._construction import Construction
from ropeproof.theory._softmax_link import required_logit_scale
from ropeproof.verify.interop._errors import ExportError, HeadImportError
from ropeproof.verify.interop._head_export import ExportInfo, load_export_info
from ropeproof.verify.interop.hf._library import quiet_progress, require_transformers
from ropeproof.verify.interop.tl._checkpoint import TL_CONFIG_FILE, load_hooked_transformer
from ropeproof.verify.kernel._resolution import logit_error_bound
from ropeproof.verify.measure.exact._explain import token_excerpt
from ropeproof.verify.measure.exact._families import Family, family_for
from ropeproof.verify.measure.exact._head_sweep import HeadSweep, head_family, sweep_head

DTYPES: tuple[str, ...] = ("float32", "float64")
ATTENTION_IMPLEMENTATIONS: tuple[str, ...] = ("eager", "sdpa")


def worst_case_family(
    head: CompiledHead, family: Family | None = None, construction: Construction | None = None
) -> Family:
    """The family whose worst cases are replayed: ``family`` if given, else the standard family of
    ``construction`` (:func:`~ropeproof.verify.measure.exact._families.family_for`), else the head's own
    (:func:`~ropeproof.verify.measure.exact._head_sweep.head_family`: its construction's family when the
    head records how it was compiled, else every input over its vocabulary)."""
    if family is not None:
        if not isinstance(family, Family):
            raise ExportError(f"family must be a Family, got {type(family).__name__}")
        return family
    if construction is not None:
        return family_for(construction)
    return head_family(head)


@dataclass
class SavedExport:
    """A saved export directory, loaded as a user would (module docstring): its record, its tokenizer,
    its model, and how the model was loaded."""

    path: Path
    info: ExportInfo
    library: str
    tokenizer: Any
    model: Any
    dtype: str
    attn_implementation: str | None

    def next_tokens(self, sequences: Sequence[Sequence[str]]) -> list[str]:
        """The model's argmax next token (a token name) after each sequence of token names, one sequence at
        a time (lengths may differ): the text is the names joined by spaces, encoded by the tokenizer."""
        return [token for token, _ in self.next_tokens_and_weights(sequences)]

    def next_tokens_and_weights(
        self, sequences: Sequence[Sequence[str]]
    ) -> list[tuple[str, np.ndarray | None]]:
        """:meth:`next_tokens` with the last position's attention weights over the sequence (layer 0, head
        0, float64 copy; ``None`` where the model computes none: an SDPA load).

        Shapes: each weights entry [len(sequence)]
        """
        out: list[tuple[str, np.ndarray | None]] = []
        for seq in sequences:
            ids = self.tokenizer(" ".join(seq), return_tensors="pt")["input_ids"]
            if ids.shape[1] != len(seq):
                raise ExportError(f"the tokenizer encodes {len(seq)} token names as {ids.shape[1]} ids")
            weights = None
            with torch.no_grad():
                if self.library == "tl":
                    logits, cache = self.model.run_with_cache(ids, names_filter="blocks.0.attn.hook_pattern")
                    weights = cache["blocks.0.attn.hook_pattern"][0, 0, -1]
                elif self.attn_implementation == "eager":
                    result = self.model(input_ids=ids, output_attentions=True)
                    logits, weights = result.logits, result.attentions[0][0, 0, -1]
                else:
                    logits = self.model(input_ids=ids).logits
            row = None if weights is None else weights.detach().to(torch.float64).cpu().numpy()
            out.append((self.tokenizer.convert_ids_to_tokens(int(logits[0, -1].argmax())), row))
        return out


def load_saved_export(
    path: str | Path, dtype: str | None = None, attn_implementation: str = "eager"
) -> SavedExport:
    """Load an export directory as a user would (module docstring). ``dtype``: ``None`` (as saved) or
    ``float32``/``float64`` (HF only: transformers casts on load); ``attn_implementation``: ``"eager"``
    (returns attention weights) or ``"sdpa"`` (``from_pretrained``'s default; HF only)."""
    src = Path(path)
    info = load_export_info(src)
    if dtype is not None and dtype not in DTYPES:
        raise ExportError(f"dtype={dtype!r} is unknown; accepted: {list(DTYPES)} or None (as saved)")
    if attn_implementation not in ATTENTION_IMPLEMENTATIONS:
        raise ExportError(
            f"attn_implementation={attn_implementation!r} is unknown; accepted: "
            f"{list(ATTENTION_IMPLEMENTATIONS)}"
        )
    tf = require_transformers()
    tokenizer = tf.AutoTokenizer.from_pretrained(str(src))
    if (src / TL_CONFIG_FILE).is_file():
        model = load_hooked_transformer(src)
        saved = str(model.cfg.dtype).removeprefix("torch.")
        if dtype not in (None, saved):
            raise ExportError(
                f"dtype={dtype!r}: a TransformerLens export runs in the dtype it was saved in ({saved})"
            )
        return SavedExport(src, info, "tl", tokenizer, model, saved, None)
    with quiet_progress():
        model = tf.AutoModelForCausalLM.from_pretrained(
            str(src),
            dtype=getattr(torch, dtype) if dtype else "auto",
            attn_implementation=attn_implementation,
        ).eval()
    saved = str(next(model.parameters()).dtype).removeprefix("torch.")
    return SavedExport(src, info, "hf", tokenizer, model, saved, attn_implementation)


@dataclass
class ReplayRow:
    """One length: the exact margin (head logits, before the export's logit scale), whether float64
    resolves it, the expected and the given answer, :func:`required_logit_scale` at it (``None`` where
    the margin is not resolved positive), and the saved model's attention weights at the query: on the
    target (``target_weight``) and the largest on any other position (``competitor_weight``, at
    ``competitor_position``); ``None`` where the model computes no weights (SDPA)."""

    n: int
    margin: float
    resolved: bool
    expected: str | None
    given: str
    required_scale: float | None
    target_weight: float | None = None
    competitor_weight: float | None = None
    competitor_position: int | None = None

    @property
    def correct(self) -> bool | None:
        """Whether the saved model answered as the head does on its target (``None``: no expected answer)."""
        return None if self.expected is None else self.given == self.expected

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "correct": self.correct}


@dataclass
class WorstCaseReplay:
    """:func:`replay_worst_cases`'s result (module docstring); ``first_wrong`` holds the witness of the first
    wrong length (every token, the target and the margin's winning competitor, expected and given answer,
    margin, required scale, attention weights); :meth:`summary` shows its tokens as a bounded excerpt."""

    path: str
    library: str
    dtype: str
    attn_implementation: str | None
    family: str
    logit_scale: float
    eps: float
    lengths: str
    rows: list[ReplayRow]
    exact_horizon: int
    horizon_reason: str
    first_wrong: dict[str, Any] | None
    sweep: HeadSweep = field(repr=False)

    @property
    def first_wrong_n(self) -> int | None:
        return None if self.first_wrong is None else int(self.first_wrong["n"])

    @property
    def wrong_within_horizon(self) -> bool:
        """Whether the export answers wrong at a length the exact margin covers."""
        return self.first_wrong_n is not None and self.first_wrong_n <= self.exact_horizon

    def summary(self) -> dict[str, Any]:
        """What the check found, as JSON data: the first wrong length beside the exact horizon."""
        wrong = [r.n for r in self.rows if r.correct is False]
        return {
            "path": self.path,
            "library": self.library,
            "dtype": self.dtype,
            "attn_implementation": self.attn_implementation,
            "family": self.family,
            "logit_scale": self.logit_scale,
            "lengths": self.lengths,
            "exact_horizon": self.exact_horizon,
            "horizon_reason": self.horizon_reason,
            "first_wrong_n": self.first_wrong_n,
            "wrong_within_horizon": self.wrong_within_horizon,
            "wrong_lengths": len(wrong),
            "first_wrong": _bounded(self.first_wrong),
            "eps": self.eps,
            "scale_for_every_length": _largest(
                r.required_scale for r in self.rows if r.n <= self.exact_horizon
            ),
            "note": "one input per length, the one margin_inf ranks worst; a right answer there does not "
            "prove every input of that length",
        }


def _bounded(first: dict[str, Any] | None) -> dict[str, Any] | None:
    """The first wrong length's witness for a summary: its tokens as a bounded excerpt
    (:func:`~ropeproof.verify.measure.exact._explain.token_excerpt`: the target, the margin's winning
    competitor and the position the model weights most after the target, with the query)."""
    if first is None:
        return None
    out = {k: v for k, v in first.items() if k != "tokens"}
    named = [first["target_position"], first["competitor_position"], first["attention_competitor_position"]]
    out["excerpt"] = token_excerpt(first["tokens"], [p for p in named if p is not None])
    return out


def _largest(values: Any) -> float | None:
    vals = [v for v in values if v is not None]
    return max(vals) if vals else None


def _resolutions(head: CompiledHead, n: np.ndarray) -> np.ndarray:
    """float64's resolution of a logit gap of ``head`` at each length ``n``: twice the logit error bound at
    the largest ``|q| |k|`` over the vocabulary and the largest angle ``(n - 1) max |theta|``."""
    q = float(np.linalg.norm(head.W_E @ head.W_Q, axis=1).max())
    k = float(np.linalg.norm(head.W_E @ head.W_K, axis=1).max())
    top = float(np.abs(head.spec.plane_freqs).max(initial=0.0))
    magnitude = q * k * abs(head.scale)
    return np.array(
        [2 * logit_error_bound("float64", head.spec.head_dim, magnitude, top * (m - 1)) for m in n]
    )


def _expected(head: CompiledHead, token: str) -> str | None:
    scores = head.value_readout(token)
    top = np.sort(scores)[-2:] if scores.size > 1 else scores
    if not np.any(scores) or (scores.size > 1 and top[0] == top[1]):
        return None  # the target writes nothing the readout tells apart
    return head.tokens[int(scores.argmax())]


def answer_adversary(head: CompiledHead, family: Family, witness: Any) -> tuple[str, ...]:
    """The ``margin_inf`` witness with its competitors voting for one wrong answer: every position other
    than the query and the target gets, among the tokens its case allows there with *the same key row*
    (``W_E W_K``, hence the same logit at every distance, so the margin is unchanged), one whose hard
    answer differs from the target's, the same wrong answer everywhere it can. Positions with no such
    token keep theirs."""
    case = next(c for c in family.cases if c.label == witness.case)
    tokens = list(witness.tokens)
    n, target = len(tokens), witness.target_position
    expected = _expected(head, tokens[target])
    if expected is None:
        return tuple(tokens)
    keys = head.W_E @ head.W_K
    index = {t: i for i, t in enumerate(head.tokens)}
    answers = {t: _expected(head, t) for t in case.other_tokens}
    chosen: str | None = None  # the one wrong answer the competitors vote for
    for p in range(n - 1):
        if p == target:
            continue
        key = keys[index[tokens[p]]]
        same = [t for t in case.other_tokens if np.array_equal(keys[index[t]], key)]
        wrong = [t for t in same if answers[t] not in (None, expected)]
        if chosen is not None:
            wrong = [t for t in wrong if answers[t] == chosen] or wrong
        if wrong:
            tokens[p] = wrong[0]
            chosen = chosen or answers[wrong[0]]
    return tuple(tokens)


def replay_worst_cases(
    path: str | Path,
    head: CompiledHead,
    family: Family | None = None,
    *,
    construction: Construction | None = None,
    max_n: int | None = None,
    lengths: Sequence[int] | None = None,
    eps: float = 0.01,
    dtype: str | None = None,
    attn_implementation: str = "eager",
) -> WorstCaseReplay:
    """Replay ``head``'s worst-case inputs through the export saved at ``path`` (module docstring).

    ``head`` is the compiled head that was exported (its tokens must be the export's); the family is
    :func:`worst_case_family` of ``family``/``construction``. ``max_n``: the longest length (default the
    export's ``max_positions``/``n_ctx`` capped at 4096); ``lengths``: the lengths to replay (default every
    ``n`` from the family's shortest input, ``Family.min_length()``, to ``max_n``, so the first wrong
    length is exact; a length below the shortest input is refused). ``eps``: the target weight ``1 - eps``
    :func:`required_logit_scale` is computed for. ``dtype``/``attn_implementation``: how the directory is
    loaded (:func:`load_saved_export`).
    """
    if not isinstance(head, CompiledHead):
        raise ExportError(f"head must be a CompiledHead, got {type(head).__name__}")
    eps = real(eps, "eps", low=0, high=1, low_open=True, high_open=True)
    saved = load_saved_export(path, dtype, attn_implementation)
    if tuple(saved.info.tokens) != tuple(head.tokens):
        raise HeadImportError(f"{path} was exported from another head (its tokens are not head.tokens)")
    limit = _positions(saved)
    fam = worst_case_family(head, family, construction)
    low = fam.min_length()  # the family's shortest input: no length below it has a worst case
    if low > limit:
        raise ExportError(f"the {fam.name} family's shortest input has length {low} > the export's {limit}")
    top = integer(max_n, "max_n", low=low, high=limit) if max_n is not None else min(limit, 4096)
    if lengths is None:
        todo, described = list(range(low, top + 1)), f"every n in {low}..{top}"
    else:
        todo = sorted({integer(n, "lengths", low=low, high=top) for n in lengths})
        if not todo:
            raise ExportError("lengths must hold at least one length")
        described = (
            f"{len(todo)} lengths from {todo[0]} to {todo[-1]} (not every length: first wrong among these)"
        )
        if todo == list(range(low, todo[-1] + 1)):
            described = f"every n in {low}..{todo[-1]}"
    sweep = sweep_head(head, max(todo[-1], 2), fam, dtype=torch.float64, gap_inf_limit=0)  # margins only
    n_all, margins = sweep.columns["n"], sweep.columns["margin_inf"]
    resolution = _resolutions(head, n_all)
    counted = n_all >= low  # the horizon counts the family's lengths only
    bad = np.flatnonzero(counted & ~(margins > resolution))
    if bad.size:
        horizon, r = int(n_all[bad[0]]) - 1, int(bad[0])
        reason = f"margin_inf {'<= 0' if margins[r] <= 0 else 'unresolved in float64'} at n={int(n_all[r])}"
    else:
        horizon, reason = int(n_all[-1]), f"margin_inf resolved > 0 at every n in {low}..{int(n_all[-1])}"
    witnesses = [sweep.witness(n, "margin_inf") for n in todo]
    inputs = [answer_adversary(head, fam, w) for w in witnesses]
    given = saved.next_tokens_and_weights(inputs)
    rows, first = [], None
    for n, w, tokens, (g, weights) in zip(todo, witnesses, inputs, given, strict=True):
        m = float(margins[n - 2])
        resolved = abs(m) > resolution[n - 2]
        scale = required_logit_scale(m, n, eps) if resolved and m > 0 else None
        row = ReplayRow(n, m, resolved, _expected(head, tokens[w.target_position]), g, scale)
        if weights is not None:
            others = np.delete(np.arange(n), w.target_position)
            best = int(others[np.argmax(weights[others])])
            row.target_weight = float(weights[w.target_position])
            row.competitor_weight, row.competitor_position = float(weights[best]), best
        rows.append(row)
        if first is None and row.correct is False:
            competitor = w.explanation.competitor_position if w.explanation is not None else None
            first = {
                "n": n,
                "tokens": list(tokens),
                "target_position": w.target_position,
                "case": w.case,
                "expected": row.expected,
                "given": g,
                "competitor_position": competitor,
                "competitor_token": tokens[competitor] if competitor is not None else None,
                "margin": m,
                "required_scale": scale,
                "target_weight": row.target_weight,
                "attention_competitor_weight": row.competitor_weight,
                "attention_competitor_position": row.competitor_position,
            }
    return WorstCaseReplay(
        str(path),
        saved.library,
        saved.dtype,
        saved.attn_implementation,
        fam.name,
        saved.info.logit_scale,
        eps,
        described,
        rows,
        int(horizon),
        reason,
        first,
        sweep,
    )


def _positions(saved: SavedExport) -> int:
    """The longest sequence the saved model runs (HF: ``n_positions``/``max_position_embeddings``; TL:
    ``n_ctx``)."""
    if saved.library == "tl":
        return int(saved.model.cfg.n_ctx)
    config = saved.model.config
    for name in ("n_positions", "max_position_embeddings"):
        value = getattr(config, name, None)
        if value:
            return int(value)
    raise HeadImportError(f"{saved.path}: the config states no position limit")
