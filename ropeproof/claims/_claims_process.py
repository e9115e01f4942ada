"""Your claims in a process of their own: loaded and run where nothing they do reaches the built-in claims.

``ropeproof check`` runs the built-in claims, the corrections and the figures in its own process, and
every claim from outside the package (``--claims`` files and modules, the ``ropeproof.claims`` entry
points) in a second one: a fresh interpreter (``multiprocessing``, ``spawn``: nothing is inherited) that
loads those sources and runs one claim at a time when asked (:class:`ClaimsProcess`). So:

- **nothing a claims file does reaches the built-in claims**: setting ``mpmath.mp.prec``, changing an
  environment variable the toolkit reads, seeding a generator, replacing a function, leaving a thread
  running, at import or while a check runs, happens in the second process; the first one never
  imports your code. Inside the second process each claim starts from the settings as loading left
  them (:func:`ropeproof.claims._registry.run_claim` puts back what a check changes), so one of your
  claims cannot change what the next one sees either;
- **every claim runs under a time limit** (``timeout``, ``check --claim-timeout``): a claim that has
  not answered in time becomes an ``error`` verdict naming the claim and the limit, its process is
  killed, and a fresh one is started for the next claim; a process that dies (a crash, a signal)
  makes the running claim an ``error`` the same way. Loading the sources has the same limit;
- **ending cannot hang**: :meth:`ClaimsProcess.close` asks the process to stop, and kills it when it
  has not ended within :data:`STOP_GRACE` seconds, so a non-daemon thread a claim left running cannot
  keep ``check`` from exiting;
- **a file's directory is importable** in the second process for its whole life (sibling modules
  import at load time and inside checks).

The first process sees each of these claims as a :class:`RemoteClaim`: its fields as data (parameters
and pins that are not plain data arrive as their text), its statements as formatted where it was
loaded, its source, and a check (:class:`RemoteCheck`) that asks the second process and returns the
:class:`~ropeproof.verify.measure._outcome.Outcome` it sends back. Both processes open the run's
:class:`~ropeproof.machinery._result_store.ResultStore` directory, so what your claims ask the store for is
shared with the built-in claims and figures as between any two processes of the run
(:mod:`ropeproof._check_pool`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import multiprocessing
import os
import pickle
import signal
import sys
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ropeproof.claims._loading import (
    ClaimLoadError,
    check_claims_file,
    claim_source,
    entry_point_claims,
    load_claims,
    merge_claims,
)
from ropeproof.claims._registry import Approx, CheckContext, Claim, Quick
from ropeproof.verify.measure._outcome import Outcome

DEFAULT_TIMEOUT = 600.0
"""Seconds one user claim may run (and loading the sources may take) before it is stopped: ``check
--claim-timeout``'s default."""

STARTUP_LIMIT = 300.0
"""Seconds the claims process may take to start (a fresh interpreter importing torch and the toolkit,
before any of your code runs); ``timeout`` counts from then."""

STOP_GRACE = 2.0
"""Seconds the claims process has to end after being asked to stop before it is killed."""

PLAIN_MODULES = frozenset(
    {"builtins", "numpy", "torch", "sympy", "mpmath", "fractions", "decimal", "datetime", "pathlib"}
    | {"ropeproof"}
)
"""Top-level packages whose objects travel between the processes as themselves (the first process has
them); an object of any other type (a class of your claims file) travels as its text (:func:`portable`)."""


def portable(value: Any) -> Any:
    """``value`` as something the first process can read: dicts, lists and tuples recursively,
    :class:`Quick` and :class:`Approx` kept, objects of :data:`PLAIN_MODULES` types that pickle kept
    as they are, anything else as ``str(value)``."""
    if isinstance(value, Quick):
        return Quick(portable(value.full), portable(value.quick))
    if isinstance(value, Approx):
        return value
    if type(value) is dict:
        return {k if _plain_key(k) else str(k): portable(v) for k, v in value.items()}
    if type(value) in (list, tuple):
        return type(value)(portable(v) for v in value)
    if type(value).__module__.split(".")[0] in PLAIN_MODULES:
        try:
            pickle.dumps(value)
        except Exception:
            return str(value)
        return value
    return str(value)


