"""The prompt model and how it is built, checked and rendered.

A :class:`Prompt` is six layers, most stable first (:data:`LAYERS`); build one
with :class:`PromptBuilder` (``builder.py``), keep a session's history in a
:class:`Conversation` (``conversation.py``). The rooms:

- ``model.py``: :class:`Prompt`, :data:`LAYERS`, documents, examples, the turn's ``<context>`` block;
- ``builder.py``, ``messages.py``, ``conversation.py``: building a prompt and its history;
- ``normalize.py``: text and tool canonicalisation; ``stability.py`` and ``volatile.py``: the
  build-time checks (volatile values, drifting layers); ``breakpoints.py``: the cache breakpoint planner;
- ``render/``: the request bodies of each API (``anthropic.py``, ``openai.py``) and ChatML tokens (``tokens.py``).
"""

from __future__ import annotations

from promptcache.prompt.builder import PromptBuilder
from promptcache.prompt.conversation import Conversation
from promptcache.prompt.messages import Message
from promptcache.prompt.model import LAYERS, Document, Example, Prompt

__all__ = ["LAYERS", "Conversation", "Document", "Example", "Message", "Prompt", "PromptBuilder"]
