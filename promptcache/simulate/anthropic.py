"""Anthropic Messages prompt caching, simulated from the documented rules.

Rules (provider-cache-rules.md, "Anthropic"; numbers from
``promptcache/data/providers.toml``):

- Render order ``tools -> system -> messages``; the prompt is a sequence of
  blocks (each tool, the ``system`` string or each system block, each message
  content block), each keyed by a hash chain of its prefix. ``cache_control``
  markers are not part of the key.
- Breakpoints: ``cache_control: {"type": "ephemeral", "ttl": "5m" | "1h"}`` on
  blocks, plus automatic caching (a top-level ``cache_control``: one
  breakpoint on the last cacheable block). More than ``max_breakpoints`` (4,
  the automatic one included), a ``1h`` marker after a ``5m`` one, an unknown
  TTL or type, or a marker on a thinking / empty text block: the API refuses
  the request (HTTP 400), so the request gets ``error`` and changes nothing.
- Reads: each breakpoint checks its own block and the blocks before it,
  ``lookback_blocks`` (20) positions in all, for an entry an earlier request
  wrote; the longest hit over all breakpoints is read (``cache_read_input_tokens``).
  An entry is readable ``entry_visible_after_seconds`` (~1 s) after its
  writer started, until its TTL (``5m`` 300 s / ``1h`` 3,600 s, counted from
  the request start) runs out; every read refreshes it at no cost.
- Writes: only at breakpoints at least ``min_cacheable_tokens`` into the prompt
  (per model: 512 ... 4,096; below it nothing is cached and there is no error)
  and beyond the read; the tokens from the read to each written breakpoint are
  billed at that breakpoint's TTL (``cache_creation.ephemeral_5m/1h``); the rest
  is ``input_tokens``.
- Invalidation levels: parameters are hashed in at the level they invalidate:
  ``tool_choice``, thinking settings (and ``output_config.effort``), the number
  of images -> messages; ``speed`` and citations toggles -> system and messages;
  tool definitions are content of the first level and so invalidate all.
  The model is part of every key.

Token counts are approximate: Claude's tokenizer is not public; cl100k_base
stands in (the traces README measures Claude at 10-30% more tokens).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES
from promptcache.misses.prefix_index import common_prefix
from promptcache.providers.profiles import ModelProfile, bare_model_id
from promptcache.simulate.base import CacheSimulator, RequestRefused, RequestResult, below_minimum_detail, split_writes
from promptcache.simulate.render import Block, PromptRender
from promptcache.trace.shape.anthropic import takes_system_messages
from promptcache.providers.usage import Usage

LEVELS = ("tools", "system", "messages")
"""Anthropic's invalidation levels, in render order."""

_UNCACHEABLE_TYPES = ("thinking", "redacted_thinking")
_PRUNE_ABOVE = 8192  # entries kept before expired ones are dropped


@dataclasses.dataclass
class _Entry:
    """A cache entry written at one breakpoint."""

    tokens: Sequence[int]  # the writer's whole prompt (the entry is its first ``length`` tokens)
    length: int
    visible: float  # readable from this time on (s)
    expires: float  # not readable from this time on (s)
    ttl: str


def _images(value: Any) -> int:
    if isinstance(value, Mapping):
        own = 1 if value.get("type") == "image" else 0
        return own + sum(_images(v) for k, v in value.items() if k == "content")
    if isinstance(value, list):
        return sum(_images(v) for v in value)
    return 0


def _citations(body: Mapping[str, Any]) -> bool:
    def walk(value: Any) -> bool:
        if isinstance(value, Mapping):
            citations = value.get("citations")
            if isinstance(citations, Mapping) and citations.get("enabled"):
                return True
            return any(walk(v) for v in value.values() if isinstance(v, list | Mapping))
        return isinstance(value, list) and any(walk(v) for v in value)
    return walk(body.get("system")) or walk(body.get("messages"))


DEFAULT_EFFORT = "high"
"""``output_config.effort`` when omitted (Claude docs "Effort": high is the default). Sending it explicitly is the
same prompt: the audit's Anthropic row "Invalidation: thinking, effort" (explicit default effort = omitted, [A-PC],
[A-TH], provider-audit-2026-12.md)."""


