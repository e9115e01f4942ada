"""Export a compiled multi-hop model as an HF ``GPTJForCausalLM`` / ``LlamaForCausalLM`` checkpoint with a
word-level tokenizer, so that ``from_pretrained`` + greedy decoding answers [A]'s tasks with no ropeproof
code in the loop.

Layout (``d`` = the compiled residual width, layer ``l`` of the compiled model = block ``l``):

- **GPT-J in [A]'s shape**: one head per layer, ``n_embd = head_dim`` (default ``d + 1`` rounded up to
  even, or a given width such as [A]'s 128): the residual dims keep their indices, dim ``d`` is the spare,
  always-zero dim of the LayerNorm compensation (:mod:`ropeproof.verify.interop.hf`: every norm has
  ``eps = 2^80`` and gain ``2^40`` so it computes ``x - mean(x)``, and every matrix reading a norm output
  gets minus its row sum on the spare column) and any dims past it are unused. The first ``rotary_dim``
  dims rotate (default all, base 10000 fixed by GPT-J); every plane a layer uses is placed exactly on
  GPT-J's spectrum ``10000^(-2k/rotary_dim)`` or the export fails and says why, and ``theta = 0`` planes
  go to the dims past ``rotary_dim``, which GPT-J leaves unrotated (its partial rotary).
- **LLaMA**: ``hidden_size = d`` or a given width (RMSNorm with the same constants is the identity, no
  spare dim), ``head_dim`` and ``rope_theta`` shared by all layers, given or chosen so that every
  frequency of every layer is on the spectrum (:func:`~ropeproof.verify.interop.hf._placement.place_llama`).
- Per layer: ``q_proj`` carries ``W_Q S * sqrt(head_dim) * logit_scale`` (HF scales ``q . k`` by
  ``head_dim^-1/2``), ``k_proj`` ``W_K S``, ``v_proj``/``o_proj`` the channel copy, MLPs are zero; the
  embedding is ``W_E`` (``[UNK]`` zero), ``lm_head`` is ``W_U^T`` (``[UNK]`` zero, bias zero).
- The LM's last-position logits equal the compiled model's readout up to rounding, so greedy decoding of
  one token returns the answer. The directory also holds ``tokenizer.json``
  (:mod:`ropeproof.verify.measure._tokenizer`) and ``ropeproof_model.json`` (:class:`ModelExportInfo`); the
  config
  records ``certified_horizon`` and what it covers
  (:mod:`~ropeproof.verify.interop.hf._checkpoint_certificate`: the float64 model in exact arithmetic; the
  checkpoint itself is sampled, :meth:`ModelExport.sample_saved`) and, where given, ``ropeproof_notes``.
- Every exported tensor is checked finite in the checkpoint's dtype before anything is written, and the
  logit scale is refused above :func:`max_logit_scale` (scores past float32's range).

The norm bypass is exact while the stream's variance stays below ``2^27`` (GPT-J in float64) or ``2^55``
(float32): channels grow at most ``2^L`` times, so :func:`export_model` refuses models deeper than that.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ropeproof.constructions._multihop_compile import CompiledModel
from ropeproof.machinery._atomic_output import new_files_follow_umask
from ropeproof.machinery._errors import InputError
from ropeproof.verify.interop._errors import ExportError, HeadImportError
from ropeproof.verify.interop._head_export import placement_fields
from ropeproof.verify.interop.hf._checkpoint_certificate import (
    CERTIFY_LIMIT,
    horizon_record,
    rope_table_record,
    sample_saved_checkpoint,
)
from ropeproof.verify.interop.hf._converter import HFConverter
from ropeproof.verify.interop.hf._converters import converter
from ropeproof.verify.interop.hf._finite_weights import finite_weights
from ropeproof.verify.interop.hf._library import quiet_progress, require_transformers
from ropeproof.verify.interop.hf._norm_bypass import NORM_GAIN
from ropeproof.verify.interop.hf._placement import Placement
from ropeproof.verify.kernel._devices import DtypeLike, resolve_dtype
from ropeproof.verify.measure._tokenizer import UNK, build_tokenizer, word
from ropeproof.verify.measure.exact._multihop_certified import (
    MultiHopCertificate,
    certified_horizon,
    check_searched_as,
)

MODEL_INFO_FILE = "ropeproof_model.json"
"""Written next to ``config.json``: how the compiled model was laid out in the checkpoint."""
MODEL_EXPORT_FORMAT, MODEL_EXPORT_VERSION = "ropeproof-hf-model", 1


@dataclass(frozen=True)
class ModelExportInfo:
    """How a compiled model sits in a checkpoint: architecture, sizes, per-layer placements, residual
    labels (``hidden_size`` of them; the spare dim is labelled ``spare``), the tokenizer's words."""

    name: str
    task: str
    arch: str
    hidden_size: int
    head_dim: int
    rotary_dim: int
    rope_theta: float
    logit_scale: float
    tokens: tuple[str, ...]
    words: tuple[str, ...]
    residual_labels: tuple[str, ...]
    spare_dim: int | None
    placements: tuple[Placement, ...]
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def n_layers(self) -> int:
        return len(self.placements)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": MODEL_EXPORT_FORMAT,
            "version": MODEL_EXPORT_VERSION,
            "name": self.name,
            "task": self.task,
            "arch": self.arch,
            "hidden_size": self.hidden_size,
            "head_dim": self.head_dim,
            "rotary_dim": self.rotary_dim,
            "rope_theta": "inf" if math.isinf(self.rope_theta) else self.rope_theta,
            "logit_scale": self.logit_scale,
            "tokens": list(self.tokens),
            "words": list(self.words),
            "residual_labels": list(self.residual_labels),
            "spare_dim": self.spare_dim,
            "layers": [
                {"planes": [list(p) for p in pl.planes], "values": [list(v) for v in pl.values]}
                for pl in self.placements
            ],
            "metadata": self.metadata,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelExportInfo:
        if data.get("format") != MODEL_EXPORT_FORMAT or data.get("version") != MODEL_EXPORT_VERSION:
            raise HeadImportError(f"not a {MODEL_EXPORT_FORMAT} v{MODEL_EXPORT_VERSION} record")
        rope_theta = float(data["rope_theta"])
        shared = {k: data[k] for k in ("arch", "head_dim", "rotary_dim", "rope_theta", "hidden_size")}
        placements = tuple(
            Placement(*placement_fields({**shared, "planes": layer["planes"], "values": layer["values"]}))
            for layer in data["layers"]
        )
        return cls(
            data["name"],
            data["task"],
            data["arch"],
            int(data["hidden_size"]),
            int(data["head_dim"]),
            int(data["rotary_dim"]),
            rope_theta,
            float(data["logit_scale"]),
            tuple(data["tokens"]),
            tuple(data["words"]),
            tuple(data["residual_labels"]),
            data["spare_dim"],
            placements,
            dict(data.get("metadata", {})),
        )


