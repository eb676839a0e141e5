"""OpenAI prompt caching (Chat Completions), simulated from the documented rules.

Classic automatic caching (models before GPT-5.6; provider-cache-rules.md,
"OpenAI"; numbers from ``promptcache/data/providers.toml``):

- Requests are routed to a cache machine by a hash of their first
  ``routing_prefix_tokens`` (~256) tokens plus ``prompt_cache_key``. Above
  ``overflow_requests_per_minute`` (~15) requests per minute for one
  prefix+key, the overflow goes to other machines, which start cold.
- ``cached_tokens`` = 0 when the longest common prefix L with an unexpired
  earlier prompt on the same machine is below ``min_cacheable_tokens``
  (1,024), else ``1024 + 128 * floor((L - 1024) / 128)``. No write fee.
- Retention (``prompt_cache_retention``): ``in_memory`` keeps a prompt for
  ``ttl_seconds["in_memory"]`` (300 s) of idleness, refreshed by every reuse,
  and at most ``retention_max_seconds`` (1 h); ``24h`` keeps it 24 h.

GPT-5.6 and later (explicit breakpoints; the SDK's ``PromptCacheOptions`` docs):

- Breakpoints: ``prompt_cache_breakpoint: {"mode": "explicit", "ttl": "30m" |
  "12h"}`` on content parts; with ``prompt_cache_options.mode`` ``implicit``
  (the default) one implicit breakpoint at the end of the prompt plus the
  latest three explicit ones are written, with ``explicit`` the latest four
  (none: no caching). The boundary is not rounded to a token block.
- A read looks up the request's own boundaries (:meth:`OpenAISimulator._lookup_boundaries`):
  in explicit mode its first 2 and latest ``breakpoint_lookback`` (80 per the
  SDK, 50 per the guide: override it) explicit breakpoints; in implicit mode
  also the implicit breakpoint, up to 20 earlier eligible message endings and
  the end of the initial developer block. The longest boundary with a live
  entry of exactly that prefix on the same machine is read.
- Writes are billed x1.25 (``cache_write_tokens``), reads x0.1; entries live
  ``30m`` (or ``12h``), refreshed on read.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from promptcache.providers.apis import OPENAI_CHAT
from promptcache.misses.prefix_index import PrefixIndex, common_prefix
from promptcache.providers.profiles import ModelProfile
from promptcache.simulate.base import CacheSimulator, RequestRefused, RequestResult, below_minimum_detail, rounded, split_writes
from promptcache.simulate.render import PromptRender
from promptcache.providers.usage import Usage

_MINUTE = 60.0
_KEPT_BREAKPOINTS = 4096  # GPT-5.6+ entries one machine keeps (oldest dropped first): a memory bound, no documented rule

CACHE_SETTINGS = ("reasoning_effort", "parallel_tool_calls", "verbosity")
"""Chat Completions settings that are part of the cached prefix: [O-G] (OpenAI guide "Prompt caching", GPT-5.6
era, provider-audit-2026-12.md section 2.2 "Cache-affecting settings") lists ``parallel_tool_calls``,
``reasoning.effort`` and ``text.verbosity`` (Responses names; the Chat view of a Responses body carries them as
these keys) among the settings that change the prefix. An entry written under other values is never read.
Whether an explicit default equals an omitted value is not documented: values are compared as sent (assumed)."""


def settings_key(body: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The cache-affecting settings of a Chat body (:data:`CACHE_SETTINGS`), as a hashable key."""
    return tuple((name, repr(body[name])) for name in CACHE_SETTINGS if name in body)


@dataclasses.dataclass
class _Stored:
    """A prompt (classic) or a breakpoint prefix (GPT-5.6+) held by one machine."""

    tokens: Sequence[int]
    length: int
    created: float
    last_used: float
    idle_seconds: float
    max_seconds: float

    def alive(self, t: float) -> bool:
        return t < self.last_used + self.idle_seconds and t < self.created + self.max_seconds


@dataclasses.dataclass
class _Machine:
    index: PrefixIndex
    stored: dict[int, _Stored] = dataclasses.field(default_factory=dict)
    breakpoints: collections.deque[int] = dataclasses.field(default_factory=collections.deque)  # GPT-5.6+ keys, oldest first


