"""Wrappers around the official SDK clients (``wrappers.py``) and the recording of their streams
(``streams.py``). Neither imports ``anthropic`` or ``openai``: the application does."""

from __future__ import annotations

from promptcache.clients.wrappers import AnthropicClient, AsyncAnthropicClient, AsyncOpenAIClient, OpenAIClient, wrap

__all__ = ["AnthropicClient", "AsyncAnthropicClient", "AsyncOpenAIClient", "OpenAIClient", "wrap"]
