"""The figures of ``ropeproof check`` drawn by a second process while the claims run in the first.

The figures do not depend on the claims' results, and both phases are single-threaded under the
thread policy, so on a machine with two or more cores they can overlap. :func:`start_figures` puts
the figure names on a queue, followed by one stop marker per process, and spawns a fresh interpreter
(the ``spawn`` start method: no state is inherited) that takes names off the queue and draws each
with :func:`ropeproof.paper_figures.make_all` into the run's staging directory, under the parent's
thread policy. The figures named in ``main`` (``check`` passes
:data:`ropeproof.paper_figures.DRAWN_WITH_CLAIMS`) are not queued: the parent draws them itself,
reusing what its claims already computed and imported. When the claims are done,
:meth:`FigureJob.finish` draws those, then the names still on the queue (the two processes share the
work, whichever is free takes the next figure), waits for the child and returns what ``make_all``
would have returned, in the registry's order; an exception in the child is re-raised in the parent,
so a bad figure is reported like any other error.
:meth:`FigureJob.cancel` stops the child (an error or Ctrl-C in the parent: the staging directory is
then discarded as a whole).
"""

from __future__ import annotations

import multiprocessing
import queue
from collections.abc import Collection
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

QUEUE_WAIT = 1.0
"""Seconds a process waits on an empty queue before it concludes that no figure is left (a fallback:
each process normally stops at its stop marker, which follows the last name)."""

STOP = ""
"""The stop marker: no figure has an empty name."""


def _take(names: Any) -> str | None:
    try:
        name = names.get(timeout=QUEUE_WAIT)
    except queue.Empty:
        return None
    return None if name == STOP else name


def _draw(
    out_dir: str,
    quick: bool,
    formats: tuple[str, ...] | None,
    threads: int | None,
    names: Any,
    conn: Connection,
) -> None:
    """Child process: draw figures from ``names`` into ``out_dir`` until the queue is empty; send
    ``("ok", {name: [paths]})`` or ``("error", exception)`` back through ``conn``."""
    try:
        from ropeproof.paper_figures import make_all
        from ropeproof.verify.runtime.threads import thread_policy

        made: dict[str, list[str]] = {}
        with thread_policy(threads):
            while (name := _take(names)) is not None:
                for key, paths in make_all(Path(out_dir), quick=quick, only=[name], formats=formats).items():
                    made[key] = [str(p) for p in paths]
        conn.send(("ok", made))
    except BaseException as exc:
        try:
            conn.send(("error", exc))
        except Exception:
            conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


@dataclass
class FigureJob:
    """A running figure process, the shared queue of figure names and the child's result pipe."""

    process: BaseProcess
    names: Any
    conn: Connection
    out_dir: Path
    quick: bool
    order: list[str]
    main: list[str]
    formats: tuple[str, ...] | None = None
    drawn_by_child: list[str] = field(default_factory=list)
    """The names the child drew (set by :meth:`finish`)."""

    def finish(self) -> dict[str, list[Path]]:
        """Draw the ``main`` figures, then those left on the queue, here; wait for the child; return
        ``{name: [paths]}`` for every figure in the registry's order (the child's exception, if any,
        re-raised here)."""
        from ropeproof.paper_figures import make_all

        made: dict[str, list[Path]] = {}
        if self.main:
            made.update(make_all(self.out_dir, quick=self.quick, only=self.main, formats=self.formats))
        while (name := _take(self.names)) is not None:
            made.update(make_all(self.out_dir, quick=self.quick, only=[name], formats=self.formats))
        try:
            status, payload = self.conn.recv()
        except EOFError:
            self.process.join()
            raise RuntimeError(
                f"the figure process ended (exit code {self.process.exitcode}) without a result"
            ) from None
        self.process.join()
        if status == "error":
            raise payload
        self.drawn_by_child = list(payload)
        made.update({name: [Path(p) for p in paths] for name, paths in payload.items()})
        missing = [n for n in self.order if n not in made]
        if missing:
            raise RuntimeError(f"figures {missing} were drawn by neither process")
        return {name: made[name] for name in self.order}

    def cancel(self) -> None:
        """Stop the child if it is still running."""
        if self.process.is_alive():
            self.process.terminate()
        self.process.join()
        self.conn.close()


def start_figures(
    out_dir: Path,
    quick: bool,
    threads: int | None,
    names: list[str] | None = None,
    main: Collection[str] = (),
    formats: tuple[str, ...] | None = None,
) -> FigureJob:
    """Queue every figure this installation can draw (or ``names``) except those in ``main`` (left to
    :meth:`FigureJob.finish` in this process) and spawn the process that starts drawing them into
    ``out_dir`` in ``formats`` (default: ``make_all``'s) (see the module docstring)."""
    from ropeproof.paper_figures import available_figure_names

    ctx = multiprocessing.get_context("spawn")
    order = available_figure_names() if names is None else list(names)
    todo = ctx.Queue()
    for name in order:
        if name not in main:
            todo.put(name)
    for _process in range(2):
        todo.put(STOP)
    receive, send = ctx.Pipe(duplex=False)
    args = (str(out_dir), quick, formats, threads, todo, send)
    process: Any = ctx.Process(target=_draw, args=args, daemon=True)
    process.start()
    send.close()
    main_names = [n for n in order if n in main]
    return FigureJob(process, todo, receive, Path(out_dir), quick, order, main_names, formats)
