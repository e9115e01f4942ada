"""Sweep output: streamed JSON / JSON Lines rows, mergeable summaries, shards and their exact merge.

A sweep over ``A:B:STEP`` selects the lengths ``A, A + STEP, ... <= B`` and ``B`` itself. ``--shard
k/N`` takes the ``k``-th of ``N`` contiguous, near-equal slices of that list (:func:`shard_lengths`). A
JSON Lines file (:func:`write_jsonl`) is one header line (construction, parameters, dtype, bound,
lengths, the shard and the rows it holds), one line per row, and one summary line
(:class:`SweepSummary`: rows per status and reading, first violation, undecided rows per reason,
identities used, refined rows). Every row is computed from the construction alone (prefix state is
recomputed from ``n = 2``, never carried between shards), so :func:`merge_jsonl` of all ``N`` shards
reproduces the unsharded file byte for byte: rows are concatenated, summaries added.

A merge verifies rather than trusts (:func:`merge_jsonl`): the summary line's check holds the SHA-256
of the header line, every row line and the summary, so no field of a shard changes unnoticed; the
status counts and first violations are recounted from the rows, and every row's status is checked
against its own numbers where they decide it (a ``violated`` row has ``value > bound``, a ``holds`` row
of a reading without an identity ``value <= bound``, a ``holds-equal`` row needs an identity, and the
``bound_holds*`` columns follow the statuses). ``NaN`` and ``Infinity``, which ropeproof never writes
(non-finite values are ``null``), are refused anywhere in a file.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from ropeproof.machinery._atomic_output import atomic_path, check_output_file
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._input_files import check_regular_file
from ropeproof.machinery._values import Length
from ropeproof.verify.measure.exact._bound_checks import HOLDS, STATUSES, VIOLATED, BoundComparison
from ropeproof.verify.measure.exact._sweep import QUANTITIES, READING_COLUMNS, STATUS_COLUMNS, SweepBlock

FORMAT = "ropeproof-sweep"
FORMAT_VERSION = 3
"""Version 2 added the rows' check (count, first and last ``n``, SHA-256 of the rows) to the summary
line; version 3's SHA-256 covers the header line and the summary as well."""


# ------------------------------------------------------------------------------------------- shards


def parse_shard(text: str) -> tuple[int, int]:
    """``"k/N"`` -> ``(k, N)`` with ``1 <= k <= N``."""
    parts = text.split("/")
    try:
        k, count = int(parts[0]), int(parts[1])
        if len(parts) != 2:
            raise ValueError
    except (ValueError, IndexError):
        raise InputError(f"shard={text!r} must look like k/N (for example 3/8)") from None
    if not 1 <= k <= count:
        raise InputError(f"shard={text!r}: need 1 <= k <= N")
    return k, count


def selected_rows(start: int, stop: int, step: int) -> int:
    """How many lengths ``start:stop:step`` selects: ``start, start + step, ... <= stop``, and ``stop``
    itself when the steps miss it."""
    grid = (stop - start) // step + 1
    return grid + (1 if (stop - start) % step else 0)


def selected_length(start: int, stop: int, step: int, i: int) -> int:
    """The ``i``-th selected length (``0 <= i < selected_rows``): ``start + i step``, or ``stop`` last."""
    return min(start + i * step, stop)


def next_length(n: int, stop: int, step: int) -> int:
    """The selected length after ``n`` (``n + step``, or ``stop`` when that steps past it)."""
    return n + step if n + step <= stop or n >= stop else stop


def is_selected(n: Any, start: int, stop: int, step: int) -> Any:
    """Whether ``n`` (an int or an array) is selected by ``start:stop:step`` (within ``start .. stop``)."""
    return ((n - start) % step == 0) | (n == stop)


def shard_lengths(start: int, stop: int, step: int, shard: tuple[int, int] | None) -> tuple[int, int]:
    """The first and last selected length of ``shard`` (``None``: all of ``start:stop:step``, which
    ends at ``stop`` itself)."""
    rows = selected_rows(start, stop, step)
    if shard is None:
        return start, stop
    k, count = shard
    if count > rows:
        raise InputError(f"shard {k}/{count}: the lengths {start}:{stop}:{step} have only {rows} rows")
    lo, hi = (k - 1) * rows // count, k * rows // count
    first, last = selected_length(start, stop, step, lo), selected_length(start, stop, step, hi - 1)
    if isinstance(start, Length) and isinstance(stop, Length):  # lengths parsed once: so are their shards'
        return Length(first), Length(last)
    return first, last


# ------------------------------------------------------------------------------------------ summary


