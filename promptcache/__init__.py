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
    "PromptBuilder": "promptcache.builder",
    "Prompt": "promptcache.layers",
    "Conversation": "promptcache.conversation",
    "Message": "promptcache.messages",
    "ToolSet": "promptcache.normalize",
    "normalize_text": "promptcache.normalize",
    "BreakpointPlan": "promptcache.breakpoints",
    "PromptError": "promptcache.errors",
    "PrefixStabilityError": "promptcache.errors",
    "PrefixStabilityWarning": "promptcache.errors",
    "RecordingWarning": "promptcache.errors",
    "VolatileValueError": "promptcache.errors",
    "HistoryRewriteError": "promptcache.errors",
    "WhitespaceDriftError": "promptcache.errors",
    "PrefixGuard": "promptcache.guard",
    "UsageStats": "promptcache.usage",
    "wrap": "promptcache.clients",
    "AnthropicClient": "promptcache.clients",
    "AsyncAnthropicClient": "promptcache.clients",
    "OpenAIClient": "promptcache.clients",
    "AsyncOpenAIClient": "promptcache.clients",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from promptcache.breakpoints import BreakpointPlan
    from promptcache.builder import PromptBuilder
    from promptcache.clients import AnthropicClient, AsyncAnthropicClient, AsyncOpenAIClient, OpenAIClient, wrap
    from promptcache.conversation import Conversation
    from promptcache.errors import (HistoryRewriteError, PrefixStabilityError, PrefixStabilityWarning, PromptError,
                                    RecordingWarning, VolatileValueError, WhitespaceDriftError)
    from promptcache.guard import PrefixGuard
    from promptcache.layers import Prompt
    from promptcache.messages import Message
    from promptcache.normalize import ToolSet, normalize_text
    from promptcache.usage import UsageStats


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'promptcache' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
