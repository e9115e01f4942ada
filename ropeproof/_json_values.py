"""Values as JSON-ready data, for the reports (``report.json``, ``errata.json``)."""

from __future__ import annotations

import math
from typing import Any


def jsonable(value: Any) -> Any:
    """``value`` as JSON-ready data (numpy scalars and arrays to Python, non-finite floats to text)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, int | str | bool) or value is None:
        return value
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        return jsonable(value.item())
    if hasattr(value, "tolist"):
        return jsonable(value.tolist())
    return str(value)
