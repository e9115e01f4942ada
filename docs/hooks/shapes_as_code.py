"""Griffe extension for the API reference: a docstring's ``Shapes:`` paragraph is shown as code.

The convention (``tests/test_shapes.py``) writes shapes as ``NAME [dims]``; in Markdown,
``weights[q] [n]`` would read as a reference link. As code it reads as written.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension

SHAPES = re.compile(r"^(Shapes: .*?)(?=\n\s*\n|\Z)", re.M | re.S)


class ShapesAsCode(Extension):
    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        doc = getattr(obj, "docstring", None)
        if doc is not None and "Shapes: " in doc.value:
            doc.value = SHAPES.sub(lambda m: "`" + " ".join(m.group(1).split()) + "`", doc.value)