@dataclass
class ReadingSummary:
    """Counts of one reading over the rows written: mergeable by :meth:`add`."""

    rows: dict[str, int] = field(default_factory=dict)
    first_violation_n: int | None = None
    undecided_reasons: dict[str, int] = field(default_factory=dict)
    refined_rows: int = 0
    identity_rows: int = 0
    enclosure_contradictions: int = 0
    identity: str | None = None

    def add(self, other: ReadingSummary) -> None:
        for k, v in other.rows.items():
            self.rows[k] = self.rows.get(k, 0) + v
        for k, v in other.undecided_reasons.items():
            self.undecided_reasons[k] = self.undecided_reasons.get(k, 0) + v
        firsts = [x for x in (self.first_violation_n, other.first_violation_n) if x is not None]
        self.first_violation_n = min(firsts) if firsts else None
        self.refined_rows += other.refined_rows
        self.identity_rows += other.identity_rows
        self.enclosure_contradictions += other.enclosure_contradictions
        self.identity = self.identity or other.identity

    @classmethod
    def of(cls, c: BoundComparison) -> ReadingSummary:
        return cls(
            c.counts(),
            c.first_violation,
            c.undecided_reasons(),
            int(c.detail.get("refined_rows", 0)),
            int(c.detail.get("identity_rows", 0)),
            int(c.detail.get("enclosure_contradictions", 0)),
            c.detail.get("identity"),
        )

    def verdict(self) -> str:
        if any(self.rows.get(s, 0) for s in ("violated", "tight-violated")):
            return "violated"
        return "unresolvable" if self.rows.get("undecided", 0) else "holds"

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict(),
            "rows": {s: self.rows[s] for s in STATUSES if self.rows.get(s)},
            "first_violation_n": self.first_violation_n,
            "undecided_reasons": dict(sorted(self.undecided_reasons.items())),
            "refined_rows": self.refined_rows,
            "identity_rows": self.identity_rows,
            "enclosure_contradictions": self.enclosure_contradictions,
            "identity": self.identity,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ReadingSummary:
        first = d["first_violation_n"]
        return cls(
            {str(k): _int(v, f"rows[{k!r}]") for k, v in dict(d["rows"]).items()},
            None if first is None else _int(first, "first_violation_n"),
            {str(k): _int(v, "undecided_reasons") for k, v in dict(d["undecided_reasons"]).items()},
            _int(d["refined_rows"], "refined_rows"),
            _int(d["identity_rows"], "identity_rows"),
            _int(d["enclosure_contradictions"], "enclosure_contradictions"),
            d.get("identity"),
        )


@dataclass
class SweepSummary:
    """What a sweep (or a shard of one) found, per reading; :meth:`add` merges shards exactly."""

    rows: int = 0
    readings: dict[str, ReadingSummary] = field(default_factory=dict)

    def add_block(self, block: SweepBlock) -> None:
        self.rows += int(block.columns["n"].size)
        for q, c in block.comparisons.items():
            self.readings.setdefault(q, ReadingSummary()).add(ReadingSummary.of(c))

    def add(self, other: SweepSummary) -> None:
        self.rows += other.rows
        for q, r in other.readings.items():
            self.readings.setdefault(q, ReadingSummary()).add(r)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "readings": {q: self.readings[q].to_dict() for q in QUANTITIES if q in self.readings},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SweepSummary:
        return cls(
            _int(d["rows"], "rows"), {q: ReadingSummary.from_dict(r) for q, r in d["readings"].items()}
        )


# --------------------------------------------------------------------------------------- row output

_BOOL = np.array(["false", "true"])
_HOLDS_JSON = np.array(["true"] * 4 + ["false"] * 2 + ["null"])
_STATUS_JSON = np.array([json.dumps(s) for s in STATUSES])
_BOOL_BYTES = np.char.encode(_BOOL, "ascii")
_HOLDS_JSON_BYTES = np.char.encode(_HOLDS_JSON, "ascii")
_STATUS_JSON_BYTES = np.char.encode(_STATUS_JSON, "ascii")
_STATUS_TEXT_BYTES = np.array([b"%13s" % s.encode() for s in STATUSES])
_BOOL_TEXT_BYTES = np.array([b"%13s" % s for s in (b"false", b"true")])


def _floats(col: np.ndarray) -> list[str]:
    """JSON numbers (shortest round-trip ``repr``), ``null`` for NaN and infinities."""
    out = list(map(repr, np.asarray(col, dtype=np.float64).tolist()))
    bad = np.nonzero(~np.isfinite(col))[0]
    for i in bad.tolist():
        out[i] = "null"
    return out


