"""The claims and figures of ``ropeproof check`` shared by two processes that share the run's store.

The first process is ``check`` itself. A second one (a ``multiprocessing`` pool of one fresh interpreter,
``spawn``: nothing is inherited) takes work from the same list, under the parent's thread policy: the
built-in claims (:attr:`~ropeproof.claims._registry.Claim.builtin`, found again by id in its own
registry and run by :func:`~ropeproof.claims._registry.run_claim` in a :class:`CheckContext` with the
first process's device, dtype and flags) and the figures. Both take the next task from the front of one
list, sorted longest first by the seconds each task took in earlier runs
(:mod:`ropeproof._work_order`), so the two finish close together; a claim of yours (``--claims``, a
plugin) and a job of the first process's own (``here_jobs``: ``check``'s corrections) run in the first
process only, taken in the same order, so they overlap the second process's work instead of following it.
Tasks that share a costly first use (``second_first``: those that import ``transformers``) are taken by
the second process before any other, and by the first only when nothing else is left, while they are at
most half the expected work: then one process pays for that import instead of both.

The second process can be started before the work is known (:func:`start_second_process`, which
``check`` calls first thing when every claim is built in): it imports the built-in claims (and the
figures' modules) while the first is still importing its own, and :class:`CheckPool` then hands it the
run's settings before its first task. Both open the same
:class:`~ropeproof.machinery._result_store.ResultStore` directory, so a result that two tasks need (the
multi-hop length study, the trained models' profiles, ...) is computed by whichever process asks first
and read by the other: no task has to run in a particular process.

:meth:`CheckPool.finish` returns the claims' results and the figures drawn, in report order, whoever
ran them; a claim's result is the same object either way
(:class:`~ropeproof.claims._registry.ClaimResult` with the first process's claim). A claim whose result
cannot be sent back (an outcome that does not pickle) is run again in the first process. A figure whose
drawing raises (a bug) is not drawn, whichever process met it: its traceback goes to
:attr:`CheckPool.failed` and the other figures and the claims' results are kept, so ``check`` can write
its report and say which figure failed (:func:`draw_or_fail`, also used by :func:`draw_figures` when one
process draws them all). A failure of the pool itself is raised in the first process.
:meth:`CheckPool.cancel` stops the second process (an error or Ctrl-C in the first: the staging
directory is then discarded as a whole).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ropeproof.machinery._result_store import ResultStore

if TYPE_CHECKING:
    import multiprocessing.pool

    from ropeproof.claims._registry import CheckContext, Claim, ClaimResult

_WORKER: dict[str, Any] = {}
"""The second process's own state: its store, thread count, drawing settings and check context (set
once, at start; the context and the claims on first use)."""


@dataclass(frozen=True)
class Task:
    """One piece of a check's work: a claim (``kind == "claim"``, ``name`` its id) or a figure."""

    kind: str
    """``"claim"``, ``"figure"``, or another kind for one of :class:`CheckPool`'s ``here_jobs``
    (``"correction"``)."""
    name: str
    source: str = ""
    """A claim's check as ``module.qualname``: the second process runs the claim only when its own
    registry's claim of that id has this check (else it sends the claim back to the first)."""

    @property
    def key(self) -> str:
        """``"KIND:NAME"`` (``"claim:ID"``, ``"figure:NAME"``, ...): how :mod:`ropeproof._work_order`
        records its seconds."""
        return f"{self.kind}:{self.name}"


def _warm_up(figures: bool) -> None:
    """The second process's first step when it is started early (:func:`start_second_process`): import
    the built-in claims (and, with ``figures``, the figures' modules), which its tasks import anyway."""
    try:
        from ropeproof.claims import builtin_claim_sets

        _WORKER["claims"] = {c.id: c for claim_set in builtin_claim_sets() for c in claim_set}
        if figures:
            import ropeproof.paper_figures  # noqa: F401
    except Exception:  # an initializer that raises is restarted for ever: the first task reports it
        _WORKER.pop("claims", None)


