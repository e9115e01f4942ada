"""Reaching transformers: the lazy import and silencing its progress bars for a block (the previous setting
comes back, whatever it was)."""

from __future__ import annotations

import pytest

from ropeproof.verify.interop.hf._library import quiet_progress, require_transformers


def test_progress_bars_come_back_as_they_were() -> None:
    transformers = pytest.importorskip("transformers")
    assert require_transformers() is transformers
    logging = transformers.utils.logging
    before = logging.is_progress_bar_enabled()
    try:
        for enabled in (True, False):
            (logging.enable_progress_bar if enabled else logging.disable_progress_bar)()
            with quiet_progress():
                assert not logging.is_progress_bar_enabled()
            assert logging.is_progress_bar_enabled() == enabled
    finally:
        (logging.enable_progress_bar if before else logging.disable_progress_bar)()
