"""The cache rules and prices of one model as of one date (:class:`ModelProfile`), and its price tiers.

Built by :func:`promptcache.providers.profiles.model_profile` from ``promptcache/data/providers.toml``;
nothing here reads the data file.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import re
from collections.abc import Iterable, Mapping

from promptcache.providers import datafile


_DATE = re.compile(r"(?:dated|read) (\d{4}-\d{2}-\d{2})")
"""A value's date in its source note (``"key, dated D0, read D"``): the document's date first, else the read date."""

RULE_FIELDS = ("min_cacheable_tokens", "read_multiplier", "write_multipliers", "ttl_seconds",
               "input_usd_per_mtok", "output_usd_per_mtok", "price_tiers")
"""The values ``promptcache providers`` shows and whose date is the profile's "as of"."""


@dataclasses.dataclass(frozen=True)
class PriceTier:
    """Prompt-length pricing: a request whose prompt is above ``above_tokens`` tokens is billed at these prices.

    Prices are USD per million tokens; ``output_usd_per_mtok`` is None when the source gives none.
    Sources: Haiku 5.5 above 100k tokens (Claude pricing), OpenAI above 272K input tokens, Gemini above 200k.
    """

    above_tokens: int
    input_usd_per_mtok: float
    output_usd_per_mtok: float | None = None


