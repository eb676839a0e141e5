"""providers.toml against shared/research/provider-audit-2026-12.md: one test per audit row fixed.

Each test names the audit row (section, rule) and quotes the doc sentence or price it implements;
source keys in brackets are the audit's.
"""

from __future__ import annotations

import datetime as dt
import warnings

import pytest

from promptcache.providers.profiles import RetiredModelWarning, UnknownModelWarning, model_profile
from promptcache.providers.usage import Usage, usage_cost


def profile(model: str, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RetiredModelWarning)
        return model_profile(None, model, **kw)


# 2.1 "Min: Opus 5.5, Sonnet 5.5, Haiku 5.5, Fable 5 / 5.1, Mythos 5 / 5.1": "The minimum cacheable prompt length is
# 512 tokens" [A-M]; "Min: Sonnet 5": 1,024 [A-PC]; "Min: Opus 4.1 / 4 / Sonnet 4, Haiku 3.5": 1,024 / 1,024 /
# 1,024 / 2,048 [A-PC]; "Min: Mythos Preview": 2,048.
@pytest.mark.parametrize(("model", "minimum"), [
    ("claude-opus-5-5", 512), ("claude-sonnet-5-5", 512), ("claude-haiku-5-5", 512), ("claude-fable-5", 512),
    ("claude-fable-5-1", 512), ("claude-mythos-5", 512), ("claude-mythos-5-1", 512), ("claude-sonnet-5", 1024),
    ("claude-opus-4-1", 1024), ("claude-opus-4-20250514", 1024), ("claude-sonnet-4-20250514", 1024),
    ("claude-3-5-haiku-20241022", 2048), ("claude-mythos-preview", 2048),
])
def test_anthropic_late_2026_minimums(model: str, minimum: int) -> None:
    p = profile(model)
    assert p.known and p.min_cacheable_tokens == minimum and "min_cacheable_tokens" not in p.assumed


def test_anthropic_read_multiplier_per_model() -> None:
    """2.1 "Read multiplier": "0.1 for most models; Fable 5.1/Mythos 5.1 0.025 [A-PR later copy]; Opus 5.5 0.05
    [A-M]; Sonnet 5.5 0.05 from 2026-10-07 [A-2]; Fable 5.2 0.025 [A-2]"."""
    assert profile("claude-fable-5-1").read_multiplier == 0.025  # "$0.25 on $10"
    assert profile("claude-mythos-5-1").read_multiplier == 0.025
    assert profile("claude-opus-5-5").read_multiplier == 0.05  # "$0.20 on $4"
    assert profile("claude-fable-5-2").read_multiplier == 0.025  # "$0.20 on $8"
    assert profile("claude-sonnet-5-5").read_multiplier == 0.05
    assert profile("claude-sonnet-5-5", as_of="2026-10-06").read_multiplier == 0.1  # "0.1x at launch"
    assert profile("claude-sonnet-5-5").sources["read_multiplier"].startswith("anthropic_secondary")
    assert profile("claude-sonnet-4-5").read_multiplier == 0.1


def test_anthropic_minimum_history_opus_4_7() -> None:
    """2.1 "Min: Opus 4.7": "2,048 since 2026-06-09 copy; 4,096 in 2026-04-20…06-05 copies"; Mythos Preview the same."""
    for model in ("claude-opus-4-7", "claude-mythos-preview"):
        assert profile(model, as_of="2026-06-05").min_cacheable_tokens == 4096
        assert profile(model, as_of="2026-06-09").min_cacheable_tokens == 2048
        assert profile(model).min_cacheable_tokens == 2048


@pytest.mark.parametrize(("model", "price"), [
    # 2.1 "Prices missing": "$5/$25 ×4, $3/$15 [A-PR]; Sonnet 5 $2/$10; Opus 5.5 $4/$20; Sonnet 5.5 $2/$10; Haiku 5.5
    # $0.10/$0.50 (≤100k) …; Fable 5.1 $10/$50; Fable 5.2 $8/$40 (secondary)"
    ("claude-opus-5", (5.0, 25.0)), ("claude-opus-4-8", (5.0, 25.0)), ("claude-opus-4-7", (5.0, 25.0)),
    ("claude-opus-4-6", (5.0, 25.0)), ("claude-sonnet-4-6", (3.0, 15.0)), ("claude-sonnet-5", (2.0, 10.0)),
    ("claude-opus-5-5", (4.0, 20.0)), ("claude-sonnet-5-5", (2.0, 10.0)), ("claude-haiku-5-5", (0.1, 0.5)),
    ("claude-fable-5-1", (10.0, 50.0)), ("claude-fable-5-2", (8.0, 40.0)),
])
def test_anthropic_prices(model: str, price: tuple[float, float]) -> None:
    p = profile(model)
    assert (p.input_usd_per_mtok, p.output_usd_per_mtok) == price