def level_seeds(body: Mapping[str, Any]) -> dict[str, str]:
    """The parameters hashed in at each invalidation level (provider-cache-rules.md, "Invalidation levels").

    An explicit ``output_config.effort`` equal to the default (:data:`DEFAULT_EFFORT`) hashes as an omitted one.
    """
    output_config = body.get("output_config") if isinstance(body.get("output_config"), Mapping) else {}
    effort = output_config.get("effort")
    return {
        "tools": "",
        "system": json.dumps([body.get("speed"), _citations(body)], sort_keys=True, default=str),
        "messages": json.dumps([body.get("tool_choice"), body.get("thinking"),
                                None if effort == DEFAULT_EFFORT else effort,
                                _images(body.get("messages"))], sort_keys=True, default=str),
    }


def block_keys(render: PromptRender, model: str) -> list[int]:
    """The hash chain of a request's blocks: key ``i`` covers blocks ``0..i``, the model and the level seeds."""
    seeds = level_seeds(render.body)
    parent = hash(("model", model))
    mixed = 0  # levels whose seed is in the chain
    keys = []
    for block in render.blocks:
        level = LEVELS.index(block.level)
        while mixed <= level:
            parent = hash((parent, LEVELS[mixed], seeds[LEVELS[mixed]]))
            mixed += 1
        parent = hash((parent, block.role, block.first_in_message, block.content))
        keys.append(parent)
    return keys


def has_breakpoint(body: Mapping[str, Any]) -> bool:
    """True when an Anthropic body sets any ``cache_control`` (top-level or on a tool, system or message block).

    Without one the request neither reads nor writes the cache (reads happen at breakpoints).
    """
    if body.get("cache_control") is not None:
        return True
    blocks = [*(body.get("tools") or ()), *(body.get("system") if isinstance(body.get("system"), list) else ())]
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, Mapping) else None
        blocks.extend(content if isinstance(content, list) else ())
    return any(isinstance(b, Mapping) and b.get("cache_control") is not None for b in blocks)


def _cacheable(block: Block) -> bool:
    value = block.value
    if isinstance(value, Mapping):
        if value.get("type") in _UNCACHEABLE_TYPES:
            return False
        if value.get("type") == "text" and not value.get("text"):
            return False
    return not (isinstance(value, str) and not value)


def breakpoints(render: PromptRender, profile: ModelProfile) -> list[tuple[int, str]]:
    """The request's breakpoints as ``(block index, TTL label)`` in render order.

    Raises:
        RequestRefused: what the API answers with HTTP 400: too many breakpoints, a
            ``1h`` marker after a ``5m`` one, a bad marker, a marker on a thinking or
            empty text block.
    """
    found: list[tuple[int, str, str]] = []

    def ttl_of(marker: Any, where: str) -> str:
        if not isinstance(marker, Mapping) or marker.get("type") != "ephemeral":
            raise RequestRefused(f"{where}: cache_control.type must be 'ephemeral'")
        ttl = marker.get("ttl", profile.default_ttl)
        if ttl not in profile.ttl_seconds:
            raise RequestRefused(f"{where}: cache_control.ttl must be one of {', '.join(profile.ttl_seconds)}, "
                                 f"not {ttl!r}")
        return str(ttl)

    for index, block in enumerate(render.blocks):
        marker = block.value.get("cache_control") if isinstance(block.value, Mapping) else None
        if marker is None:
            continue
        if not _cacheable(block):
            kind = block.value.get("type")
            raise RequestRefused(f"{block.path}: cache_control cannot be set on "
                                 f"{'empty text' if kind == 'text' else kind} blocks")
        found.append((index, ttl_of(marker, block.path), block.path))
    automatic = render.body.get("cache_control")
    slots = len(found)
    if automatic is not None:
        ttl = ttl_of(automatic, "cache_control")
        slots += 1  # "If 4 explicit block-level breakpoints already exist, the API returns a 400 error"
        last = next((i for i in range(len(render.blocks) - 1, -1, -1) if _cacheable(render.blocks[i])), None)
        own = next((item for item in found if item[0] == last), None)
        if own is not None and own[1] != ttl:
            # [A-PC] "If the last block has an explicit cache_control with a different TTL, the API returns a 400
            # error." (same TTL: "automatic caching is a no-op")
            raise RequestRefused(f"cache_control (automatic caching, ttl {ttl!r}) targets the last block, "
                                 f"{own[2]}, which already has an explicit cache_control with ttl {own[1]!r}: "
                                 "use the same TTL or drop one of them")
        if last is not None and own is None:
            found.append((last, ttl, "cache_control (automatic caching, last block)"))
    limit = profile.max_breakpoints
    if limit is not None and slots > limit:
        raise RequestRefused(f"A maximum of {limit} blocks with cache_control may be provided. Found {slots}.")
    ordered = sorted(found, key=lambda item: item[0])
    shortest = None
    for _, ttl, where in ordered:
        seconds = profile.ttl_seconds[ttl]
        if shortest is not None and seconds > profile.ttl_seconds[shortest]:
            raise RequestRefused(f"{where}: a cache_control with ttl {ttl!r} must not come after one with ttl "
                                 f"{shortest!r} (longer TTLs first)")
        if shortest is None or seconds < profile.ttl_seconds[shortest]:
            shortest = ttl
    return [(index, ttl) for index, ttl, _ in ordered]


