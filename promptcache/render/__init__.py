"""Renderers of a :class:`~promptcache.layers.Prompt`: the exact request bodies of the official SDKs.

- :mod:`promptcache.render.anthropic`: ``messages.create`` keyword arguments, with planned ``cache_control``;
- :mod:`promptcache.render.openai`: ``chat.completions.create`` and ``responses.create`` keyword arguments;
- :mod:`promptcache.render.tokens`: token ids and counts under the local engine's ChatML template.
"""
