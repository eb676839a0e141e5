"""promptcache: keep LLM prompt caches hot.

The public SDK names are re-exported here; everything else lives in clearly
named modules (``promptcache.lint``, ``promptcache.simulate``, ...).

``import promptcache`` stays light: the names below load their module on
first use (PEP 562), and nothing imports ``anthropic`` or ``openai`` until a
client is wrapped.

Example::

    from promptcache import Conversation, PromptBuilder

    chat = Conversation(budget_tokens=20_000)
    prompt = PromptBuilder().system(RULES).tools(TOOLS).history(chat).user(question).build()
    kwargs = prompt.to_anthropic(model="claude-sonnet-4-6")   # or .to_openai_chat(model=...)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "PromptBuilder": "promptcache.prompt.builder",
    "Prompt": "promptcache.prompt.model",
    "Conversation": "promptcache.prompt.conversation",
    "Message": "promptcache.prompt.messages",
    "ToolSet": "promptcache.prompt.normalize",
    "normalize_text": "promptcache.prompt.normalize",
    "BreakpointPlan": "promptcache.prompt.breakpoints",
    "PromptError": "promptcache.errors",
    "PrefixStabilityError": "promptcache.errors",
    "PrefixStabilityWarning": "promptcache.errors",
    "RecordingWarning": "promptcache.errors",
    "VolatileValueError": "promptcache.errors",
    "HistoryRewriteError": "promptcache.errors",
    "WhitespaceDriftError": "promptcache.errors",
    "PrefixGuard": "promptcache.misses.guard",
    "UsageStats": "promptcache.providers.usage",
    "wrap": "promptcache.clients.wrappers",
    "AnthropicClient": "promptcache.clients.wrappers",
    "AsyncAnthropicClient": "promptcache.clients.wrappers",
    "OpenAIClient": "promptcache.clients.wrappers",
    "AsyncOpenAIClient": "promptcache.clients.wrappers",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from promptcache.prompt.breakpoints import BreakpointPlan
    from promptcache.prompt.builder import PromptBuilder
    from promptcache.clients.wrappers import AnthropicClient, AsyncAnthropicClient, AsyncOpenAIClient, OpenAIClient, wrap
    from promptcache.prompt.conversation import Conversation
    from promptcache.errors import (HistoryRewriteError, PrefixStabilityError, PrefixStabilityWarning, PromptError,
                                    RecordingWarning, VolatileValueError, WhitespaceDriftError)
    from promptcache.misses.guard import PrefixGuard
    from promptcache.prompt.model import Prompt
    from promptcache.prompt.messages import Message
    from promptcache.prompt.normalize import ToolSet, normalize_text
    from promptcache.providers.usage import UsageStats


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'promptcache' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
