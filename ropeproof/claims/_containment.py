"""Keep a claim's check from ending or moving the ``check`` run around it.

A check is user code (``check --claims FILE``, entry-point plugins). Three things it could do would
otherwise make ``ropeproof check`` report success without a report, or write somewhere other than
``--out``:

- ``sys.exit(0)`` raises :class:`SystemExit`, which the usual ``except Exception`` does not catch;
- ``os._exit(0)`` ends the process at once, with exit code 0 and no report;
- ``os.chdir(...)`` moves every relative path that is resolved afterwards.

:func:`contained` runs a check so that the first two become a :class:`CheckEscaped` error (reported as
the claim's ``error`` verdict, so ``--strict`` fails) and the working directory is restored afterwards,
with the change reported. A check that kills its own process with a signal still ends the run, but
never with exit code 0: the shell sees the signal.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class CheckEscaped(Exception):
    """A check tried to end the process or left the working directory changed."""


@contextmanager
def contained() -> Iterator[None]:
    """Run the block with ``os._exit`` guarded (in this process only: a forked child keeps the real one)
    and the working directory restored afterwards; raise :class:`CheckEscaped` for ``sys.exit``,
    ``os._exit`` and a changed working directory."""
    owner = os.getpid()
    real_exit = os._exit
    cwd = Path.cwd()

    def guarded_exit(code: int) -> None:
        if os.getpid() != owner:  # a child forked by the check ends as it asked
            real_exit(code)
        raise CheckEscaped(f"the check called os._exit({code}); a check must return an Outcome")

    os._exit = guarded_exit  # type: ignore[assignment]
    try:
        yield
    except SystemExit as exc:
        raise CheckEscaped(
            f"the check called sys.exit({exc.code!r}); a check must return an Outcome"
        ) from None
    finally:
        os._exit = real_exit
        moved = Path.cwd()
        if moved != cwd:
            os.chdir(cwd)
    if moved != cwd:
        raise CheckEscaped(f"the check changed the working directory to {moved}; it was restored to {cwd}")
