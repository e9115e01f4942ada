"""One skeleton for a compiled head exported to another library: HF ``transformers``
(:mod:`ropeproof.verify.interop.hf._export`) and TransformerLens (:mod:`ropeproof.verify.interop.tl._export`).

Both exports lay a compiled head out the same way: a residual stream whose dims ``[0, d_model)`` hold the
head's input (the embedding writes them) and ``[d_model, 2 d_model)`` its output (the unembedding reads
only those), the head's planes moved onto the target spectrum by a
:class:`~ropeproof.verify.interop.hf._placement.Placement`, ``W_Q`` carrying the library's score scale
times ``head.scale * logit_scale``. What is shared lives here:

- :func:`check_export_options`: the checks every export makes before any work;
- :func:`head_weights`: the exported matrices (:class:`HeadWeights`, input-major: ``[hidden, head_dim]``
  for ``q, k, v``), which each library transposes or reshapes into its own state dict;
- :class:`ExportInfo`: what an export did (enough to map an imported head back onto the compiled one),
  written as :data:`EXPORT_INFO_FILE`; each library subclasses it with its ``format``, ``version`` and
  placement class, and :meth:`ExportInfo.from_json` / :func:`load_export_info` read any of them (the
  record's ``format`` picks the subclass);
- :class:`HeadExport`: the model plus its info, with ``ids``, ``lm_logits``, ``answer`` and ``save``
  (the model, :data:`EXPORT_INFO_FILE` and a tokenizer that ``AutoTokenizer.from_pretrained`` loads,
  :func:`~ropeproof.verify.interop._head_tokenizer.head_tokenizer`); each library says how its model runs
  on token ids and how it is written.
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._atomic_output import new_files_follow_umask
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.interop._errors import ExportError, HeadImportError
from ropeproof.verify.interop._head_tokenizer import head_tokenizer
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._devices import DtypeLike, resolve_dtype

if TYPE_CHECKING:  # the libraries' packages import this module: no run-time import back into them
    from ropeproof.verify.interop.hf._placement import Placement

EXPORT_INFO_FILE = "ropeproof_export.json"
"""File an export writes next to its model: :meth:`ExportInfo.to_json`."""

BUILT_IN_FORMATS: dict[str, str] = {
    "ropeproof-hf-export": "ropeproof.verify.interop.hf._export",
    "ropeproof-tl-export": "ropeproof.verify.interop.tl._export",
}
"""The built-in record formats and the module that defines each one's :class:`ExportInfo` subclass
(imported on first read, so reading a record never needs the caller to import the library first)."""

UNLABELLED_FORMAT = "ropeproof-hf-export"
"""The format of records written before the ``format`` key existed (HF exports, version 1)."""

EXPORT_FORMATS: dict[str, type[ExportInfo]] = {}
"""Every :class:`ExportInfo` subclass defined so far, by its ``FORMAT``."""


def check_export_options(
    head: object, logit_scale: float, dtype: DtypeLike, positions: int, positions_name: str
) -> tuple[float, torch.dtype]:
    """``(logit_scale, dtype)`` checked: ``head`` a :class:`CompiledHead`, ``logit_scale`` finite and
    ``> 0``, ``dtype`` float32 or float64 and ``positions`` (named ``positions_name``) an integer ``>= 1``;
    :class:`ExportError` naming the parameter and the accepted range otherwise."""
    if not isinstance(head, CompiledHead):
        raise ExportError(f"head must be a CompiledHead, got {type(head).__name__}")
    scale = float(logit_scale)
    if not math.isfinite(scale) or scale <= 0:
        raise ExportError(f"logit_scale={scale} must be finite and > 0")
    dt = resolve_dtype(dtype)
    if dt not in (torch.float32, torch.float64):
        raise ExportError(f"dtype={dt} is not supported; accepted: float32, float64")
    if isinstance(positions, bool) or not isinstance(positions, int) or positions < 1:
        raise ExportError(f"{positions_name}={positions} must be an integer >= 1")
    return scale, dt


@dataclass
class HeadWeights:
    """An exported head's matrices, input-major: ``w_q``, ``w_k``, ``w_v`` ``[hidden, head_dim]``, ``w_o``
    ``[head_dim, hidden]``, ``w_e`` ``[vocab, hidden]``, ``w_u`` ``[hidden, vocab]``; ``read``/``write``
    are the hidden dims of the head's input and output.

    Shapes: w_q [hidden, head_dim]; w_k [hidden, head_dim]; w_v [hidden, head_dim];
        w_o [head_dim, hidden]; w_e [vocab, hidden]; w_u [hidden, vocab]; read [d_model]; write [d_model]
    """

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    w_e: np.ndarray
    w_u: np.ndarray
    read: np.ndarray
    write: np.ndarray

    def cancel_mean(self, spare: int) -> None:
        """Give every matrix that reads the stream (``q``, ``k``, ``v``, the unembedding) minus its column
        sum on the always-zero dim ``spare``, so it annihilates constant vectors: it then reads a
        LayerNorm's ``x - mean(x)`` as ``x`` (in real arithmetic)."""
        for w in (self.w_q, self.w_k, self.w_v, self.w_u):
            w[spare] = -w.sum(axis=0)


