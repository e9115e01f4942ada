"""Remote chat models through the official clients (the ``llm`` extra): :class:`OpenAIChat` for any
OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp servers) and
:class:`AnthropicMessages` for Anthropic's messages API.

The clients do the HTTP, the retries and the timeouts: ``max_retries`` retries with exponential
backoff and jitter (honouring ``Retry-After``) on 408, 409, 429, 5xx, connection errors and timeouts;
``timeout`` seconds per attempt. What is left after the retries becomes a :class:`Reply` with an
``error`` (the prompt stays unanswered and a rerun asks again); a body that is not the API's JSON is
recorded as ``malformed response``; any other refusal (401, 403, 404, 400, ...) raises
:class:`~ropeproof.verify.studies.llm_eval._providers.ProviderError`. Every message is passed through the
provider's :class:`~ropeproof.verify.studies.llm_eval._providers.Redactor` first.

Protocol settings are sent in the request body (``temperature``, and the token limit as
``max_tokens`` or, for OpenAI's own endpoint whose newer models refuse it, ``max_completion_tokens``);
``extra_body`` adds or overrides body fields (for example ``{"reasoning_effort": "minimal"}``).

**Replies are read to a bound** (:mod:`.capped_http`): at most :func:`reply_bytes` of ``max_tokens``
bytes of a response body (:data:`BODY_BYTES` plus :data:`BYTES_PER_TOKEN` per token allowed); a longer
body is not read, not retried, and becomes a failed reply saying so (a rerun asks again).
"""

from __future__ import annotations

import os
import time
from typing import Any

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer, real
from ropeproof.verify.studies.llm_eval._capped_http import REFUSED_HEADER, capped_hooks
from ropeproof.verify.studies.llm_eval._plan import Prompt
from ropeproof.verify.studies.llm_eval._providers import Provider, ProviderError, Reply

KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
"""The environment variable each provider reads its key from unless told another."""
LOCAL_KEY = "EMPTY"
"""The key sent to a ``--base-url`` server when the key variable is unset (local servers ignore it)."""
TOKEN_PARAMS = ("max_tokens", "max_completion_tokens")
BODY_BYTES = 64 << 10
"""Bytes of a response body allowed besides its tokens: the JSON around the reply (64 KiB)."""
BYTES_PER_TOKEN = 64
"""Bytes of a response body allowed per token of ``max_tokens`` (a token is a few characters; JSON
escapes write one as up to 6 bytes)."""
MIN_KEY_LENGTH = 8
"""The shortest key accepted (besides the placeholder :data:`LOCAL_KEY`, which is no secret): a shorter
one could not be told apart from the prompts and replies, so it could not be kept out of the log (every
key used is redacted everywhere)."""


def reply_bytes(max_tokens: int) -> int:
    """The most bytes read of a response body when ``max_tokens`` tokens are asked for at most."""
    return BODY_BYTES + BYTES_PER_TOKEN * integer(max_tokens, "max_tokens", low=1)


def _client_module(name: str) -> Any:
    try:
        if name == "openai":
            import openai as module
        else:
            import anthropic as module
    except ImportError as exc:
        raise InputError(f"the {name} provider needs its client: pip install 'ropeproof[llm]'") from exc
    return module


def _api_key(kind: str, env: str | None, base_url: str | None) -> tuple[str, str]:
    name = env or KEY_ENV[kind]
    key = os.environ.get(name)
    if key and len(key) < MIN_KEY_LENGTH and key != LOCAL_KEY:  # the message never shows the key
        raise InputError(
            f"the environment variable {name} holds a key of fewer than {MIN_KEY_LENGTH} characters; a key "
            "that short could not be told apart from the prompts and replies, so it could not be kept out "
            f"of the log: use a key of at least {MIN_KEY_LENGTH} characters"
            + (", or unset it (a --base-url server then gets a placeholder)" if base_url is not None else "")
        )
    if key:
        return name, key
    if base_url is not None:
        return name, LOCAL_KEY
    raise InputError(
        f"the {kind} provider needs an API key in the environment variable {name}; it is not set"
    )


