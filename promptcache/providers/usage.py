"""Normalised prompt-cache usage, its cost, and per-session statistics.

Providers report cache usage in different shapes and with different meanings
(provider-cache-rules.md, "Common ground"): Anthropic's ``input_tokens``
EXCLUDES cache reads and writes, while OpenAI's ``prompt_tokens`` /
``input_tokens``, Gemini's ``prompt_token_count`` and DeepSeek's
``prompt_tokens`` INCLUDE them. :func:`normalize_usage` turns every shape into
one :class:`Usage` ``(cache_read, cache_write_5m, cache_write_1h, uncached)``:

=====================  ===========================================================================
Anthropic              ``cache_read_input_tokens``; ``cache_creation.ephemeral_5m_input_tokens`` /
                       ``ephemeral_1h_input_tokens`` (or ``cache_creation_input_tokens`` as 5m);
                       ``input_tokens`` is the uncached part
OpenAI Chat            ``prompt_tokens_details.cached_tokens``; GPT-5.6+ ``cache_write_tokens``
OpenAI Responses       ``input_tokens_details.cached_tokens`` / ``cache_write_tokens`` (split by
                       ``cache_write_tokens_details.ttl_30m_tokens`` / ``ttl_12h_tokens``: the installed
                       openai 3.57.0 ``types/responses/response_usage.py`` still defines both, though the
                       request side accepts only ``ttl: "30m"``; kept so a 12h bucket, if reported, is not lost)
Gemini                 ``cached_content_token_count`` of ``prompt_token_count`` (camelCase too)
Gemini Interactions    ``total_cached_tokens`` of ``total_input_tokens`` (ai.google.dev/gemini-api/docs/tokens:
                       "the usage in the interaction response"; the cached part taken as included in the
                       input, as ``prompt_token_count`` includes it: assumed)
DeepSeek               ``prompt_cache_hit_tokens`` / ``prompt_cache_miss_tokens``
Bedrock Converse       ``cacheReadInputTokens`` / ``cacheWriteInputTokens`` (1h part from ``cacheDetails``);
                       ``inputTokens`` is the uncached part
vLLM / SGLang          as OpenAI Chat (``cached_tokens`` with ``--enable-prompt-tokens-details``)
llama.cpp server       ``timings.cache_n`` / ``timings.prompt_n``
=====================  ===========================================================================

The two write fields are the provider's short- and long-TTL write buckets:
Anthropic 5m / 1h, OpenAI GPT-5.6+ 30m / 12h (a Chat usage without the TTL split
counts as the request's default, 30m). Costs come from the model's
:class:`~promptcache.providers.profiles.ModelProfile` (multipliers and, where known, USD
list prices); nothing here hard-codes a price.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from promptcache.providers.profiles import ModelProfile


@dataclasses.dataclass(frozen=True)
class Usage:
    """Prompt tokens of one request (or a sum), split by how the cache treated them.

    Attributes:
        cache_read: tokens served from the cache.
        cache_write_5m: tokens written with the short TTL (Anthropic 5m, GPT-5.6+ 30m).
        cache_write_1h: tokens written with the long TTL (Anthropic 1h, GPT-5.6+ 12h).
        uncached: tokens neither read nor written.
        output: output tokens (not part of the prompt; carried for reports).
        requests: how many requests this usage sums (1 for one response).
    """

    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    uncached: int = 0
    output: int = 0
    requests: int = 1

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"Usage.{field.name} must be a non-negative integer, got {value!r}")

    @property
    def cache_write(self) -> int:
        """All tokens written to the cache (both TTLs)."""
        return self.cache_write_5m + self.cache_write_1h

    @property
    def prompt_tokens(self) -> int:
        """All prompt tokens: read + written + uncached."""
        return self.cache_read + self.cache_write + self.uncached

    @property
    def hit_rate(self) -> float:
        """``cache_read / prompt_tokens`` (0.0 for an empty prompt)."""
        return self.cache_read / self.prompt_tokens if self.prompt_tokens else 0.0

    @property
    def write_rate(self) -> float:
        """``cache_write / prompt_tokens`` (0.0 for an empty prompt)."""
        return self.cache_write / self.prompt_tokens if self.prompt_tokens else 0.0

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(*(getattr(self, f.name) + getattr(other, f.name) for f in dataclasses.fields(self)))


@dataclasses.dataclass(frozen=True)
class Cost:
    """Input cost of some usage with caching and without it (all prompt tokens at the base price).

    ``unit`` is ``"USD"`` when the model's list price is known, else
    ``"relative"`` (one uncached input token = 1.0). Output tokens cost the
    same either way and are not included.
    """

    with_cache: float
    without_cache: float
    unit: str

    @property
    def savings(self) -> float:
        """``without_cache - with_cache`` (negative when cache writes cost more than they save)."""
        return self.without_cache - self.with_cache

    @property
    def ratio(self) -> float:
        """``with_cache / without_cache`` (1.0 for no tokens)."""
        return self.with_cache / self.without_cache if self.without_cache else 1.0


def _get(obj: Any, *names: str) -> Any:
    """The first present, non-None attribute or key of ``obj`` among ``names``."""
    for name in names:
        value = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
        if value is not None:
            return value
    return None


def _int(value: Any, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or value != int(value):
        raise ValueError(f"usage field {what} must be a non-negative integer, got {value!r}")
    return int(value)


def _as_mapping(usage: Any) -> Any:
    if hasattr(usage, "model_dump") and not isinstance(usage, Mapping):  # pydantic models of the SDKs
        return usage.model_dump()
    return usage


def _split(total: int, part: int, what: str) -> int:
    if part > total:
        raise ValueError(f"usage reports {part} {what} out of only {total} prompt tokens")
    return total - part


def normalize_usage(usage: Any, provider: str | None = None) -> Usage:
    """Normalise a provider's usage object (dict or SDK model, or a whole response holding it).

    Args:
        usage: the usage object; a response dict/model with ``usage`` or
            ``usage_metadata`` is unwrapped.
        provider: ``anthropic``, ``openai``, ``gemini``, ``deepseek`` or ``bedrock`` to
            resolve an ambiguous shape (Anthropic vs OpenAI Responses usage
            without any cache field); inferred from the fields when None.

    Returns:
        A :class:`Usage` with ``requests=1``.

    Raises:
        ValueError: the shape is not recognised, a count is negative, or the
            cached part exceeds the prompt (the message names the field).
    """
    data = _as_mapping(usage)
    if not isinstance(data, Mapping):
        raise ValueError(f"usage must be a mapping or an SDK usage object, not {type(usage).__name__}")
    for wrapper in ("usage", "usage_metadata", "usageMetadata"):
        inner = data.get(wrapper)
        if isinstance(inner, Mapping) or hasattr(inner, "model_dump"):
            return normalize_usage(inner, provider)
    if isinstance(data.get("timings"), Mapping) and "cache_n" in data["timings"]:  # llama.cpp server
        timings = data["timings"]
        return Usage(cache_read=_int(timings["cache_n"], "timings.cache_n"),
                     uncached=_int(timings.get("prompt_n"), "timings.prompt_n"),
                     output=_int(timings.get("predicted_n"), "timings.predicted_n"))
    bedrock_fields = ("cacheReadInputTokens", "cacheWriteInputTokens", "cacheDetails")
    if any(f in data for f in bedrock_fields) or (provider == "bedrock" and "inputTokens" in data):
        return _bedrock_usage(data)
    if "prompt_cache_hit_tokens" in data or "prompt_cache_miss_tokens" in data or provider == "deepseek":
        return Usage(cache_read=_int(data.get("prompt_cache_hit_tokens"), "prompt_cache_hit_tokens"),
                     uncached=_int(data.get("prompt_cache_miss_tokens"), "prompt_cache_miss_tokens"),
                     output=_int(data.get("completion_tokens"), "completion_tokens"))
    if "total_cached_tokens" in data or "total_input_tokens" in data:  # Gemini Interactions API
        prompt = _int(data.get("total_input_tokens"), "total_input_tokens")
        cached = _int(data.get("total_cached_tokens"), "total_cached_tokens")
        return Usage(cache_read=cached, uncached=_split(prompt, cached, "total_cached_tokens"),
                     output=_int(data.get("total_output_tokens"), "total_output_tokens"))
    gemini_prompt = _get(data, "prompt_token_count", "promptTokenCount")
    if gemini_prompt is not None or provider == "gemini":
        prompt = _int(gemini_prompt, "prompt_token_count")
        cached = _int(_get(data, "cached_content_token_count", "cachedContentTokenCount"), "cached_content_token_count")
        output = _int(_get(data, "candidates_token_count", "candidatesTokenCount"), "candidates_token_count")
        return Usage(cache_read=cached, uncached=_split(prompt, cached, "cached_content_token_count"), output=output)
    if "prompt_tokens" in data:  # OpenAI Chat Completions and compatible servers
        prompt = _int(data["prompt_tokens"], "prompt_tokens")
        details = data.get("prompt_tokens_details") or {}
        cached = _int(_get(details, "cached_tokens"), "prompt_tokens_details.cached_tokens")
        written = _int(_get(details, "cache_write_tokens"), "prompt_tokens_details.cache_write_tokens")
        return Usage(cache_read=cached, cache_write_5m=written,
                     uncached=_split(prompt, cached + written, "cached + written tokens"),
                     output=_int(data.get("completion_tokens"), "completion_tokens"))
    anthropic_fields = ("cache_read_input_tokens", "cache_creation_input_tokens", "cache_creation")
    if "input_tokens_details" in data or (provider == "openai" and "input_tokens" in data):  # OpenAI Responses
        prompt = _int(data.get("input_tokens"), "input_tokens")
        details = data.get("input_tokens_details") or {}
        cached = _int(_get(details, "cached_tokens"), "input_tokens_details.cached_tokens")
        written = _int(_get(details, "cache_write_tokens"), "input_tokens_details.cache_write_tokens")
        split = details.get("cache_write_tokens_details") or {}
        long_ttl = _int(_get(split, "ttl_12h_tokens"), "cache_write_tokens_details.ttl_12h_tokens")
        if long_ttl > written:
            raise ValueError(f"usage reports {long_ttl} 12h write tokens out of {written} written")
        return Usage(cache_read=cached, cache_write_5m=written - long_ttl, cache_write_1h=long_ttl,
                     uncached=_split(prompt, cached + written, "cached + written tokens"),
                     output=_int(data.get("output_tokens"), "output_tokens"))
    if "input_tokens" in data or any(f in data for f in anthropic_fields):  # Anthropic Messages
        read = _int(data.get("cache_read_input_tokens"), "cache_read_input_tokens")
        created = _int(data.get("cache_creation_input_tokens"), "cache_creation_input_tokens")
        split = data.get("cache_creation") or {}
        w5 = _int(_get(split, "ephemeral_5m_input_tokens"), "cache_creation.ephemeral_5m_input_tokens")
        w1h = _int(_get(split, "ephemeral_1h_input_tokens"), "cache_creation.ephemeral_1h_input_tokens")
        if w5 + w1h == 0 and created:  # no split reported: the default TTL (5m)
            w5 = created
        elif created and w5 + w1h != created:
            raise ValueError(f"cache_creation splits {w5}+{w1h} tokens but cache_creation_input_tokens is {created}")
        return Usage(cache_read=read, cache_write_5m=w5, cache_write_1h=w1h,
                     uncached=_int(data.get("input_tokens"), "input_tokens"),
                     output=_int(data.get("output_tokens"), "output_tokens"))
    raise ValueError(f"unrecognised usage object with keys {sorted(data)}; expected Anthropic, OpenAI, "
                     f"Gemini, DeepSeek or llama.cpp usage fields")


def _bedrock_usage(data: Mapping[str, Any]) -> Usage:
    """Bedrock Converse ``usage`` (API reference ``TokenUsage``): ``cacheReadInputTokens``,
    ``cacheWriteInputTokens`` split by ``cacheDetails`` ``[{"ttl": "1h" | "5m", "inputTokens"}]``.
    ``inputTokens`` is taken as the uncached part, as Anthropic's ``input_tokens`` (the reference says only "the
    number of tokens sent in the request"; third-party parsers read it so, e.g. anomalyco/opencode #38427: assumed)."""
    read = _int(data.get("cacheReadInputTokens"), "cacheReadInputTokens")
    written = _int(data.get("cacheWriteInputTokens"), "cacheWriteInputTokens")
    long_ttl = 0
    for k, detail in enumerate(data.get("cacheDetails") or []):
        if isinstance(detail, Mapping) and detail.get("ttl") == "1h":
            long_ttl += _int(detail.get("inputTokens"), f"cacheDetails[{k}].inputTokens")
    if long_ttl > written:
        raise ValueError(f"usage reports {long_ttl} 1h write tokens out of {written} written (cacheWriteInputTokens)")
    return Usage(cache_read=read, cache_write_5m=written - long_ttl, cache_write_1h=long_ttl,
                 uncached=_int(data.get("inputTokens"), "inputTokens"),
                 output=_int(data.get("outputTokens"), "outputTokens"))