def head_weights(head: CompiledHead, placement: Placement, q_factor: float) -> HeadWeights:
    """The matrices of ``head`` laid out by ``placement`` (module docstring): hidden size
    ``placement.hidden_size``, input in dims ``[0, d)``, output in ``[d, 2d)``, ``W_Q`` times
    ``q_factor`` (the library's score scale times ``head.scale * logit_scale``)."""
    d, h, hid, vocab = head.d_model, placement.head_dim, placement.hidden_size, head.vocab_size
    read, write = np.arange(d), np.arange(d, 2 * d)
    s, sv = placement.qk_map(head.spec), placement.value_map(head.spec.head_dim)
    w_q, w_k, w_v = (np.zeros((hid, h)) for _ in range(3))
    w_q[read] = head.W_Q @ s * q_factor
    w_k[read] = head.W_K @ s
    w_v[read] = head.W_V @ sv
    w_o = np.zeros((h, hid))
    w_o[:, write] = sv.T @ head.W_O
    w_e = np.zeros((vocab, hid))
    w_e[:, read] = head.W_E
    w_u = np.zeros((hid, vocab))
    w_u[write] = head.W_U
    return HeadWeights(w_q, w_k, w_v, w_o, w_e, w_u, read, write)


def placement_json(placement: Placement) -> dict[str, Any]:
    """A :class:`Placement` as JSON (``rope_theta`` ``"inf"`` when infinite)."""
    pl = placement
    return {
        "arch": pl.arch,
        "head_dim": pl.head_dim,
        "rotary_dim": pl.rotary_dim,
        "rope_theta": "inf" if math.isinf(pl.rope_theta) else pl.rope_theta,
        "hidden_size": pl.hidden_size,
        "planes": [list(m) for m in pl.planes],
        "values": [list(m) for m in pl.values],
    }


def placement_fields(data: Mapping[str, Any]) -> tuple[Any, ...]:
    """The positional fields of a :class:`Placement` from :func:`placement_json`'s output."""
    return (
        data["arch"],
        int(data["head_dim"]),
        int(data["rotary_dim"]),
        float(data["rope_theta"]),
        int(data["hidden_size"]),
        tuple((int(a), int(b), bool(c)) for a, b, c in data["planes"]),
        tuple((int(a), int(b)) for a, b in data["values"]),
    )


