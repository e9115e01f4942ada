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
order. A figure whose drawing raises (a bug) is not drawn, whichever process met it: its traceback goes
to :attr:`FigurePool.failed` and the other figures and the claims' results are kept, so ``check`` can
write its report and say which figure failed (:func:`draw_or_fail`, also used by :func:`draw_figures`
when one process draws them all). A failure of the pool itself is raised in the first process.
:meth:`FigurePool.cancel` stops the second process (an error or Ctrl-C in the first: the staging
directory is then discarded as a whole).
"""

from __future__ import annotations

import multiprocessing
import threading
import traceback
from collections import deque
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ropeproof.theory.result_store import ResultStore

_WORKER: dict[str, Any] = {}
"""The second process's own state: its store, thread count and drawing settings (set once, at start)."""


def _start_worker(
    store_dir: str,
    out_dir: str,
    quick: bool,
    formats: tuple[str, ...],
    threads: int | None,
    cache: tuple[str, str] | None = None,
) -> None:
    from ropeproof.theory.result_cache import ResultCache

    results = None if cache is None else ResultCache(cache[0], version=cache[1])
    _WORKER.update(
        store=ResultStore(store_dir, cache=results),
        out_dir=Path(out_dir),
        quick=quick,
        formats=formats,
        threads=threads,
    )


def draw_or_fail(
    name: str, quick: bool, store: ResultStore, out_dir: Path, formats: tuple[str, ...]
) -> list[Path] | str:
    """The files of figure ``name`` drawn from ``store`` and saved in ``out_dir``, or, when drawing or
    saving it raises an :class:`Exception`, that exception's traceback as text (``KeyboardInterrupt``
    and other non-``Exception`` errors propagate)."""
    from ropeproof.paper_figures import draw_figure
    from ropeproof.paper_figures.style import save_figure

    try:
        return save_figure(draw_figure(name, quick, store), out_dir, formats)
    except Exception:
        return traceback.format_exc()


def draw_figures(
    names: list[str], out_dir: Path, store: ResultStore, quick: bool, formats: tuple[str, ...]
) -> tuple[dict[str, list[Path]], dict[str, str]]:
    """``names`` drawn in this process, in order: ``({name: files}, {name: traceback})`` (the figures
    drawn and those whose drawing raised, :func:`draw_or_fail`)."""
    made: dict[str, list[Path]] = {}
    failed: dict[str, str] = {}
    for name in names:
        result = draw_or_fail(name, quick, store, Path(out_dir), formats)
        if isinstance(result, str):
            failed[name] = result
        else:
            made[name] = result
    return made, failed


def _draw_in_worker(name: str) -> list[str] | str:
    from ropeproof.verify.kernel.threads import thread_policy

    with thread_policy(_WORKER["threads"]):
        result = draw_or_fail(
            name, _WORKER["quick"], _WORKER["store"], _WORKER["out_dir"], _WORKER["formats"]
        )
        return result if isinstance(result, str) else [str(p) for p in result]


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
        self.failed: dict[str, str] = {}
        """The figures whose drawing raised, in either process, with the traceback (:func:`draw_or_fail`)."""
        self._todo = deque(sorted(self.order, key=lambda name: name not in first))  # stable: report order
        self._made: dict[str, list[Path]] = {}
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._idle = threading.Event()
        ctx = multiprocessing.get_context("spawn")
        cache = None if store.cache is None else (str(store.cache.directory), store.cache.version)
        init = (str(store.directory), str(out_dir), quick, formats, threads, cache)
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

    def _record(self, name: str, result: list[Path] | str) -> None:
        """File the outcome of :func:`draw_or_fail` for ``name`` (caller holds the lock)."""
        if isinstance(result, str):
            self.failed[name] = result
        else:
            self._made[name] = result

    def _drawn(self, name: str, paths: list[str] | str) -> None:
        with self._lock:
            self._record(name, paths if isinstance(paths, str) else [Path(p) for p in paths])
            if not isinstance(paths, str):
                self.drawn_by_worker.append(name)
        self._send_next()

    def _failed(self, error: BaseException) -> None:
        with self._lock:
            self._error = error
        self._idle.set()

    def finish(self) -> dict[str, list[Path]]:
        """Draw here the figures the second process has not started, from the last one back; wait for
        the second process; return ``{name: [paths]}`` of the figures drawn, in report order (those
        whose drawing raised are in :attr:`failed`; a failure of the pool itself is re-raised here)."""
        while (name := self._take(last=True)) is not None:
            result = draw_or_fail(name, self.quick, self.store, self.out_dir, self.formats)
            with self._lock:
                self._record(name, result)
        self._idle.wait()
        self._pool.close()
        self._pool.join()
        if self._error is not None:
            raise self._error
        missing = [n for n in self.order if n not in self._made and n not in self.failed]
        if missing:  # pragma: no cover - every name is taken by one side or the other
            raise RuntimeError(f"figures {missing} were drawn by neither process")
        return {name: self._made[name] for name in self.order if name in self._made}

    def cancel(self) -> None:
        """Stop the second process at once (what it was drawing is left unfinished)."""
        self._pool.terminate()
        self._pool.join()
