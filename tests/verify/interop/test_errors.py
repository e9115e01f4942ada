"""The interop errors are the project's errors: one line on the command line, exit 2."""

from __future__ import annotations

from ropeproof.machinery._errors import RopeproofError
from ropeproof.verify.interop._errors import ExportError, HeadImportError


def test_errors_are_project_errors() -> None:
    assert issubclass(ExportError, RopeproofError) and issubclass(HeadImportError, RopeproofError)
    assert issubclass(HeadImportError, ValueError)  # RopeproofError is a ValueError
    assert not issubclass(ExportError, HeadImportError) and not issubclass(HeadImportError, ExportError)
