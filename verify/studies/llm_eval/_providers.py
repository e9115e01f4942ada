"""What every model provider answers with, and how one is chosen.

A provider turns a :class:`~ropeproof.verify.studies.llm_eval._plan.Prompt` into a :class:`Reply`: the raw
text, or an ``error`` saying why there is none (a malformed response, retries used up); tokens used,
latency, the finish reason and the model name the server reports. A request the server refuses for
good (a wrong key, an unknown model, a bad parameter) raises :class:`ProviderError`, which stops the
run: every later request would fail the same way.

The providers themselves: ``openai`` (any OpenAI-compatible chat endpoint) and ``anthropic`` in
:mod:`.remote` (the official clients: retries with backoff on 429, 5xx and timeouts, bounded
timeouts), ``hf`` (a local causal-LM directory) and ``python`` (a callable) in :mod:`.local`;
:func:`ropeproof.verify.studies.llm_eval._choose_provider.make_provider` picks one by name.

**Secrets.** API keys come from environment variables only. :class:`Redactor` replaces every secret
a provider holds by ``[redacted]``; the runner passes every text it writes (log records, errors)
through it, and providers pass their error messages through it, so a server that echoes the key
(as a 401 body may) cannot put it into a log, a result file or an error message.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ropeproof.machinery._errors import RopeproofError
from ropeproof.verify.studies.llm_eval._plan import Prompt

REDACTED = "[redacted]"


class ProviderError(RopeproofError):
    """The provider refused a request for good (authentication, an unknown model, a bad parameter)."""


@dataclass(frozen=True)
class Reply:
    """A provider's answer to one prompt (module docstring). ``text`` is ``None`` exactly when
    ``error`` says why."""

    text: str | None
    error: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    finish_reason: str | None = None
    model: str | None = None

    @classmethod
    def failed(cls, error: str, latency_s: float | None = None) -> Reply:
        return cls(None, error, latency_s=latency_s)


class Redactor:
    """Replaces each secret (every non-empty string given, whatever its length; the remote providers
    refuse keys too short to be told apart from text) by :data:`REDACTED`."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self.secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))

    def __call__(self, text: Any) -> Any:
        if not isinstance(text, str):
            return text
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return text


class Provider:
    """The interface the runner uses. ``concurrent``: :meth:`ask` may run in several threads at once;
    ``batch_size > 1``: the runner hands :meth:`ask_batch` up to that many prompts of one length."""

    name = "provider"
    concurrent = True
    batch_size = 1
    secrets: tuple[str, ...] = ()

    def ask(self, prompt: Prompt) -> Reply:
        raise NotImplementedError

    def ask_batch(self, prompts: Sequence[Prompt]) -> list[Reply]:
        return [self.ask(p) for p in prompts]

    def identity(self) -> dict[str, Any]:
        """What decides the replies (recorded in the run's settings; a resumed run must match it)."""
        return {"provider": self.name}

    def redactor(self) -> Redactor:
        return Redactor(self.secrets)