def _float_cells(col: np.ndarray, fmt: str, null: str) -> np.ndarray:
    """Each value of ``col`` (as float64) formatted by ``fmt % value`` (``null`` for NaN and infinities),
    as a bytes array; every run of bit-identical neighbours is formatted once (prefix extremes repeat)."""
    v = np.ascontiguousarray(col, dtype=np.float64)
    if v.size == 0:
        return np.zeros(0, dtype="S1")
    bits = v.view(np.int64)
    starts = np.flatnonzero(np.concatenate(([True], bits[1:] != bits[:-1])))
    firsts = v[starts]
    ok = np.isfinite(firsts).tolist()
    table = np.array(
        [(fmt % x if good else null) for x, good in zip(firsts.tolist(), ok, strict=True)], dtype="S"
    )
    if starts.size == v.size:
        return table
    return np.repeat(table, np.diff(np.append(starts, v.size)))


def _int_cells(col: np.ndarray, width: int, pad: bytes) -> np.ndarray:
    """The decimal digits of the non-negative integers ``col``, right-aligned in at least ``width``
    characters after ``pad`` (``b" "``: ``%{width}d``; ``b"\\0"``: ``str``, once the NULs are dropped),
    as a bytes array."""
    n = np.asarray(col, dtype=np.int64)
    if n.size == 0:
        return np.zeros(0, dtype="S1")
    if int(n.min()) < 0:
        text = [(f"%{width}d" % v) for v in n.tolist()] if pad == b" " else list(map(str, n.tolist()))
        return np.array(text, dtype="S")
    digits = len(str(int(n.max())))
    w = max(width, digits)
    buf = np.full((n.size, w), pad[0], dtype=np.uint8)
    buf[:, : w - width] = 0  # past ``width`` only the longer numbers' own digits: dropped NULs elsewhere
    rest = n.copy()
    for k in range(w - 1, w - 1 - digits, -1):
        live = (rest > 0) | (k == w - 1)
        buf[live, k] = (rest[live] % 10 + 48).astype(np.uint8)
        rest //= 10
    return buf.view(f"S{w}").reshape(n.size)


def _assemble(pieces: Sequence[bytes | np.ndarray], size: int) -> str:
    """``size`` rows, each the concatenation of ``pieces`` (a constant, or one bytes cell per row), as
    one string: the cells are packed side by side in a record array and the NUL padding of the shorter
    cells is dropped (cell text never holds a NUL)."""
    if size == 0:
        return ""
    fields: list[tuple[str, str]] = []
    for i, piece in enumerate(pieces):
        width = len(piece) if isinstance(piece, bytes) else piece.dtype.itemsize
        fields.append((f"f{i}", f"S{max(width, 1)}"))
    packed = np.empty(size, dtype=fields)
    for i, piece in enumerate(pieces):
        packed[f"f{i}"] = piece
    return packed.tobytes().replace(b"\0", b"").decode("ascii")


def row_columns(block: SweepBlock, judge: bool) -> tuple[list[str], list[list[str]]]:
    """Column names and their JSON-encoded values, in the order of :class:`~ropeproof.verify.measure.exact.
    sweep.SweepTable` columns."""
    cols = block.columns
    size = cols["n"].size
    names: list[str] = []
    values: list[list[str]] = []

    def put(name: str, vals: Sequence[str] | np.ndarray) -> None:
        names.append(name)
        values.append(vals.tolist() if isinstance(vals, np.ndarray) else list(vals))

    put("n", list(map(str, cols["n"].tolist())))
    for k in ("gap_sup", "gap_inf", "margin_inf", "bound"):
        put(k, _floats(cols[k]))
    for q in QUANTITIES:
        put(READING_COLUMNS[q], _HOLDS_JSON[block.comparisons[q].codes] if judge else ["null"] * size)
    for q in QUANTITIES:
        put(STATUS_COLUMNS[q], _STATUS_JSON[block.comparisons[q].codes] if judge else ["null"] * size)
    for k in cols:
        if k.startswith("measured_"):
            put(k, _floats(cols[k]))
    put("resolvable", _BOOL[cols["resolvable"].astype(np.int8)])
    return names, values


def json_rows(block: SweepBlock, judge: bool) -> list[str]:
    """One JSON object per row (keys in column order); the lines of :func:`json_rows_text`."""
    text = json_rows_text(block, judge)
    return text[:-1].split("\n") if text else []