def load_model_info(path: str | Path) -> ModelExportInfo:
    """Read the :class:`ModelExportInfo` that :meth:`ModelExport.save_pretrained` wrote into ``path``."""
    file = Path(path) / MODEL_INFO_FILE
    if not file.is_file():
        raise HeadImportError(f"{file} does not exist; it is written by ModelExport.save_pretrained")
    return ModelExportInfo.from_json(json.loads(file.read_text()))


@dataclass
class ModelExport:
    """An exported model: the causal LM, its tokenizer and its layout."""

    model: Any
    tokenizer: Any
    info: ModelExportInfo
    certificate: MultiHopCertificate | None = None
    compiled: CompiledModel | None = None

    @property
    def certified_horizon(self) -> int | None:
        """The horizon the checkpoint states (``config.certified_horizon``), or ``None`` if not certified."""
        return getattr(self.model.config, "certified_horizon", None)

    def prompts(self, sequences: list[list[str]] | list[tuple[str, ...]]) -> list[str]:
        return [" ".join(word(t) for t in seq) for seq in sequences]

    def answer(self, sequences: Any) -> list[str]:
        """Greedy next-token answers (as token names) for equal-length token-name sequences."""
        enc = self.tokenizer(self.prompts(list(sequences)), return_tensors="pt")
        with torch.no_grad():
            logits = self.model(input_ids=enc["input_ids"]).logits[:, -1]
        index = {w: t for t, w in zip(self.info.tokens, self.info.words, strict=True)}
        return [index.get(w, w) for w in self.tokenizer.convert_ids_to_tokens(logits.argmax(-1).tolist())]

    def record_certificate(self, record: dict[str, Any]) -> None:
        """Put the certificate ``record`` (:mod:`~ropeproof.verify.interop.hf._checkpoint_certificate`) in the
        config (``certified_horizon``, ``ropeproof_certificate``) and the layout record."""
        self.model.config.certified_horizon = record["certified_horizon"]
        self.model.config.ropeproof_certificate = record
        self.info.metadata["certificate"] = record

    def sample_saved(self, path: str | Path, counts: dict[int, int] | None = None) -> dict[str, Any]:
        """Sample the checkpoint this export saved at ``path`` with transformers alone
        (:func:`~ropeproof.verify.interop.hf._checkpoint_certificate.sample_saved_checkpoint`; ``counts``:
        ``{length: prompts}``), record the sample in the certificate and rewrite ``config.json`` and
        :data:`MODEL_INFO_FILE` there; return the record. Needs the compiled model of the export."""
        record = self.info.metadata.get("certificate")
        if record is None or self.compiled is None:
            raise ExportError("only a certified export of a compiled model (certify=True) can be sampled")
        record = sample_saved_checkpoint(path, self.compiled, record, counts)
        self.record_certificate(record)
        with quiet_progress():
            self.model.config.save_pretrained(path)
        (Path(path) / MODEL_INFO_FILE).write_text(json.dumps(self.info.to_json(), indent=1))
        return record

    def save_pretrained(self, path: str | Path) -> Path:
        """``model.save_pretrained``, ``tokenizer.save_pretrained`` and :data:`MODEL_INFO_FILE`; the files
        it creates get the umask's mode, the weights too (safetensors creates them ``0600``)."""
        path = Path(path)
        if path.exists() and not path.is_dir():
            raise ExportError(f"path={str(path)!r} exists and is not a directory")
        path.mkdir(parents=True, exist_ok=True)
        with quiet_progress(), new_files_follow_umask(path):
            self.model.save_pretrained(path)
            self.tokenizer.save_pretrained(path)
        (path / MODEL_INFO_FILE).write_text(json.dumps(self.info.to_json(), indent=1))
        return path