def start_second_process(figures: bool) -> multiprocessing.pool.Pool:
    """A second process for a :class:`CheckPool` (its ``process``), started now: a fresh interpreter
    (``spawn``: nothing is inherited) that imports the built-in claims, and with ``figures`` the figures'
    modules, while the caller goes on; it takes no task before the pool hands it the run's settings.
    Whoever starts it stops it (:meth:`CheckPool.cancel`, or ``terminate`` when no pool takes it)."""
    ctx = multiprocessing.get_context("spawn")
    return ctx.Pool(1, initializer=_warm_up, initargs=(figures,))


def _start_worker(
    store_dir: str,
    out_dir: str,
    quick: bool,
    formats: tuple[str, ...],
    threads: int | None,
    cache: tuple[str, str] | None = None,
    context: tuple[str, str, bool] | None = None,
) -> None:
    from ropeproof.machinery._result_cache import ResultCache

    results = None if cache is None else ResultCache(cache[0], version=cache[1])
    _WORKER.update(
        store=ResultStore(store_dir, cache=results),
        out_dir=Path(out_dir),
        quick=quick,
        formats=formats,
        threads=threads,
        context=context,
    )


def draw_or_fail(
    name: str, quick: bool, store: ResultStore, out_dir: Path, formats: tuple[str, ...]
) -> list[Path] | str:
    """The files of figure ``name`` drawn from ``store`` and saved in ``out_dir`` (and kept in the store's
    cache of earlier runs, :func:`~ropeproof._task_cache.recorded_figure`), or, when drawing or
    saving it raises an :class:`Exception`, that exception's traceback as text (``KeyboardInterrupt``
    and other non-``Exception`` errors propagate)."""
    from ropeproof._task_cache import recorded_figure

    try:
        return recorded_figure(name, quick, store, out_dir, formats)
    except Exception:
        return traceback.format_exc()


def draw_figures(
    names: list[str],
    out_dir: Path,
    store: ResultStore,
    quick: bool,
    formats: tuple[str, ...],
    seconds: dict[str, float] | None = None,
) -> tuple[dict[str, list[Path]], dict[str, str]]:
    """``names`` drawn in this process, in order: ``({name: files}, {name: traceback})`` (the figures
    drawn and those whose drawing raised, :func:`draw_or_fail`); the seconds each took go into
    ``seconds`` (as ``"figure:NAME"``) when it is given."""
    made: dict[str, list[Path]] = {}
    failed: dict[str, str] = {}
    for name in names:
        start = time.perf_counter()
        result = draw_or_fail(name, quick, store, Path(out_dir), formats)
        if seconds is not None:
            seconds[f"figure:{name}"] = time.perf_counter() - start
        if isinstance(result, str):
            failed[name] = result
        else:
            made[name] = result
    return made, failed


def _worker_context() -> CheckContext:
    """The second process's :class:`CheckContext` (built once), on the first process's settings."""
    if "check_context" not in _WORKER:
        from ropeproof.claims._registry import CheckContext
        from ropeproof.verify.kernel._devices import resolve_device, resolve_dtype

        device, dtype, certified = _WORKER["context"]
        _WORKER["check_context"] = CheckContext(
            resolve_device(device),
            resolve_dtype(dtype),
            quick=_WORKER["quick"],
            certified=certified,
            store=_WORKER["store"],
        )
    return _WORKER["check_context"]


def check_source(claim: Claim) -> str:
    """``module.qualname`` of ``claim``'s check (how the two processes tell that they hold the same claim)."""
    check = claim.check
    return f"{getattr(check, '__module__', '')}.{getattr(check, '__qualname__', '')}"


