"""Provider cache rules as typed profiles, loaded from ``promptcache/data/providers.toml``.

Every threshold, multiplier, TTL and price promptcache uses comes from that one
versioned data file (with the source and the date each value was read); the
breakpoint planner, the simulators and the cost functions of
:mod:`promptcache.providers.usage` read it through :func:`model_profile`. Nothing else
hard-codes these numbers.

Resolution of a model (see the header of the data file): provider defaults,
then the first family whose ``match`` regex matches, then the model entry with
the longest matching id (the exact id or a dated snapshot of it, e.g.
``claude-sonnet-4-5-20250929``), then the ``history`` entry in force on
``as_of``. A model with no entry gets, field by field, the most conservative
value over the models of its family (highest minimum, least discount, highest
write premium, shortest TTL, no USD price) and ONE :class:`UnknownModelWarning`
naming it per process.

Parameters the sources disagree on (OpenAI's breakpoint lookback 50 vs 80, the
OpenAI minimum 1,024 vs 2,048, DeepSeek's unit rule) are ordinary fields;
override them with ``dataclasses.replace(profile, breakpoint_lookback=50)``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import math
import re
import threading
import tomllib
import typing
import warnings
from collections.abc import Mapping
from importlib import resources
from types import MappingProxyType
from typing import Any

PROVIDERS = ("anthropic", "openai", "gemini", "deepseek", "bedrock")

# A suffix that names a snapshot of a listed model rather than another model:
# dates, Vertex "@..." versions, Bedrock "-v1:0", "-latest", "-preview", "-exp", "-0613".
_SNAPSHOT_SUFFIX = re.compile(
    r"^(?:-\d{8}|-\d{4}-\d{2}-\d{2}|@[\w.\-]+|-v\d+(?::\d+)?|-latest|-preview|-exp|-\d{3,4})*$"
)
# Routing prefixes of gateways: "anthropic/claude-..." (OpenRouter), "us.anthropic.claude-..." (Bedrock).
_GATEWAY_PREFIX = re.compile(r"^(?:[\w.-]+/)?(?:(?:us|eu|apac|global)\.)?(?:anthropic\.|google\.|openai\.)?")
# Amazon Bedrock model ids and cross-region inference profiles ("anthropic.claude-...-v1:0",
# "us.anthropic.claude-..."): Bedrock documents its own cache minimums for them ([providers.bedrock]).
_BEDROCK_ID = re.compile(r"^(?:(?:us|eu|apac|global|jp|au|us-gov)\.)?anthropic\.claude")


class UnknownModelWarning(UserWarning):
    """A model has no entry in providers.toml; the family's most conservative values are used."""


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


