"""providers.toml and its loader: every documented rule, exact values."""

from __future__ import annotations

import dataclasses
import datetime as dt
import warnings

import pytest

from promptcache.providers.profiles import (
    PROVIDERS, ModelProfile, UnknownModelWarning, known_models, load_rules, model_profile, provider_for_model, provider_rules,
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
    """Audit 2.1 "Min: Sonnet 4.6": "1,024 from 2026-05-13 copy; 2,048 in 2026-03-13…05-11 copies; 1,024 quoted
    in Feb 2026 (anthropic-sdk-python #1194)"."""
    assert model_profile("anthropic", "claude-sonnet-4-6", as_of="2026-02-15").min_cacheable_tokens == 1024
    assert model_profile("anthropic", "claude-sonnet-4-6", as_of="2026-03-13").min_cacheable_tokens == 2048
    assert model_profile("anthropic", "claude-sonnet-4-6", as_of=dt.date(2026, 5, 12)).min_cacheable_tokens == 2048
    assert model_profile("anthropic", "claude-sonnet-4-6", as_of=dt.date(2026, 5, 13)).min_cacheable_tokens == 1024
    assert model_profile("anthropic", "claude-sonnet-4-6").min_cacheable_tokens == 1024


def test_openai_classic_rules() -> None:
    p = model_profile("openai", "gpt-4.1-mini")
    assert (p.caching, p.min_cacheable_tokens, p.cached_token_step) == ("automatic_prefix", 1024, 128)
    assert (p.routing_prefix_tokens, p.overflow_requests_per_minute) == (256, 15)
    assert (p.retention_idle_max_seconds, p.retention_max_seconds) == (600, 3600)
    # [O-G]: 24h "typically keeps entries available for around 30 minutes and can retain them for up to 24 hours"
    assert dict(p.ttl_seconds) == {"in_memory": 300, "24h": 1800}
    assert p.default_ttl == "in_memory" and p.assumed == {"min_cacheable_tokens", "routing_prefix_tokens"}
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
    assert p.sources["read_multiplier"] == "openai_pricing_2026, dated 2026-07-30, read 2026-12-02"


def test_only_what_a_source_says_has_its_source() -> None:
    """[O-P] prices o4-mini's cached input at $0.275 on $1.10 (0.25), o1 and o3-mini at 0.5; an unlisted o-series
    model gets the family's most conservative value, labelled as such."""
    o4 = model_profile(None, "o4-mini-2025-04-16", as_of="2026-10-01")
    assert (o4.family, o4.read_multiplier, o4.sources["read_multiplier"]) == (
        "o-series", 0.25, "openai_pricing_2026, dated 2026-07-30, read 2026-12-02")
    assert model_profile(None, "o3-2025-04-16").read_multiplier == 0.25
    with pytest.warns(UnknownModelWarning):
        for model in ("o1-provider-test", "o3-mini-provider-test"):
            p = model_profile(None, model)
            # the least discount over the listed o-series models: o1-pro / o3-pro have none [O-P]
            assert p.family == "o-series" and p.read_multiplier == 1.0
            assert p.sources["read_multiplier"].startswith("conservative over")
    assert model_profile(None, "gemini-2.5-flash").sources["read_multiplier"] == "gemini_pricing_2026, dated 2026-07-04, read 2026-12-02"
    assert model_profile(None, "deepseek-chat", as_of="2026-07-01").sources["read_multiplier"] == \
        "deepseek_pricing, read 2025-09-29"
    assert model_profile(None, "gpt-5.6").sources["ttl_seconds"] == "openai_sdk, read 2026-12-02"
    for provider in PROVIDERS:
        for entry in [provider_rules(provider), *provider_rules(provider).get("families", ())]:
            assert set(entry.get("field_sources", {}).values()) <= set(load_rules()["sources"]), entry


def test_gpt_5_6_breakpoints() -> None:
    p = model_profile("openai", "gpt-5.6")
    assert (p.family, p.caching, p.max_breakpoints, p.breakpoint_lookback) == ("gpt-5.6+", "explicit_breakpoints", 4, 80)
    # openai 3.57.0 PromptCacheOptions: ttl Literal["30m"], "currently the only supported value"
    assert dict(p.ttl_seconds) == {"30m": 1800} and p.default_ttl == "30m"
    assert p.write_multiplier() == 1.25 and p.read_multiplier == 0.1
    assert provider_rules("openai")["families"][-1]["breakpoint_lookback_alternatives"] == [50, 80]
    assert dataclasses.replace(p, breakpoint_lookback=50).breakpoint_lookback == 50  # the disputed parameter


@pytest.mark.parametrize(("model", "minimum"), [
    # [G-C] 2026-07-07 / 2026-10-13 copies: 2.5 Flash and 2.5 Pro 2,048; May 2026: 3 Pro 4,096, 3 Flash 1,024
    ("gemini-2.5-flash", 2048), ("gemini-2.5-pro", 2048), ("gemini-3-pro-preview", 4096),
    ("gemini-3-flash-preview", 1024),
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
    assert p.sources["min_cacheable_tokens"] == "anthropic_caching_doc, dated 2026-08-21, read 2026-12-02"
    assert p.sources["input_usd_per_mtok"] == "anthropic_pricing_2026, dated 2026-08-21, read 2026-12-02"
    assert model_profile("openai", "gpt-4.1-mini").input_usd_per_mtok == 0.4
    assert model_profile("anthropic", "claude-mythos-preview").input_usd_per_mtok is None  # no price: relative units


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
            assert set(entry.get("field_sources", {}).values()) <= set(sources), entry
            assert set(entry.get("assumed", ())) <= {f.name for f in dataclasses.fields(ModelProfile)}, entry
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
