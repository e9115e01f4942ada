"""The figures of ``ropeproof check`` drawn by two processes that share the run's store.

The claims run in the first process; a second one (a ``multiprocessing`` pool of one fresh interpreter,
``spawn``: nothing is inherited) starts drawing the figures at once into the run's staging directory,
under the parent's thread policy: the figures named in ``first`` (``check`` passes those that run the
trained models, :data:`ropeproof.paper_figures.NEEDS_HF`, the longest), then the others in report order.
Both open the same
:class:`~ropeproof.theory.result_store.ResultStore` directory, so a result that a claim and a figure both
need (the multi-hop length study, the trained models' profiles, the local models' answers, ...) is
computed by whichever process asks first and read by the other: no figure has to be drawn in a
particular process. When its claims are done, the first process draws the figures the second has not
started yet, from the end of the list (:meth:`FigurePool.finish`), so the two finish together.
:meth:`FigurePool.finish` returns what :func:`ropeproof.paper_figures.make_all` would have, in report
order; an exception in the second process is raised in the first, so a bad figure is reported like
any other error. :meth:`FigurePool.cancel` stops the second process (an error or Ctrl-C in the first:
the staging directory is then discarded as a whole).
"""

from __future__ import annotations

import multiprocessing
import threading
from collections import deque
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ropeproof.theory.result_store import ResultStore

_WORKER: dict[str, Any] = {}
"""The second process's own state: its store, thread count and drawing settings (set once, at start)."""


def _start_worker(
    store_dir: str, out_dir: str, quick: bool, formats: tuple[str, ...], threads: int | None
) -> None:
    _WORKER.update(
        store=ResultStore(store_dir), out_dir=Path(out_dir), quick=quick, formats=formats, threads=threads
    )


def _draw_in_worker(name: str) -> list[str]:
    from ropeproof.paper_figures import draw_figure
    from ropeproof.paper_figures.style import save_figure
    from ropeproof.verify.runtime.threads import thread_policy

    with thread_policy(_WORKER["threads"]):
        result = draw_figure(name, _WORKER["quick"], _WORKER["store"])
        return [str(p) for p in save_figure(result, _WORKER["out_dir"], _WORKER["formats"])]


class FigurePool:
    """A second process drawing ``names`` (those in ``first`` first) into ``out_dir`` from the store in
    ``store.directory`` (module docstring); the figures left when the first process calls :meth:`finish`
    are drawn there."""

    def __init__(
        self,
        names: list[str],
        out_dir: Path,
        store: ResultStore,
        quick: bool,
        formats: tuple[str, ...],
        threads: int | None,
        first: Collection[str] = (),
    ) -> None:
        if store.directory is None:
            raise ValueError("the figure pool shares the store through its directory; this store has none")
        self.order = list(names)
        self.out_dir, self.store, self.quick, self.formats = Path(out_dir), store, quick, formats
        self.drawn_by_worker: list[str] = []
        """The figures the second process drew (in the order it finished them)."""
        self._todo = deque(sorted(self.order, key=lambda name: name not in first))  # stable: report order
        self._made: dict[str, list[Path]] = {}
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._idle = threading.Event()
        ctx = multiprocessing.get_context("spawn")
        init = (str(store.directory), str(out_dir), quick, formats, threads)
        self._pool = ctx.Pool(1, initializer=_start_worker, initargs=init)
        self._send_next()

    def _take(self, last: bool) -> str | None:
        with self._lock:
            if not self._todo or self._error is not None:
                return None
            return self._todo.pop() if last else self._todo.popleft()

    def _send_next(self) -> None:
        name = self._take(last=False)
        if name is None:
            self._idle.set()
            return
        self._pool.apply_async(
            _draw_in_worker,
            (name,),
            callback=lambda paths, name=name: self._drawn(name, paths),
            error_callback=self._failed,
        )

    def _drawn(self, name: str, paths: list[str]) -> None:
        with self._lock:
            self._made[name] = [Path(p) for p in paths]
            self.drawn_by_worker.append(name)
        self._send_next()

    def _failed(self, error: BaseException) -> None:
        with self._lock:
            self._error = error
        self._idle.set()

    def finish(self) -> dict[str, list[Path]]:
        """Draw here the figures the second process has not started, from the last one back; wait for
        the second process; return ``{name: [paths]}`` in report order (its exception re-raised here)."""
        from ropeproof.paper_figures import draw_figure
        from ropeproof.paper_figures.style import save_figure

        while (name := self._take(last=True)) is not None:
            paths = save_figure(draw_figure(name, self.quick, self.store), self.out_dir, self.formats)
            with self._lock:
                self._made[name] = paths
        self._idle.wait()
        self._pool.close()
        self._pool.join()
        if self._error is not None:
            raise self._error
        missing = [n for n in self.order if n not in self._made]
        if missing:  # pragma: no cover - every name is taken by one side or the other
            raise RuntimeError(f"figures {missing} were drawn by neither process")
        return {name: self._made[name] for name in self.order}

    def cancel(self) -> None:
        """Stop the second process at once (what it was drawing is left unfinished)."""
        self._pool.terminate()
        self._pool.join()