def _check_depth(model: CompiledModel, conv: HFConverter, dtype: torch.dtype) -> None:
    # channels start at norm <= 1 and at most double per layer; every residual coordinate is <= 2^L, so
    # the (mean-square) variance is <= 2^(2L); var + eps rounds to eps below 2^27 in a float64 norm
    limit_log2 = 27 if conv.norm_dtype(dtype) == torch.float64 else 55
    if 2 * model.n_layers > limit_log2 - 1:
        raise ExportError(
            f"{model.n_layers} layers: channels may reach 2^{model.n_layers}, and the exact norm bypass "
            f"needs the stream's variance below 2^{limit_log2}; use at most {(limit_log2 - 1) // 2} layers"
        )
    if np.abs(model.W_E).max() > 1 + 1e-12:
        raise ExportError("the norm bypass bound assumes embedding entries of magnitude <= 1")


SCORE_HEADROOM = 2.0**10
"""Factor kept below float32's largest value by the attention scores of an exported model."""


def max_logit_scale(model: CompiledModel, head_dim: int) -> float:
    """The largest logit scale whose exported weights and attention scores stay finite in float32.

    HF forms ``q . k`` in float32 before dividing by ``sqrt(head_dim)``, with ``q`` carrying
    ``sqrt(head_dim) * logit_scale`` (module docstring): rotations keep norms, so ``|q . k| <= sqrt(head_dim)
    * logit_scale * N_q * N_k`` with ``N_q``, ``N_k`` the largest norms of a token's query and key at scale 1
    (over every layer). The limit keeps that :data:`SCORE_HEADROOM` below float32's largest value.
    """
    norms = 0.0
    for head in model.layers:
        nq = float(np.linalg.norm(model.W_E @ head.W_Q, axis=1).max())
        nk = float(np.linalg.norm(model.W_E @ head.W_K, axis=1).max())
        norms = max(norms, nq * nk)
    top = float(np.finfo(np.float32).max) / SCORE_HEADROOM
    return top / (math.sqrt(head_dim) * max(norms, 1e-300))