def _plain_key(key: Any) -> bool:
    return key is None or type(key) in (str, int, float, bool)


# ------------------------------------------------------------------------------- the first process


class RemoteCheck:
    """The check of a :class:`RemoteClaim`: asks ``process`` to run claim ``claim_id`` and returns the
    :class:`Outcome` it sends back (an ``error`` on a timeout or a dead process). ``__module__`` is the
    module that defines the real check (so a claim's origin reads the same in both processes)."""

    def __init__(self, process: ClaimsProcess, claim_id: str, module: str) -> None:
        self._process = weakref.proxy(process)
        self.claim_id = claim_id
        self.__module__ = module

    def __call__(self, ctx: CheckContext) -> Outcome:
        return self._process.outcome(self.claim_id, ctx)

    def __repr__(self) -> str:
        return f"RemoteCheck({self.claim_id!r}, module={self.__module__!r})"


@dataclass(frozen=True)
class RemoteClaim(Claim):
    """A claim loaded and run in the claims process (module docstring): ``statements`` holds the
    statement as formatted there, ``(full, quick)``; ``source`` where it was loaded from."""

    statements: tuple[str, str] = ("", "")
    source: str = ""

    @property
    def builtin(self) -> bool:
        return False

    def statement_for(self, quick: bool) -> str:
        return self.statements[1 if quick else 0]


@dataclass(frozen=True)
class _Settings:
    """What the claims process needs to build a claim's :class:`CheckContext`."""

    store_dir: str | None
    device: torch.device
    dtype: torch.dtype
    quick: bool
    certified: bool
    threads: int