def check_base_url(url: str) -> str:
    """``url`` if it is an ``http://`` or ``https://`` URL with a host."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"base_url={url!r} must be an http:// or https:// URL with a host")
    return url


class _RemoteChat(Provider):
    kind = ""
    _client_class = ""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        temperature: float | None = 0.0,
        max_tokens: int = 16,
        timeout: float = 60.0,
        max_retries: int = 8,
        token_param: str | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        if not model or not model.strip():
            raise InputError("model must be a non-empty model name")
        integer(max_tokens, "max_tokens", low=1)
        real(timeout, "timeout", low=0, low_open=True, note="seconds")
        integer(max_retries, "max_retries", low=0)
        if token_param is not None and token_param not in TOKEN_PARAMS:
            raise InputError(f"token_param={token_param!r} is unknown; accepted: {list(TOKEN_PARAMS)}")
        self.module = _client_module(self.kind)
        self.model, self.base_url = model, None if base_url is None else check_base_url(base_url)
        self.key_env, key = _api_key(self.kind, api_key_env, base_url)
        self.secrets = (key,) if key != LOCAL_KEY else ()
        self.temperature, self.max_tokens = temperature, max_tokens
        self.timeout, self.max_retries = timeout, max_retries
        self.token_param = token_param or self._default_token_param()
        self.extra_body = dict(extra_body or {})
        self.client = self._make_client(key)
        self.endpoint = str(self.client.base_url)

    def _default_token_param(self) -> str:
        return "max_tokens"

    def _make_client(self, key: str) -> Any:
        """The client library's ``_client_class`` on ``key`` and this provider's endpoint, timeout, retries
        and :meth:`_http_client`."""
        return getattr(self.module, self._client_class)(
            api_key=key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
            http_client=self._http_client(),
        )

    def _http_client(self) -> Any:
        """The client's own default HTTP client, reading response bodies to :func:`reply_bytes`."""
        return self.module.DefaultHttpxClient(event_hooks=capped_hooks(reply_bytes(self.max_tokens)))

    def _body(self) -> dict[str, Any]:
        body: dict[str, Any] = {} if self.temperature is None else {"temperature": self.temperature}
        return {**body, **self.extra_body}

    def identity(self) -> dict[str, Any]:
        return {
            "provider": self.name,
            "model": self.model,
            "base_url": self.endpoint,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "token_param": self.token_param,
            "extra_body": self.extra_body,
        }

    def _call(self, prompt: Prompt) -> Any:
        raise NotImplementedError

    def _read(self, response: Any, latency: float) -> Reply:
        raise NotImplementedError

    def ask(self, prompt: Prompt) -> Reply:
        m = self.module
        redact = self.redactor()
        start = time.perf_counter()
        try:
            response = self._call(prompt)
        except m.APIStatusError as exc:
            latency = time.perf_counter() - start
            refused = exc.response.headers.get(REFUSED_HEADER)
            if refused is not None:  # the body was not read (module docstring)
                return Reply.failed(
                    f"reply not read: its body was {refused} (the bound follows --max-tokens "
                    f"{self.max_tokens})",
                    latency,
                )
            code = exc.status_code
            message = redact(" ".join(str(exc).split()))
            if code in (408, 409, 429) or code >= 500:
                return Reply.failed(f"HTTP {code} after {self.max_retries} retries: {message}", latency)
            raise ProviderError(
                f"the {self.name} server refused the request (HTTP {code}): {message}"
            ) from None
        except m.APITimeoutError:
            latency = time.perf_counter() - start
            return Reply.failed(
                f"timed out after {self.max_retries} retries ({self.timeout} s each)", latency
            )
        except m.APIConnectionError as exc:
            latency = time.perf_counter() - start
            return Reply.failed(
                f"connection failed after {self.max_retries} retries: {redact(str(exc))}", latency
            )
        except (m.APIResponseValidationError, ValueError) as exc:  # ValueError: a body that is not JSON
            latency = time.perf_counter() - start
            return Reply.failed(f"malformed response: {redact(' '.join(str(exc).split()))}", latency)
        latency = time.perf_counter() - start
        try:
            return self._read(response, latency)
        except (AttributeError, IndexError, KeyError, TypeError) as exc:
            return Reply.failed(f"malformed response: {type(exc).__name__}: {redact(str(exc))}", latency)


class OpenAIChat(_RemoteChat):
    """An OpenAI-compatible chat-completions endpoint (module docstring); the prompt is one user
    message. ``base_url=None`` is OpenAI's own API, whose token limit is sent as
    ``max_completion_tokens``; other servers get ``max_tokens``."""

    name = kind = "openai"
    _client_class = "OpenAI"

    def _default_token_param(self) -> str:
        return "max_completion_tokens" if self.base_url is None else "max_tokens"

    def _call(self, prompt: Prompt) -> Any:
        body = {self.token_param: self.max_tokens, **self._body()}
        return self.client.chat.completions.create(
            model=self.model, messages=[{"role": "user", "content": prompt.text}], extra_body=body
        )

    def _read(self, response: Any, latency: float) -> Reply:
        choice = response.choices[0]
        usage = response.usage
        return Reply(
            choice.message.content or "",
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            latency_s=latency,
            finish_reason=choice.finish_reason,
            model=response.model,
        )


class AnthropicMessages(_RemoteChat):
    """Anthropic's messages API (module docstring); the prompt is one user message. ``base_url`` is the
    server root (the client adds ``/v1/messages``)."""

    name = kind = "anthropic"
    _client_class = "Anthropic"

    def _call(self, prompt: Prompt) -> Any:
        return self.client.messages.create(
            model=self.model,
            max_tokens=self.max_tokens,
            messages=[{"role": "user", "content": prompt.text}],
            extra_body=self._body(),
        )

    def _read(self, response: Any, latency: float) -> Reply:
        text = "".join(block.text for block in response.content if block.type == "text")
        usage = response.usage
        return Reply(
            text,
            prompt_tokens=getattr(usage, "input_tokens", None),
            completion_tokens=getattr(usage, "output_tokens", None),
            latency_s=latency,
            finish_reason=response.stop_reason,
            model=response.model,
        )