def json_rows_text(block: SweepBlock, judge: bool) -> str:
    """One JSON object per row (keys in column order), each line ending in a newline: the bytes of
    ``"%s" % cell`` for the cells of :func:`row_columns`, built a column at a time."""
    cols = block.columns
    size = int(cols["n"].size)
    names: list[str] = []
    cells: list[np.ndarray] = []

    def put(name: str, values: np.ndarray) -> None:
        names.append(name)
        cells.append(values)

    nulls = np.full(size, b"null", dtype="S4")
    put("n", _int_cells(cols["n"], 1, b"\0"))
    for k in ("gap_sup", "gap_inf", "margin_inf", "bound"):
        put(k, _float_cells(cols[k], "%r", "null"))
    for q in QUANTITIES:
        put(READING_COLUMNS[q], _HOLDS_JSON_BYTES[block.comparisons[q].codes] if judge else nulls)
    for q in QUANTITIES:
        put(STATUS_COLUMNS[q], _STATUS_JSON_BYTES[block.comparisons[q].codes] if judge else nulls)
    for k in cols:
        if k.startswith("measured_"):
            put(k, _float_cells(cols[k], "%r", "null"))
    put("resolvable", _BOOL_BYTES[cols["resolvable"].astype(np.int8)])
    pieces: list[bytes | np.ndarray] = []
    for i, (name, values) in enumerate(zip(names, cells, strict=True)):
        pieces += [("{" if i == 0 else ", ").encode() + f'"{name}": '.encode(), values]
    pieces.append(b"}\n")
    return _assemble(pieces, size)


def _mask_lengths(block: SweepBlock, start: int, stop: int, step: int) -> SweepBlock:
    n = block.columns["n"]
    if step == 1:
        return block
    return block.select(is_selected(n, start, stop, step))


@dataclass
class SweepHeader:
    """What a sweep file holds: enough to check that shards belong together."""

    construction: str
    params: dict[str, Any]
    dtype: str
    bound: str
    lengths: tuple[int, int, int]
    shard: tuple[int, int] | None
    first_n: int
    last_n: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "construction": self.construction,
            "params": self.params,
            "dtype": self.dtype,
            "bound": self.bound,
            "lengths": list(self.lengths),
            "shard": list(self.shard) if self.shard else None,
            "first_n": self.first_n,
            "last_n": self.last_n,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SweepHeader:
        if d.get("format") != FORMAT or d.get("version") != FORMAT_VERSION:
            raise InputError(f"not a {FORMAT} v{FORMAT_VERSION} file header: {str(d)[:120]}")
        shard = tuple(d["shard"]) if d["shard"] else None
        return cls(
            d["construction"],
            d["params"],
            d["dtype"],
            d["bound"],
            tuple(d["lengths"]),  # type: ignore[arg-type]
            shard,
            int(d["first_n"]),
            int(d["last_n"]),
        )  # type: ignore[arg-type]


def _dump(obj: Any) -> str:
    return json.dumps(obj, sort_keys=False, allow_nan=False)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a value ropeproof writes (non-finite numbers are written as null)")


def _load(text: str) -> Any:
    """``json.loads`` refusing ``NaN``, ``Infinity`` and ``-Infinity`` (a ``ValueError``)."""
    return json.loads(text, parse_constant=_no_constant)


def _int(value: Any, name: str) -> int:
    """``value`` if it is a JSON integer (not a float, string or boolean), else a ``TypeError``."""
    if type(value) is not int:
        raise TypeError(f"{name} must be an integer (got {value!r})")
    return value


@dataclass
class RowsCheck:
    """What a file's rows must be: how many, the first and last ``n``, and the SHA-256 of the header
    line, the row lines (each with its newline, in file order) and the summary (:class:`_RowsDigest`).
    Written after the summary; a merge recomputes it."""

    count: int = 0
    first_n: int | None = None
    last_n: int | None = None
    sha256: str = hashlib.sha256().hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return {"count": self.count, "first_n": self.first_n, "last_n": self.last_n, "sha256": self.sha256}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RowsCheck:
        first, last = d["first_n"], d["last_n"]
        if not isinstance(d["sha256"], str):
            raise TypeError("the check's sha256 must be a string")
        return cls(
            _int(d["count"], "count"),
            None if first is None else _int(first, "first_n"),
            None if last is None else _int(last, "last_n"),
            d["sha256"],
        )


