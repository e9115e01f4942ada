"""The vectorised row output of ``ropeproof sweep`` (issue 35 item 4): the same bytes as the former
per-row ``%`` formats, kept here as private copies, on blocks with every special value."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.verify.measure.exact._bound_checks import STATUSES
from ropeproof.verify.measure.exact._sweep import QUANTITIES, SweepBlock
from ropeproof.verify.sweep_runs._sweep_files import (
    json_rows,
    json_rows_text,
    row_columns,
    text_table,
    text_table_text,
)

SPECIAL = [0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, -5e-324, 1.7976931348623157e308, 1e-5, 123456.5, -1.0]


def former_text_table(block: SweepBlock, judge: bool, measured: bool) -> list[str]:
    """``text_table`` before it was vectorised: one ``%`` format per row, then NaN/inf replaced."""
    cols = block.columns
    size = cols["n"].size
    values: list[list[Any]] = [cols["n"].tolist()]
    spec = ["%13d"]
    for k in ["gap_sup", "gap_inf", "margin_inf", "bound"]:
        values.append(np.asarray(cols[k], dtype=np.float64).tolist())
        spec.append("%13.6g")
    for q in QUANTITIES:
        if judge:
            values.append(np.array(STATUSES, dtype=object)[block.comparisons[q].codes].tolist())
        else:
            values.append(["null"] * size)
        spec.append("%13s")
    if measured:
        for q in QUANTITIES:
            values.append(np.asarray(cols[f"measured_{q}"], dtype=np.float64).tolist())
            spec.append("%13.6g")
    values.append(np.array(["false", "true"])[cols["resolvable"].astype(np.int8)].tolist())
    spec.append("%13s")
    template = "  ".join(spec)
    text = "\n".join([template % row for row in zip(*values, strict=True)])
    for bad in ("          nan", "          inf", "         -inf"):
        text = text.replace(bad, "         null")
    return text.split("\n") if text else []


def former_json_rows(block: SweepBlock, judge: bool) -> list[str]:
    """``json_rows`` before it was vectorised: one ``%`` format per row of :func:`row_columns`."""
    names, values = row_columns(block, judge)
    template = "{" + ", ".join(f'"{k}": %s' for k in names) + "}"
    return [template % t for t in zip(*values, strict=True)]


@st.composite
def blocks(draw: st.DrawFn) -> tuple[SweepBlock, bool]:
    size = draw(st.integers(0, 24))
    measured = draw(st.booleans())
    floats = st.one_of(st.sampled_from(SPECIAL), st.floats(allow_nan=True, allow_infinity=True))

    def column() -> np.ndarray:
        values = draw(st.lists(floats, min_size=size, max_size=size))
        if size and draw(st.booleans()):  # runs of repeated values, as the prefix extremes have
            values = sorted(values[: max(1, size // 4)] * 4, key=str)[:size]
            values += values[-1:] * (size - len(values))
        return np.array(values, dtype=np.float64)

    top = draw(st.sampled_from([10**3, 10**12, 10**15]))
    n = np.array(draw(st.lists(st.integers(0, top), min_size=size, max_size=size)), dtype=np.int64)
    cols: dict[str, np.ndarray] = {"n": n}
    for k in ("gap_sup", "gap_inf", "margin_inf", "bound"):
        cols[k] = column()
    if measured:
        for q in QUANTITIES:
            cols[f"measured_{q}"] = column()
    cols["resolvable"] = np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype=bool)
    codes = st.lists(st.integers(0, len(STATUSES) - 1), min_size=size, max_size=size)
    comparisons = {q: SimpleNamespace(codes=np.array(draw(codes), dtype=np.int64)) for q in QUANTITIES}
    return SweepBlock(cols, comparisons), measured  # type: ignore[arg-type]


@settings(deadline=None, max_examples=80)
@given(blocks(), st.booleans())
def test_text_and_json_rows_are_the_former_bytes(case: tuple[SweepBlock, bool], judge: bool) -> None:
    block, measured = case
    want_text = former_text_table(block, judge, measured)
    assert text_table(block, judge, measured) == want_text
    assert text_table_text(block, judge, measured) == "".join(line + "\n" for line in want_text)
    want_json = former_json_rows(block, judge)
    assert json_rows(block, judge) == want_json
    assert json_rows_text(block, judge) == "".join(line + "\n" for line in want_json)


def test_tight_violated_is_wider_than_its_column() -> None:
    """The one status longer than 13 characters keeps its full width, as ``%13s`` gives it."""
    codes = np.array([STATUSES.index("tight-violated"), STATUSES.index("holds")])
    cols = {k: np.array([0.5, np.nan]) for k in ("gap_sup", "gap_inf", "margin_inf", "bound")}
    cols |= {"n": np.array([2, 3]), "resolvable": np.array([True, False])}
    block = SweepBlock(cols, {q: SimpleNamespace(codes=codes) for q in QUANTITIES})  # type: ignore[misc]
    lines = text_table(block, True, False)
    assert lines == former_text_table(block, True, False)
    assert "  tight-violated  " in lines[0] and lines[1].count("         null") == 4