def _worker_claim(task: Task) -> Claim | None:
    """The second process's own built-in claim of ``task``, or ``None`` when it has none with that id and
    check (a claim made or replaced in the first process only)."""
    if "claims" not in _WORKER:
        from ropeproof.claims import builtin_claim_sets

        _WORKER["claims"] = {c.id: c for claim_set in builtin_claim_sets() for c in claim_set}
    claim = _WORKER["claims"].get(task.name)
    return claim if claim is not None and check_source(claim) == task.source else None


def _run_in_worker(task: Task, defer: bool) -> tuple[bool, Any, float]:
    """Run ``task`` in the second process: ``(busy, result, seconds)``, where a figure's result is its paths
    as text or a traceback (:func:`draw_or_fail`) and a claim's is its pickled
    :class:`~ropeproof.verify.measure._outcome.Outcome` (``None`` when the outcome does not pickle: the
    first process then runs the claim itself, as it does when this process has no such claim). With
    ``defer``, a task that needs a value the first process is computing stops and sends ``busy`` true (and
    no result) instead of waiting."""
    from ropeproof.machinery._result_store import ValueBusy
    from ropeproof.verify.kernel._threads import thread_policy

    start = time.perf_counter()
    store: ResultStore = _WORKER["store"]
    with thread_policy(_WORKER["threads"]), store.deferring() if defer else contextlib.nullcontext():
        try:
            if task.kind == "figure":
                out_dir, formats = _WORKER["out_dir"], _WORKER["formats"]
                result = draw_or_fail(task.name, _WORKER["quick"], store, out_dir, formats)
                sent_paths = result if isinstance(result, str) else [str(p) for p in result]
                return False, sent_paths, time.perf_counter() - start
            from ropeproof._task_cache import recorded_claim

            claim = _worker_claim(task)
            if claim is None:
                return False, None, 0.0
            ran = recorded_claim(claim, _worker_context())
        except ValueBusy:
            return True, None, time.perf_counter() - start
    try:
        sent: bytes | None = pickle.dumps(ran.outcome)
    except Exception:  # an outcome holding something that does not pickle: run it in the first process
        sent = None
    return False, sent, ran.seconds


