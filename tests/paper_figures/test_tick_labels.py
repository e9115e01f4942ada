"""Log-axis tick labels as plain text: the same values as matplotlib's mathtext labels, no mathtext."""

from __future__ import annotations

import math

import matplotlib
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.ticker import LogFormatterSciNotation

from ropeproof.paper_figures._style import FigureResult, styled, subplots
from ropeproof.paper_figures._tick_labels import PlainLogFormatter, plain_text_label

SUPERSCRIPT = dict(zip("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻", strict=True))
MINUS = "\N{MINUS SIGN}"


def power_label(coeff: int, exponent: int, negative: bool = False) -> str:
    """``−2×10⁻³`` written out digit by digit (the independent reference)."""
    sign = MINUS if negative else ""
    head = "" if coeff == 1 else f"{coeff}×"
    return sign + head + "10" + "".join(SUPERSCRIPT[c] for c in str(exponent))


@given(exponent=st.integers(-30, 30), coeff=st.integers(1, 9), negative=st.booleans())
def test_powers_read_as_their_mathtext(exponent: int, coeff: int, negative: bool) -> None:
    """Every label matplotlib's log formatter writes for ``±coeff × 10^exponent`` (outside the exponents
    it writes as plain numbers) becomes the same power in Unicode."""
    formatter = LogFormatterSciNotation(labelOnlyBase=False)
    x = (-1 if negative else 1) * coeff * 10.0**exponent
    with matplotlib.rc_context({"axes.unicode_minus": True, "axes.formatter.min_exponent": 0}):
        mathtext = formatter(x)
        assert mathtext.startswith("$") and "^{" in mathtext
        assert plain_text_label(mathtext) == power_label(coeff, exponent, negative)


def test_numbers_and_other_labels() -> None:
    assert plain_text_label(r"$\mathdefault{0.5}$") == "0.5"
    with matplotlib.rc_context({"axes.unicode_minus": False}):
        assert plain_text_label(r"$\mathdefault{-10^{2}}$") == "-10²"
    for kept in ("", "n", r"$\mathdefault{10^{0.50}}$", r"$\alpha$"):  # not a power or number: unchanged
        assert plain_text_label(kept) == kept


@styled
def _log_figure() -> FigureResult:
    fig, (ax, other) = subplots(1, 2, figsize=(4, 2), sharey=True)
    ax.loglog([1e-3, 1e4], [1e-8, 1e2])
    other.plot([0, 1], [1e-3, 1.0])
    other.set_xlim(0, 1)
    return FigureResult("log_example", fig, [], "")


def test_styled_figures_label_log_axes_in_plain_text() -> None:
    """A styled figure's log axes (shared ones included) draw their tick labels without mathtext, with
    the same ticks; a linear axis keeps its own formatter."""
    result = _log_figure()
    fig = result.figure
    fig.canvas.draw()
    ax, other = fig.axes
    assert isinstance(ax.xaxis.get_major_formatter(), PlainLogFormatter)
    assert isinstance(other.yaxis.get_major_formatter(), PlainLogFormatter)  # shared with ax's y axis
    assert not isinstance(other.xaxis.get_major_formatter(), PlainLogFormatter)
    labels = [t.get_text() for a in fig.axes for t in a.get_xticklabels() + a.get_yticklabels()]
    assert labels and not any("$" in label for label in labels)
    decades = [(t.get_position()[0], t.get_text()) for t in ax.get_xticklabels() if t.get_text()]
    assert len(decades) >= 2
    for x, text in decades:  # each label is its tick's decade
        assert text == power_label(1, round(math.log10(x)))
