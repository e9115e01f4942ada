"""Sending a run's prompts: only those without a reply in the log, each reply logged as it arrives.

- Providers that may run concurrently (remote endpoints, Python callables) get ``concurrency`` worker
  threads; local HF models get batches of equal-length prompts; anything else goes one by one.
- **Ctrl-C** stops sending new requests; the requests in flight are waited for and logged (a second
  Ctrl-C abandons them: at most the requests in flight are lost), then ``KeyboardInterrupt`` is
  raised again for the caller.
- A :class:`~ropeproof.verify.studies.llm_eval._providers.ProviderError` (a refusal for good) stops the run
and
  is raised once the requests in flight are done; so does a streak of ``max_failures`` consecutive
  failed requests (:class:`FailureStreakError`: the server is down or the callable is broken).
- Every text written to the log goes through the provider's redactor, and a reply is logged, parsed
  and scored to its first :data:`REPLY_CHARS` characters (``reply_chars`` then records its length), so
  the summaries, which re-read the log, agree with it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ropeproof.machinery._errors import RopeproofError
from ropeproof.machinery._validate import integer
from ropeproof.verify.studies.llm_eval._parsing import parse_reply
from ropeproof.verify.studies.llm_eval._plan import Prompt
from ropeproof.verify.studies.llm_eval._providers import Provider, Redactor, Reply
from ropeproof.verify.studies.llm_eval._run_log import RunLog

MAX_FAILURES = 10
"""Consecutive failed requests that stop a run (:class:`FailureStreakError`)."""
TEXT_FIELDS = ("prompt", "reply", "parsed", "error", "model")
REPLY_CHARS = 1 << 16
"""The most characters of a reply that are logged and read (65,536)."""


class FailureStreakError(RopeproofError):
    """``max_failures`` requests in a row ended without a reply."""


@dataclass
class RunStats:
    """What one call of :func:`run_prompts` did: prompts ``pending`` at the start, requests ``sent``,
    replies ``answered`` and requests ``failed`` (no usable reply)."""

    pending: int = 0
    sent: int = 0
    answered: int = 0
    failed: int = 0


def pending_prompts(plan: Sequence[Prompt], log: RunLog) -> list[Prompt]:
    """The prompts of ``plan`` without a reply in ``log``, in plan order."""
    done = log.replies()
    return [p for p in plan if p.key not in done]


def make_record(prompt: Prompt, reply: Reply, redact: Redactor) -> dict[str, Any]:
    """The log line of ``reply`` to ``prompt`` (texts redacted; the reply cut to :data:`REPLY_CHARS`)."""
    text = reply.text
    cut = text is not None and len(text) > REPLY_CHARS
    if cut:
        text = text[:REPLY_CHARS]
    parsed = parse_reply(text)
    record = {
        "key": prompt.key,
        "id": prompt.id,
        "task": prompt.task,
        "length": prompt.length,
        "draw": prompt.draw,
        "index": prompt.index,
        "format": prompt.format,
        "prompt": prompt.text,
        "answer": prompt.answer,
        "reply": text,
        "parsed": parsed.answer,
        "correct": None if text is None else parsed.answer == prompt.answer,
        "error": reply.error,
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "latency_s": None if reply.latency_s is None else round(reply.latency_s, 6),
        "finish_reason": reply.finish_reason,
        "model": reply.model,
        "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
    }
    if cut:
        record["reply_chars"] = len(reply.text)
    for field in TEXT_FIELDS:
        record[field] = redact(record[field])
    return record


class _Progress:
    """A tqdm bar (or nothing) counting finished prompts."""

    def __init__(self, total: int, show: bool) -> None:
        self.bar = None
        if show:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="llm-eval", unit="prompt")

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _Tally:
    """Counts replies and failures; raises the run-stopping errors (thread-safe)."""

    def __init__(self, stats: RunStats, max_failures: int, progress: _Progress) -> None:
        self.stats, self.max_failures, self.progress = stats, max_failures, progress
        self.streak = 0
        self.last_error = ""
        self.lock = threading.Lock()

    def add(self, replies: Sequence[Reply]) -> None:
        with self.lock:
            for reply in replies:
                self.stats.sent += 1
                if reply.text is None:
                    self.stats.failed += 1
                    self.streak += 1
                    self.last_error = reply.error or ""
                else:
                    self.stats.answered += 1
                    self.streak = 0
            self.progress.update(len(replies))
            if self.streak >= self.max_failures:
                raise FailureStreakError(
                    f"{self.streak} requests in a row got no reply (last: {self.last_error}); the replies so "
                    "far are kept in the log, rerun the same command to continue"
                )


def run_prompts(
    plan: Sequence[Prompt],
    provider: Provider,
    log: RunLog,
    concurrency: int = 4,
    progress: bool = False,
    max_failures: int = MAX_FAILURES,
) -> RunStats:
    """Send every prompt of ``plan`` that has no reply in ``log`` (module docstring)."""
    concurrency = integer(concurrency, "concurrency", low=1)
    max_failures = integer(max_failures, "max_failures", low=1)
    todo = pending_prompts(plan, log)
    stats = RunStats(pending=len(todo))
    bar = _Progress(len(todo), progress)
    tally = _Tally(stats, max_failures, bar)
    redact = provider.redactor()

    def finish(prompts: Sequence[Prompt], replies: Sequence[Reply]) -> None:
        log.append(make_record(p, r, redact) for p, r in zip(prompts, replies, strict=True))
        tally.add(replies)

    try:
        if provider.batch_size > 1:
            for chunk in _equal_length_chunks(todo, provider.batch_size):
                finish(chunk, provider.ask_batch(chunk))
        elif provider.concurrent and concurrency > 1:
            _run_threads(todo, provider, finish, concurrency)
        else:
            for p in todo:
                finish([p], [provider.ask(p)])
    finally:
        bar.close()
    return stats


def _equal_length_chunks(prompts: Sequence[Prompt], size: int) -> list[list[Prompt]]:
    by_length: dict[int, list[Prompt]] = {}
    for p in prompts:
        by_length.setdefault(p.length, []).append(p)
    return [group[i : i + size] for group in by_length.values() for i in range(0, len(group), size)]


def _run_threads(todo: Sequence[Prompt], provider: Provider, finish: Any, workers: int) -> None:
    """``workers`` daemon threads take prompts from a queue; the first run-stopping error (or Ctrl-C in
    the calling thread) stops the others taking new ones. Daemon threads, so a second Ctrl-C can leave
    without waiting for requests in flight. The calling thread waits on an event the last worker sets
    (not on ``Thread.join``, whose lock state a ``KeyboardInterrupt`` can leave wrong before Python
    3.13)."""
    jobs: queue.SimpleQueue[Prompt] = queue.SimpleQueue()
    for p in todo:
        jobs.put(p)
    stop, done = threading.Event(), threading.Event()
    errors: list[BaseException] = []
    count = min(workers, len(todo))
    running = [count]
    lock = threading.Lock()

    def work() -> None:
        try:
            while not stop.is_set():
                try:
                    p = jobs.get_nowait()
                except queue.Empty:
                    return
                finish([p], [provider.ask(p)])
        except BaseException as exc:  # a refusal, a failure streak or a bug: stop, report in the caller
            errors.append(exc)
            stop.set()
        finally:
            with lock:
                running[0] -= 1
                if running[0] == 0:
                    done.set()

    if count == 0:
        return
    try:
        for _ in range(count):
            threading.Thread(target=work, daemon=True).start()
        _wait(done)
    except KeyboardInterrupt:
        stop.set()
        _wait(done)  # the requests in flight; a second Ctrl-C abandons them
        raise
    if errors:
        raise errors[0]


def _wait(event: threading.Event) -> None:
    while not event.wait(0.05):
        pass
