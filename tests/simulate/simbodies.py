"""Builders of request bodies with known token counts for the simulator tests (imported by name)."""

from __future__ import annotations

from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, OPENAI_CHAT
from promptcache.simulate.render import render_prompt

SONNET = "claude-sonnet-4-5"  # minimum cacheable prompt 1,024 tokens (providers.toml)
GPT = "gpt-4.1-mini"          # classic automatic caching
WORDS = ("hello", "world", "cache", "prefix", "block", "token", "river", "stone", "amber", "cloud")


def words(n: int, word: str = "hello") -> str:
    """Text of exactly ``n`` cl100k tokens (``"hello hello ..."``: one token per word)."""
    return " ".join([word] * n)


def anthropic_body(system: Any = None, messages: list[dict] | None = None, **extra: Any) -> dict[str, Any]:
    """An Anthropic Messages body in SDK key order."""
    body: dict[str, Any] = {"max_tokens": 256, "messages": messages or [user("hi")], "model": extra.pop("model", SONNET)}
    if "cache_control" in extra:
        body["cache_control"] = extra.pop("cache_control")
    if system is not None:
        body["system"] = system
    body.update(extra)
    return body


def user(*texts: str, marker: dict | None = None) -> dict[str, Any]:
    """A user message of text blocks; ``marker`` goes on the last block."""
    blocks = [{"type": "text", "text": text} for text in texts]
    if marker is not None:
        blocks[-1]["cache_control"] = marker
    return {"role": "user", "content": blocks}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def system_block(text: str, marker: dict | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if marker is not None:
        block["cache_control"] = marker
    return block


EPHEMERAL = {"type": "ephemeral"}


def openai_body(messages: list[dict], **extra: Any) -> dict[str, Any]:
    """An OpenAI chat body in SDK key order (model, messages, then alphabetical)."""
    body: dict[str, Any] = {"model": extra.pop("model", GPT), "messages": messages}
    body.update(sorted(extra.items()))
    return body


def openai_body_with_tokens(total: int, *, word: str = "hello", **extra: Any) -> dict[str, Any]:
    """An OpenAI body whose rendered prompt has exactly ``total`` tokens (asserted)."""
    def build(k: int) -> dict[str, Any]:
        return openai_body([{"role": "system", "content": "You are terse."},
                            {"role": "user", "content": words(k, word)}], **extra)
    overhead = len(render_prompt(build(1), OPENAI_CHAT)) - 1
    body = build(total - overhead)
    assert len(render_prompt(body, OPENAI_CHAT)) == total
    return body


def anthropic_tokens(body: dict[str, Any]) -> int:
    return len(render_prompt(body, ANTHROPIC_MESSAGES))