@dataclasses.dataclass(frozen=True)
class ModelProfile:
    """The cache rules and prices of one model, as of one date.

    Token counts are tokens; TTLs are seconds; multipliers are relative to the
    model's base input price (base input token = 1). ``ttl_seconds`` and
    ``write_multipliers`` are keyed by the provider's TTL label (Anthropic
    ``"5m"``/``"1h"``; OpenAI classic ``"in_memory"``/``"24h"``; GPT-5.6+
    ``"30m"``/``"12h"``); a TTL without a write multiplier has no write fee
    (billed as ordinary input).

    Attributes:
        provider: ``anthropic``, ``openai``, ``gemini`` or ``deepseek``.
        model: the model id asked for.
        entry: the data-file model id used, or ``None`` for an unknown model.
        family: the family name matched (``None`` when none matched).
        known: False when the values are the family's conservative fallback.
        caching: ``explicit_breakpoints``, ``automatic_prefix``, ``implicit`` or ``prefix_units``.
        min_cacheable_tokens: below this prefix length nothing is cached.
        cached_token_step: cached counts are rounded down to this step above the minimum (OpenAI 128).
        read_multiplier: price of a cached (read) input token.
        max_breakpoints: breakpoints per request (``None``: no explicit breakpoints).
        lookback_blocks: Anthropic: blocks a read checks back from a breakpoint, its own included (20).
        breakpoint_lookback: GPT-5.6+: earlier breakpoints searched (80 per the SDK; 50 elsewhere).
        routing_prefix_tokens / overflow_requests_per_minute: OpenAI machine routing.
        retention_idle_max_seconds / retention_max_seconds: OpenAI in-memory retention bounds.
        unit_rule / unit_tokens: DeepSeek prefix units (``boundary`` now, ``fixed`` 64-token legacy).
        entry_visible_after_seconds: seconds after its writer starts until a new cache entry can be
            read (Anthropic ~1 s per the traces README); ``None``: at once.
        input_usd_per_mtok / output_usd_per_mtok: list prices, ``None`` when not known.
        price_tiers: prompt-length prices (:class:`PriceTier`, ascending); see :meth:`for_prompt`.
        retired: the day the provider stopped serving the id (``None``: not retired, or no date known).
        successor: the id the provider names as the replacement of a retired model.
        assumed: the fields whose values no source settles (the output marks them).
        sources: field name -> ``"source key, read YYYY-MM-DD"`` for the values used.
    """

    provider: str
    model: str
    entry: str | None
    family: str | None
    known: bool
    api: str
    caching: str
    min_cacheable_tokens: int
    cached_token_step: int
    read_multiplier: float
    write_multipliers: Mapping[str, float]
    ttl_seconds: Mapping[str, int]
    default_ttl: str
    refresh_on_read: bool
    max_breakpoints: int | None = None
    lookback_blocks: int | None = None
    breakpoint_lookback: int | None = None
    routing_prefix_tokens: int | None = None
    overflow_requests_per_minute: int | None = None
    retention_idle_max_seconds: int | None = None
    retention_max_seconds: int | None = None
    unit_rule: str | None = None
    unit_tokens: int | None = None
    entry_visible_after_seconds: float | None = None
    input_usd_per_mtok: float | None = None
    output_usd_per_mtok: float | None = None
    price_tiers: tuple[PriceTier, ...] = ()
    retired: _dt.date | None = None
    successor: str | None = None
    assumed: frozenset[str] = frozenset()
    as_of: _dt.date | None = None
    sources: Mapping[str, str] = dataclasses.field(default_factory=dict, compare=False)

    def write_multiplier(self, ttl: str | None = None) -> float:
        """Price of a cache-write token with TTL label ``ttl`` (default TTL when None); 1.0 when writes are free."""
        return float(self.write_multipliers.get(ttl or self.default_ttl, 1.0))

    @property
    def short_ttl(self) -> str:
        """The shortest TTL label (Anthropic ``5m``, GPT-5.6+ ``30m``); ``""`` when the provider has none."""
        return min(self.ttl_seconds, key=self.ttl_seconds.__getitem__) if self.ttl_seconds else ""

    @property
    def long_ttl(self) -> str:
        """The longest TTL label (Anthropic ``1h``, GPT-5.6+ ``12h``); ``""`` when the provider has none."""
        return max(self.ttl_seconds, key=self.ttl_seconds.__getitem__) if self.ttl_seconds else ""

    @property
    def has_usd_price(self) -> bool:
        """True when the data file gives this model a USD list price (else costs are relative)."""
        return self.input_usd_per_mtok is not None

    def retired_on(self, day: _dt.date | None = None) -> bool:
        """True when the model had been retired on ``day`` (default: :attr:`as_of`, else today)."""
        return self.retired is not None and (day or self.as_of or datafile.today()) >= self.retired

    def for_prompt(self, prompt_tokens: int) -> ModelProfile:
        """This profile with the prices of the highest tier whose ``above_tokens`` ``prompt_tokens`` exceeds
        (itself when no tier applies). Multipliers stay relative to the tier's input price."""
        tier = next((t for t in sorted(self.price_tiers, key=lambda t: -t.above_tokens)
                     if prompt_tokens > t.above_tokens), None)
        if tier is None:
            return self
        return dataclasses.replace(self, input_usd_per_mtok=tier.input_usd_per_mtok,
                                   output_usd_per_mtok=tier.output_usd_per_mtok)

    def values_date(self, fields: Iterable[str] = RULE_FIELDS) -> _dt.date | None:
        """The oldest date of ``fields``' values: each value's document date (its source's ``dated``) where
        known, else the date it was read. None when no value names a date. The profile is no fresher than this."""
        dates = [_dt.date.fromisoformat(m.group(1)) for key in fields if key in self.sources
                 for m in [_DATE.search(self.sources[key])] if m]
        return min(dates, default=None)

    def _shown(self, name: str) -> str:
        value = getattr(self, name)
        if isinstance(value, Mapping):  # per TTL: only the TTLs this model offers, shortest first
            labels = sorted((k for k in value if k in self.ttl_seconds or not self.ttl_seconds),
                            key=lambda k: self.ttl_seconds.get(k, 0))
            return f"{name}=" + (" ".join(f"{k}:{value[k]:g}" for k in labels) or "-")
        if isinstance(value, tuple):
            return name
        return f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"

    def assumed_note(self) -> str | None:
        """A note naming the values of this profile that no source settles, or None when every value is sourced."""
        if not self.assumed:
            return None
        values = ", ".join(self._shown(name) for name in sorted(self.assumed))
        return f"assumed for {self.model} (no source settles them; override with --rule or --providers): {values}"
