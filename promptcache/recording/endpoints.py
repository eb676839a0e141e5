"""Which cached-prompt API an HTTP request is, from its method and URL path.

The paths are the providers' (Anthropic ``POST /v1/messages``; OpenAI
``POST /v1/chat/completions`` and ``POST /v1/responses``), matched at the end
of the path so a base URL with a prefix (``/openai/v1/...``, a gateway, Azure's
``/openai/deployments/NAME/chat/completions``) still matches; Anthropic's with its
``/v1`` (``/v1/threads/ID/messages`` is OpenAI's Assistants API). Other endpoints (``/v1/messages/count_tokens``, ``/v1/messages/batches``,
``GET /v1/responses/{id}``, ``/v1/models``) send no cached prompt and are not
recorded.
"""

from __future__ import annotations

from promptcache.providers.apis import ANTHROPIC_MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES

__all__ = ["PROVIDER_OF", "SESSION_HEADER", "api_of"]

SESSION_HEADER = "x-promptcache-session"
"""A request header ``promptcache proxy`` and ``serve --trace`` read as the trace session (the proxy does not
forward it)."""

_SUFFIXES = (("/v1/messages", ANTHROPIC_MESSAGES), ("/chat/completions", OPENAI_CHAT), ("/responses", OPENAI_RESPONSES))

PROVIDER_OF = {ANTHROPIC_MESSAGES: "anthropic", OPENAI_CHAT: "openai", OPENAI_RESPONSES: "openai"}
"""The provider whose usage fields and prices an API's responses carry."""


def api_of(method: str, path: str) -> str | None:
    """``anthropic.messages`` / ``openai.chat`` / ``openai.responses`` for a ``POST`` to their path, else None."""
    if method.upper() != "POST":
        return None
    path = path.rstrip("/")
    for suffix, api in _SUFFIXES:
        if path.endswith(suffix):
            return api
    return None
