"""Save and load compiled heads.

Format: a directory holding

- ``head.json``: ``{"format": "ropeproof-head", "version": 1, "name", "tokens": [...],
  "spec": {"head_dim", "rotary_dim", "freqs", "layout"}, "scale", "metadata"}``;
- ``weights.npz``: float64 arrays ``W_E``, ``W_Q``, ``W_K``, ``W_V``, ``W_O``, ``W_U`` (shapes as in
  :class:`~constructions.compile.CompiledHead`).

``freqs`` are the ``rotary_dim / 2`` rotating frequencies, written with full float64 precision.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from constructions.compile import CompiledHead
from verify.errors import InputError
from verify.rope import RopeSpec

FORMAT, VERSION = "ropeproof-head", 1
MATRICES = ("W_E", "W_Q", "W_K", "W_V", "W_O", "W_U")


def save_head(head: CompiledHead, path: str | Path) -> Path:
    """Write ``head`` to the directory ``path`` (created if needed); return the path."""
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "name": head.name,
        "tokens": list(head.tokens),
        "spec": {
            "head_dim": head.spec.head_dim,
            "rotary_dim": head.spec.rotary_dim,
            "freqs": [float(f) for f in head.spec.rotating_freqs],
            "layout": head.spec.layout,
        },
        "scale": head.scale,
        "metadata": head.metadata,
    }
    (out / "head.json").write_text(json.dumps(meta, indent=2) + "\n")
    np.savez(out / "weights.npz", **{m: getattr(head, m) for m in MATRICES})
    return out


def load_head(path: str | Path) -> CompiledHead:
    """Read a head written by :func:`save_head`."""
    src = Path(path)
    if not (src / "head.json").is_file() or not (src / "weights.npz").is_file():
        raise InputError(f"path={str(src)!r} must be a directory with head.json and weights.npz")
    meta = json.loads((src / "head.json").read_text())
    if meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise InputError(f"{src}/head.json is not a {FORMAT} v{VERSION} file")
    s = meta["spec"]
    spec = RopeSpec(s["head_dim"], s["rotary_dim"], freqs=s["freqs"], layout=s["layout"])
    with np.load(src / "weights.npz") as w:
        mats = {m: np.array(w[m], dtype=np.float64) for m in MATRICES}
    return CompiledHead(
        meta["name"],
        tuple(meta["tokens"]),
        spec=spec,
        scale=float(meta["scale"]),
        metadata=meta["metadata"],
        **mats,
    )