def test_haiku_5_5_prompt_length_tier() -> None:
    """2.1 "Prices missing": Haiku 5.5 "$0.10/$0.50 (≤100k), $0.50/$2.50 (>100k)"; writes "$0.125/$0.20 ≤100k"
    (x1.25 / x2). The tier applies to the whole request."""
    p = profile("claude-haiku-5-5")
    assert p.for_prompt(100_000) is p
    assert (p.for_prompt(100_001).input_usd_per_mtok, p.for_prompt(100_001).output_usd_per_mtok) == (0.5, 2.5)
    small = usage_cost(Usage(cache_read=50_000, cache_write_5m=40_000, uncached=10_000), p)
    assert small.with_cache == pytest.approx((10_000 + 0.1 * 50_000 + 1.25 * 40_000) * 0.1 / 1e6)
    large = usage_cost(Usage(cache_read=50_000, cache_write_5m=40_000, uncached=10_001), p)
    assert large.with_cache == pytest.approx((10_001 + 0.1 * 50_000 + 1.25 * 40_000) * 0.5 / 1e6)
    assert large.without_cache == pytest.approx(100_001 * 0.5 / 1e6)
    # summed usage (several requests) is not re-tiered: cost sums request by request
    assert usage_cost(Usage(uncached=200_000, requests=2), p).without_cache == pytest.approx(200_000 * 0.1 / 1e6)


def test_openai_long_context_tier() -> None:
    """2.2 "Long context": ">272K input: input & cache ×2, output ×1.5 for the whole request (5.4/5.5/5.6/6)"."""
    for model in ("gpt-5.4", "gpt-5.5", "gpt-5.6-terra", "gpt-6-sol"):
        p = profile(model)
        tier = p.for_prompt(272_001)
        assert tier.input_usd_per_mtok == 2 * p.input_usd_per_mtok
        assert tier.output_usd_per_mtok == 1.5 * p.output_usd_per_mtok
        assert p.for_prompt(272_000) is p


def test_openai_no_12h_ttl() -> None:
    """2.2 "GPT-5.6+ TTL": `prompt_cache_options.ttl`: "30m", "currently the only supported value" [O-SDK]."""
    p = profile("gpt-5.6-sol")
    assert dict(p.ttl_seconds) == {"30m": 1800} and dict(p.write_multipliers) == {"30m": 1.25}
    assert (p.short_ttl, p.long_ttl) == ("30m", "30m")


def test_openai_retention() -> None:
    """2.2 "Retention values" / "Default retention" / "24h availability": 24h "typically … around 30 minutes";
    non-ZDR orgs default to 24h where it is offered (gpt-5.5, 5.4, 5.2, 5.1, gpt-5, gpt-4.1); gpt-5.5 only 24h."""
    assert profile("gpt-4.1").ttl_seconds["24h"] == 1800
    for model in ("gpt-5.4", "gpt-5.2", "gpt-5.1", "gpt-5", "gpt-4.1"):
        assert profile(model).default_ttl == "24h", model
    assert profile("gpt-4o").default_ttl == "in_memory"
    for model in ("gpt-5.5", "gpt-5.5-pro"):
        assert dict(profile(model).ttl_seconds) == {"24h": 1800} and profile(model).default_ttl == "24h"


def test_gpt_5_5_interval() -> None:
    """2.2 "GPT-5.5 / 5.5 Pro": "implicit breakpoints every 2,048 tokens"."""
    p = profile("gpt-5.5-2026-04-23")
    assert (p.entry, p.cached_token_step, p.min_cacheable_tokens) == ("gpt-5.5", 2048, 2048)
    assert "min_cacheable_tokens" in p.assumed  # the first boundary at 2,048 is our reading


@pytest.mark.parametrize(("model", "read"), [
    # 2.2 "Discount o4-mini": "$0.275/$1.10 = 0.25"; "Pro models, gpt-4o-2024-05-13": "no cached price (no discount)";
    # "GPT-6.1 Sol read": "$0.10 on $2 = 0.05 [O-2]"; "Discount o1, o3-mini": 0.5.
    ("o4-mini", 0.25), ("gpt-5-pro", 1.0), ("gpt-5.2-pro", 1.0), ("gpt-5.4-pro", 1.0), ("gpt-5.5-pro", 1.0),
    ("o1-pro", 1.0), ("o3-pro", 1.0), ("gpt-4o-2024-05-13", 1.0), ("gpt-6.1-sol", 0.05), ("o1", 0.5),
    ("o3-mini", 0.5), ("gpt-5.4-mini", 0.1),
])
def test_openai_discounts(model: str, read: float) -> None:
    p = profile(model)
    assert p.known and p.read_multiplier == read