class OpenAISimulator(CacheSimulator):
    """OpenAI's prompt cache: classic automatic caching, or GPT-5.6+ breakpoints, by the model's profile.

    Example::

        sim = OpenAISimulator(overrides={"min_cacheable_tokens": 2048})
        sim.simulate(body, t=12.5).usage.cache_read    # prompt_tokens_details.cached_tokens
    """

    provider = "openai"
    api = OPENAI_CHAT

    def __init__(self, **options: Any) -> None:
        """Options as :class:`~promptcache.simulate.base.CacheSimulator`."""
        super().__init__(**options)
        self.machines: dict[tuple[int, int], _Machine] = {}
        self.recent: dict[int, collections.deque[float]] = {}
        self.count = 0

    def _route(self, render: PromptRender, profile: ModelProfile, t: float) -> tuple[int, int]:
        """(prefix+key hash, overflow machine number): 0 until the per-minute limit is passed."""
        head = tuple(render.tokens[:profile.routing_prefix_tokens or len(render.tokens)])
        route = hash((profile.model, head, render.body.get("prompt_cache_key"), settings_key(render.body)))
        times = self.recent.setdefault(route, collections.deque())
        while times and times[0] <= t - _MINUTE:
            times.popleft()
        times.append(t)
        limit = profile.overflow_requests_per_minute
        return route, ((len(times) - 1) // limit if limit else 0)

    def _machine(self, key: tuple[int, int]) -> _Machine:
        machine = self.machines.get(key)
        if machine is None:
            machine = self.machines[key] = _Machine(PrefixIndex(max_entries=4096))
        return machine

    def _retention(self, render: PromptRender, profile: ModelProfile) -> tuple[float, float]:
        """(idle seconds, max seconds) a classic prompt is kept."""
        label = render.body.get("prompt_cache_retention") or profile.default_ttl
        if label not in profile.ttl_seconds:
            raise RequestRefused(f"prompt_cache_retention must be one of {', '.join(profile.ttl_seconds)}, not {label!r}")
        idle = float(profile.ttl_seconds[label])
        if label == profile.default_ttl and profile.retention_max_seconds:
            return idle, float(profile.retention_max_seconds)
        return idle, idle

    def _simulate(self, render: PromptRender, profile: ModelProfile, t: float) -> RequestResult:
        if profile.caching == "explicit_breakpoints":
            return self._explicit(render, profile, t)
        idle, longest = self._retention(render, profile)
        route, overflow = self._route(render, profile, t)
        machine = self._machine((route, overflow))
        tokens = render.tokens
        best = machine.index.best(tokens, lambda k: machine.stored[k].alive(t))
        length = common_prefix(tokens, machine.stored[best].tokens) if best is not None else 0
        cached = min(rounded(length, profile), len(tokens))
        if best is not None and cached:
            machine.stored[best].last_used = t
        cause, detail = self._runtime_cause(render, profile, t, machine, length, route, overflow)
        if len(tokens) >= profile.min_cacheable_tokens and (best is None or length < len(tokens) or not cached):
            key = self.count  # a prompt the machine already holds whole is only refreshed, not stored again
            self.count += 1
            machine.stored[key] = _Stored(tokens, len(tokens), t, t, idle, longest)
            for dropped in machine.index.add(key, tokens):
                machine.stored.pop(dropped, None)
        usage = Usage(cache_read=cached, uncached=len(tokens) - cached)
        return RequestResult(usage, len(tokens), profile, runtime_cause=cause, runtime_detail=detail, render=render)

    def _runtime_cause(self, render: PromptRender, profile: ModelProfile, t: float, machine: _Machine,
                       length: int, route: int, overflow: int) -> tuple[str | None, str]:
        tokens = render.tokens
        anywhere = machine.index.best(tokens)
        longer = common_prefix(tokens, machine.stored[anywhere].tokens) if anywhere is not None else 0
        if rounded(longer, profile) > rounded(length, profile):
            stored = machine.stored[anywhere]
            if t >= stored.created + stored.max_seconds:
                return "evicted", f"the matching prompt passed the {stored.max_seconds:.0f} s retention limit"
            return "ttl_expired", f"the matching prompt was idle more than {stored.idle_seconds:.0f} s"
        if overflow:
            home = self.machines.get((route, 0))
            best = home.index.best(tokens, lambda k: home.stored[k].alive(t)) if home else None
            if best is not None and rounded(common_prefix(tokens, home.stored[best].tokens), profile):
                return "evicted", (f"more than {profile.overflow_requests_per_minute} requests/min for this prefix "
                                   f"and prompt_cache_key: routed to a cold overflow machine")
        if len(tokens) < profile.min_cacheable_tokens and not rounded(length, profile):  # never stored, none read
            return "below_minimum", below_minimum_detail(len(tokens), profile)
        if 0 < length < profile.min_cacheable_tokens:
            return "below_minimum", (f"the shared prefix ({length:,} tokens) is below the minimum of "
                                     f"{profile.min_cacheable_tokens:,}")
        return None, ""

    def _explicit_points(self, render: PromptRender, profile: ModelProfile) -> tuple[list[tuple[int, str]], str, list[int]]:
        """GPT-5.6+ breakpoints of this request: ``(written, mode, explicit)``: the ``(prefix length, TTL label)``
        written in render order, the ``prompt_cache_options.mode``, and the ends of all its explicit breakpoints."""
        options = render.body.get("prompt_cache_options") or {}
        if not isinstance(options, Mapping):
            raise RequestRefused("prompt_cache_options must be an object")
        mode = options.get("mode", "implicit")
        if mode not in ("implicit", "explicit"):
            raise RequestRefused(f"prompt_cache_options.mode must be 'implicit' or 'explicit', not {mode!r}")
        default = options.get("ttl", profile.default_ttl)
        if default not in profile.ttl_seconds:
            raise RequestRefused(f"prompt_cache_options.ttl must be one of {', '.join(profile.ttl_seconds)}, "
                                 f"not {default!r}")
        explicit = []
        for block in render.blocks:
            marker = block.value.get("prompt_cache_breakpoint") if isinstance(block.value, Mapping) else None
            if marker is None:
                continue
            if not isinstance(marker, Mapping) or marker.get("mode") != "explicit":
                raise RequestRefused(f"{block.path}.prompt_cache_breakpoint.mode must be 'explicit'")
            ttl = marker.get("ttl", default)
            if ttl not in profile.ttl_seconds:
                raise RequestRefused(f"{block.path}.prompt_cache_breakpoint.ttl must be one of "
                                     f"{', '.join(profile.ttl_seconds)}, not {ttl!r}")
            explicit.append((block.end, str(ttl)))
        limit = profile.max_breakpoints  # None: no limit
        keep = limit if limit is None or mode == "explicit" else limit - 1  # the implicit one takes a slot
        points = explicit if keep is None else (explicit[-keep:] if keep > 0 else [])
        if mode == "implicit":
            points = [*points, (len(render.tokens), str(default))]
        return sorted(set(points)), str(mode), [end for end, _ in explicit]

    @staticmethod
    def _lookup_boundaries(render: PromptRender, profile: ModelProfile, mode: str, explicit: list[int]) -> list[int]:
        """The prefix lengths a GPT-5.6+ request looks up, from its own input ([O-G], the OpenAI guide "Prompt
        caching", GPT-5.6 era: lookup walks "the cache lookup boundaries ... in the incoming request"):

        - explicit mode: "the first 2 and latest 50 explicit breakpoints" (the latest ``breakpoint_lookback``);
        - implicit mode: those, the implicit breakpoint (the end of the prompt, as written here), up to 20 earlier
          eligible message endings (a user message, the last tool response of a group, the last developer /
          system message of the initial block) and the end of the initial developer block.
        """
        ends = sorted(set(explicit))
        latest = profile.breakpoint_lookback
        chosen = set(ends[:2]) | set(ends if latest is None else ends[-latest:] if latest > 0 else [])
        if mode == "implicit":
            chosen.add(len(render.tokens))
            spans = list(render.messages)
            eligible, initial = [], None
            for i, span in enumerate(spans):
                following = spans[i + 1].role if i + 1 < len(spans) else None
                if span.role in ("system", "developer") and all(p.role in ("system", "developer") for p in spans[:i]):
                    if following not in ("system", "developer"):
                        initial = span.end
                elif span.role == "user" or (span.role == "tool" and following != "tool"):
                    eligible.append(span.end)
            chosen.update(eligible[-20:])
            if initial is not None:
                chosen.add(initial)
        return sorted(end for end in chosen if 0 < end <= len(render.tokens))

    def _explicit(self, render: PromptRender, profile: ModelProfile, t: float) -> RequestResult:
        points, mode, explicit = self._explicit_points(render, profile)
        route, overflow = self._route(render, profile, t)
        machine = self._machine((route, overflow))
        tokens = render.tokens
        read, hit, expired = 0, None, 0
        for end in self._lookup_boundaries(render, profile, mode, explicit):
            stored = machine.stored.get(hash(tuple(tokens[:end])))
            if stored is None or stored.length != end or list(stored.tokens[:end]) != list(tokens[:end]):
                continue
            if stored.alive(t):
                read, hit = end, stored
            else:
                expired = max(expired, end)
        if hit is not None and profile.refresh_on_read:
            hit.last_used = t
        written = []
        for end, ttl in points:
            if end < profile.min_cacheable_tokens or end <= read or (written and written[-1][0] == end):
                continue
            seconds = float(profile.ttl_seconds[ttl])
            key = hash(tuple(tokens[:end]))
            if key not in machine.stored:  # a rewrite replaces the entry and keeps its place in the queue
                machine.breakpoints.append(key)
            machine.stored[key] = _Stored(tokens, end, t, t, seconds, float("inf"))
            written.append((end, ttl))
        while len(machine.breakpoints) > _KEPT_BREAKPOINTS:
            machine.stored.pop(machine.breakpoints.popleft(), None)
        short, long, cached_end = split_writes(read, written, profile)
        usage = Usage(cache_read=read, cache_write_5m=short, cache_write_1h=long, uncached=len(tokens) - cached_end)
        cause, detail = None, ""
        if len(tokens) < profile.min_cacheable_tokens and not read:
            cause, detail = "below_minimum", below_minimum_detail(len(tokens), profile)
        elif not points and mode == "explicit":
            cause, detail = "no_breakpoint", ("prompt_cache_options.mode is 'explicit' and no breakpoint is set: "
                                              "no caching")
        elif expired > read:
            cause, detail = "ttl_expired", f"a breakpoint entry of {expired:,} tokens had expired"
        elif points and not read and all(end < profile.min_cacheable_tokens for end, _ in points):
            cause, detail = "below_minimum", f"every breakpoint is below {profile.min_cacheable_tokens:,} tokens"
        return RequestResult(usage, len(tokens), profile, runtime_cause=cause, runtime_detail=detail, render=render)
