"""Google Gemini implicit caching, simulated from the documented rules.

Rules (provider-cache-rules.md, "Google Gemini"; numbers from
``promptcache/data/providers.toml``): implicit caching is automatic and best
effort above a per-model minimum (2.5 Flash 2,048, 2.5 Pro and 3.x 4,096
tokens); ``usage_metadata.cached_content_token_count`` reports the tokens
served from cache, billed at the cached rate (``read_multiplier``); there is no
write fee. Requests are rendered in the OpenAI-compatible chat shape.

Google publishes no retention for implicit entries and gives no hit
guarantee, so the simulation reports the best case: the longest common prefix
with any earlier request of the same model, when it reaches the minimum.
Explicit ``cachedContents`` (a created cache with a TTL, default 1 h) are not
simulated: a trace of request bodies does not carry them.
"""

from __future__ import annotations

from typing import Any

from promptcache.providers.apis import OPENAI_CHAT
from promptcache.misses.prefix_index import PrefixIndex, common_prefix
from promptcache.providers.profiles import ModelProfile
from promptcache.simulate.base import CacheSimulator, RequestResult, rounded
from promptcache.simulate.render import PromptRender
from promptcache.providers.usage import Usage


class GeminiSimulator(CacheSimulator):
    """Gemini implicit caching: longest common prefix with an earlier request, above the model's minimum."""

    provider = "gemini"
    api = OPENAI_CHAT

    def __init__(self, **options: Any) -> None:
        """Options as :class:`~promptcache.simulate.base.CacheSimulator`."""
        super().__init__(**options)
        self.indexes: dict[str, PrefixIndex] = {}
        self.prompts: dict[int, list[int]] = {}
        self.count = 0

    def _simulate(self, render: PromptRender, profile: ModelProfile, t: float) -> RequestResult:
        index = self.indexes.setdefault(profile.model, PrefixIndex(max_entries=4096))
        tokens = render.tokens
        best = index.best(tokens)
        length = common_prefix(tokens, self.prompts[best]) if best is not None else 0
        cached = rounded(length, profile)
        for dropped in index.add(self.count, tokens):
            self.prompts.pop(dropped, None)
        self.prompts[self.count] = tokens
        self.count += 1
        cause, detail = None, ""
        if 0 < length < profile.min_cacheable_tokens:
            cause, detail = "below_minimum", (f"the shared prefix ({length:,} tokens) is below the minimum of "
                                              f"{profile.min_cacheable_tokens:,} for {profile.model}")
        usage = Usage(cache_read=cached, uncached=len(tokens) - cached)
        return RequestResult(usage, len(tokens), profile, runtime_cause=cause, runtime_detail=detail, render=render)