def export_model(
    model: CompiledModel,
    arch: str,
    *,
    dtype: DtypeLike = torch.float32,
    max_positions: int = 2048,
    hidden_size: int | None = None,
    head_dim: int | None = None,
    rotary_dim: int | None = None,
    rope_theta: float | None = None,
    attn_implementation: str = "eager",
    certify: bool = True,
    notes: tuple[str, ...] = (),
    certificate: MultiHopCertificate | None = None,
) -> ModelExport:
    """Export ``model`` as a ``GPTJForCausalLM`` or ``LlamaForCausalLM`` (module docstring).

    ``hidden_size`` fixes the width (GPT-J: ``n_embd = head_dim``, default the smallest, ``d_model + 1``
    rounded up to even; LLaMA: default ``d_model``); ``rotary_dim`` (GPT-J, default ``n_embd``) rotates only
    the first dims, the rest holding ``theta = 0`` planes; ``head_dim`` and ``rope_theta`` (LLaMA) fix its
    spectrum (default: chosen to fit); ``dtype`` is ``float32`` or ``float64``; ``max_positions`` is the
    longest prompt (GPT-J's sin/cos table, LLaMA's ``max_position_embeddings``). The logit scale must keep
    the weights and scores finite (:func:`max_logit_scale`); every tensor is checked finite.

    With ``certify`` the model is certified on every input of its task family with up to ``hop_layers``
    hops and at most ``max_positions`` tokens (:func:`~ropeproof.verify.measure.exact._multihop_certified.
    certified_horizon`), and the config records the horizon
    (:func:`~ropeproof.verify.interop.hf._checkpoint_certificate.horizon_record`): never more than
    ``max_positions``, the longest prompt the checkpoint can run, and certified for the float64 model in
    exact arithmetic, not for this checkpoint, whose RoPE table error is recorded and which
    :meth:`ModelExport.sample_saved` samples once saved. ``certificate``: that certificate when the
    caller has it already (a run's store computes it once for several exports); it is used instead of
    certifying again, after checking it is this search's
    (:func:`~ropeproof.verify.measure.exact._multihop_certified.check_searched_as`, else
    :class:`ExportError`). ``notes`` (layout remarks, e.g. why ``rotary_dim < n_embd``) go into the
    config as ``ropeproof_notes``.
    """
    if not isinstance(model, CompiledModel):
        raise ExportError(f"model must be a CompiledModel, got {type(model).__name__}")
    conv = converter(arch, ExportError)
    dt = resolve_dtype(dtype)
    if dt not in (torch.float32, torch.float64):
        raise ExportError(f"dtype={dt} is not supported; accepted: float32, float64")
    if isinstance(max_positions, bool) or not isinstance(max_positions, int) or max_positions < 1:
        raise ExportError(f"max_positions={max_positions} must be an integer >= 1")
    conv.check_model_options(head_dim, rotary_dim, rope_theta)
    _check_depth(model, conv, dt)
    hid, placements = conv.place_model(model, hidden_size, head_dim, rotary_dim, rope_theta)
    limit = max_logit_scale(model, placements[0].head_dim)
    if not model.logit_scale <= limit:
        raise ExportError(
            f"logit_scale={model.logit_scale:g} is out of range: the exported q_proj weights (sqrt(head_dim) "
            f"* logit_scale * W_Q) and the attention scores must stay finite in float32; accepted: "
            f"0 < logit_scale <= {limit:.3g}"
        )
    d, vocab = model.d_model, model.vocab_size + 1  # + [UNK]
    spare = d if conv.facts.norm_subtracts_mean else None
    h = placements[0].head_dim
    emb = np.zeros((vocab, hid))
    emb[:-1, :d] = model.W_E
    lm = np.zeros((vocab, hid))
    lm[:-1, :d] = model.W_U.T
    layers = []
    for head, pl in zip(model.layers, placements, strict=True):
        s, sv = pl.qk_map(head.spec), pl.value_map(head.spec.head_dim)
        q_w, k_w, v_w = (np.zeros((h, hid)) for _ in range(3))
        q_w[:, :d] = (head.W_Q @ s * (math.sqrt(h) * head.scale)).T
        k_w[:, :d] = (head.W_K @ s).T
        v_w[:, :d] = (head.W_V @ sv).T
        o_w = np.zeros((hid, h))
        o_w[:d, :] = (sv.T @ head.W_O).T
        if spare is not None:
            for w in (q_w, k_w, v_w):
                w[:, spare] = -w.sum(axis=1)
        layers.append((q_w, k_w, v_w, o_w))
    if spare is not None:
        lm[:, spare] = -lm.sum(axis=1)
    tf = require_transformers()
    config = conv.export_config(
        tf, placements[0], model.n_layers, vocab, max_positions, attn_implementation, vocab - 1
    )
    new = conv.export_weights(emb, layers, lm, np.full(hid, NORM_GAIN))
    new = finite_weights(new, dt, "the compiled model's weights must be finite; nothing was written")
    lm_model = conv.exported_model(tf, config, dt, new)
    lm_model.generation_config.pad_token_id = vocab - 1
    lm_model.generation_config.eos_token_id = None
    labels = model.residual_labels + (("spare",) if spare is not None else ())
    labels += tuple(f"unused{i}" for i in range(len(labels), hid))
    info = ModelExportInfo(
        name=model.name,
        task=model.task,
        arch=conv.name,
        hidden_size=hid,
        head_dim=h,
        rotary_dim=placements[0].rotary_dim,
        rope_theta=placements[0].rope_theta,
        logit_scale=model.logit_scale,
        tokens=model.tokens,
        words=tuple(word(t) for t in model.tokens),
        residual_labels=labels,
        spare_dim=spare,
        placements=tuple(placements),
        metadata={
            "layers": [i.to_dict() for i in model.layer_info],
            "description": model.metadata.get("description", ""),
            "unk": UNK,
        },
    )
    exported = ModelExport(lm_model, build_tokenizer(model.tokens), info, compiled=model)
    if notes:
        lm_model.config.ropeproof_notes = list(notes)
        info.metadata["notes"] = list(notes)
    if certify:
        search = min(max(max_positions, 2), CERTIFY_LIMIT)
        if certificate is None:
            cert = certified_horizon(model, model.hop_layers, max_n=search)
        else:
            try:
                check_searched_as(certificate, model, model.hop_layers, search)
            except InputError as exc:
                raise ExportError(f"certificate: {exc}") from None
            cert = certificate
        stated = min(cert.horizon, max_positions)
        table = rope_table_record(conv, lm_model, model, placements, max(stated, 1))
        checkpoint = {"dtype": str(dt).removeprefix("torch."), "rope_table": table, "sample": None}
        exported.certificate = cert
        exported.record_certificate(horizon_record(model, cert, max_positions, checkpoint))
    return exported