class _RowsDigest:
    """Running :class:`RowsCheck` of a file as it is written: the header line (with its newline), the
    row lines, then the summary (:func:`_dump` of its dict) in :meth:`check`."""

    def __init__(self, header_line: str) -> None:
        self.hash = hashlib.sha256(header_line.encode())
        self.count = 0
        self.first_n: int | None = None
        self.last_n: int | None = None

    def add(self, lines: Sequence[str], first_n: int, last_n: int) -> None:
        if not lines:
            return
        self.hash.update(("\n".join(lines) + "\n").encode())
        self.count += len(lines)
        self.first_n = first_n if self.first_n is None else self.first_n
        self.last_n = last_n

    def add_text(self, text: str, count: int, first_n: int, last_n: int) -> None:
        """Like :meth:`add` for the ``count`` lines of ``text``, each ending in a newline."""
        if not count:
            return
        self.hash.update(text.encode())
        self.count += count
        self.first_n = first_n if self.first_n is None else self.first_n
        self.last_n = last_n

    def check(self, summary: dict[str, Any]) -> RowsCheck:
        self.hash.update(_dump(summary).encode())
        return RowsCheck(self.count, self.first_n, self.last_n, self.hash.hexdigest())


def write_rows(
    out: IO[str],
    header: SweepHeader,
    blocks: Iterable[SweepBlock],
    judge: bool,
    fmt: str = "jsonl",
    progress: Any = None,
) -> SweepSummary:
    """Stream ``blocks`` (rows ``header.first_n .. last_n`` at the header's step) to ``out`` as JSON
    Lines (header line, rows, summary line with the file's :class:`RowsCheck`) or as one JSON object
    (``fmt="json"``, the same check)."""
    if fmt not in ("jsonl", "json"):
        raise InputError(f"fmt={fmt!r}; accepted: 'jsonl', 'json'")
    summary = SweepSummary()
    head = header.to_dict()
    digest = _RowsDigest(_dump(head) + "\n")
    start, stop, step = header.lengths
    if fmt == "jsonl":
        out.write(_dump(head) + "\n")
    else:
        out.write(_dump(head)[:-1] + ', "rows": [')
    first = True
    for raw in blocks:
        block = _mask_lengths(raw, start, stop, step)
        if block.columns["n"].size == 0:
            continue
        summary.add_block(block)
        text = json_rows_text(block, judge)
        n = block.columns["n"]
        digest.add_text(text, int(n.size), int(n[0]), int(n[-1]))
        if fmt == "jsonl":
            out.write(text)
        else:
            out.write(("" if first else ",") + "\n" + text[:-1].replace("\n", ",\n"))
        first = False
        if progress is not None:
            progress.update(int(raw.columns["n"].size))
    check = _dump(digest.check(summary.to_dict()).to_dict())
    if fmt == "jsonl":
        out.write(_dump({"summary": summary.to_dict()})[:-1] + ', "check": ' + check + "}\n")
    else:
        out.write('\n], "summary": ' + _dump(summary.to_dict()) + ', "check": ' + check + "}\n")
    return summary


class atomic_output:
    """``with atomic_output(path, force=...) as f:`` writes to a temporary file next to ``path`` and
    moves it into place on success (a file is complete or absent); ``path=None`` writes to ``stream``.

    ``check``'s rule for outputs (:func:`ropeproof.machinery._atomic_output.check_output_file`): the path is
    checked before any work and again just before the move; without ``force`` the file is linked into
    place, which fails rather than replace a file that appeared meanwhile. The file's mode follows the
    umask, as every other output's (:func:`ropeproof.machinery._atomic_output.atomic_path`)."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        stream: IO[str] | None = None,
        force: bool = False,
        option: str = "--out",
    ) -> None:
        self.path = None if path is None else Path(path)
        self.stream = stream
        self.force = force
        self.option = option
        if self.path is not None:
            check_output_file(self.path, force, option)

    def __enter__(self) -> IO[str]:
        if self.path is None:
            assert self.stream is not None
            return self.stream
        self._staged = atomic_path(self.path, replace=self.force, option=self.option)
        tmp = self._staged.__enter__()
        self.handle = open(tmp, "w", encoding="utf-8")
        return self.handle

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self.path is None:
            return
        self.handle.close()
        if exc_type is None:
            check_output_file(self.path, self.force, self.option)  # it may have changed meanwhile
        self._staged.__exit__(exc_type, exc, tb)


# -------------------------------------------------------------------------------------------- merge


@dataclass
class SweepFile:
    """A sweep JSON Lines file's header, its summary and check, and its row lines (read lazily);
    ``header_line`` and ``summary_dict`` are what the file holds, as the check's digest covers them."""

    path: Path
    header: SweepHeader
    summary: SweepSummary
    check: RowsCheck
    header_line: str = ""
    summary_dict: dict[str, Any] = field(default_factory=dict)

    def lines(self) -> Iterator[str]:
        """The row lines (each with its newline), without the header and summary lines."""
        with self.path.open(encoding="utf-8") as f:
            f.readline()
            prev = None
            for line in f:
                if prev is not None:
                    yield prev
                prev = line


