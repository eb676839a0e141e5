"""providers.toml and its loader: every documented rule, exact values."""

from __future__ import annotations

import dataclasses
import datetime as dt
import warnings

import pytest

from promptcache.providers.profiles import (
    PROVIDERS, UnknownModelWarning, known_models, load_rules, model_profile, provider_for_model, provider_rules,
)

# provider-cache-rules.md, "Anthropic": minimum cacheable prefix per model.
ANTHROPIC_MINIMUMS = {
    "claude-opus-5": 512, "claude-sonnet-4-5": 1024, "claude-sonnet-4-6": 1024, "claude-opus-4-8": 1024,
    "claude-opus-4-7": 2048, "claude-opus-4-5": 4096, "claude-opus-4-6": 4096, "claude-haiku-4-5": 4096,
}


@pytest.mark.parametrize(("model", "minimum"), sorted(ANTHROPIC_MINIMUMS.items()))
def test_anthropic_minimum_per_model(model: str, minimum: int) -> None:
    profile = model_profile("anthropic", model)
    assert profile.known and profile.entry == model
    assert profile.min_cacheable_tokens == minimum


def test_anthropic_rules() -> None:
    p = model_profile("anthropic", "claude-sonnet-4-5")
    assert (p.caching, p.max_breakpoints, p.lookback_blocks) == ("explicit_breakpoints", 4, 20)
    assert dict(p.write_multipliers) == {"5m": 1.25, "1h": 2.0}
    assert p.read_multiplier == 0.1
    assert dict(p.ttl_seconds) == {"5m": 300, "1h": 3600}
    assert (p.default_ttl, p.short_ttl, p.long_ttl, p.refresh_on_read) == ("5m", "5m", "1h", True)
    assert p.write_multiplier() == 1.25 and p.write_multiplier("1h") == 2.0


def test_sonnet_4_6_history() -> None:
    """"Sonnet 4.6 was listed at 2,048 until May 2026"."""
    assert model_profile("anthropic", "claude-sonnet-4-6", as_of="2026-04-30").min_cacheable_tokens == 2048
    assert model_profile("anthropic", "claude-sonnet-4-6", as_of=dt.date(2026, 5, 1)).min_cacheable_tokens == 1024
    assert model_profile("anthropic", "claude-sonnet-4-6").min_cacheable_tokens == 1024


def test_openai_classic_rules() -> None:
    p = model_profile("openai", "gpt-4.1-mini")
    assert (p.caching, p.min_cacheable_tokens, p.cached_token_step) == ("automatic_prefix", 1024, 128)
    assert (p.routing_prefix_tokens, p.overflow_requests_per_minute) == (256, 15)
    assert (p.retention_idle_max_seconds, p.retention_max_seconds) == (600, 3600)
    assert dict(p.ttl_seconds) == {"in_memory": 300, "24h": 86400}
    assert dict(p.write_multipliers) == {} and p.write_multiplier() == 1.0  # no write fee
    assert p.max_breakpoints is None
    assert provider_rules("openai")["min_cacheable_tokens_alternatives"] == [1024, 2048]


@pytest.mark.parametrize(("model", "family", "read"), [
    ("gpt-4o", "gpt-4o", 0.5), ("gpt-4o-mini", "gpt-4o", 0.5), ("gpt-4.1", "gpt-4.1", 0.25),
    ("gpt-4.1-mini", "gpt-4.1", 0.25), ("o3", "o3", 0.25), ("gpt-5", "gpt-5", 0.1), ("gpt-5-mini", "gpt-5", 0.1),
])
def test_openai_cached_discount_per_family(model: str, family: str, read: float) -> None:
    p = model_profile(None, model)
    assert (p.provider, p.family, p.read_multiplier) == ("openai", family, read)
    assert p.sources["read_multiplier"] == "rules_doc, read 2026-11-29"


def test_only_what_the_rules_doc_says_has_its_source() -> None:
    """The doc gives "75% (4.1, o3)": o1 / o4-mini / o3-mini do not get o3's discount labelled rules_doc."""
    o4 = model_profile(None, "o4-mini")
    assert (o4.family, o4.read_multiplier, o4.sources["read_multiplier"]) == (
        "o-series", 0.5, "promptcache_fallback, read 2026-11-29")
    assert model_profile(None, "o3-2025-04-16").read_multiplier == 0.25
    with pytest.warns(UnknownModelWarning):
        for model in ("o1-provider-test", "o3-mini-provider-test"):
            p = model_profile(None, model)
            assert p.family == "o-series" and p.read_multiplier == 0.5 and "rules_doc" not in p.sources["read_multiplier"]
    assert model_profile(None, "gemini-2.5-flash").sources["read_multiplier"].startswith("promptcache_assumption")
    assert model_profile(None, "deepseek-chat").sources["read_multiplier"] == "deepseek_pricing, read 2025-09-29"
    assert model_profile(None, "gpt-5.6").sources["write_multipliers"].startswith("promptcache_assumption")
    for provider in PROVIDERS:
        for entry in [provider_rules(provider), *provider_rules(provider).get("families", ())]:
            assert set(entry.get("field_sources", {}).values()) <= set(load_rules()["sources"]), entry