_PROFILE_FIELDS = {f.name for f in dataclasses.fields(ModelProfile)}
_NOT_RULES = ("provider", "model", "entry", "family", "known", "api", "as_of", "sources")
_AT_LEAST_ONE = ("cached_token_step", "lookback_blocks", "unit_tokens", "overflow_requests_per_minute")
_CACHING_MODES = ("explicit_breakpoints", "automatic_prefix", "implicit", "prefix_units")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_overrides(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Check rule overrides (``--rule NAME=VALUE``) against the :class:`ModelProfile` fields, before any use.

    Every field but the identity ones (``provider``, ``model``, ``entry``, ``family``,
    ``known``, ``api``, ``as_of``, ``sources``) can be overridden, with a value of
    the field's type: token counts, steps and limits are whole numbers >= 0
    (``cached_token_step``, ``lookback_blocks``, ``unit_tokens``,
    ``overflow_requests_per_minute`` >= 1); multipliers, prices and seconds are
    numbers >= 0; ``null`` (None) where the field allows it (no limit); a choice
    for ``caching`` and ``unit_rule``; ``true``/``false`` for ``refresh_on_read``;
    ``{label: number}`` for ``ttl_seconds`` and ``write_multipliers``.

    Returns:
        The overrides, with whole numbers given for float fields made floats.

    Raises:
        ValueError: naming the override, what it got and what it takes.
    """
    hints = typing.get_type_hints(ModelProfile)
    out: dict[str, Any] = {}
    for name, value in overrides.items():
        if name not in hints:
            raise ValueError(f"unknown rule override {name!r}; use a ModelProfile field such as "
                             f"min_cacheable_tokens, breakpoint_lookback, lookback_blocks, unit_rule")
        if name in _NOT_RULES:
            raise ValueError(f"rule override {name}: {name} identifies the model, it is not a rule; "
                             f"use --model / --provider / --as-of instead")
        hint = hints[name]
        args = typing.get_args(hint)
        base = next((a for a in args if a is not type(None)), hint) if args and type(None) in args else hint
        where = f"rule override {name}={value!r}"
        if value is None:
            if type(None) not in args:
                raise ValueError(f"{where}: {name} cannot be null")
            out[name] = None
        elif base is int:
            least = 1 if name in _AT_LEAST_ONE else 0
            if not (isinstance(value, int) and not isinstance(value, bool) and value >= least):
                raise ValueError(f"{where}: expected a whole number >= {least}" + (" (or null: no limit)"
                                                                                    if type(None) in args else ""))
            out[name] = value
        elif base is float:
            if not (_is_number(value) and value >= 0):
                raise ValueError(f"{where}: expected a number >= 0")
            out[name] = float(value)
        elif base is bool:
            if not isinstance(value, bool):
                raise ValueError(f"{where}: expected true or false")
            out[name] = value
        elif base is str:
            choices = _CACHING_MODES if name == "caching" else tuple(dict.fromkeys(
                c for p in PROVIDERS for c in provider_rules(p).get(f"{name}_alternatives", ()))) or None
            if not isinstance(value, str) or (choices and value not in choices):
                raise ValueError(f"{where}: expected " + (f"one of {', '.join(choices)}" if choices else "a string"))
            out[name] = value
        else:  # ttl_seconds, write_multipliers: {label: number}
            if not (isinstance(value, Mapping) and value and all(isinstance(k, str) and _is_number(v) and v >= 0
                                                                  for k, v in value.items())):
                raise ValueError(f"{where}: expected an object of TTL label -> number >= 0, e.g. {{\"5m\": 300}}")
            out[name] = MappingProxyType(dict(value))
    return out
_META_KEYS = {"id", "match", "name", "families", "models", "source", "read", "history", "price_source", "price_read", "until",
              "field_sources",
              "model_prefixes", "min_cacheable_tokens_alternatives", "breakpoint_lookback_alternatives",
              "unit_rule_alternatives"}
# How to pick the conservative value of a field over a family's models.
_CONSERVATIVE = {
    "min_cacheable_tokens": max, "cached_token_step": max, "read_multiplier": max,
    "max_breakpoints": min, "lookback_blocks": min, "breakpoint_lookback": min,
}


@functools.cache
def load_rules() -> Mapping[str, Any]:
    """The parsed data file (read once per process).

    Raises:
        ValueError: the file is not valid TOML or lacks a provider table; the
            message names the file so it can be fixed.
    """
    text = resources.files("promptcache").joinpath("data/providers.toml").read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"promptcache/data/providers.toml is not valid TOML: {exc}") from exc
    missing = [p for p in PROVIDERS if p not in data.get("providers", {})]
    if missing:
        raise ValueError(f"promptcache/data/providers.toml lacks [providers.{missing[0]}]")
    return data


def _strip_gateway(model: str) -> str:
    return _GATEWAY_PREFIX.sub("", model.strip().lower(), count=1)


def provider_for_model(model: str) -> str:
    """The provider family of ``model`` by its id prefix (``claude`` -> ``anthropic``, ``gpt-``/``o3`` -> ``openai``, ...;
    a Bedrock id such as ``us.anthropic.claude-...-v1:0`` -> ``bedrock``).

    Raises:
        ValueError: no provider's ``model_prefixes`` match; pass the provider
            explicitly (one of :data:`PROVIDERS`).
    """
    if _BEDROCK_ID.match(model.strip().lower()):
        return "bedrock"
    name = _strip_gateway(model)
    for provider, table in load_rules()["providers"].items():
        if any(name.startswith(prefix) for prefix in table.get("model_prefixes", ())):
            return provider
    raise ValueError(
        f"cannot tell the provider of model {model!r}; pass provider= one of {', '.join(PROVIDERS)}"
    )


def _source_note(entry: Mapping[str, Any]) -> str:
    return f"{entry.get('source', '?')}, read {entry.get('read', '?')}"


def _apply(values: dict[str, Any], sources: dict[str, str], entry: Mapping[str, Any]) -> None:
    note = _source_note(entry)
    own = entry.get("field_sources", {})
    known = load_rules()["sources"]
    for key, value in entry.items():
        if key in _META_KEYS:
            continue
        if key not in _PROFILE_FIELDS:
            raise ValueError(f"promptcache/data/providers.toml: unknown field {key!r} (in {entry.get('id') or entry.get('name')})")
        values[key] = value
        sources[key] = note if key not in own else f"{own[key]}, read {known[own[key]]['read']}"
    if "input_usd_per_mtok" in entry:
        price_note = f"{entry.get('price_source', '?')}, read {entry.get('price_read', '?')}"
        sources["input_usd_per_mtok"] = sources["output_usd_per_mtok"] = price_note


def _history_entry(model_entry: Mapping[str, Any], as_of: _dt.date | None) -> Mapping[str, Any] | None:
    """The earliest history entry still in force on ``as_of`` (entries hold values *until* a date)."""
    if as_of is None:
        return None
    candidates = [h for h in model_entry.get("history", ()) if as_of < h["until"]]
    return min(candidates, key=lambda h: h["until"]) if candidates else None


def _match_model(models: list[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    best = None
    for entry in models:
        model_id = entry["id"]
        if name == model_id or (name.startswith(model_id) and _SNAPSHOT_SUFFIX.match(name[len(model_id):])):
            if best is None or len(model_id) > len(best["id"]):
                best = entry
    return best


_warned: set[tuple[str, str]] = set()
_warn_lock = threading.Lock()


def _warn_unknown(provider: str, model: str, family: str | None, values: Mapping[str, Any]) -> None:
    with _warn_lock:
        if (provider, model) in _warned:
            return
        _warned.add((provider, model))
    scope = f"family {family!r}" if family else f"provider {provider!r}"
    warnings.warn(
        f"model {model!r} has no entry in promptcache/data/providers.toml; using the most conservative "
        f"values of its {scope} (min cacheable tokens {values['min_cacheable_tokens']}, cached input "
        f"x{values['read_multiplier']}, costs in relative units). Add the model to the data file to use its own.",
        UnknownModelWarning,
        stacklevel=4,
    )


@functools.lru_cache(maxsize=512)
def _resolve(provider: str, model: str, as_of: _dt.date | None) -> ModelProfile:
    rules = load_rules()["providers"][provider]
    name = _strip_gateway(model)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    _apply(values, sources, rules)
    family = next((f for f in rules.get("families", ()) if re.search(f["match"], name)), None)
    if family is not None:
        _apply(values, sources, family)
    models = rules.get("models", [])
    entry = _match_model(models, name)
    if entry is not None:
        _apply(values, sources, entry)
        history = _history_entry(entry, as_of)
        if history is not None:
            _apply(values, sources, history)
    else:
        peers = [m for m in models if family is None or re.search(family["match"], m["id"])] or models
        for key, pick in _CONSERVATIVE.items():
            # Every history value counts too: the conservative fallback covers all the dates we know.
            options = [v[key] for m in peers for v in (m, *m.get("history", ())) if key in v]
            if not options and key in values:
                options.append(values[key])  # no peer sets it: the family / provider value stands
            if options:
                values[key] = pick(options)
                sources[key] = f"conservative over {len(peers)} known model(s)"
        for key in ("write_multipliers", "ttl_seconds"):
            merged = dict(values.get(key, {}))
            for m in peers:
                for label, number in m.get(key, {}).items():
                    merged[label] = max(merged.get(label, number), number) if key == "write_multipliers" \
                        else min(merged.get(label, number), number)
            values[key] = merged
        values["input_usd_per_mtok"] = values["output_usd_per_mtok"] = None
        _warn_unknown(provider, model, family["name"] if family else None, values)
    values["write_multipliers"] = MappingProxyType(dict(values.get("write_multipliers", {})))
    values["ttl_seconds"] = MappingProxyType(dict(values.get("ttl_seconds", {})))
    return ModelProfile(
        provider=provider, model=model, entry=entry["id"] if entry else None,
        family=family["name"] if family else None, known=entry is not None, as_of=as_of,
        sources=MappingProxyType(sources), **values,
    )


def model_profile(provider: str | None, model: str, *, as_of: _dt.date | str | None = None) -> ModelProfile:
    """The cache rules and prices of ``model`` at ``provider``, as of a date.

    Args:
        provider: one of :data:`PROVIDERS`, or ``None`` to infer it with
            :func:`provider_for_model`.
        model: the model id as sent in request bodies (dated snapshots and
            gateway prefixes such as ``anthropic.`` or ``us.anthropic.`` are understood).
        as_of: apply the values in force on this date (``date`` or ISO
            string), e.g. ``2026-03-18`` gives Sonnet 4.6 its pre-May-2026
            minimum of 2,048 tokens. ``None``: the current values.

    Returns:
        A frozen :class:`ModelProfile`. Unknown models get their family's most
        conservative values with one :class:`UnknownModelWarning` naming the
        model (once per process).

    Raises:
        ValueError: unknown provider, or a provider that cannot be inferred.
    """
    if provider is None:
        provider = provider_for_model(model)
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")
    if isinstance(as_of, str):
        as_of = _dt.date.fromisoformat(as_of)
    return _resolve(provider, model, as_of)


def provider_rules(provider: str) -> Mapping[str, Any]:
    """The provider-level table of the data file (defaults shared by all its models), read-only.

    Raises:
        ValueError: unknown provider.
    """
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")
    return MappingProxyType(load_rules()["providers"][provider])


def known_models(provider: str) -> list[str]:
    """The model ids the data file lists for ``provider``, in file order."""
    return [m["id"] for m in load_rules()["providers"][provider].get("models", [])]