_HEADER_LIMIT = 1 << 20
"""The most characters read as a sweep file's header line."""


def read_sweep_file(path: str | os.PathLike[str]) -> SweepFile:
    """Header, summary and check of a sweep JSON Lines file (format v3; ``NaN``/``Infinity`` refused)."""
    p = Path(path)
    check_regular_file(p, "merge")  # a FIFO or a device such as /dev/zero is refused, never read
    try:
        with p.open(encoding="utf-8") as f:
            header_line = f.readline(_HEADER_LIMIT)
            head = _load(header_line)
            size = p.stat().st_size
            f.seek(max(0, size - (1 << 20)))
            tail = _load(f.read().rstrip("\n").rsplit("\n", 1)[-1])
        if head.get("format") == FORMAT and head.get("version") in (1, 2):
            raise InputError(
                f"{str(p)!r} was written by an older ropeproof (sweep format v{head['version']}, whose "
                "digest does not cover the header and summary); rerun that shard"
            )
        header = SweepHeader.from_dict(head)
        summary = SweepSummary.from_dict(tail["summary"])
        check = RowsCheck.from_dict(tail["check"])
        summary_dict = dict(tail["summary"])
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as e:
        if isinstance(e, InputError):
            raise
        raise InputError(
            f"{str(p)!r} is not a complete sweep JSON Lines file ({type(e).__name__}: {e})"
        ) from None
    return SweepFile(p, header, summary, check, header_line, summary_dict)


def read_jsonl(path: str | os.PathLike[str]) -> tuple[SweepHeader, Iterator[str], SweepSummary]:
    """Header, the row lines (an iterator, read lazily) and the summary of a sweep JSON Lines file."""
    f = read_sweep_file(path)
    return f.header, f.lines(), f.summary


_HOLDS_OF = {s: (True if s in HOLDS else False if s in VIOLATED else None) for s in STATUSES}


def _number(row: dict[str, Any], key: str) -> float | None:
    value = row.get(key)
    if value is not None and (type(value) not in (int, float)):
        raise TypeError(f"{key} must be a number or null (got {value!r})")
    return value


class _RowTally:
    """Per-reading status counts and first violation, recomputed from row lines; :meth:`add` also
    checks each row's statuses against its numbers where those decide them (module docstring).
    ``identities``: the readings whose summary names an identity (``holds`` and ``holds-equal`` may
    then come from a proof rather than from the numbers). A status its numbers contradict is kept in
    :attr:`contradiction` (the first one), so a file altered without its digest is named as such."""

    def __init__(self, identities: Iterable[str] = ()) -> None:
        self.rows: dict[str, dict[str, int]] = {q: {} for q in QUANTITIES}
        self.first_violation: dict[str, int | None] = dict.fromkeys(QUANTITIES)
        self.identities = set(identities)
        self.contradiction: str | None = None

    def _contradicts(self, n: int, text: str) -> None:
        if self.contradiction is None:
            self.contradiction = f"row n={n}: {text}"

    def add(self, row: dict[str, Any], n: int) -> None:
        bound = _number(row, "bound")
        for q in QUANTITIES:
            status = row.get(STATUS_COLUMNS[q])
            holds = row.get(READING_COLUMNS[q])
            if status is None:
                if holds is not None:
                    raise ValueError(f"{READING_COLUMNS[q]} is {holds!r} without a status")
                continue
            if status not in STATUSES:
                raise ValueError(f"unknown status {status!r}")
            value = _number(row, q)
            above = value is not None and bound is not None and value > bound
            at_most = value is not None and bound is not None and value <= bound
            if holds is not _HOLDS_OF[status]:
                self._contradicts(
                    n, f"{READING_COLUMNS[q]} is {holds!r} but {STATUS_COLUMNS[q]} is {status!r}"
                )
            elif status == "violated" and not above:
                self._contradicts(n, f"{STATUS_COLUMNS[q]} is 'violated' but {q} = {value}, bound = {bound}")
            elif status == "holds" and q not in self.identities and not at_most:
                self._contradicts(
                    n,
                    f"{STATUS_COLUMNS[q]} is 'holds' without an identity but {q} = {value}, bound = {bound}",
                )
            elif status == "holds-equal" and q not in self.identities:
                self._contradicts(n, f"{STATUS_COLUMNS[q]} is 'holds-equal' but no identity is named for {q}")
            counts = self.rows[q]
            counts[status] = counts.get(status, 0) + 1
            if status in ("violated", "tight-violated") and self.first_violation[q] is None:
                self.first_violation[q] = n


