"""A compiled head: explicit float64 matrices, a RoPE spec and a vocabulary, and its on-disk form.

Matrices (``V`` tokens): ``W_E`` ``[V, d_model]``, ``W_Q``/``W_K``/``W_V`` ``[d_model, head_dim]``,
``W_O`` ``[head_dim, d_model]``, ``W_U`` ``[d_model, V]``. The head is numpy only; the torch module
that runs it is built by :func:`ropeproof.verify.kernel._compiled.head_module`.

On disk a head is a directory holding

- ``head.json``: ``{"format": "ropeproof-head", "version": 2, "name", "tokens": [...],
  "spec": RopeSpec.to_dict(), "scale", "metadata"}``, and ``"family"``
  (:meth:`~ropeproof.theory._family.Family.to_dict`) when the head records its input family (a
  compiled construction that carries one does); every consumer of the directory (``ropeproof sweep
  --head``, ``ps-score --head``) uses it;
- ``weights.safetensors``: float64 tensors ``W_E``, ``W_Q``, ``W_K``, ``W_V``, ``W_O``, ``W_U``.

Version 1 directories (``weights.npz`` instead of safetensors) are still read, with a
:class:`LegacyFormatWarning`.
"""

from __future__ import annotations

import json
import warnings
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ropeproof.machinery._errors import InputError, RopeproofError, WeightError
from ropeproof.machinery._validate import real
from ropeproof.theory._family import Family
from ropeproof.theory._rope_spec import RopeSpec

FORMAT = "ropeproof-head"
VERSION = 2
MATRICES = ("W_E", "W_Q", "W_K", "W_V", "W_O", "W_U")
WEIGHTS_FILE = "weights.safetensors"
LEGACY_WEIGHTS_FILE = "weights.npz"


class LegacyFormatWarning(UserWarning):
    """A file in an older ropeproof format was read; re-save it to upgrade."""


@dataclass(frozen=True)
class CompiledHead:
    """Explicit weights of a compiled construction (shapes in the module docstring).

    ``tokens`` are the vocabulary names in row order of ``W_E``; ``spec`` is the RoPE spec;
    ``scale`` multiplies logits; ``family`` is the input family the head is meant to answer (``None``:
    not recorded; :func:`~ropeproof.constructions._compile.compile_construction` copies the
    construction's). The constructor checks that every shape agrees with ``tokens`` and ``spec``, that
    every entry is finite and that the family names only the head's tokens, raising
    :class:`WeightError` otherwise.

    Shapes: W_E [V, d_model]; W_Q [d_model, head_dim]; W_K [d_model, head_dim]; W_V [d_model, head_dim];
        W_O [head_dim, d_model]; W_U [d_model, V]
    """

    name: str
    tokens: tuple[str, ...]
    W_E: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    W_U: np.ndarray
    spec: RopeSpec
    scale: float = 1.0
    metadata: dict[str, object] = field(default_factory=dict)
    family: Family | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.spec, RopeSpec):
            raise WeightError(f"spec must be a RopeSpec, got {type(self.spec).__name__}")
        object.__setattr__(self, "tokens", tuple(str(t) for t in self.tokens))
        if len(set(self.tokens)) != len(self.tokens) or not self.tokens:
            raise WeightError("tokens must be a non-empty list of distinct names")
        v, h = len(self.tokens), self.spec.head_dim
        w_e = np.asarray(self.W_E)
        d = int(w_e.shape[1]) if w_e.ndim == 2 else -1
        shapes = {
            "W_E": (v, d),
            "W_Q": (d, h),
            "W_K": (d, h),
            "W_V": (d, h),
            "W_O": (h, d),
            "W_U": (d, v),
        }
        for name, shape in shapes.items():
            m = np.asarray(getattr(self, name))
            if m.dtype.kind not in "fiu" or m.shape != shape or d < 1:
                raise WeightError(
                    f"{name} has shape {m.shape} and dtype {m.dtype}; expected real {shape} "
                    f"(V = {v} tokens, head_dim = {h}, d_model = W_E.shape[1])"
                )
            m = m.astype(np.float64)
            if not np.isfinite(m).all():
                bad = tuple(int(i) for i in np.argwhere(~np.isfinite(m))[0])
                raise WeightError(
                    f"{name} contains NaN or inf (first at index {bad}); weights must be finite"
                )
            object.__setattr__(self, name, m)
        object.__setattr__(self, "scale", real(self.scale, "scale", error=WeightError))
        if self.family is not None:
            if not isinstance(self.family, Family):
                raise WeightError(f"family must be a Family, got {type(self.family).__name__}")
            try:
                self.family.check_tokens(self.tokens, f"head {self.name!r}")
            except RopeproofError as exc:
                raise WeightError(str(exc)) from None

    def with_family(self, family: Family | None) -> CompiledHead:
        """This head with ``family`` as its recorded input family (``None``: none)."""
        import dataclasses

        return dataclasses.replace(self, family=family)

    @property
    def d_model(self) -> int:
        return int(self.W_E.shape[1])

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    @cached_property
    def _index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.tokens)}

    def token_index(self, name: str) -> int:
        """Row of token ``name`` in ``W_E``."""
        try:
            return self._index[name]
        except KeyError:
            raise InputError(f"unknown token {name!r}; this head has {self.vocab_size} tokens") from None

    def ids(self, tokens: Sequence[str]) -> np.ndarray:
        """Token ids of a sequence of names."""
        return np.array([self.token_index(t) for t in tokens], dtype=np.int64)

    def embed(self, tokens: Sequence[str] | Sequence[Sequence[str]]) -> np.ndarray:
        """``W_E`` rows of names: ``[n, d_model]`` for one sequence, ``[batch, n, d_model]`` for a
        list of equal-length sequences."""
        if len(tokens) == 0:
            raise InputError("the sequence is empty; n must be >= 1")
        if isinstance(tokens[0], str):
            return self.W_E[self.ids(tokens)]  # type: ignore[arg-type]
        lengths = {len(seq) for seq in tokens}
        if len(lengths) != 1 or 0 in lengths:
            raise InputError(
                f"sequences must be non-empty and of equal length, got lengths {sorted(lengths)}"
            )
        return np.stack([self.W_E[self.ids(seq)] for seq in tokens])  # type: ignore[arg-type]

    def decode(self, scores: np.ndarray) -> list[str]:
        """Names of the argmax tokens of unembedded scores ``[..., V]`` (flattened over leading dims).

        Shapes: scores [..., V]
        """
        arr = np.asarray(scores, dtype=np.float64)
        return [self.tokens[i] for i in arr.reshape(-1, arr.shape[-1]).argmax(-1)]

    def value_readout(self, token: str) -> np.ndarray:
        """``W_E[token] W_V W_O W_U``: the unembedded scores written by attending to ``token``."""
        return self.W_E[self.token_index(token)] @ self.W_V @ self.W_O @ self.W_U

    def save(self, path: str | Path) -> Path:
        """Write the head to the directory ``path`` (see the module docstring); return the path."""
        return save_head(self, path)


