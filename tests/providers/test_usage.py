"""Usage normalisation against real SDK response objects, costs, per-session statistics."""

from __future__ import annotations

import anthropic
import httpx2
import openai
import pytest
from anthropic.types import Usage as AnthropicUsage
from openai.types import CompletionUsage
from openai.types.responses import ResponseUsage

from promptcache.providers.profiles import model_profile
from promptcache.providers.usage import Cost, Usage, UsageStats, normalize_usage, usage_cost

SONNET = model_profile("anthropic", "claude-sonnet-4-5")
MINI = model_profile("openai", "gpt-4.1-mini")


def _client_response(kind: str, payload: dict):
    """A real SDK response object parsed by the real client from a mocked HTTP response."""
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, json=payload))
    http = httpx2.Client(transport=transport)
    if kind == "anthropic":
        client = anthropic.Anthropic(api_key="test", http_client=http)
        return client.messages.create(model="claude-opus-5", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    client = openai.OpenAI(api_key="test", http_client=http)
    return client.chat.completions.create(model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}])


def test_anthropic_response_usage() -> None:
    response = _client_response("anthropic", {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-5", "stop_reason": "end_turn",
        "stop_sequence": None, "content": [{"type": "text", "text": "ok"}],
        "usage": {"input_tokens": 21, "output_tokens": 9, "cache_read_input_tokens": 4368, "cache_creation_input_tokens": 86,
                  "cache_creation": {"ephemeral_5m_input_tokens": 80, "ephemeral_1h_input_tokens": 6}}})
    assert isinstance(response.usage, AnthropicUsage)
    usage = normalize_usage(response.usage)
    assert usage == Usage(cache_read=4368, cache_write_5m=80, cache_write_1h=6, uncached=21, output=9)
    assert usage.prompt_tokens == 4475 and usage.cache_write == 86
    assert normalize_usage(response) == usage  # a whole response is unwrapped


def test_anthropic_usage_without_split_counts_as_5m() -> None:
    usage = normalize_usage(AnthropicUsage(input_tokens=3, output_tokens=1, cache_creation_input_tokens=4430))
    assert (usage.cache_write_5m, usage.cache_write_1h, usage.uncached, usage.cache_read) == (4430, 0, 3, 0)
    with pytest.raises(ValueError, match="splits 10\\+0 tokens but cache_creation_input_tokens is 12"):
        normalize_usage({"input_tokens": 1, "cache_creation_input_tokens": 12,
                         "cache_creation": {"ephemeral_5m_input_tokens": 10, "ephemeral_1h_input_tokens": 0}})


def test_openai_chat_response_usage() -> None:
    response = _client_response("openai", {
        "id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 2147, "completion_tokens": 12, "total_tokens": 2159,
                  "prompt_tokens_details": {"cached_tokens": 2048}}})
    assert isinstance(response.usage, CompletionUsage)
    assert normalize_usage(response.usage) == Usage(cache_read=2048, uncached=99, output=12)


def test_gpt_5_6_write_tokens() -> None:
    chat = CompletionUsage(prompt_tokens=5000, completion_tokens=1, total_tokens=5001,
                           prompt_tokens_details={"cached_tokens": 4000, "cache_write_tokens": 900})
    assert normalize_usage(chat) == Usage(cache_read=4000, cache_write_5m=900, uncached=100, output=1)
    responses = ResponseUsage(input_tokens=5000, output_tokens=2, total_tokens=5002,
                              input_tokens_details={"cached_tokens": 4000, "cache_write_tokens": 900,
                                                    "cache_write_tokens_details": {"ttl_30m_tokens": 600, "ttl_12h_tokens": 300}},
                              output_tokens_details={"reasoning_tokens": 0})
    assert normalize_usage(responses) == Usage(cache_read=4000, cache_write_5m=600, cache_write_1h=300, uncached=100, output=2)


@pytest.mark.parametrize(("raw", "provider", "expected"), [
    ({"usage_metadata": {"prompt_token_count": 5000, "cached_content_token_count": 4096, "candidates_token_count": 7}},
     None, Usage(cache_read=4096, uncached=904, output=7)),
    ({"usageMetadata": {"promptTokenCount": 300, "candidatesTokenCount": 2}}, None, Usage(uncached=300, output=2)),
    ({"prompt_tokens": 1200, "completion_tokens": 5, "prompt_cache_hit_tokens": 1152, "prompt_cache_miss_tokens": 48},
     None, Usage(cache_read=1152, uncached=48, output=5)),
    ({"timings": {"cache_n": 512, "prompt_n": 40, "predicted_n": 1}}, None, Usage(cache_read=512, uncached=40, output=1)),
    ({"input_tokens": 50, "output_tokens": 3}, "anthropic", Usage(uncached=50, output=3)),
    ({"input_tokens": 50, "output_tokens": 3}, "openai", Usage(uncached=50, output=3)),
])
def test_other_providers(raw, provider, expected) -> None:
    assert normalize_usage(raw, provider) == expected