def test_gpt_5_6_breakpoints() -> None:
    p = model_profile("openai", "gpt-5.6")
    assert (p.family, p.caching, p.max_breakpoints, p.breakpoint_lookback) == ("gpt-5.6+", "explicit_breakpoints", 4, 80)
    assert p.ttl_seconds["30m"] == 1800 and p.default_ttl == "30m"
    assert p.write_multiplier() == 1.25 and p.read_multiplier == 0.1
    assert provider_rules("openai")["families"][-1]["breakpoint_lookback_alternatives"] == [50, 80]
    assert dataclasses.replace(p, breakpoint_lookback=50).breakpoint_lookback == 50  # the disputed parameter


@pytest.mark.parametrize(("model", "minimum"), [
    ("gemini-2.5-flash", 2048), ("gemini-2.5-pro", 4096), ("gemini-3-pro-preview", 4096), ("gemini-3-flash", 4096),
])
def test_gemini_implicit_minimums(model: str, minimum: int) -> None:
    p = model_profile(None, model)
    assert (p.provider, p.caching, p.min_cacheable_tokens) == ("gemini", "implicit", minimum)
    assert p.ttl_seconds == {"explicit": 3600}


def test_deepseek_units() -> None:
    p = model_profile(None, "deepseek-chat")
    assert (p.caching, p.unit_rule, p.unit_tokens) == ("prefix_units", "boundary", 64)
    assert provider_rules("deepseek")["unit_rule_alternatives"] == ["boundary", "fixed"]


@pytest.mark.parametrize(("model", "entry"), [
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"), ("us.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
    ("anthropic/claude-opus-4-5", "claude-opus-4-5"), ("claude-opus-4-5@20251101", "claude-opus-4-5"),
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"), ("gpt-4.1-mini", "gpt-4.1-mini"), ("gpt-4.1", "gpt-4.1"),
])
def test_snapshot_and_gateway_ids_resolve(model: str, entry: str) -> None:
    assert model_profile(None, model).entry == entry


def test_prices_and_sources() -> None:
    p = model_profile("anthropic", "claude-sonnet-4-5")
    assert (p.input_usd_per_mtok, p.output_usd_per_mtok) == (3.0, 15.0)
    assert p.sources["min_cacheable_tokens"] == "rules_doc, read 2026-11-29"
    assert p.sources["input_usd_per_mtok"] == "anthropic_pricing, read 2025-09-29"
    assert model_profile("openai", "gpt-4.1-mini").input_usd_per_mtok == 0.4
    assert model_profile("anthropic", "claude-opus-5").input_usd_per_mtok is None  # no known price: relative units


def test_every_entry_is_dated_and_sourced() -> None:
    rules = load_rules()
    sources = rules["sources"]
    assert rules["version"] >= 1
    for provider in PROVIDERS:
        table = rules["providers"][provider]
        entries = [table, *table.get("families", []), *table.get("models", [])]
        entries += [h for m in table.get("models", []) for h in m.get("history", [])]
        for entry in entries:
            assert entry["source"] in sources, entry
            assert isinstance(entry["read"], dt.date) and entry["read"].year == 2026, entry
            if "input_usd_per_mtok" in entry:
                assert entry["price_source"] in sources and isinstance(entry["price_read"], dt.date), entry
        assert known_models(provider)


def test_unknown_model_falls_back_with_one_warning() -> None:
    with pytest.warns(UnknownModelWarning, match="'claude-unlisted-9'") as record:
        p = model_profile("anthropic", "claude-unlisted-9")
        again = model_profile("anthropic", "claude-unlisted-9")
    assert len(record) == 1
    assert again == p
    assert (p.known, p.entry, p.family) == (False, None, "claude")
    assert p.min_cacheable_tokens == 4096  # the most conservative minimum of the family
    assert p.read_multiplier == 0.1 and p.write_multiplier("1h") == 2.0
    assert p.input_usd_per_mtok is None


def test_unknown_variant_is_not_a_snapshot() -> None:
    """'-lite' names another model, not a dated snapshot: family fallback, not gemini-2.5-flash's price."""
    with pytest.warns(UnknownModelWarning, match="gemini-2.5-flash-lite"):
        p = model_profile(None, "gemini-2.5-flash-lite")
    assert (p.entry, p.family, p.min_cacheable_tokens, p.input_usd_per_mtok) == (None, "gemini-2.5-flash", 2048, None)


def test_unknown_gpt_5_6_plus_model_gets_breakpoint_rules() -> None:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        p = model_profile(None, "gpt-5.9-pro")
    assert [str(w.message) for w in record if issubclass(w.category, UnknownModelWarning)]
    assert (p.family, p.caching, p.breakpoint_lookback) == ("gpt-5.6+", "explicit_breakpoints", 80)


@pytest.mark.parametrize(("model", "provider"), [
    ("claude-sonnet-4-5", "anthropic"), ("gpt-4.1-mini", "openai"), ("o4-mini", "openai"),
    ("gemini-2.5-pro", "gemini"), ("deepseek-reasoner", "deepseek"),
])
def test_provider_for_model(model: str, provider: str) -> None:
    assert provider_for_model(model) == provider


def test_bad_provider_input() -> None:
    with pytest.raises(ValueError, match="cannot tell the provider of model 'llama-3-8b'"):
        provider_for_model("llama-3-8b")
    with pytest.raises(ValueError, match="unknown provider 'mistral'"):
        model_profile("mistral", "mistral-large")