def save_head(head: CompiledHead, path: str | Path) -> Path:
    """Write ``head`` to the directory ``path`` (created if needed); return the path. Both files are
    created with the mode the umask gives a new file."""
    from safetensors.numpy import save

    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "name": head.name,
        "tokens": list(head.tokens),
        "spec": head.spec.to_dict(),
        "scale": head.scale,
        "metadata": head.metadata,
    }
    if head.family is not None:
        meta["family"] = head.family.to_dict()
    (out / "head.json").write_text(json.dumps(meta, indent=2) + "\n")
    # written as bytes like head.json, so both files get the umask's mode (safetensors' save_file
    # writes through a private 0600 temporary file)
    (out / WEIGHTS_FILE).write_bytes(save({m: np.ascontiguousarray(getattr(head, m)) for m in MATRICES}))
    return out


def _read_weights(src: Path, version: int) -> dict[str, np.ndarray]:
    if version == 1:
        warnings.warn(
            f"{src} is a version-1 ropeproof head (weights.npz); it was read, re-save it to upgrade "
            f"to {WEIGHTS_FILE}",
            LegacyFormatWarning,
            stacklevel=3,
        )
        try:
            with np.load(src / LEGACY_WEIGHTS_FILE) as w:
                return {m: np.array(w[m]) for m in MATRICES}
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
            raise InputError(f"{src / LEGACY_WEIGHTS_FILE} is unreadable or incomplete: {exc}") from exc
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        w = load_file(str(src / WEIGHTS_FILE))
    except (OSError, SafetensorError) as exc:
        raise InputError(f"{src / WEIGHTS_FILE} is unreadable: {exc}") from exc
    missing = [m for m in MATRICES if m not in w]
    if missing:
        raise InputError(f"{src / WEIGHTS_FILE} lacks the matrices {missing}")
    return {m: w[m] for m in MATRICES}


def _check_parameters(meta: dict, meta_path: Path) -> None:
    """``metadata.parameters`` of a head file, when present: a mapping whose every value is a finite real
    number (a bound may name them; NaN, an infinity or a string is refused here, naming it)."""
    from ropeproof.theory._bound_expression import parameter_value

    metadata = meta.get("metadata")
    params = metadata.get("parameters") if isinstance(metadata, dict) else None
    if params is None:
        return
    if not isinstance(params, dict):
        raise InputError(f"{meta_path}: metadata.parameters must be a mapping of names to numbers")
    for name, value in params.items():
        try:
            parameter_value(str(name), value)
        except InputError as exc:
            raise InputError(f"{meta_path}: metadata.parameters: {exc}") from None


def load_head(path: str | Path) -> CompiledHead:
    """Read a head written by :func:`save_head` (or a version-1 ``weights.npz`` head, with a
    :class:`LegacyFormatWarning`). Every problem raises :class:`InputError` naming the file."""
    src = Path(path)
    meta_path = src / "head.json"
    if not meta_path.is_file():
        raise InputError(f"path={str(src)!r} must be a directory with head.json and {WEIGHTS_FILE}")
    try:
        meta: Any = json.loads(meta_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{meta_path} is not valid JSON: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") not in (1, VERSION):
        raise InputError(f"{meta_path} is not a {FORMAT} file of version 1 or {VERSION}")
    version = int(meta["version"])
    weights = LEGACY_WEIGHTS_FILE if version == 1 else WEIGHTS_FILE
    if not (src / weights).is_file():
        raise InputError(f"{src} has head.json but no {weights}")
    _check_parameters(meta, meta_path)
    mats = _read_weights(src, version)
    try:
        return CompiledHead(
            str(meta["name"]),
            tuple(meta["tokens"]),
            spec=RopeSpec.from_dict(meta["spec"]),
            scale=float(meta["scale"]),
            metadata=dict(meta.get("metadata", {})),
            family=Family.from_dict(meta["family"]) if meta.get("family") is not None else None,
            **mats,
        )
    except KeyError as exc:
        raise InputError(f"{meta_path} lacks the key {exc}") from exc
    except RopeproofError as exc:
        raise InputError(f"{src} does not hold a valid head: {exc}") from exc
    except (TypeError, ValueError) as exc:
        raise InputError(f"{meta_path} has a malformed entry: {exc}") from exc