@pytest.mark.parametrize(("model", "price"), [
    # 2.2 "Prices missing": "5.6-sol $4/$20 (promo), terra $2/$12, luna $0.20/$1.20 …; 5.5 $5/$30; 5.4 $2.50/$15;
    # 5.2 $1.75/$14; 5.1 $1.25/$10 [O-P]; GPT-6 Astra $10/$50, Sol $2/$10, Luna $0.10/$0.50 [O-2]"
    ("gpt-5.6-terra", (2.0, 12.0)), ("gpt-5.6-luna", (0.2, 1.2)),
    ("gpt-5.5", (5.0, 30.0)), ("gpt-5.4", (2.5, 15.0)), ("gpt-5.2", (1.75, 14.0)), ("gpt-5.1", (1.25, 10.0)),
    ("gpt-6-astra", (10.0, 50.0)), ("gpt-6-sol", (2.0, 10.0)), ("gpt-6-luna", (0.1, 0.5)),
])
def test_openai_prices(model: str, price: tuple[float, float]) -> None:
    p = profile(model)
    assert (p.input_usd_per_mtok, p.output_usd_per_mtok) == price


def test_gpt_5_6_sol_promotional_price_ended_on_2026_11_21() -> None:
    """2.2 "Prices missing": "5.6-sol $4/$20 (promo)"; [O-P]: the promotion runs "through November 21, 2026" and
    the later price is not in the sources (review 14 item 2): today no USD price, the promo price before its end."""
    assert (profile("gpt-5.6-sol").input_usd_per_mtok, profile("gpt-5.6-sol").output_usd_per_mtok) == (None, None)
    promo = profile("gpt-5.6-sol", as_of=dt.date(2026, 11, 21))
    assert (promo.input_usd_per_mtok, promo.output_usd_per_mtok) == (4.0, 20.0)
    assert promo.price_tiers[0].input_usd_per_mtok == 8.0
    assert profile("gpt-5.6-sol", as_of=dt.date(2026, 11, 22)).input_usd_per_mtok is None


def test_values_are_as_old_as_their_documents() -> None:
    """Review 14 item 2: the audit's Sources give the documents' dates: [A-PC] mirror 2026-08-21, [O-P] "after
    2026-07-30", [G-P] "accessed 2026-07-04". A value's date is its document's, not the day the audit read it."""
    sonnet = profile("claude-sonnet-4-5")
    assert sonnet.sources["min_cacheable_tokens"] == "anthropic_caching_doc, dated 2026-08-21, read 2026-12-02"
    assert sonnet.values_date() == dt.date(2026, 8, 21)
    assert profile("gpt-5.6-terra").values_date() == dt.date(2026, 7, 30)


def test_openai_earlier_minimum_is_marked_assumed() -> None:
    """2.2 "Min (earlier models)": "varies by request settings …; no number [O-G]"; "Min (GPT-5.6+)": 1,024."""
    assert "min_cacheable_tokens" in profile("gpt-4.1-mini").assumed
    assert "min_cacheable_tokens" not in profile("gpt-5.6-sol").assumed
    assert profile("gpt-5.6-sol").min_cacheable_tokens == 1024


def test_gemini_read_multiplier() -> None:
    """2.3 "Discount": "0.1: 2.5 Pro $0.125/$1.25 [G-P]; 3 Flash Preview $0.05/$0.50 [G-P]; Vertex '90% discount'"."""
    for model in ("gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-flash-preview", "gemini-3.1-pro"):
        assert profile(model).read_multiplier == 0.1
    assert profile("gemini-2.5-pro", as_of="2026-06-01").read_multiplier == 0.25  # v3's assumption before that


def test_gemini_minimum_history() -> None:
    """2.3 "Min 2.5 Flash": "2,048 in 2026-07-07 and 2026-10-13 copies; 1,024 in the 2026-05-07 copy"; "Min 2.5
    Pro": "2,048 (2026-07-07, 2026-10-13); 4,096 in 2026-05-07"."""
    assert profile("gemini-2.5-flash", as_of="2026-05-07").min_cacheable_tokens == 1024
    assert profile("gemini-2.5-pro", as_of="2026-05-07").min_cacheable_tokens == 4096
    assert profile("gemini-2.5-pro", as_of="2026-07-07").min_cacheable_tokens == 2048