@dataclass(frozen=True)
class ExportInfo:
    """What an export did: enough to map an imported head back onto the compiled one.

    ``read_dims``/``write_dims``: hidden dims holding the head's input / output residual stream
    (``d_model`` each); ``spare_dim``: GPT-J's always-zero dim carrying the LayerNorm compensation
    (``None`` elsewhere). ``logit_scale`` multiplied the logits on top of ``head_scale``.

    Subclasses (one per library) set ``FORMAT``, ``VERSION`` (and ``UNLABELLED_VERSION`` when records
    written before the ``format`` key existed are theirs) and :meth:`placement_from_json`.
    """

    FORMAT: ClassVar[str] = ""
    VERSION: ClassVar[int] = 0
    UNLABELLED_VERSION: ClassVar[int | None] = None
    """The version a record without ``format``/``version`` keys has, if this class reads such records."""

    name: str
    tokens: tuple[str, ...]
    source_spec: RopeSpec
    placement: Placement
    read_dims: tuple[int, ...]
    write_dims: tuple[int, ...]
    spare_dim: int | None
    head_scale: float
    logit_scale: float
    metadata: dict[str, Any] = field(default_factory=dict)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.FORMAT:
            EXPORT_FORMATS[cls.FORMAT] = cls

    @classmethod
    def of_head(
        cls, head: CompiledHead, placement: Placement, weights: HeadWeights, spare: int | None, scale: float
    ) -> ExportInfo:
        """The record of exporting ``head`` with ``placement`` and logit scale ``scale``."""
        return cls(
            name=head.name,
            tokens=tuple(head.tokens),
            source_spec=head.spec,
            placement=placement,
            read_dims=tuple(int(i) for i in weights.read),
            write_dims=tuple(int(i) for i in weights.write),
            spare_dim=spare,
            head_scale=float(head.scale),
            logit_scale=scale,
            metadata={"construction": head.metadata.get("construction", head.name)},
        )

    @property
    def arch(self) -> str:
        return self.placement.arch

    @property
    def d_model(self) -> int:
        return len(self.read_dims)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """Residual inputs ``[..., d_model]`` -> hidden states ``[..., hidden_size]`` (zeros elsewhere)."""
        out = x.new_zeros((*x.shape[:-1], self.placement.hidden_size))
        out[..., list(self.read_dims)] = x
        return out

    def read_output(self, hidden: torch.Tensor) -> torch.Tensor:
        """The head's output ``[..., d_model]`` from an attention layer's ``[..., hidden_size]`` output."""
        return hidden[..., list(self.write_dims)]

    def import_kwargs(self) -> dict[str, Any]:
        """``read_dims``/``write_dims`` for an import of this export's head."""
        return {"read_dims": list(self.read_dims), "write_dims": list(self.write_dims)}

    def to_source(self, attention: RopeAttention) -> RopeAttention:
        """An imported head (``d_model`` restricted by :meth:`import_kwargs`) in the compiled head's dims.

        Undoes the plane/value placement and ``logit_scale``; the result has the source spec and
        ``scale = head_scale``, so its matrices equal the compiled head's (to rounding).
        """
        spec, pl = self.source_spec, self.placement
        if attention.spec.head_dim != pl.head_dim or attention.d_model != self.d_model:
            raise HeadImportError(
                f"attention has head_dim={attention.spec.head_dim}, d_model={attention.d_model}; this "
                f"export needs head_dim={pl.head_dim}, d_model={self.d_model} (import with "
                "**info.import_kwargs())"
            )
        s, sv = pl.qk_map(spec), pl.value_map(spec.head_dim)
        w = {n: getattr(attention, n).detach().double().cpu().numpy() for n in ("W_Q", "W_K", "W_V", "W_O")}
        q_factor = attention.scale / (self.logit_scale * self.head_scale)
        return RopeAttention(
            w["W_Q"] @ s.T * q_factor,
            w["W_K"] @ s.T,
            w["W_V"] @ sv.T,
            sv @ w["W_O"],
            spec,
            self.head_scale,
            attention.device,
            attention.dtype,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.FORMAT,
            "version": self.VERSION,
            "name": self.name,
            "tokens": list(self.tokens),
            "source_spec": self.source_spec.to_dict(),
            "placement": placement_json(self.placement),
            "read_dims": list(self.read_dims),
            "write_dims": list(self.write_dims),
            "spare_dim": self.spare_dim,
            "head_scale": self.head_scale,
            "logit_scale": self.logit_scale,
            "metadata": self.metadata,
        }

    @classmethod
    def placement_from_json(cls, data: Mapping[str, Any]) -> Placement:
        """The library's placement from the record's ``placement`` entry."""
        raise NotImplementedError

    @classmethod
    def record_class(cls, data: Mapping[str, Any]) -> type[ExportInfo]:
        """The class that reads ``data``: ``cls`` itself for a library's class (:class:`HeadImportError` if
        the record is another's), any library's by the record's ``format`` for :class:`ExportInfo`."""
        fmt = data.get("format")
        if cls.FORMAT:
            if fmt == cls.FORMAT or (fmt is None and cls.UNLABELLED_VERSION is not None):
                return cls
            raise HeadImportError(f"not a {cls.FORMAT} v{cls.VERSION} record (format={fmt!r})")
        fmt = UNLABELLED_FORMAT if fmt is None else fmt
        if fmt not in EXPORT_FORMATS and fmt in BUILT_IN_FORMATS:
            importlib.import_module(BUILT_IN_FORMATS[fmt])
        if fmt not in EXPORT_FORMATS:
            raise HeadImportError(f"format={fmt!r} is unknown; accepted: {sorted(BUILT_IN_FORMATS)}")
        return EXPORT_FORMATS[fmt]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ExportInfo:
        """Read :meth:`to_json`'s output, of this class or (on :class:`ExportInfo` itself) of any library;
        a record without ``format`` is read as the version-1 record of the library that wrote those."""
        kind = cls.record_class(data)
        unlabelled = "format" not in data
        version = kind.UNLABELLED_VERSION if unlabelled else data.get("version")
        if version != kind.VERSION and not (unlabelled and version is not None):
            raise HeadImportError(f"not a {kind.FORMAT} v{kind.VERSION} record (version={version!r})")
        return kind(
            name=data["name"],
            tokens=tuple(data["tokens"]),
            source_spec=RopeSpec.from_dict(data["source_spec"]),
            placement=kind.placement_from_json(data["placement"]),
            read_dims=tuple(data["read_dims"]),
            write_dims=tuple(data["write_dims"]),
            spare_dim=data["spare_dim"],
            head_scale=float(data["head_scale"]),
            logit_scale=float(data["logit_scale"]),
            metadata=dict(data.get("metadata", {})),
        )


