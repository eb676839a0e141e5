"""Renderers of a :class:`~promptcache.prompt.model.Prompt`: the exact request bodies of the official SDKs.

- :mod:`promptcache.prompt.render.anthropic`: ``messages.create`` keyword arguments, with planned ``cache_control``;
- :mod:`promptcache.prompt.render.openai`: ``chat.completions.create`` and ``responses.create`` keyword arguments;
- :mod:`promptcache.prompt.render.tokens`: token ids and counts under the local engine's ChatML template.
"""