def usage_cost(usage: Usage, profile: ModelProfile, *, unit: str | None = None) -> Cost:
    """Input cost of ``usage`` under ``profile``'s prices, with caching and without.

    With caching: ``uncached + read_multiplier * cache_read +
    write_multiplier(short TTL) * cache_write_5m + write_multiplier(long TTL) *
    cache_write_1h`` base-input tokens (Anthropic: reads x0.1, writes x1.25 /
    x2; OpenAI classic writes are free, i.e. x1). Without: all prompt tokens x1.
    In USD, a one-request usage is priced at the model's prompt-length tier
    (:meth:`~promptcache.providers.modelprofile.ModelProfile.for_prompt`: Haiku 5.5 above
    100k tokens, OpenAI above 272K, Gemini above 200k); cost sums request by request.

    Args:
        unit: ``"USD"`` (needs a known list price), ``"relative"``, or None for
            USD when known else relative.

    Raises:
        ValueError: ``unit="USD"`` for a model without a list price.
    """
    if unit is None:
        unit = "USD" if profile.has_usd_price else "relative"
    if unit not in ("USD", "relative"):
        raise ValueError(f"unit must be 'USD' or 'relative', not {unit!r}")
    if unit == "USD" and not profile.has_usd_price:
        raise ValueError(f"no USD price for model {profile.model!r} in providers.toml; use unit='relative'")
    if usage.requests == 1:
        profile = profile.for_prompt(usage.prompt_tokens)
    per_token = profile.input_usd_per_mtok / 1e6 if unit == "USD" else 1.0
    with_cache = (usage.uncached + profile.read_multiplier * usage.cache_read
                  + profile.write_multiplier(profile.short_ttl) * usage.cache_write_5m
                  + profile.write_multiplier(profile.long_ttl) * usage.cache_write_1h)
    return Cost(with_cache * per_token, usage.prompt_tokens * per_token, unit)


