"""``ropeproof scan``: the planted non-interval good set of one plane read from the command line (text and
JSON, the same as ``scan_parameter``), the base scan's both thresholds, and bad input as one line, exit 2."""

from __future__ import annotations

import contextlib
import io
import json
import math

import pytest

from ropeproof._cli import main
from ropeproof.commands import _scan as scan_command
from ropeproof.theory._spectrum import Spectrum
from ropeproof.verify.measure.exact._parameter_scan import scan_parameter


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["scan", *argv])
    return code, out.getvalue(), err.getvalue()


def test_angle_scan_reports_two_runs_as_json_and_text() -> None:
    argv = ["angle", "--range", "0:8", "--resolution", "0.01", "--spacing", "linear", "--max-m", "1"]
    code, out, _ = run(*argv, "--threshold", "0.5", "--json")
    summary = json.loads(out)
    expected = scan_parameter(
        lambda x: Spectrum((x,)), 1, interval=(0.0, 8.0), resolution=0.01, spacing="linear", threshold=0.5
    )
    assert code == 0 and summary == {"parameter": "angle", **json.loads(json.dumps(expected.summary()))}
    assert summary["is_interval"] is False and len(summary["intervals"]) == 2
    first, second = summary["intervals"]
    assert first["hi"] <= math.pi / 3 < first["above"] and second["below"] < 5 * math.pi / 3 <= second["lo"]
    code, text, _ = run(*argv, "--threshold", "0.5")
    assert code == 0 and "good set: 2 run(s) (not an interval)" in text
    assert "supremum of the bad values: 8 (the top of the grid is bad)" in text


def test_the_scale_parameter_divides_every_frequency() -> None:
    import argparse

    args = argparse.Namespace(parameter="scale", dim=8, base=10000.0)
    build = scan_command._builder(args)
    assert build(4.0).freqs == tuple(f / 4.0 for f in Spectrum.from_base(10000.0, 8).freqs)
    assert scan_command._interval("1e3:2e3") == (1000.0, 2000.0)


def test_base_scan_states_both_thresholds() -> None:
    code, text, _ = run("base", "--range", "4000:7000", "--resolution", "0.002", "--max-m", "1024")
    scan = scan_parameter(lambda b: Spectrum.from_base(b, 128), 1024, interval=(4000, 7000), resolution=0.002)
    below, good = scan.smallest_good
    bad, above = scan.sup_bad
    assert code == 0 and f"good set: {len(scan.intervals)} run(s) (not an interval)" in text
    assert f"smallest good value at this resolution: {good:.10g} (below it: {below:.10g} (bad))" in text
    assert f"supremum of the bad values: {bad:.10g} (every grid value from {above:.10g} up is good)" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["base", "--range", "7000:4000", "--resolution", "0.01", "--max-m", "5"], "LO must be <= HI"),
        (["base", "--range", "1:2", "--resolution", "0", "--max-m", "5"], "--resolution"),
        (
            ["scale", "--range", "0:1", "--resolution", "0.5", "--spacing", "linear", "--max-m", "5"],
            "scale=0.0",
        ),
        (["base", "--range", "1:2", "--resolution", "0.1", "--max-m", "5", "--dim", "7"], "--dim"),
    ],
)
def test_bad_input_is_one_line_exit_2(argv: list[str], message: str) -> None:
    with contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            code = main(["scan", *argv])  # a library InputError: main reports it
        except SystemExit as exc:  # an argument the parser refuses
            code = exc.code
    assert code == 2 and message in err.getvalue() and len(err.getvalue().strip().splitlines()) == 1
