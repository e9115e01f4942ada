"""Providers without a server: redaction, where keys come from, endpoint and token-limit defaults, and
what the run's settings record (never the key)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.verify.studies.llm_eval._choose_provider import PROVIDERS, make_provider
from ropeproof.verify.studies.llm_eval._providers import REDACTED, Redactor, Reply
from ropeproof.verify.studies.llm_eval._remote import LOCAL_KEY, check_base_url

# the clients are imported by the tests that make them, not at collection (every pytest worker collects this)
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("openai") is None or importlib.util.find_spec("anthropic") is None,
    reason="needs openai and anthropic (the llm extra)",
)

KEY = "sk-unit-" + "0123456789" * 3


def test_redaction_replaces_every_secret_and_nothing_else() -> None:
    redact = Redactor([KEY, None, "", "abc", KEY[:12]])
    assert redact(f"401: bad key {KEY} (prefix {KEY[:12]})") == f"401: bad key {REDACTED} (prefix {REDACTED})"
    assert redact("abc of any length is redacted") == f"{REDACTED} of any length is redacted"
    assert Redactor(["k"])("key: k") == f"{REDACTED}ey: {REDACTED}"  # a secret of one character too
    assert redact("nothing secret here") == "nothing secret here"
    assert redact(None) is None and Redactor()(KEY) == KEY
    assert Reply.failed("timed out", 0.5) == Reply(None, "timed out", latency_s=0.5)


def test_keys_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(InputError, match="environment variable OPENAI_API_KEY; it is not set"):
        make_provider("openai", "gpt-x")
    with pytest.raises(InputError, match="environment variable MY_KEY"):
        make_provider("anthropic", "claude-x", api_key_env="MY_KEY")
    local = make_provider("openai", "llama", base_url="http://127.0.0.1:9/v1")
    assert local.secrets == () and local.client.api_key == LOCAL_KEY  # a local server ignores it
    monkeypatch.setenv("MY_KEY", KEY)
    remote = make_provider("openai", "gpt-x", api_key_env="MY_KEY", extra_body={"reasoning_effort": "low"})
    assert remote.secrets == (KEY,) and KEY not in json.dumps(remote.identity())
    assert remote.token_param == "max_completion_tokens" and local.token_param == "max_tokens"
    assert remote.identity()["base_url"].startswith("https://api.openai.com")
    assert remote.identity()["extra_body"] == {"reasoning_effort": "low"}
    assert set(PROVIDERS) == {"openai", "anthropic", "hf", "python"}


def test_bad_provider_settings_are_named() -> None:
    with pytest.raises(InputError, match="must be an http:// or https:// URL"):
        check_base_url("localhost:8000")
    with pytest.raises(InputError, match="provider='bard' is unknown"):
        make_provider("bard", "m")
    with pytest.raises(InputError, match="token_param='tokens' is unknown"):
        make_provider("openai", "m", base_url="http://127.0.0.1:9/v1", token_param="tokens")
    with pytest.raises(InputError, match="model must be a non-empty"):
        make_provider("anthropic", " ", base_url="http://127.0.0.1:9")


@pytest.mark.parametrize("short", ["a", "abc", "sk-1234"])
def test_keys_too_short_to_redact_are_refused_without_being_shown(
    short: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a key of fewer than 4 characters used to be written to log.jsonl unredacted
    monkeypatch.setenv("OPENAI_API_KEY", short)
    for base_url in (None, "http://127.0.0.1:9/v1"):
        with pytest.raises(InputError) as exc:
            make_provider("openai", "m", base_url=base_url)
        expected = (
            "the environment variable OPENAI_API_KEY holds a key of fewer than 8 characters; a key that "
            "short could not be told apart from the prompts and replies, so it could not be kept out of the "
            "log: use a key of at least 8 characters"
        )
        if base_url is not None:
            expected += ", or unset it (a --base-url server then gets a placeholder)"
        assert str(exc.value) == expected  # the same whatever the key: it is not shown
    monkeypatch.setenv("OPENAI_API_KEY", LOCAL_KEY)  # vLLM's documented placeholder is no secret
    assert make_provider("openai", "m", base_url="http://127.0.0.1:9/v1").secrets == ()
    monkeypatch.setenv("OPENAI_API_KEY", "k" * 8)
    assert make_provider("openai", "m", base_url="http://127.0.0.1:9/v1").secrets == ("k" * 8,)


def test_the_reply_bound_follows_max_tokens() -> None:
    from ropeproof.verify.studies.llm_eval._remote import reply_bytes
    from ropeproof.verify.studies.llm_eval._runner import REPLY_CHARS

    assert reply_bytes(16) == 64 * 1024 + 16 * 64 and reply_bytes(4096) == 64 * 1024 + 4096 * 64
    assert REPLY_CHARS == 65_536  # the README's "logged to at most 65,536 characters"
    with pytest.raises(InputError, match="max_tokens"):
        reply_bytes(0)