class ClaimsProcess:
    """The second process of the module docstring, holding the claims of ``sources`` (files or module
    names, as ``check --claims`` takes them) and of ``entry_points`` (``importlib.metadata.EntryPoint``
    s, e.g. :func:`~ropeproof.claims._loading.declared_entry_points`). :attr:`claims` lists them as
    :class:`RemoteClaim` s; running one (``run_claim`` on it, or :meth:`outcome`) asks the process. Use
    it as a context manager, or call :meth:`close`.

    Raises :class:`ClaimLoadError` (one line) when a source cannot be loaded or loading takes longer
    than ``timeout`` seconds."""

    def __init__(
        self,
        sources: Sequence[str | Path],
        entry_points: Sequence[Any] = (),
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if not (isinstance(timeout, int | float) and timeout > 0 and not math.isnan(timeout)):
            raise ValueError(f"timeout={timeout!r}; accepted: a number of seconds > 0")
        self.sources = tuple(_checked_source(s) for s in sources)
        self.entry_points = tuple(entry_points)
        self.timeout = float(timeout)
        self.starts = 0
        """How many processes were started (one, plus one after each claim that was stopped)."""
        self._proc: Any = None
        self._conn: Any = None
        self._closer: weakref.finalize | None = None
        self.claims: list[RemoteClaim] = []
        try:
            self.claims = self._start()
        except BaseException:
            self.close()
            raise

    # -- lifetime

    def _start(self) -> list[RemoteClaim]:
        ctx = multiprocessing.get_context("spawn")
        here, there = ctx.Pipe()
        args = (there, self.sources, self.entry_points, os.getpid())
        proc = ctx.Process(target=_serve, args=args, name="ropeproof-claims", daemon=False)
        proc.start()
        there.close()
        self._proc, self._conn = proc, here
        self._closer = weakref.finalize(self, _stop, proc, here)  # also at interpreter exit
        self.starts += 1
        what = " and ".join([*map(str, self.sources), *(["the entry points"] if self.entry_points else [])])
        started = self._receive(STARTUP_LIMIT)  # the interpreter and the toolkit: not your code's time
        if started is _TIMED_OUT or started is _DEAD:
            why = f"did not start within {STARTUP_LIMIT:g} s" if started is _TIMED_OUT else self._exit_text()
            self._kill()
            raise ClaimLoadError(f"the process to load the claims of {what} failed ({why})")
        reply = self._receive(self.timeout)
        if reply is _TIMED_OUT:
            self._kill()
            raise ClaimLoadError(
                f"loading the claims of {what} did not finish within {self.timeout:g} s (--claim-timeout)"
            )
        if reply is _DEAD:
            why = self._exit_text()
            self._kill()
            raise ClaimLoadError(f"the process loading the claims of {what} ended ({why})")
        kind, payload = reply
        if kind in ("load-error", "unreadable"):
            self._kill()
            raise ClaimLoadError(payload if kind == "load-error" else f"the claims of {what}: {payload}")
        return [self._remote(fields) for fields in payload]

    def _remote(self, fields: dict[str, Any]) -> RemoteClaim:
        module = fields.pop("check_module")
        return RemoteClaim(check=RemoteCheck(self, fields["id"], module), **fields)

    def close(self) -> None:
        """Ask the process to stop; kill it when it has not ended within :data:`STOP_GRACE` seconds."""
        if self._closer is not None:
            self._closer()

    def _kill(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
        if self._proc is not None:
            self._proc.join(STOP_GRACE)
        if self._closer is not None:
            self._closer.detach()
        if self._conn is not None:
            self._conn.close()
        self._closer = self._conn = None

    def _exit_text(self) -> str:
        self._proc.join(STOP_GRACE)
        code = self._proc.exitcode
        if code is not None and code < 0:
            return f"killed by signal {signal.Signals(-code).name}"
        return f"exit code {code}"

    def __enter__(self) -> ClaimsProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- running

    def _receive(self, timeout: float) -> Any:
        """The next message, :data:`_TIMED_OUT` after ``timeout`` seconds, or :data:`_DEAD` when the
        process has gone (its end of the pipe closed)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return _TIMED_OUT
            if self._conn.poll(min(left, 3600.0)):
                try:
                    return self._conn.recv()
                except (EOFError, OSError):
                    return _DEAD
                except Exception as exc:  # an answer this process cannot unpickle
                    return ("unreadable", f"{type(exc).__name__}: {exc}")

    def outcome(self, claim_id: str, ctx: CheckContext) -> Outcome:
        """Run the claim ``claim_id`` in the process (a fresh one if the last was stopped) with ``ctx``'s
        settings; its outcome, or an ``error`` outcome when it timed out or the process died."""
        from ropeproof.verify.kernel._threads import resolve_threads

        if self._conn is None:
            try:
                self._start()
            except ClaimLoadError as exc:
                return Outcome("error", detail=f"the claims process could not be started again: {exc}")
        store_dir = ctx.store.directory
        settings = _Settings(
            None if store_dir is None else str(store_dir),
            ctx.device,
            ctx.dtype,
            ctx.quick,
            ctx.certified,
            resolve_threads(),
        )
        try:
            self._conn.send(("run", claim_id, settings))
        except (OSError, ValueError):
            reply = _DEAD
        else:
            reply = self._receive(self.timeout)
        if reply is _TIMED_OUT:
            self._kill()
            return Outcome(
                "error",
                detail=f"TimeoutError: claim {claim_id} did not finish within {self.timeout:g} s "
                f"(check --claim-timeout {self.timeout:g}); its process was stopped",
            )
        if reply is _DEAD:
            why = self._exit_text()
            self._kill()
            return Outcome("error", detail=f"the claims process ended ({why}) while claim {claim_id} ran")
        kind, payload = reply
        if kind != "result":
            return Outcome("error", detail=f"the answer for claim {claim_id} could not be read ({payload})")
        return payload


_TIMED_OUT = object()
_DEAD = object()


def _stop(proc: Any, conn: Any) -> None:
    """Ask ``proc`` to stop, then kill it if it has not ended within :data:`STOP_GRACE` seconds."""
    with contextlib.suppress(OSError, ValueError):
        conn.send(("stop", None, None))
    proc.join(STOP_GRACE)
    if proc.is_alive():
        proc.kill()
        proc.join(STOP_GRACE)
    conn.close()


def _checked_source(spec: str | Path) -> str:
    """``spec`` as the claims process will load it (a file as an absolute path), refusing here, without
    importing anything, what cannot be a file or a module name (``ClaimLoadError``, one line)."""
    text = str(spec)
    path = Path(text).expanduser()
    if text.endswith(".py") or path.exists():
        check_claims_file(text, path)
        return str(path.resolve())
    parts = text.split(".")
    if not all(p.isidentifier() for p in parts) or importlib.util.find_spec(parts[0]) is None:
        raise ClaimLoadError(f"--claims {text}: no such file, and no importable module of that name")
    return text


# ------------------------------------------------------------------------------ the second process


def _fields(c: Claim) -> dict[str, Any]:
    """``c`` as data the first process can read (:func:`portable`)."""
    return {
        "id": c.id,
        "statement": c.statement,
        "reference": c.reference,
        "params": portable(c.params),
        "expected": c.expected,
        "quick": c.quick,
        "pins": portable(c.pins),
        "section": c.section,
        "meaning": c.meaning,
        "report_figures": tuple(c.report_figures),
        "statements": (c.statement_for(False), c.statement_for(True)),
        "source": claim_source(c),
        "check_module": str(getattr(c.check, "__module__", None) or "?"),
    }


def _portable_outcome(outcome: Outcome) -> Outcome:
    return Outcome(
        outcome.verdict,
        portable(dict(outcome.figures)),
        outcome.key_figure if isinstance(outcome.key_figure, str) else None,
        portable(outcome.counterexample),
        str(outcome.detail),
        bool(outcome.certified),
    )


def _serve(conn: Any, sources: tuple[str, ...], entry_points: tuple[Any, ...], parent: int) -> None:
    """The claims process: load, send the claims, then run the claims asked for until told to stop; end
    with ``os._exit`` so that threads a claim left running do not hold the process open."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the first process's to handle
    _die_with_parent(parent)
    try:
        conn.send(("started", None))
        try:
            loaded = [c for spec in sources for c in load_claims(spec, keep_path=True)]
            claims = merge_claims([*loaded, *entry_point_claims(entry_points)])
            conn.send(("loaded", [_fields(c) for c in claims]))
        except ClaimLoadError as exc:
            conn.send(("load-error", str(exc)))
            return
        except Exception as exc:
            conn.send(("load-error", f"loading the claims raised {type(exc).__name__}: {exc}"))
            return
        _run_requests(conn, {c.id: c for c in claims})
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(0)


def _die_with_parent(parent: int) -> None:
    """On Linux, have the kernel kill this process when the first one dies (``SIGKILL``ed, or ended by
    a signal it does not handle, e.g. a ``timeout`` command's ``SIGTERM``), so a claim that never
    returns is not left running; elsewhere the closed pipe ends it once its claim returns. (The kernel
    acts when the *thread* that started the process ends: ``check`` starts it from its main thread.)"""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the first process died before the request took effect
        os._exit(0)


def _run_requests(conn: Any, by_id: dict[str, Claim]) -> None:  # pragma: no cover - a child
    from ropeproof.claims._registry import run_claim
    from ropeproof.machinery._result_store import ResultStore
    from ropeproof.verify.kernel._threads import thread_policy

    stores: dict[str | None, ResultStore] = {}
    while True:
        try:
            kind, claim_id, settings = conn.recv()
        except (EOFError, OSError):
            return
        if kind == "stop":
            return
        store = stores.setdefault(settings.store_dir, ResultStore(settings.store_dir))
        ctx = CheckContext(settings.device, settings.dtype, settings.quick, settings.certified, store=store)
        with thread_policy(settings.threads):
            result = run_claim(by_id[claim_id], ctx)
        outcome = _portable_outcome(result.outcome)
        try:
            conn.send(("result", outcome))
        except Exception as exc:  # pickling what portable() kept failed after all
            conn.send(("result", Outcome("error", detail=f"the outcome could not be sent back: {exc}")))


__all__ = ["DEFAULT_TIMEOUT", "ClaimsProcess", "RemoteCheck", "RemoteClaim", "portable"]
