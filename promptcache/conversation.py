"""The old import path of :class:`~promptcache.prompt.conversation.Conversation` (``from promptcache.conversation
import Conversation``), kept so apps written against it still import; new code uses ``from promptcache import
Conversation``."""

from promptcache.prompt.conversation import SUMMARY_HEADER, Compactor, Conversation

__all__ = ["SUMMARY_HEADER", "Compactor", "Conversation"]