class CheckPool:
    """A second process sharing a check's claims and figures with this one (module docstring).

    ``claims`` are run here or there (those for which ``shareable(claim)`` is false, here only);
    ``figures`` are drawn into ``out_dir`` from the store in ``store.directory``. ``seconds`` (task key
    to seconds, :attr:`Task.key`) orders the work, longest first; a task it does not name counts as
    ``default_seconds``. ``context`` is the first process's ``(device, dtype, certified)`` as text, for
    the claims the second one runs. ``on_claim`` is called with each claim's result as it arrives (in
    this process, from any thread: a progress bar). ``here_jobs`` are this process's own jobs (a task
    key ``"KIND:NAME"`` of a kind other than ``claim`` and ``figure``, to a function of no arguments),
    ordered with the rest by ``seconds`` and run here only; they wait for a value the other process is
    computing instead of deferring. ``process`` is a second
    process from :func:`start_second_process` (default: one started now). ``second_first`` are task keys
    that share a costly first use (importing ``transformers`` for the trained models): while their
    expected seconds add up to at most half of all the tasks', the second process takes them before any
    other and this one only when nothing else is left, so one process pays that cost instead of both
    (:attr:`kept_apart` says whether it applies)."""

    def __init__(
        self,
        claims: list[Claim],
        figures: list[str],
        out_dir: Path,
        store: ResultStore,
        quick: bool,
        formats: tuple[str, ...],
        threads: int | None,
        *,
        run_here: Callable[[Claim], ClaimResult],
        context: tuple[str, str, bool] = ("cpu", "float64", False),
        seconds: Mapping[str, float] | None = None,
        default_seconds: float = 1.0,
        shareable: Callable[[Claim], bool] = lambda c: c.builtin,
        on_claim: Callable[[ClaimResult], None] | None = None,
        here_jobs: Mapping[str, Callable[[], None]] | None = None,
        process: multiprocessing.pool.Pool | None = None,
        second_first: Collection[str] = (),
    ) -> None:
        if store.directory is None:
            raise ValueError("the check pool shares the store through its directory; this store has none")
        self.claims = {c.id: c for c in claims}
        self.figure_order = list(figures)
        self.out_dir, self.store, self.quick, self.formats = Path(out_dir), store, quick, formats
        self.run_here, self.on_claim = run_here, on_claim
        self._dtype = context[1]
        self.ran_by_worker: list[Task] = []
        """The tasks the second process finished (in the order it finished them)."""
        self.seconds: dict[str, float] = {}
        """Seconds each task took, by :attr:`Task.key`, whichever process ran it."""
        self.failed: dict[str, str] = {}
        """The figures whose drawing raised, in either process, with the traceback (:func:`draw_or_fail`)."""
        self.here_jobs = dict(here_jobs or {})
        if any(key.split(":", 1)[0] in ("claim", "figure") or ":" not in key for key in self.here_jobs):
            raise ValueError(f"here_jobs keys are 'KIND:NAME' of another kind; got {list(self.here_jobs)}")
        tasks = [Task("claim", c.id, check_source(c)) for c in claims] + [Task("figure", n) for n in figures]
        tasks += [Task(*key.split(":", 1)) for key in self.here_jobs]
        known = dict(seconds or {})
        self.order = sorted(tasks, key=lambda t: -known.get(t.key, default_seconds))  # stable: report order
        grouped = {t.key for t in tasks} & set(second_first)
        expected = {t.key: known.get(t.key, default_seconds) for t in tasks}
        self.kept_apart = bool(grouped) and 2 * sum(expected[k] for k in grouped) <= sum(expected.values())
        """Whether the second process takes the ``second_first`` tasks first (they are at most half the
        expected work)."""
        self._second_first = grouped if self.kept_apart else set()
        self._here_only = {c.id for c in claims if not shareable(c)}
        self._deferred: set[Task] = set()  # tasks that met a busy value once: the next time, they wait
        self._todo = deque(self.order)
        self._results: dict[str, ClaimResult] = {}
        self._made: dict[str, list[Path]] = {}
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._sent: set[Task] = set()  # tasks sent to the second process whose results have not come back
        ctx = multiprocessing.get_context("spawn")
        cache = None if store.cache is None else (str(store.cache.directory), store.cache.version)
        init = (str(store.directory), str(out_dir), quick, formats, threads, cache, context)
        if process is None:
            self._pool = ctx.Pool(1, initializer=_start_worker, initargs=init)
        else:  # one process takes its jobs in order: the settings arrive before the first task
            self._pool = process
            process.apply_async(_start_worker, init, error_callback=self._failed)
        self._send_next()

    def _theirs(self, task: Task) -> bool:
        """Whether the second process may run ``task`` (a figure, or a claim it shares)."""
        return task.kind == "figure" or (task.kind == "claim" and task.name not in self._here_only)

    def _take(self, here: bool) -> Task | None:
        """The next task for this process (``here``) or the second: the first of the list that it may
        run, or ``None``; of those, the second process takes a ``second_first`` task before any other,
        and this process any other before one of them (when :attr:`kept_apart`)."""
        with self._lock:
            if self._error is not None:
                return None
            allowed = [t for t in self._todo if here or self._theirs(t)]
            preferred = [t for t in allowed if (t.key in self._second_first) != here]
            task = next(iter(preferred or allowed), None)
            if task is not None:
                self._todo.remove(task)
            return task

    def _send_next(self) -> None:
        task = self._take(here=False)
        with self._lock:
            if task is None:
                if not self._sent:  # the second process holds no task: it has finished its share
                    self._idle.set()
                return
            self._sent.add(task)
        self._pool.apply_async(
            _run_in_worker,
            (task, task not in self._deferred),
            callback=lambda done, task=task: self._returned(task, *done),
            error_callback=self._failed,
        )

    def _claim_done(self, result: ClaimResult) -> None:
        with self._lock:
            self._results[result.claim.id] = result
            self.seconds[f"claim:{result.claim.id}"] = result.seconds
        if self.on_claim is not None:
            self.on_claim(result)

    def _figure_done(self, name: str, result: list[Path] | str, seconds: float) -> None:
        with self._lock:
            if isinstance(result, str):
                self.failed[name] = result
            else:
                self._made[name] = result
            self.seconds[f"figure:{name}"] = seconds

    def _defer(self, task: Task) -> None:
        """Put ``task``, which met a value the other process is computing, at the end of the list; the
        next time it is taken it waits for the value."""
        with self._lock:
            self._deferred.add(task)
            self._todo.append(task)

    def _returned(self, task: Task, busy: bool, result: Any, seconds: float) -> None:
        with self._lock:
            self._sent.discard(task)
        if busy:
            self._defer(task)
            self._send_next()
            return
        if task.kind == "figure":
            paths = result if isinstance(result, str) else [Path(p) for p in result]
            self._figure_done(task.name, paths, seconds)
        elif result is None:  # its outcome could not be sent: run it here
            with self._lock:
                self._todo.appendleft(task)
                self._here_only.add(task.name)
        else:
            from ropeproof.claims._registry import ClaimResult

            outcome = pickle.loads(result)
            self._claim_done(ClaimResult(self.claims[task.name], outcome, seconds, self.quick, self._dtype))
        if task.kind == "figure" or result is not None:
            with self._lock:
                self.ran_by_worker.append(task)
        self._send_next()

    def _failed(self, error: BaseException) -> None:
        with self._lock:
            self._error = error
        self._idle.set()

    def _run(self, task: Task) -> None:
        from ropeproof.machinery._result_store import ValueBusy

        start = time.perf_counter()
        if task.key in self.here_jobs:  # never deferred: it waits for what the other process computes
            self.here_jobs[task.key]()
            with self._lock:
                self.seconds[task.key] = time.perf_counter() - start
            return
        try:
            with self.store.deferring() if task not in self._deferred else contextlib.nullcontext():
                if task.kind == "claim":
                    self._claim_done(self.run_here(self.claims[task.name]))
                    return
                result = draw_or_fail(task.name, self.quick, self.store, self.out_dir, self.formats)
        except ValueBusy:
            self._defer(task)
            return
        self._figure_done(task.name, result, time.perf_counter() - start)

    def finish(self) -> tuple[list[ClaimResult], dict[str, list[Path]]]:
        """Run here the tasks left, from the front of the list, until none is; wait for the second
        process (running any claim it could not send back); return the claims' results (in the order of
        ``claims``) and ``{name: [paths]}`` of the figures drawn (in the order of ``figures``; those whose
        drawing raised are in :attr:`failed`). A failure of the pool itself is re-raised here. The second
        process is then stopped, not left to tear its interpreter down: its results and the values it
        stored are all in by then, and the teardown's garbage collection over torch's and transformers'
        objects would only be waited for."""
        while True:
            while (task := self._take(here=True)) is not None:
                self._run(task)
            self._idle.wait()
            with self._lock:
                left = bool(self._todo) and self._error is None
            if not left:
                break
        self._pool.terminate()  # every task has come back: nothing of the second process is left to finish
        self._pool.join()
        if self._error is not None:
            raise self._error
        missing = [
            t.key
            for t in self.order
            if t.key not in self.here_jobs and t.name not in self._results and t.name not in self._made
        ]
        missing = [k for k in missing if k.removeprefix("figure:") not in self.failed]
        if missing:  # pragma: no cover - every task is taken by one side or the other
            raise RuntimeError(f"tasks {missing} were run by neither process")
        results = [self._results[cid] for cid in self.claims]
        return results, {name: self._made[name] for name in self.figure_order if name in self._made}

    def cancel(self) -> None:
        """Stop the second process at once (what it was running is left unfinished)."""
        self._pool.terminate()
        self._pool.join()
