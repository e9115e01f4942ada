"""The stored best constructions (package data) re-scored exactly, independently of the sweep."""

from __future__ import annotations

import json

import mpmath
import pytest

from ropeproof.verify.studies.beyond._index_search import (
    BEST_KNOWN_FILE,
    TABLE_LENGTHS,
    TABLE_PLANES,
    best_known,
    best_known_table,
)

ENTRIES = json.loads(BEST_KNOWN_FILE.read_text())["entries"]


def mp_normalised_margin(freqs: list[float], amps: list[float], n: int) -> float:
    """``min_{1 <= m <= n-1} sum_k a_k 2 sin(m theta_k / 2)^2 / sum_k a_k`` at 30 digits: T_Index's
    worst-case margin (the closest competitor sits m positions from the target)."""
    with mpmath.workdps(30):
        th = [mpmath.mpf(t) for t in freqs]
        a = [mpmath.mpf(x) for x in amps]
        total = sum(a)
        best = min(
            sum(ak * 2 * mpmath.sin(m * tk / 2) ** 2 for ak, tk in zip(a, th, strict=True))
            for m in range(1, n)
        )
        return float(best / total)


def test_the_table_covers_every_plane_count_and_length() -> None:
    assert {(e["planes"], e["length"]) for e in ENTRIES} == {
        (k, n) for k in TABLE_PLANES for n in TABLE_LENGTHS
    }
    assert set(best_known_table()) == {(e["planes"], e["length"]) for e in ENTRIES}


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"K={e['planes']},n0={e['length']}")
def test_every_entry_rescores_exactly(entry: dict) -> None:
    exact = mp_normalised_margin(entry["freqs"], entry["amps"], entry["length"])
    assert entry["margin"] == pytest.approx(exact, rel=5e-6)  # printed with 6 significant digits
    stored = best_known(entry["planes"], entry["length"])
    assert stored.margin == pytest.approx(exact, rel=1e-12)  # the toolkit's exact sweep
    assert stored.bracketed
