"""Provider cache rules as typed profiles, loaded from ``promptcache/data/providers.toml``.

Every threshold, multiplier, TTL and price promptcache uses comes from that one
versioned data file (with the source and the date each value was read); the
breakpoint planner, the simulators and the cost functions of
:mod:`promptcache.providers.usage` read it through :func:`model_profile`. Nothing else
hard-codes these numbers. A user's rules file (``--providers FILE``,
``[tool.promptcache.providers]``; :mod:`promptcache.providers.userfile`) is merged in.

Resolution of a model (see the header of the data file): provider defaults,
then the first family whose ``match`` regex matches, then the model entry with
the longest matching id or alias (the exact id or a dated snapshot of it, e.g.
``claude-sonnet-4-5-20250929``); at each level the ``history`` entries in force on
``as_of`` replace the values they name. A model with no entry gets, field by
field, the most conservative value over the models of its family (highest
minimum, least discount, highest write premium, shortest TTL, no USD price) and
ONE :class:`UnknownModelWarning` naming it and the family per process. A retired
model keeps its values and gets ONE :class:`RetiredModelWarning` ("retired on ...").

Parameters the sources disagree on (OpenAI's breakpoint lookback 50 vs 80, the
OpenAI minimum 1,024 vs 2,048, DeepSeek's unit rule) are ordinary fields;
override them with ``dataclasses.replace(profile, breakpoint_lookback=50)``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import re
import threading
import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from promptcache.providers import datafile
from promptcache.providers.datafile import PROVIDERS, load_rules
from promptcache.providers.modelprofile import ModelProfile, PriceTier
from promptcache.providers.overrides import check_overrides

__all__ = ["PROVIDERS", "ModelProfile", "PriceTier", "RetiredModelWarning", "UnknownModelWarning", "check_overrides",
           "bare_model_id", "clear_cache", "known_models", "load_rules", "model_profile", "provider_for_model", "provider_rules"]

# A suffix that names a snapshot of a listed model rather than another model:
# dates, Vertex "@..." versions, Bedrock "-v1:0", "-latest", "-preview", "-exp", "-0613".
_SNAPSHOT_SUFFIX = re.compile(
    r"^(?:-\d{8}|-\d{4}-\d{2}-\d{2}|@[\w.\-]+|-v\d+(?::\d+)?|-latest|-preview|-exp|-\d{3,4})*$"
)
BEDROCK_REGION = r"(?:(?:us-gov|us|eu|apac|global|jp|au)\.)"
"""The geography prefix of a Bedrock cross-region inference profile id ("us.", "jp.", "us-gov.", ...): the one
definition every Bedrock id pattern uses (Bedrock user guide, inference profiles)."""
# Routing prefixes of gateways: "anthropic/claude-..." (OpenRouter), "us.anthropic.claude-..." (Bedrock).
_GATEWAY_PREFIX = re.compile(rf"^(?:[\w.-]+/)?{BEDROCK_REGION}?(?:anthropic\.|google\.|openai\.)?")
ASSUMPTION_SOURCE = "promptcache_assumption"
"""The source key of values no source settles (like a field listed in an entry's ``assumed``)."""
# Amazon Bedrock model ids and cross-region inference profiles ("anthropic.claude-...-v1:0",
# "us.anthropic.claude-..."): Bedrock documents its own cache minimums for them ([providers.bedrock]).
_BEDROCK_ID = re.compile(rf"^{BEDROCK_REGION}?anthropic\.claude")


class UnknownModelWarning(UserWarning):
    """A model has no entry in providers.toml; the family's most conservative values are used."""


class RetiredModelWarning(UserWarning):
    """A model was retired by its provider before the simulated date; its last recorded values are used."""


_PROFILE_FIELDS = {f.name for f in dataclasses.fields(ModelProfile)}
_META_KEYS = {"id", "aliases", "match", "name", "families", "models", "source", "read", "history", "price_source",
              "price_read", "until", "field_sources", "assumed", "model_prefixes",
              "min_cacheable_tokens_alternatives", "breakpoint_lookback_alternatives", "unit_rule_alternatives"}
# How to pick the conservative value of a field over a family's models.
_CONSERVATIVE = {
    "min_cacheable_tokens": max, "cached_token_step": max, "read_multiplier": max,
    "max_breakpoints": min, "lookback_blocks": min, "breakpoint_lookback": min,
}
_PRICE_KEYS = ("input_usd_per_mtok", "output_usd_per_mtok", "price_tiers")


def _strip_gateway(model: str) -> str:
    return _GATEWAY_PREFIX.sub("", model.strip().lower(), count=1)


def bare_model_id(model: str) -> str:
    """``model`` lower-cased without its gateway or Bedrock prefix: ``"jp.anthropic.claude-sonnet-4-6"`` and
    ``"anthropic/claude-sonnet-4-6"`` -> ``"claude-sonnet-4-6"`` (a snapshot suffix stays)."""
    return _strip_gateway(model.strip().split("/")[-1])


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


def _note(key: str, read: Any) -> str:
    """``"key, read D"``, or ``"key, dated D0, read D"`` when the source gives the date of its document."""
    dated = load_rules().get("sources", {}).get(key, {}).get("dated")
    return f"{key}, {f'dated {dated}, ' if dated else ''}read {read}"


def _source_note(entry: Mapping[str, Any]) -> str:
    return _note(entry.get("source", "?"), entry.get("read", "?"))


def _apply(values: dict[str, Any], sources: dict[str, str], assumed: set[str], entry: Mapping[str, Any]) -> None:
    """Lay ``entry``'s values over ``values``, noting each one's source and whether it is assumed."""
    note = _source_note(entry)
    own = entry.get("field_sources", {})
    known = load_rules()["sources"]
    for key, value in entry.items():
        if key in _META_KEYS:
            continue
        if key not in _PROFILE_FIELDS:
            raise ValueError(f"providers data: unknown field {key!r} (in {entry.get('id') or entry.get('name')})")
        values[key] = value
        if key in _PRICE_KEYS and "price_source" in entry:
            source = _note(entry["price_source"], entry.get("price_read", "?"))
        elif key in own:
            source = _note(own[key], known.get(own[key], {}).get("read", "?"))
        else:
            source = note
        sources[key] = source
        assumed.discard(key)
        if source.startswith(ASSUMPTION_SOURCE):
            assumed.add(key)
    assumed.update(entry.get("assumed", ()))


def _apply_level(values: dict[str, Any], sources: dict[str, str], assumed: set[str], entry: Mapping[str, Any],
                 as_of: _dt.date | None) -> None:
    """An entry, then its ``history`` values in force on ``as_of``: per field, the entry with the earliest
    ``until`` after ``as_of`` (history entries hold values *until* a date)."""
    _apply(values, sources, assumed, entry)
    if as_of is None:
        return
    for past in sorted((h for h in entry.get("history", ()) if as_of < h["until"]), key=lambda h: h["until"],
                       reverse=True):
        _apply(values, sources, assumed, past)


def _match_model(models: list[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    best, best_len = None, -1
    for entry in models:
        for model_id in (entry["id"], *entry.get("aliases", ())):
            if name == model_id or (name.startswith(model_id) and _SNAPSHOT_SUFFIX.match(name[len(model_id):])):
                if len(model_id) > best_len:
                    best, best_len = entry, len(model_id)
    return best


_warned: set[tuple[str, ...]] = set()
_warn_lock = threading.Lock()


def _warn_once(key: tuple[str, ...], text: str, category: type[Warning]) -> None:
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(text, category, stacklevel=5)


def _warn_unknown(provider: str, model: str, family: str | None, values: Mapping[str, Any]) -> None:
    scope = f"the {family!r} family fallback" if family else f"the {provider!r} provider fallback"
    _warn_once(("unknown", provider, model), (
        f"model {model!r} has no entry in promptcache/data/providers.toml; using {scope}: the most conservative values of its "
        f"models (min cacheable tokens {values['min_cacheable_tokens']}, cached input x{values['read_multiplier']}, "
        f"costs in relative units). Add the model with --providers FILE to use its own (`promptcache providers` "
        f"lists the known ones)."), UnknownModelWarning)


def _warn_retired(profile: ModelProfile) -> None:
    then = f"on {profile.as_of.isoformat()}" if profile.as_of else "today"
    instead = f"; its successor is {profile.successor!r}" if profile.successor else ""
    _warn_once(("retired", profile.provider, profile.model, str(profile.as_of)), (
        f"model {profile.model!r} was retired on {profile.retired.isoformat()} ({profile.sources.get('retired', '?')}): "
        f"the API no longer serves it {then}{instead}. Simulated with the rules it had; pass --as-of before "
        f"{profile.retired.isoformat()} or --model to choose."), RetiredModelWarning)


@functools.lru_cache(maxsize=512)
def _resolve(provider: str, model: str, as_of: _dt.date | None, day: _dt.date) -> ModelProfile:
    """``model``'s profile with the values in force on ``day`` (``as_of``, else today: a history entry whose
    ``until`` is still ahead, such as a promotional price, is today's value)."""
    rules = load_rules()["providers"][provider]
    name = _strip_gateway(model)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    assumed: set[str] = set()
    _apply_level(values, sources, assumed, rules, day)
    family = next((f for f in rules.get("families", ()) if re.search(f["match"], name)), None)
    if family is not None:
        _apply_level(values, sources, assumed, family, day)
    models = rules.get("models", [])
    entry = _match_model(models, name)
    if entry is not None:
        _apply_level(values, sources, assumed, entry, day)
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
        values.pop("price_tiers", None)
        values.pop("retired", None)
        values.pop("successor", None)
        _warn_unknown(provider, model, family["name"] if family else None, values)
    values["write_multipliers"] = MappingProxyType(dict(values.get("write_multipliers", {})))
    values["ttl_seconds"] = MappingProxyType(dict(values.get("ttl_seconds", {})))
    values["price_tiers"] = tuple(sorted((PriceTier(**tier) for tier in values.get("price_tiers", ())),
                                         key=lambda t: t.above_tokens))
    return ModelProfile(
        provider=provider, model=model, entry=entry["id"] if entry else None,
        family=family["name"] if family else None, known=entry is not None, as_of=as_of,
        assumed=frozenset(assumed & _PROFILE_FIELDS), sources=MappingProxyType(sources), **values,
    )


def clear_cache() -> None:
    """Forget resolved profiles and the warnings already given (after the rules data changed)."""
    _resolve.cache_clear()
    with _warn_lock:
        _warned.clear()


def model_profile(provider: str | None, model: str, *, as_of: _dt.date | str | None = None) -> ModelProfile:
    """The cache rules and prices of ``model`` at ``provider``, as of a date.

    Args:
        provider: one of :data:`PROVIDERS`, or ``None`` to infer it with
            :func:`provider_for_model`.
        model: the model id as sent in request bodies (dated snapshots and
            gateway prefixes such as ``anthropic.`` or ``us.anthropic.`` are understood).
        as_of: apply the values in force on this date (``date`` or ISO
            string), e.g. ``2026-04-01`` gives Sonnet 4.6 its minimum of 2,048
            tokens of March to May 2026. ``None``: the values in force today.

    Returns:
        A frozen :class:`ModelProfile`. Unknown models get their family's most
        conservative values with one :class:`UnknownModelWarning` naming the
        model and the family (once per process); a model retired on or before
        ``as_of`` (default today) gets one :class:`RetiredModelWarning`.

    Raises:
        ValueError: unknown provider, or a provider that cannot be inferred.
    """
    if provider is None:
        provider = provider_for_model(model)
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")
    if isinstance(as_of, str):
        as_of = _dt.date.fromisoformat(as_of)
    profile = _resolve(provider, model, as_of, as_of or datafile.today())
    if profile.retired_on():
        _warn_retired(profile)
    return profile


def provider_rules(provider: str) -> Mapping[str, Any]:
    """The provider-level table of the data file (defaults shared by all its models), read-only.

    Raises:
        ValueError: unknown provider.
    """
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")
    return MappingProxyType(load_rules()["providers"][provider])


def known_models(provider: str) -> list[str]:
    """The model ids the data file lists for ``provider`` (aliases after their entry), in file order."""
    return [model_id for m in load_rules()["providers"][provider].get("models", [])
            for model_id in (m["id"], *m.get("aliases", ()))]