@pytest.mark.parametrize(("raw", "message"), [
    ({"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 128}}, "128 cached \\+ written tokens out of only 100"),
    ({"input_tokens": -1}, "input_tokens must be a non-negative integer"),
    ({"foo": 1}, "unrecognised usage object with keys \\['foo'\\]"),
    ("12", "usage must be a mapping"),
])
def test_bad_usage(raw, message) -> None:
    with pytest.raises(ValueError, match=message):
        normalize_usage(raw)


def test_costs() -> None:
    # trace 1, request #11: reads the system prefix, writes its 32-token tail (README expectation)
    usage = Usage(cache_read=4368, cache_write_5m=32)
    relative = usage_cost(usage, SONNET, unit="relative")
    assert relative == Cost(0.1 * 4368 + 1.25 * 32, 4400.0, "relative")
    assert relative.with_cache == pytest.approx(476.8) and relative.ratio == pytest.approx(0.10836, abs=1e-5)
    usd = usage_cost(usage, SONNET)
    assert usd.unit == "USD" and usd.without_cache == pytest.approx(4400 * 3.0 / 1e6)
    assert usage_cost(Usage(cache_write_1h=1000), SONNET, unit="relative").with_cache == 2000.0
    # trace 10, request #4: OpenAI classic, cached input billed at 25%, no write fee
    classic = usage_cost(Usage(cache_read=2048, uncached=172), MINI, unit="relative")
    assert (classic.with_cache, classic.without_cache) == (172 + 0.25 * 2048, 2220.0)
    assert usage_cost(Usage(cache_write_5m=1000), MINI, unit="relative").with_cache == 1000.0
    unpriced = model_profile("anthropic", "claude-mythos-preview")
    assert usage_cost(usage, unpriced).unit == "relative"
    with pytest.raises(ValueError, match="no USD price for model 'claude-mythos-preview'"):
        usage_cost(usage, unpriced, unit="USD")


def test_usage_stats_per_session() -> None:
    stats = UsageStats(profile=SONNET)
    stats.add(AnthropicUsage(input_tokens=0, output_tokens=5, cache_creation_input_tokens=4430), session="sup-001")
    stats.add({"input_tokens": 0, "output_tokens": 5, "cache_read_input_tokens": 4430, "cache_creation_input_tokens": 121},
              session="sup-001")
    stats.add(Usage(cache_read=4368, cache_write_5m=32), session="sup-002")
    total = stats.total
    assert total.usage == Usage(cache_read=8798, cache_write_5m=4583, uncached=0, output=10, requests=3)
    assert total.usage.hit_rate == pytest.approx(8798 / 13381)
    assert total.tokens_saved == 8798
    assert stats.sessions["sup-001"].usage.requests == 2
    assert total.cost.unit == "USD"
    assert total.cost_relative.with_cache == pytest.approx(0.1 * 8798 + 1.25 * 4583)
    summary = stats.summary()
    assert summary["sessions"]["sup-002"]["cache_read_tokens"] == 4368
    assert summary["total"]["cost_without_cache"] == pytest.approx(13381 * 3e-6)
    # a request without a USD price makes the USD total unknown: relative units from then on
    stats.add(Usage(uncached=10), session="x", profile=model_profile("anthropic", "claude-mythos-preview"))
    assert stats.total.cost_usd is None and stats.total.cost.unit == "relative"
    with pytest.raises(ValueError, match="needs a ModelProfile"):
        UsageStats().add(Usage(uncached=1))


def test_gemini_interactions_usage_is_read() -> None:
    """provider-audit-2026-12.md 2.3 "Interactions API": "supports only implicit caching; hits in
    usage.total_cached_tokens" [G-C]; ai.google.dev/gemini-api/docs/tokens lists total_input_tokens,
    total_output_tokens, total_cached_tokens in "the usage in the interaction response" (review 14 item 3)."""
    usage = {"total_input_tokens": 5000, "total_cached_tokens": 4096, "total_output_tokens": 40,
             "total_thought_tokens": 12, "total_tokens": 5052}
    assert normalize_usage({"usage": usage}) == Usage(cache_read=4096, uncached=904, output=40)
    with pytest.raises(ValueError, match="usage reports 10 total_cached_tokens out of only 5 prompt tokens"):
        normalize_usage({"total_input_tokens": 5, "total_cached_tokens": 10})


def test_responses_12h_write_bucket_is_still_read_as_the_installed_sdk_defines_it() -> None:
    """The installed openai SDK's types/responses/response_usage.py still defines ttl_12h_tokens and ttl_30m_tokens
    (the request side accepts only "30m"): a reported 12h bucket is kept, not lost (review 14 item 3)."""
    from openai.types.responses import response_usage

    assert {"ttl_12h_tokens", "ttl_30m_tokens"} <= set(
        response_usage.InputTokensDetailsCacheWriteTokensDetails.model_fields)
    usage = {"input_tokens": 3000, "output_tokens": 5, "input_tokens_details": {
        "cached_tokens": 0, "cache_write_tokens": 2048,
        "cache_write_tokens_details": {"ttl_30m_tokens": 1024, "ttl_12h_tokens": 1024}}}
    assert normalize_usage(usage, "openai") == Usage(cache_write_5m=1024, cache_write_1h=1024, uncached=952, output=5)