def test_gemini_new_models_and_tiers() -> None:
    """2.3 "Min 3.1 Pro Preview, 3.5/3.6/3.7/3.8 Flash, Gemini 4 Argon": 4,096 [G-C 2026-10-13]; "Prices": "2.5 Pro
    >200k $2.50 input; 3.1 Pro $2/$12 (≤200k), $4/$18"."""
    for model in ("gemini-3.1-pro-preview", "gemini-3.5-flash", "gemini-3.6-flash", "gemini-3.7-flash",
                  "gemini-3.8-flash", "gemini-4-argon"):
        p = profile(model)
        assert p.known and p.min_cacheable_tokens == 4096, model
    assert profile("gemini-2.5-pro").for_prompt(200_001).input_usd_per_mtok == 2.5
    assert profile("gemini-3.1-pro").for_prompt(200_001).output_usd_per_mtok == 18.0
    assert profile("gemini-3.8-flash", as_of="2026-12-31").input_usd_per_mtok == 0.75  # "through 2026-12-31"
    assert profile("gemini-3.8-flash", as_of="2027-01-01").input_usd_per_mtok == 1.5


def test_deepseek_current_models() -> None:
    """2.4 "Model ids" / "Prices" / "Hit ratio": deepseek-flash (old deepseek-v4-flash ids served by it) hit $0.006,
    miss $0.30 (peak): 0.02; deepseek-v4-pro hit $0.044, miss $1.32: 0.033."""
    flash, pro = profile("deepseek-flash"), profile("deepseek-v4-pro")
    assert (flash.read_multiplier, flash.input_usd_per_mtok, flash.output_usd_per_mtok) == (0.02, 0.3, 1.2)
    assert (pro.read_multiplier, pro.input_usd_per_mtok, pro.output_usd_per_mtok) == (0.033, 1.32, 3.96)
    assert profile("deepseek-v4-flash").entry == "deepseek-flash"
    assert "min_cacheable_tokens" in flash.assumed  # "64 appears only in the 2024 rule"


def test_deepseek_retired_ids_say_so() -> None:
    """2.4 "Model ids": deepseek-chat / deepseek-reasoner "retired 2026-07-24 15:59 UTC [D-R]"."""
    with pytest.warns(RetiredModelWarning, match=r"'deepseek-chat' was retired on 2026-07-24 .*successor is "
                                                 r"'deepseek-flash'"):
        p = model_profile(None, "deepseek-chat", as_of="2026-08-01")
    assert p.retired == dt.date(2026, 7, 24) and p.sources["retired"].startswith("deepseek_retirement")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RetiredModelWarning)
        assert model_profile(None, "deepseek-reasoner", as_of="2026-07-23").read_multiplier == 0.1


def test_openai_retired_ids_from_the_sdk() -> None:
    """openai 3.57.0 chat_model.py: "o4-mini", … "o1", "gpt-4o-2024-05-13": "Announced shutdown date: 2026-10-23"."""
    for model in ("o4-mini", "o1", "gpt-4.1-nano", "gpt-4o-2024-05-13"):
        assert profile(model).retired == dt.date(2026, 10, 23), model
    assert profile("gpt-5.1-codex").retired == dt.date(2026, 7, 23)


def test_unknown_model_warning_names_the_family_fallback() -> None:
    with pytest.warns(UnknownModelWarning, match=r"'claude-opus-9' .* the 'claude' family fallback"):
        p = model_profile(None, "claude-opus-9")
    assert p.min_cacheable_tokens == 4096 and not p.known


def test_announced_shutdowns_apply_from_their_date() -> None:
    """openai 3.57.0 chat_model.py: "gpt-5", … "o3", "o3-2025-04-16": "Announced shutdown date: 2026-12-11"."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RetiredModelWarning)
        assert model_profile(None, "gpt-5-mini", as_of="2026-12-10").retired == dt.date(2026, 12, 11)
    with pytest.warns(RetiredModelWarning, match="'o3-2025-04-16' was retired on 2026-12-11"):
        model_profile(None, "o3-2025-04-16", as_of="2026-12-11")


def test_today_s_values_include_a_history_entry_still_in_force(monkeypatch: pytest.MonkeyPatch) -> None:
    """2.3 "Prices": "3.8 Flash $0.75/$3.75 through 2026-12-31, then $1.50/$7.50" (api-evangelist transcript,
    2026-09-20). Without --as-of the values are today's: on 2026-12-02 the $0.75 price (a history entry until
    2027-01-01), not the later one (found while checking review 14 item 2)."""
    from promptcache.providers import datafile
    from promptcache.providers.profiles import clear_cache

    monkeypatch.setattr(datafile, "today", lambda: dt.date(2026, 12, 2))
    clear_cache()
    now = profile("gemini-3.8-flash")
    assert (now.input_usd_per_mtok, now.output_usd_per_mtok, now.as_of) == (0.75, 3.75, None)
    monkeypatch.setattr(datafile, "today", lambda: dt.date(2027, 1, 1))
    assert (profile("gemini-3.8-flash").input_usd_per_mtok, profile("gemini-3.8-flash").output_usd_per_mtok) == (
        1.5, 7.5)
