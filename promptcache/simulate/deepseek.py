"""DeepSeek context caching on disk, simulated from the documented rules.

Rules (provider-cache-rules.md, "DeepSeek"; DeepSeek API guide "Context
Caching"; numbers from ``promptcache/data/providers.toml``). Usage reports
``prompt_cache_hit_tokens`` / ``prompt_cache_miss_tokens``; hits are billed at
``read_multiplier``, there is no write fee. The unit rule is a parameter
(``unit_rule``):

- ``boundary`` (current): the cache holds prefix *units*; a request hits only
  a unit it matches completely, and reads the longest such unit. Each request
  stores a unit ending at its user input end (its whole prompt) and one at its
  output end (the prompt plus the reply: the simulator counts it when a later
  request continues that prompt with an assistant message); when a request
  shares a prefix with an earlier unit without matching it whole, that common
  prefix is stored as a unit of its own (usable by later requests). Units of
  fewer than ``min_cacheable_tokens`` (64) are not stored. DeepSeek also cuts
  units "at fixed token intervals" in long inputs without saying how long;
  ``interval_tokens`` switches that on when known.
- ``fixed`` (legacy): 64-token units (``unit_tokens``): the hit is the common
  prefix with an earlier request rounded down to a multiple of 64.

DeepSeek clears entries after hours to days of disuse; the simulation keeps
them for the whole trace.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from promptcache.providers.apis import OPENAI_CHAT
from promptcache.misses.prefix_index import PrefixIndex, common_prefix
from promptcache.providers.profiles import ModelProfile
from promptcache.simulate.base import CacheSimulator, RequestResult
from promptcache.simulate.render import PromptRender
from promptcache.providers.usage import Usage

_MAX_UNITS = 4096


@dataclasses.dataclass(frozen=True)
class _Unit:
    tokens: Sequence[int]
    length: int
    input_end: bool  # the whole prompt of its writer (its reply's output end follows it)


class DeepSeekSimulator(CacheSimulator):
    """DeepSeek's prefix units (``unit_rule`` ``boundary`` or legacy ``fixed``)."""

    provider = "deepseek"
    api = OPENAI_CHAT

    def __init__(self, *, interval_tokens: int | None = None, **options: Any) -> None:
        """
        Args:
            interval_tokens: also store a unit every this many tokens of a prompt
                (``boundary`` rule; DeepSeek does not publish the interval, off by default).
            options: as :class:`~promptcache.simulate.base.CacheSimulator`.
        """
        super().__init__(**options)
        self.interval_tokens = interval_tokens
        self.units: dict[str, list[_Unit]] = {}
        self.indexes: dict[str, PrefixIndex] = {}
        self.prompts: dict[int, Sequence[int]] = {}
        self.count = 0

    def _simulate(self, render: PromptRender, profile: ModelProfile, t: float) -> RequestResult:
        if profile.unit_rule == "fixed":
            read = self._fixed(render, profile)
        else:
            read = self._boundary(render, profile)
        tokens = render.tokens
        usage = Usage(cache_read=read, uncached=len(tokens) - read)
        cause, detail = None, ""
        if not read and len(tokens) < profile.min_cacheable_tokens:
            cause, detail = "below_minimum", f"the prompt is below {profile.min_cacheable_tokens} tokens"
        return RequestResult(usage, len(tokens), profile, runtime_cause=cause, runtime_detail=detail, render=render)

    def _fixed(self, render: PromptRender, profile: ModelProfile) -> int:
        index = self.indexes.setdefault(profile.model, PrefixIndex(max_entries=_MAX_UNITS))
        tokens = render.tokens
        best = index.best(tokens)
        length = common_prefix(tokens, self.prompts[best]) if best is not None else 0
        unit = profile.unit_tokens or 1
        for dropped in index.add(self.count, tokens):
            self.prompts.pop(dropped, None)
        self.prompts[self.count] = tokens
        self.count += 1
        read = unit * (length // unit)
        return read if read >= profile.min_cacheable_tokens else 0

    def _boundary(self, render: PromptRender, profile: ModelProfile) -> int:
        units = self.units.setdefault(profile.model, [])
        tokens = render.tokens
        minimum = profile.min_cacheable_tokens
        starts = {span.start: span for span in render.messages}
        read, shared = 0, 0
        for unit in units:
            length = common_prefix(tokens, unit.tokens)
            if length < unit.length:
                shared = max(shared, length)
                continue
            read = max(read, unit.length)
            reply = starts.get(unit.length) if unit.input_end else None
            if reply is not None and reply.role == "assistant":
                read = max(read, reply.end)  # the output-end unit of the same request
        new = [_Unit(tokens, len(tokens), True)]
        if shared > read:
            new.append(_Unit(tokens, shared, False))  # common-prefix detection
        if self.interval_tokens:
            new.extend(_Unit(tokens, end, False) for end in range(self.interval_tokens, len(tokens),
                                                                    self.interval_tokens))
        units.extend(u for u in new if u.length >= minimum)
        del units[:-_MAX_UNITS]
        return read if read >= minimum else 0
