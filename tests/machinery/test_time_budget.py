"""The time limit: parsing, precedence and the refusal message."""

from __future__ import annotations

import pytest

from ropeproof.machinery._errors import InputError, RopeproofError, TimeBudgetError
from ropeproof.machinery._time_budget import (
    DEFAULT_LIMIT,
    ENV_VAR,
    check_duration,
    format_duration,
    parse_duration,
    time_limit,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3600", 3600.0),
        ("90m", 5400.0),
        ("90 min", 5400.0),
        ("12H", 43200.0),
        ("60d", 5184000.0),
        ("1.5e3s", 1500.0),
    ],
)
def test_parse_duration(text: str, expected: float) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "3 fortnights", "-1h", "0", "0s", "nan", "inf", "1e400"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(InputError, match=ENV_VAR):
        parse_duration(text)


def test_limit_precedence_and_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert time_limit() == DEFAULT_LIMIT == 30 * 24 * 3600
    monkeypatch.setenv(ENV_VAR, "2h")
    assert time_limit() == 7200.0
    check_duration("x", 7200.0)  # equal to the limit: allowed
    with pytest.raises(TimeBudgetError) as exc:
        check_duration("train", 7201.0, how="1.2 s per step measured")
    assert str(exc.value) == (
        "train would take about 2 h (1.2 s per step measured), more than the time limit of 2 h "
        f"(set {ENV_VAR}, e.g. {ENV_VAR}=60d, to change the limit)"
    )
    with pytest.raises(TimeBudgetError, match="limit of 1 min"):
        check_duration("x", 61.0, limit=60.0)  # the argument wins over the variable
    with pytest.raises(TimeBudgetError):
        check_duration("x", float("nan"))
    assert issubclass(TimeBudgetError, RopeproofError)  # the CLI's exit 2


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.25, "0.25 s"),
        (90.0, "1.5 min"),
        (5400.0, "1.5 h"),
        (86400.0 * 3, "3 days"),
        (3.15576e10, "1e+03 years"),
    ],
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
