"""The old import path of :class:`~promptcache.prompt.builder.PromptBuilder` (``from promptcache.builder import
PromptBuilder``), kept so apps written against it still import; new code uses ``from promptcache import
PromptBuilder``."""

from promptcache.prompt.builder import PromptBuilder

__all__ = ["PromptBuilder"]