def _verify_rows(part: SweepFile, step: int, columns: list[str] | None) -> tuple[_RowTally, list[str]]:
    """Read every row of ``part``: lengths from its header's first to last ``n`` at ``step`` (and the
    sweep's last length, ``B`` of ``A:B:STEP``), the
    same columns in every row, and count and digest equal to its check. Returns the recomputed
    tallies and the column names."""
    name = str(part.path)
    stop = part.header.lengths[1]
    last: int | None = None
    expect = part.header.first_n
    digest = hashlib.sha256(part.header_line.encode())
    tally = _RowTally(q for q, r in part.summary.readings.items() if r.identity is not None)
    count = 0
    for line in part.lines():
        try:
            row = _load(line)
            n = _int(row["n"], "n")
            tally.add(row, n)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            raise InputError(
                f"{name}: row {count + 1} is not a sweep row ({type(e).__name__}: {e})"
            ) from None
        if columns is None:
            columns = list(row)
        elif list(row) != columns:
            raise InputError(f"{name}: row n={n} has columns {list(row)}, expected {columns}")
        if n != expect:
            what = "duplicated or out of order" if n < expect else "missing rows before it"
            raise InputError(f"{name}: row {count + 1} has n={n}, expected n={expect} ({what})")
        digest.update(line.encode())
        last, expect = n, next_length(n, stop, step)
        count += 1
    check = part.check
    if count == 0 or last != part.header.last_n:
        raise InputError(
            f"{name}: the rows end at n={last if count else None}, the header says n={part.header.last_n} "
            f"(rows missing at the end)"
        )
    if count != check.count or count != part.summary.rows:
        raise InputError(
            f"{name}: {count} rows, but its check says {check.count} and its summary {part.summary.rows}"
        )
    if (check.first_n, check.last_n) != (part.header.first_n, part.header.last_n):
        raise InputError(
            f"{name}: its check covers n={check.first_n}..{check.last_n}, its header another range"
        )
    digest.update(_dump(part.summary_dict).encode())
    if digest.hexdigest() != check.sha256:
        raise InputError(
            f"{name}: the SHA-256 of its header, rows and summary differs from the one recorded (the file "
            "was altered)"
        )
    if tally.contradiction is not None:
        raise InputError(f"{name}: {tally.contradiction} (a status its own numbers contradict)")
    return tally, columns or []


def _verified_summary(part: SweepFile, tally: _RowTally) -> SweepSummary:
    """``part``'s summary with its status counts and first violations checked against the rows."""
    out = SweepSummary(part.summary.rows)
    for q, reading in part.summary.readings.items():
        rows = {k: v for k, v in tally.rows.get(q, {}).items() if v}
        if rows != {k: v for k, v in reading.rows.items() if v} or sum(rows.values()) != out.rows:
            raise InputError(f"{part.path}: its summary counts {reading.rows} for {q}, the rows say {rows}")
        if reading.first_violation_n != tally.first_violation[q]:
            raise InputError(
                f"{part.path}: its summary's first violation of {q} is n={reading.first_violation_n}, "
                f"the rows say n={tally.first_violation[q]}"
            )
        undecided = rows.get("undecided", 0)
        if sum(reading.undecided_reasons.values()) > undecided:
            raise InputError(f"{part.path}: more undecided reasons than undecided rows for {q}")
        out.readings[q] = ReadingSummary(
            rows,
            tally.first_violation[q],
            dict(reading.undecided_reasons),
            reading.refined_rows,
            reading.identity_rows,
            reading.enclosure_contradictions,
            reading.identity,
        )
    return out


