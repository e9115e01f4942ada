"""Log-axis tick labels as plain text instead of mathtext.

matplotlib's log formatters (:class:`~matplotlib.ticker.LogFormatterSciNotation`, the default of a log
axis) label ticks in mathtext, ``$\\mathdefault{2\\times10^{-3}}$``, and every renderer parses each such
label again (the parse is cached per renderer, and every saved figure draws with new ones): in
``check --quick`` the same few dozen labels were parsed hundreds of times. :func:`plain_log_labels`
wraps those formatters so that the labels are Unicode text, ``2×10⁻³``, which draws without the
mathtext parser and reads the same. A label the rewrite does not cover is left as mathtext.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import Formatter, LogFormatterMathtext

_SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_MATHTEXT = re.compile(r"\$\\mathdefault\{(?P<body>[^$]*)\}\$")
_POWER = re.compile(r"(?P<sign>-?)(?:(?P<coeff>[0-9.]+)\\times)?(?P<base>[0-9]+)\^\{(?P<exp>-?[0-9]+)\}")
_NUMBER = re.compile(r"-?[0-9.]+(?:e[-+]?[0-9]+)?")


def _minus(text: str) -> str:
    """``text`` with ``-`` as the minus sign (U+2212) where ``axes.unicode_minus`` asks for it, as
    matplotlib's own plain-text formatters write it."""
    return text.replace("-", "\N{MINUS SIGN}") if matplotlib.rcParams["axes.unicode_minus"] else text


def plain_text_label(label: str) -> str:
    """The tick label ``label`` of a matplotlib log formatter as plain text: a power
    ``$\\mathdefault{-2\\times10^{-3}}$`` as ``−2×10⁻³`` (exponent in Unicode superscripts), a number
    ``$\\mathdefault{0.5}$`` as ``0.5``; any other label (an empty one, other mathtext) unchanged."""
    match = _MATHTEXT.fullmatch(label)
    if match is None:
        return label
    body = match["body"]
    power = _POWER.fullmatch(body)
    if power is not None:
        coeff = f"{power['coeff']}×" if power["coeff"] else ""
        return _minus(power["sign"]) + coeff + power["base"] + power["exp"].translate(_SUPERSCRIPTS)
    if _NUMBER.fullmatch(body):
        return _minus(body)
    return label


class PlainLogFormatter(Formatter):
    """A log formatter (``inner``) whose labels are rewritten by :func:`plain_text_label`; ticks, locations
    and data formats are ``inner``'s."""

    def __init__(self, inner: Formatter) -> None:
        self.inner = inner

    def set_axis(self, axis: Any) -> None:
        super().set_axis(axis)
        self.inner.set_axis(axis)

    def set_locs(self, locs: Sequence[float]) -> None:
        self.inner.set_locs(locs)

    def __call__(self, x: float, pos: int | None = None) -> str:
        return plain_text_label(self.inner(x, pos))

    def format_ticks(self, values: Sequence[float]) -> list[str]:
        return [plain_text_label(label) for label in self.inner.format_ticks(values)]

    def format_data(self, value: float) -> str:
        return self.inner.format_data(value)

    def format_data_short(self, value: float) -> str:
        return self.inner.format_data_short(value)

    def get_offset(self) -> str:
        return self.inner.get_offset()


def plain_log_labels(fig: Figure) -> Figure:
    """``fig`` with the major and minor formatters of its axes that are matplotlib log formatters
    (mathtext, :class:`~matplotlib.ticker.LogFormatterMathtext` and its subclasses) wrapped in a
    :class:`PlainLogFormatter`; other formatters unchanged. Returns ``fig``."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for get, put in (
                (axis.get_major_formatter, axis.set_major_formatter),
                (axis.get_minor_formatter, axis.set_minor_formatter),
            ):
                formatter = get()
                if isinstance(formatter, LogFormatterMathtext):
                    put(PlainLogFormatter(formatter))
    return fig