@dataclasses.dataclass
class SessionStats:
    """Running totals of one session: summed usage and its cost in relative units (and USD when known)."""

    usage: Usage = dataclasses.field(default_factory=lambda: Usage(requests=0))
    cost_relative: Cost = dataclasses.field(default_factory=lambda: Cost(0.0, 0.0, "relative"))
    cost_usd: Cost | None = dataclasses.field(default_factory=lambda: Cost(0.0, 0.0, "USD"))

    def add(self, usage: Usage, profile: ModelProfile) -> None:
        """Add one request's normalised usage, costed with ``profile``."""
        self.usage = self.usage + usage
        rel = usage_cost(usage, profile, unit="relative")
        self.cost_relative = Cost(self.cost_relative.with_cache + rel.with_cache,
                                  self.cost_relative.without_cache + rel.without_cache, "relative")
        if self.cost_usd is not None and profile.has_usd_price:
            usd = usage_cost(usage, profile, unit="USD")
            self.cost_usd = Cost(self.cost_usd.with_cache + usd.with_cache,
                                 self.cost_usd.without_cache + usd.without_cache, "USD")
        else:
            self.cost_usd = None  # one request without a price makes the USD total unknown

    @property
    def tokens_saved(self) -> int:
        """Prompt tokens served from the cache instead of being recomputed."""
        return self.usage.cache_read

    @property
    def cost(self) -> Cost:
        """The USD cost when every request had a price, else the relative one."""
        return self.cost_usd if self.cost_usd is not None and self.usage.requests else self.cost_relative