def merge_jsonl(paths: Sequence[str | os.PathLike[str]], out: IO[str]) -> SweepSummary:
    """Merge shard files of one sweep into ``out`` (JSON Lines): checks that they share construction,
    parameters, dtype and lengths and cover every shard once, verifies every row of every shard
    (:func:`_verify_rows`, :func:`_verified_summary`), then writes the rows in order with the summary
    recomputed from them. The result equals the unsharded run's file. The rows are read twice (once
    to verify, once to copy), so nothing is written from a shard that fails."""
    if not paths:
        raise InputError("merge needs at least one file")
    parts = [read_sweep_file(p) for p in paths]
    heads = [f.header for f in parts]
    key = lambda h: (h.construction, _dump(h.params), h.dtype, h.bound, tuple(h.lengths))  # noqa: E731
    if len({key(h) for h in heads}) != 1:
        raise InputError(
            "the files belong to different sweeps (construction, params, dtype or lengths differ)"
        )
    counts = {h.shard[1] if h.shard else 1 for h in heads}
    order = sorted(range(len(parts)), key=lambda i: heads[i].first_n)
    start, stop, step = heads[0].lengths
    expect_first, expect_last = shard_lengths(start, stop, step, None)
    if len(counts) != 1 or len(heads) != counts.pop():
        raise InputError(f"need every shard exactly once; got shards {[h.shard for h in heads]}")
    nxt = expect_first
    for i in order:
        if heads[i].first_n != nxt:
            raise InputError(
                f"shards do not tile the lengths: expected a shard starting at n={nxt}, "
                f"got {paths[i]!s} starting at {heads[i].first_n}"
            )
        nxt = next_length(heads[i].last_n, stop, step)
    end = heads[order[-1]].last_n
    if end != expect_last:
        raise InputError(f"the shards end at n={end}, the sweep at n={expect_last}")
    summary = SweepSummary()
    columns: list[str] | None = None
    for i in order:
        tally, columns = _verify_rows(parts[i], step, columns)
        summary.add(_verified_summary(parts[i], tally))
    merged = SweepHeader(
        heads[0].construction,
        heads[0].params,
        heads[0].dtype,
        heads[0].bound,
        heads[0].lengths,
        None,
        expect_first,
        expect_last,
    )
    header_line = _dump(merged.to_dict()) + "\n"
    out.write(header_line)
    digest = hashlib.sha256(header_line.encode())
    written = 0
    for i in order:
        for line in parts[i].lines():
            digest.update(line.encode())
            out.write(line)
            written += 1
    if written != summary.rows:
        raise InputError("a shard changed while it was merged; nothing written")
    digest.update(_dump(summary.to_dict()).encode())
    check = RowsCheck(written, expect_first, expect_last, digest.hexdigest())
    out.write(_dump({"summary": summary.to_dict()})[:-1] + ', "check": ' + _dump(check.to_dict()) + "}\n")
    return summary


def text_table(block: SweepBlock, judge: bool, measured: bool) -> list[str]:
    """Rows of the human-readable table (``%13.6g``, ``null`` for NaN and infinities, as in the JSON
    rows); with ``measured`` the dtype's own extremes are shown next to the exact float64 ones. The
    lines of :func:`text_table_text`."""
    text = text_table_text(block, judge, measured)
    return text[:-1].split("\n") if text else []


def text_table_text(block: SweepBlock, judge: bool, measured: bool) -> str:
    """The rows of :func:`text_table`, each line ending in a newline: per row the bytes of the ``%``
    format ``%13d``, four ``%13.6g`` (NaN and infinities as ``null`` right-aligned in 13 characters), a
    ``%13s`` status per reading (``null`` without ``judge``), with ``measured`` three more ``%13.6g``, and
    ``%13s`` of ``resolvable`` (``true``/``false``), joined by two spaces; built a column at a time."""
    cols = block.columns
    size = int(cols["n"].size)
    null = "null".rjust(13)
    cells: list[np.ndarray] = [_int_cells(cols["n"], 13, b" ")]
    for k in ["gap_sup", "gap_inf", "margin_inf", "bound"]:
        cells.append(_float_cells(cols[k], "%13.6g", null))
    for q in QUANTITIES:
        if judge:
            cells.append(_STATUS_TEXT_BYTES[block.comparisons[q].codes])
        else:
            cells.append(np.full(size, null.encode(), dtype="S13"))
    if measured:
        for q in QUANTITIES:
            cells.append(_float_cells(cols[f"measured_{q}"], "%13.6g", null))
    cells.append(_BOOL_TEXT_BYTES[cols["resolvable"].astype(np.int8)])
    pieces: list[bytes | np.ndarray] = []
    for i, c in enumerate(cells):
        if i:
            pieces.append(b"  ")
        pieces.append(c)
    pieces.append(b"\n")
    return _assemble(pieces, size)


def table_header(judge: bool, measured: bool) -> str:
    cols = ["n", "gap_sup", "gap_inf", "margin_inf", "bound", "status", "status_gap_inf", "status_margin"]
    if measured:
        cols += ["meas_gap_sup", "meas_gap_inf", "meas_margin"]
    cols.append("resolvable")
    return "  ".join(f"{c:>13s}" for c in cols)