def load_export_info(path: str | Path) -> ExportInfo:
    """Read the :class:`ExportInfo` an export wrote into the directory ``path`` (HF or TransformerLens:
    the record's ``format`` says which)."""
    file = Path(path) / EXPORT_INFO_FILE
    if not file.is_file():
        raise HeadImportError(f"{file} does not exist; an export's save writes it")
    try:
        data = json.loads(file.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HeadImportError(f"{file} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise HeadImportError(f"{file} holds no export record")
    return ExportInfo.from_json(data)


@dataclass
class HeadExport:
    """An exported head: the library's model (``model``) and how it was laid out (``info``)."""

    model: Any
    info: ExportInfo

    def logits_of_ids(self, ids: torch.Tensor) -> torch.Tensor:
        """The model's logits ``[batch, n, vocab]`` on token ids ``[batch, n]`` (the library's call)."""
        raise NotImplementedError

    def save_model(self, path: Path) -> None:
        """Write the model into the directory ``path`` (the library's format)."""
        raise NotImplementedError

    @property
    def tokenizer(self) -> Any:
        """The export's tokenizer: word ``tokens[i]`` is id ``i`` (:func:`head_tokenizer`)."""
        return head_tokenizer(self.info.tokens)

    def ids(self, sequences: Sequence[Sequence[str]]) -> torch.Tensor:
        """Token ids ``[batch, n]`` of equal-length sequences of token names."""
        index = {t: i for i, t in enumerate(self.info.tokens)}
        try:
            return torch.tensor([[index[t] for t in seq] for seq in sequences], dtype=torch.long)
        except KeyError as exc:
            raise ExportError(f"unknown token {exc.args[0]!r}; this export has {len(index)} tokens") from None

    def lm_logits(self, sequences: Sequence[Sequence[str]]) -> torch.Tensor:
        """The model's logits ``[batch, n, vocab]`` on token-name sequences."""
        with torch.no_grad():
            return self.logits_of_ids(self.ids(sequences))

    def answer(self, sequences: Sequence[Sequence[str]]) -> list[str]:
        """The model's argmax token at the last position of each sequence."""
        last = self.lm_logits(sequences)[:, -1]
        return [self.info.tokens[int(i)] for i in last.argmax(-1)]

    def save(self, path: str | Path) -> Path:
        """Write the model, its tokenizer (``tokenizer.json``) and :data:`EXPORT_INFO_FILE` into the
        directory ``path``; return it. The files it creates get the umask's mode, the weights too."""
        out = Path(path)
        if out.exists() and not out.is_dir():
            raise ExportError(f"path={str(out)!r} exists and is not a directory")
        out.mkdir(parents=True, exist_ok=True)
        with new_files_follow_umask(out):  # the weights are created 0600 by safetensors
            self.save_model(out)
            self.tokenizer.save_pretrained(str(out))
        (out / EXPORT_INFO_FILE).write_text(json.dumps(self.info.to_json(), indent=1))
        return out
