"""The compiled head's file format: safetensors round trip, the legacy .npz format, and refusal of
anything incomplete or inconsistent, each error naming the file."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._head import (
    MATRICES,
    WEIGHTS_FILE,
    CompiledHead,
    LegacyFormatWarning,
    load_head,
    save_head,
)
from ropeproof.constructions._paper import index_construction
from ropeproof.machinery._errors import InputError, WeightError


@pytest.fixture(scope="module")
def head() -> CompiledHead:
    return compile_construction(index_construction(letters=3, max_int=3))


def test_round_trip_is_bit_exact(tmp_path: Path, head: CompiledHead) -> None:
    save_head(head, tmp_path / "h")
    meta = json.loads((tmp_path / "h" / "head.json").read_text())
    assert meta["format"] == "ropeproof-head" and meta["version"] == 2
    back = load_head(tmp_path / "h")
    for m in MATRICES:
        np.testing.assert_array_equal(getattr(back, m), getattr(head, m))
    assert back.spec == head.spec and back.tokens == head.tokens and back.scale == head.scale


def test_both_files_get_the_umask_s_mode(tmp_path: Path, head: CompiledHead) -> None:
    """save_head wrote weights.safetensors 0600 (safetensors' own file) and head.json 0666 & ~umask
    (issue 32, case 14, through the Python API; the command line's staging directory evened them)."""
    import os
    import stat

    umask = os.umask(0o027)
    try:
        save_head(head, tmp_path / "h")
    finally:
        os.umask(umask)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "h").iterdir()}
    assert modes == {"head.json": 0o640, "weights.safetensors": 0o640}


def test_legacy_npz_heads_load_with_a_warning(tmp_path: Path, head: CompiledHead) -> None:
    d = tmp_path / "old"
    d.mkdir()
    meta = {
        "format": "ropeproof-head",
        "version": 1,
        "name": head.name,
        "tokens": list(head.tokens),
        "spec": head.spec.to_dict(),
        "scale": 1.0,
        "metadata": {},
    }
    (d / "head.json").write_text(json.dumps(meta))
    np.savez(d / "weights.npz", **{m: getattr(head, m) for m in MATRICES})
    with pytest.warns(LegacyFormatWarning, match="version-1"):
        back = load_head(d)
    np.testing.assert_array_equal(back.W_Q, head.W_Q)


def _saved(tmp_path: Path, head: CompiledHead) -> Path:
    return save_head(head, tmp_path / "h")


def test_truncated_or_corrupt_files_name_the_file(tmp_path: Path, head: CompiledHead) -> None:
    d = _saved(tmp_path, head)
    (d / "head.json").write_text('{"format": "ropeproof-head", "vers')
    with pytest.raises(InputError, match=r"head\.json is not valid JSON"):
        load_head(d)
    d = _saved(tmp_path / "b", head)
    data = (d / WEIGHTS_FILE).read_bytes()
    (d / WEIGHTS_FILE).write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"weights\.safetensors is unreadable"):
        load_head(d)
    d = _saved(tmp_path / "c", head)
    meta = json.loads((d / "head.json").read_text())
    del meta["spec"]
    (d / "head.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match="lacks the key 'spec'"):
        load_head(d)


def test_inconsistent_or_non_finite_weights_are_refused(tmp_path: Path, head: CompiledHead) -> None:
    from safetensors.numpy import save_file

    d = _saved(tmp_path, head)
    mats = {m: getattr(head, m).copy() for m in MATRICES}
    mats["W_U"][:] = np.nan
    save_file(mats, str(d / WEIGHTS_FILE))
    with pytest.raises(InputError, match="W_U contains NaN"):
        load_head(d)
    mats = {m: getattr(head, m).copy() for m in MATRICES}
    mats["W_U"] = mats["W_U"][:, :-1].copy()
    save_file(mats, str(d / WEIGHTS_FILE))
    with pytest.raises(InputError, match="W_U has shape"):
        load_head(d)


def test_constructor_checks_shapes_and_values(head: CompiledHead) -> None:
    kw = {m: getattr(head, m) for m in MATRICES}
    with pytest.raises(WeightError, match="W_E has shape"):
        CompiledHead("x", head.tokens[:-1], spec=head.spec, **kw)
    with pytest.raises(WeightError, match="scale"):
        CompiledHead("x", head.tokens, spec=head.spec, scale=float("inf"), **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CompiledHead("x", head.tokens, spec=head.spec, **kw)  # the valid head raises nothing