LAST_TURN_THINKING = re.compile(
    r"^claude-(?:3-(?:opus|5-sonnet|7-sonnet|haiku|5-haiku)|opus-4(?:-1)?(?:$|-\d{8})|sonnet-4(?:-5)?(?:$|-\d{8})"
    r"|haiku-4-5)")
"""Models that keep only the current assistant turn's thinking blocks (Claude docs "Extended thinking", "Thinking
block preservation by model", read 2026-12-02 through the search corpus: "Claude Opus 4.1 (deprecated) and earlier
Opus models keep only the last assistant turn's thinking"; "Claude Sonnet 4.5 and earlier Sonnet models keep only the
last turn"; "all Haiku models through Claude Haiku 4.5 keep only the last turn"). Opus 4.5+, Sonnet 4.6+ and Mythos
Preview keep all; Fable / Mythos 5 and Haiku 5.5 are not named and are assumed to keep all."""


def strip_earlier_thinking(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """``body`` without the thinking blocks of assistant turns before the current one (the one after the last user
    message that is not only tool results), as a last-turn-only model builds its prompt; ``body`` itself when there
    is none. A non-tool-result user turn thus strips every earlier thinking block, and what follows the first of
    them is a new prefix ([A-TH] "Thinking and prompt caching", audit 2.1 row "Thinking blocks in cache")."""
    messages = list(body.get("messages") or [])

    def tool_results_only(message: Any) -> bool:
        content = message.get("content") if isinstance(message, Mapping) else None
        return isinstance(content, list) and bool(content) and all(
            isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content)

    start = max((i for i, m in enumerate(messages) if isinstance(m, Mapping) and m.get("role") == "user"
                 and not tool_results_only(m)), default=-1)
    def stripped(block: Any) -> bool:  # a marked thinking block stays: the API refuses the marker
        return isinstance(block, Mapping) and block.get("type") in _UNCACHEABLE_TYPES and "cache_control" not in block

    changed = False
    for i in range(start):
        message = messages[i]
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(message, Mapping) and message.get("role") == "assistant" and isinstance(content, list) and \
                any(stripped(b) for b in content):
            kept = [b for b in content if not stripped(b)]
            messages[i] = {**message, "content": kept or [{"type": "text", "text": ""}]}
            changed = True
    return {**body, "messages": messages} if changed else body


class AnthropicSimulator(CacheSimulator):
    """Anthropic's prompt cache: explicit breakpoints, automatic caching, 20-block lookback, TTLs.

    Example::

        sim = AnthropicSimulator()
        result = sim.simulate(body, t=0.0)
        result.usage.cache_read, result.usage.cache_write_5m, result.usage.uncached
    """

    provider = "anthropic"
    api = ANTHROPIC_MESSAGES

    def __init__(self, **options: Any) -> None:
        """Options as :class:`~promptcache.simulate.base.CacheSimulator`."""
        super().__init__(**options)
        self.entries: dict[int, _Entry] = {}

    def prompt_body(self, body: Mapping[str, Any], profile: ModelProfile) -> Mapping[str, Any]:
        """Earlier thinking blocks stripped on the models that keep only the current turn's
        (:data:`LAST_TURN_THINKING`, :func:`strip_earlier_thinking`)."""
        name = bare_model_id(profile.model)
        return strip_earlier_thinking(body) if LAST_TURN_THINKING.match(name) else body

    def _simulate(self, render: PromptRender, profile: ModelProfile, t: float) -> RequestResult:
        for i, message in enumerate(render.body.get("messages") or ()):
            if isinstance(message, Mapping) and message.get("role") == "system" and \
                    not (i > 0 and takes_system_messages(profile.model)):
                raise RequestRefused(f"messages[{i}].role: 'system' messages inside messages are taken by Opus 4.8+, "
                                     f"Opus 5, Fable 5 and Mythos 5 (not as the first message), not {profile.model}; "
                                     "put system text in the top-level 'system' field")
        points = breakpoints(render, profile)
        tokens, blocks = render.tokens, render.blocks
        keys = block_keys(render, profile.model)
        lookback = profile.lookback_blocks or len(blocks)  # None: no lookback limit
        read, hits, expired_end = 0, [], 0
        for index, _ in points:
            for position in range(index, max(-1, index - lookback), -1):
                entry = self.entries.get(keys[position])
                if entry is None or entry.visible > t:
                    continue
                if entry.expires <= t:
                    expired_end = max(expired_end, blocks[position].end)
                    continue
                length = min(blocks[position].end, entry.length, common_prefix(tokens, entry.tokens))
                read = max(read, length)
                hits.append(entry)
                break
        if profile.refresh_on_read:
            for entry in hits:
                entry.expires = max(entry.expires, t + profile.ttl_seconds[entry.ttl])
        written: list[tuple[int, str]] = []
        visible_after = profile.entry_visible_after_seconds or 0.0
        for index, ttl in points:
            end = blocks[index].end
            if end < profile.min_cacheable_tokens or end <= read or (written and written[-1][0] == end):
                continue
            old = self.entries.get(keys[index])
            visible = min(old.visible, t + visible_after) if old is not None and old.expires > t else t + visible_after
            self.entries[keys[index]] = _Entry(tokens, end, visible, t + profile.ttl_seconds[ttl], ttl)
            written.append((end, ttl))
        short, long, cached_end = split_writes(read, written, profile)
        usage = Usage(cache_read=read, cache_write_5m=short, cache_write_1h=long, uncached=len(tokens) - cached_end)
        cause, detail = None, ""
        if len(tokens) < profile.min_cacheable_tokens and not read:
            cause, detail = "below_minimum", below_minimum_detail(len(tokens), profile)
        elif not points:
            cause, detail = "no_breakpoint", ("no cache_control anywhere (no marker, no top-level automatic caching): "
                                              "the request neither reads nor writes the cache")
        elif points and not read and all(blocks[i].end < profile.min_cacheable_tokens for i, _ in points):
            cause, detail = "below_minimum", (f"every breakpoint is below the minimum cacheable prompt of "
                                              f"{profile.min_cacheable_tokens:,} tokens for {profile.model}")
        elif expired_end > read:
            cause, detail = "ttl_expired", f"an entry of {expired_end:,} tokens had expired (TTL, no read in time)"
        self._prune(t)
        return RequestResult(usage, len(tokens), profile, runtime_cause=cause, runtime_detail=detail, render=render)

    def _prune(self, t: float) -> None:
        if len(self.entries) > _PRUNE_ABOVE:  # keep recently expired entries to name ttl_expired misses
            longest = max((max(p.ttl_seconds.values()) for p in self._profiles.values()), default=3600)
            self.entries = {k: e for k, e in self.entries.items() if e.expires > t - longest}
