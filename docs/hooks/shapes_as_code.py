"""Griffe extension for the API reference: a docstring's ``Shapes:`` paragraph is shown as code.

The convention (``tests/test_shapes.py``) writes shapes as ``NAME [dims]``; in Markdown,
``weights[q] [n]`` would read as a reference link. As code it reads as written. In a docstring with
numpy-style sections (``Parameters`` over a line of dashes) the paragraph moves above the first section,
where the section parser does not read it as one more parameter.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension

SHAPES = re.compile(r"^(Shapes: .*?)(?=\n\s*\n|\Z)", re.M | re.S)
SECTION = re.compile(r"^\w[\w ]*\n-{3,}$", re.M)


class ShapesAsCode(Extension):
    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        doc = getattr(obj, "docstring", None)
        if doc is not None and "Shapes: " in doc.value:
            doc.value = SHAPES.sub(lambda m: "`" + " ".join(m.group(1).split()) + "`", doc.value)
            section, shapes = SECTION.search(doc.value), re.search(r"^`Shapes: .*`$", doc.value, re.M)
            if section and shapes and section.start() < shapes.start():
                rest = doc.value[: shapes.start()] + doc.value[shapes.end() :]
                before, after = rest[: section.start()], rest[section.start() :]
                doc.value = f"{before}{shapes.group(0)}\n\n{after}".rstrip()
