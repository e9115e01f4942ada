"""Parameter scans: a planted good set that is not an interval is reported as two intervals with both
thresholds and brackets around the analytic boundaries; an interval is reported as one; verdicts equal
one sweep per value."""

from __future__ import annotations

import itertools
import math

import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.theory._spectrum import Spectrum
from ropeproof.verify.measure.exact._parameter_scan import parameter_grid, scan_parameter
from ropeproof.verify.measure.exact._spectrum_sweep import sweep_spectrum


def one_plane(x: float) -> Spectrum:
    return Spectrum((x,))


def test_a_planted_non_interval_good_set_is_reported_as_such() -> None:
    # B(m) = cos(m x) >= 1/2 for m <= 1: good iff x mod 2 pi is within pi/3 of 0, i.e. on [0, 8]:
    # [0, pi/3] and [5 pi/3, 7 pi/3]
    scan = scan_parameter(one_plane, 1, interval=(0.0, 8.0), resolution=0.01, spacing="linear", threshold=0.5)
    assert not scan.is_interval and len(scan.intervals) == 2
    first, second = scan.intervals
    assert first.below is None and first.lo == 0.0
    assert first.hi <= math.pi / 3 < first.above and first.above_verdict == "bad"
    assert second.below < 5 * math.pi / 3 <= second.lo and second.below_verdict == "bad"
    assert second.hi <= 7 * math.pi / 3 < second.above
    assert scan.smallest_good == (None, 0.0)
    assert scan.sup_bad == (8.0, None)  # the top of the range is bad: no "every value above" threshold
    assert scan.summary()["is_interval"] is False and scan.counts()["undecided"] == 0


def test_an_interval_is_one_interval_with_both_thresholds_equal() -> None:
    # cos(m x) >= 0 for m <= 10 iff x <= pi/20 on this range
    scan = scan_parameter(one_plane, 10, interval=(0.001, 0.3), resolution=0.01)
    assert scan.is_interval and len(scan.intervals) == 1
    (only,) = scan.intervals
    assert only.lo == 0.001 and only.hi <= math.pi / 20 < only.above
    assert scan.smallest_good == (None, 0.001) and scan.sup_bad[0] == 0.3


def test_thresholds_are_separate_when_good_comes_before_bad() -> None:
    scan = scan_parameter(one_plane, 1, [0.5, 1.5, 4.0, 5.5, 6.0], threshold=0.5)
    assert scan.verdicts == ("good", "bad", "bad", "good", "good")
    assert scan.smallest_good == (None, 0.5) and scan.sup_bad == (4.0, 5.5)
    assert scan.first_violations == (None, 1, 1, None, None)
    assert [sweep_spectrum(one_plane(x), 1, ">=", 0.5).first_violation for x in scan.values] == list(
        scan.first_violations
    )


def test_thresholds_scope_gives_the_full_scans_thresholds() -> None:
    full = scan_parameter(one_plane, 1, interval=(0.5, 8.0), resolution=0.05, spacing="linear", threshold=0.5)
    part = scan_parameter(
        one_plane,
        1,
        interval=(0.5, 8.0),
        resolution=0.05,
        spacing="linear",
        threshold=0.5,
        scope="thresholds",
    )
    assert part.smallest_good == full.smallest_good and part.sup_bad == full.sup_bad
    assert part.is_interval is None and 0 < part.counts()["unscanned"] < len(part.values)
    assert all(p in (f, "unscanned") for p, f in zip(part.verdicts, full.verdicts, strict=True))
    least = scan_parameter(
        one_plane, 1, interval=(0.5, 8.0), resolution=0.05, spacing="linear", threshold=0.5, scope="smallest"
    )
    assert least.smallest_good == full.smallest_good and least.verdicts[-1] == "unscanned"


def test_grid_and_bad_input() -> None:
    grid = parameter_grid(1000.0, 1100.0, 0.01)
    assert grid[0] == 1000.0 and grid[-1] == 1100.0
    assert all(b / a <= 1.01 * (1 + 1e-12) for a, b in itertools.pairwise(grid))
    with pytest.raises(InputError, match="exactly one"):
        scan_parameter(one_plane, 1)
    with pytest.raises(InputError, match="resolution"):
        scan_parameter(one_plane, 1, interval=(1.0, 2.0))
    with pytest.raises(InputError, match="increasing"):
        scan_parameter(one_plane, 1, [2.0, 1.0])
    with pytest.raises(InputError, match="spacing"):
        parameter_grid(1.0, 2.0, 0.1, "cubic")
    with pytest.raises(InputError, match="Spectrum"):
        scan_parameter(lambda x: [x], 1, [1.0])  # type: ignore[arg-type,return-value]


def test_the_sweeps_start_is_recorded() -> None:
    """``start=`` reaches every sweep (offset 0, where ``B`` is largest, is then not a row) and the summary
    states the offsets checked."""
    build = lambda x: Spectrum((x,))  # noqa: E731
    plain = scan_parameter(build, 50, [0.5, 1.0], relation="<=", threshold=0.9)
    assert plain.verdicts == ("bad", "bad") and plain.first_violations == (0, 0)
    started = scan_parameter(build, 50, [0.5, 1.0], relation="<=", threshold=0.9, start=1)
    # cos(m/2) first exceeds 0.9 again at m = 12 (12/2 = 6, near 2 pi); cos(m) at m = 6
    assert started.first_violations == (12, 6) and started.start == 1
    assert "for 1 <= m <= 50" in started.summary()["relation"]