class UsageStats:
    """Accumulates normalised usage per session and overall (thread-unsafe; one per client).

    Example::

        stats = UsageStats()
        stats.add(response.usage, session="sup-001", profile=model_profile("anthropic", "claude-sonnet-4-5"))
        stats.total.usage.hit_rate, stats.total.cost.savings, stats.sessions["sup-001"].tokens_saved
    """

    def __init__(self, profile: ModelProfile | None = None) -> None:
        """``profile``: the default model profile for :meth:`add` calls that give none."""
        self.profile = profile
        self.sessions: dict[str, SessionStats] = {}
        self.total = SessionStats()

    def add(self, usage: Any, *, session: str = "", profile: ModelProfile | None = None,
            provider: str | None = None) -> Usage:
        """Record one response's usage (raw provider usage or a :class:`Usage`) and return it normalised.

        Raises:
            ValueError: no profile given here or in the constructor, or what
                :func:`normalize_usage` raises.
        """
        profile = profile or self.profile
        if profile is None:
            raise ValueError("UsageStats.add needs a ModelProfile (pass profile= here or to UsageStats())")
        normalised = usage if isinstance(usage, Usage) else normalize_usage(usage, provider or profile.provider)
        self.sessions.setdefault(session, SessionStats()).add(normalised, profile)
        self.total.add(normalised, profile)
        return normalised

    def summary(self) -> dict[str, Any]:
        """Totals and per-session figures as plain JSON-ready values."""
        def row(stats: SessionStats) -> dict[str, Any]:
            cost = stats.cost
            return {"requests": stats.usage.requests, "prompt_tokens": stats.usage.prompt_tokens,
                    "cache_read_tokens": stats.usage.cache_read, "cache_write_tokens": stats.usage.cache_write,
                    "uncached_tokens": stats.usage.uncached, "hit_rate": stats.usage.hit_rate,
                    "tokens_saved": stats.tokens_saved, "cost": cost.with_cache,
                    "cost_without_cache": cost.without_cache, "savings": cost.savings, "cost_unit": cost.unit}
        return {"total": row(self.total), "sessions": {name: row(s) for name, s in self.sessions.items()}}
