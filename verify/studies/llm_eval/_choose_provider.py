"""Choosing a provider by name: :func:`make_provider`."""

from __future__ import annotations

from typing import Any

from ropeproof.machinery._errors import InputError
from ropeproof.verify.studies.llm_eval._providers import Provider

PROVIDERS: tuple[str, ...] = ("openai", "anthropic", "hf", "python")


def make_provider(
    kind: str,
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
    fmt: str = "chat",
    device: Any = "cpu",
    dtype: str = "float32",
) -> Provider:
    """The provider ``kind`` (:data:`PROVIDERS`) for ``model`` (a model name, a directory for ``hf``,
    ``module:function`` or ``file.py:function`` for ``python``)."""
    if kind in ("openai", "anthropic"):
        from ropeproof.verify.studies.llm_eval._remote import AnthropicMessages, OpenAIChat

        cls = OpenAIChat if kind == "openai" else AnthropicMessages
        return cls(
            model,
            base_url=base_url,
            api_key_env=api_key_env,
            temperature=temperature,
            max_tokens=max_tokens,
            timeout=timeout,
            max_retries=max_retries,
            token_param=token_param,
            extra_body=extra_body,
        )
    if base_url is not None:
        raise InputError(f"--base-url applies to the openai and anthropic providers, not {kind!r}")
    if kind == "python":
        from ropeproof.verify.studies.llm_eval._local import PythonCallable

        return PythonCallable(model)
    if kind == "hf":
        from ropeproof.verify.studies.llm_eval._local import HFCausalLM

        return HFCausalLM.from_directory(model, fmt=fmt, max_tokens=max_tokens, device=device, dtype=dtype)
    raise InputError(f"provider={kind!r} is unknown; accepted: {list(PROVIDERS)}")
