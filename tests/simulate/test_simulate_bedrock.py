"""Amazon Bedrock (Converse API) prompt caching: cachePoint blocks, Bedrock's own minimums, TTL order, refusals,
usage normalisation, traces (issue 14, Build 3). Sources: promptcache/data/providers.toml [providers.bedrock]."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from simbodies import words

from promptcache.cli import main
from promptcache.providers.profiles import model_profile, provider_for_model
from promptcache.providers.usage import Usage, normalize_usage
from promptcache.simulate import simulate_records
from promptcache.simulate.bedrock import BedrockSimulator
from promptcache.trace.records import TraceRecord, read_trace
from promptcache.trace.shape import MalformedBody

SONNET_37 = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
SONNET_46 = "us.anthropic.claude-sonnet-4-6"
HAIKU_45 = "anthropic.claude-haiku-4-5-20251001-v1:0"
POINT = {"cachePoint": {"type": "default"}}
HOUR = {"cachePoint": {"type": "default", "ttl": "1h"}}


def converse(model: str, question: str, *, system_tokens: int = 1500, point=POINT, **extra) -> dict:
    body = {"modelId": model, "messages": [{"role": "user", "content": [{"text": question}]}],
            "system": [{"text": words(system_tokens)}, point], "inferenceConfig": {"maxTokens": 256}}
    body.update(extra)
    return body


def test_bedrock_ids_resolve_to_bedrock_s_own_minimums_not_the_claude_api_s():
    """Claude docs [A-PC]: Bedrock documents its own minimums; the Bedrock user guide: "Anthropic Claude 3.7 Sonnet
    model requires at least 1,024 tokens per cache checkpoint". Sonnet 4.6 on Bedrock caches from ~2,048 (measured,
    LiteLLM PR #49) where the Claude API says 1,024."""
    assert provider_for_model(SONNET_46) == provider_for_model(HAIKU_45) == "bedrock"
    assert provider_for_model("claude-sonnet-4-6") == "anthropic"
    assert model_profile(None, SONNET_37).min_cacheable_tokens == 1024
    assert model_profile(None, SONNET_46).min_cacheable_tokens == 2048
    assert model_profile("anthropic", "claude-sonnet-4-6").min_cacheable_tokens == 1024
    assert model_profile(None, SONNET_46).sources["min_cacheable_tokens"] == "bedrock_litellm_pr49, dated 2026-04-29, read 2026-12-02"


@pytest.mark.parametrize("region", ["", "us.", "eu.", "apac.", "global.", "jp.", "au.", "us-gov."])
def test_every_bedrock_region_prefix_resolves_to_the_model_s_bedrock_entry(region):
    """Review 14 item 4: the cross-region prefixes (jp., au., us-gov. ...) share one definition; each resolves to the
    model's own Bedrock minimum (Sonnet 4.6 ~2,048, LiteLLM PR #49), not the bedrock provider fallback (4,096)."""
    profile = model_profile(None, f"{region}anthropic.claude-sonnet-4-6")
    assert (profile.provider, profile.known, profile.min_cacheable_tokens) == ("bedrock", True, 2048)
    assert model_profile(None, f"{region}anthropic.claude-3-7-sonnet-20250219-v1:0").min_cacheable_tokens == 1024


def test_a_converse_request_with_cache_points_writes_then_reads_at_bedrock_s_minimum():
    sim = BedrockSimulator()
    first = sim.simulate(converse(SONNET_37, "Where is order 1042?"), 0.0)
    point = first.render.blocks[0].end  # the cachePoint follows the system text block
    assert first.error is None and first.usage == Usage(cache_write_5m=point, uncached=first.prompt_tokens - point)
    second = sim.simulate(converse(SONNET_37, "And order 1043?"), 5.0)
    assert second.usage.cache_read == point and second.usage.cache_write == 0

    # the same 1,500-token prefix is below Sonnet 4.6's Bedrock minimum (2,048): nothing cached, no error
    sim = BedrockSimulator()
    below = [sim.simulate(converse(SONNET_46, q), t) for t, q in ((0.0, "a"), (5.0, "b"))]
    assert [(r.error, r.usage.cache_read, r.usage.cache_write) for r in below] == [(None, 0, 0), (None, 0, 0)]
    assert below[1].runtime_cause == "below_minimum" and "2,048" in below[1].runtime_detail


def test_a_claude_api_field_in_a_converse_body_is_refused_with_a_message():
    result = BedrockSimulator().simulate(converse(SONNET_37, "q", cache_control={"type": "ephemeral"}), 0.0)
    assert result.error.startswith("cache_control is a Claude API field; Bedrock Converse does not take it: ")
    assert "cachePoint" in result.error and result.usage == Usage()
    body = converse(SONNET_37, "q")
    body["system"][0]["cache_control"] = {"type": "ephemeral"}
    assert BedrockSimulator().simulate(body, 0.0).error.startswith("system[0].cache_control is a Claude API field")
    assert BedrockSimulator().simulate(converse(SONNET_37, "q", max_tokens=10), 0.0).error.startswith(
        "max_tokens is a Claude API field; Bedrock Converse does not take it: use inferenceConfig.maxTokens")


@pytest.mark.parametrize(("change", "refusal"), [
    (lambda b: b["system"].__setitem__(1, {"cachePoint": {"type": "ephemeral"}}),
     "system[1].cachePoint.type must be 'default', not 'ephemeral'"),
    (lambda b: b["messages"][0]["content"][0].__setitem__("type", "text"),
     "messages[0].content[0].type is a Claude API field; Bedrock Converse does not take it: a Converse block is an "
     "object with exactly one member"),
    (lambda b: b.__setitem__("anthropic_version", "bedrock-2023-05-31"),
     "anthropic_version is a Claude API field; Bedrock Converse does not take it: it belongs to an InvokeModel body"),
    (lambda b: b["messages"][0].__setitem__("content", "q"),
     "messages[0].content is a string (the Claude API's shape); Bedrock Converse takes a list of content blocks"),
    (lambda b: b.__setitem__("system", "You are terse."), "system is a string (the Claude API's shape)"),
])
def test_claude_shaped_converse_bodies_are_refused_with_what_converse_takes(change, refusal, tmp_path):
    """Review 14 item 6. API reference CachePointBlock: type "default" is the only type; Converse ContentBlock /
    SystemContentBlock are unions with one member (no "type"), messages[].content and system are lists of them; the
    Converse API rejects unknown members such as anthropic_version (an InvokeModel body field). Each is refused
    with a message, not simulated silently nor skipped as a malformed line."""
    body = converse(SONNET_37, "q")
    change(body)
    result = BedrockSimulator().simulate(body, 0.0)
    assert result.error is not None and result.error.startswith(refusal), result.error
    path = tmp_path / "claude_shaped.jsonl"
    path.write_text(json.dumps({"t": 0.0, "api": "bedrock.converse", "session": "s", "body": body}) + "\n")
    run = CliRunner().invoke(main, ["simulate", str(path)])
    assert run.exit_code == 0 and "malformed" not in run.output and "refused: request 0" in run.output


def test_ttl_order_and_availability():
    """Bedrock: 1 h TTL on Claude 4.5 and later (from 2026-01-26); TTLs must not increase from toolConfig to system
    to messages (provider-audit-2026-12.md section 3, Bedrock row)."""
    assert "not available" in BedrockSimulator().simulate(converse(SONNET_37, "q", point=HOUR), 0.0).error
    ok = BedrockSimulator().simulate(converse(HAIKU_45, "q", system_tokens=4200, point=HOUR), 0.0)
    assert ok.error is None and ok.usage.cache_write_1h == ok.render.blocks[0].end
    body = converse(HAIKU_45, "q", system_tokens=4200)
    body["messages"][0]["content"].append(HOUR)  # 1h in messages after a 5m in system
    assert "Bedrock requires TTLs that do not increase" in BedrockSimulator().simulate(body, 0.0).error
    before = BedrockSimulator(as_of="2026-01-01").simulate(converse(HAIKU_45, "q", point=HOUR), 0.0)
    assert "not available" in before.error


def test_more_than_four_cache_points_are_refused():
    body = converse(SONNET_37, "q")
    body["system"] = [item for i in range(5) for item in ({"text": f"part {i} " + words(300)}, POINT)]
    assert BedrockSimulator().simulate(body, 0.0).error == \
        "at most 4 cachePoint blocks may be provided per request on Bedrock; found 5"


def test_tools_and_tool_turns_render_through_their_claude_counterparts():
    tools = {"tools": [{"toolSpec": {"name": "lookup", "description": "Find an order.",
                                     "inputSchema": {"json": {"type": "object", "properties": {}}}}}, POINT]}
    messages = [{"role": "user", "content": [{"text": "Where is 1042?"}]},
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {}}}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"json": {"ok": 1}}]}},
                                             POINT]}]
    body = {"modelId": SONNET_37, "messages": messages, "system": [{"text": words(1500)}], "toolConfig": tools}
    result = BedrockSimulator().simulate(body, 0.0)
    assert result.error is None and result.usage.cache_write_5m == result.render.blocks[-1].end
    assert [b.path for b in result.render.blocks][:2] == ["tools[0]", "system[0]"]


def test_a_malformed_converse_body_is_malformed_input():
    with pytest.raises(MalformedBody, match=r"exactly one of"):
        BedrockSimulator().simulate({"modelId": SONNET_37, "messages": [{"role": "user", "content": [{}]}]}, 0.0)


def test_bedrock_usage_is_normalised():
    """API reference TokenUsage: cacheReadInputTokens, cacheWriteInputTokens, cacheDetails (1h before 5m)."""
    usage = {"inputTokens": 12, "outputTokens": 7, "totalTokens": 2019, "cacheReadInputTokens": 0,
             "cacheWriteInputTokens": 2000, "cacheDetails": [{"ttl": "1h", "inputTokens": 1500},
                                                             {"ttl": "5m", "inputTokens": 500}]}
    assert normalize_usage({"usage": usage}) == Usage(0, 500, 1500, 12, 7)
    assert normalize_usage({"inputTokens": 3, "outputTokens": 1}, "bedrock") == Usage(uncached=3, output=1)


def test_a_bedrock_trace_simulates_and_checks_its_recorded_usage(tmp_path):
    lines = [{"t": 0.0, "api": "bedrock.converse", "session": "s", "body": converse(SONNET_37, "a"),
              "usage": {"inputTokens": 9, "outputTokens": 5, "totalTokens": 1515, "cacheWriteInputTokens": 1501}},
             {"t": 5.0, "api": "bedrock.converse", "session": "s", "body": converse(SONNET_37, "b"),
              "usage": {"inputTokens": 9, "outputTokens": 5, "totalTokens": 1515, "cacheWriteInputTokens": 1501}}]
    path = tmp_path / "bedrock.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    simulation = simulate_records(read_trace(path, strict=True))
    assert simulation.provider == "bedrock" and simulation.requests[1].usage.cache_read > 1400
    run = CliRunner().invoke(main, ["simulate", str(path), "--check-usage", "--format", "json"])
    assert run.exit_code == 0, run.output
    check = json.loads(run.stdout)["usage_check"]
    assert [r["verdict"] for r in check["requests"]] == ["within", "disagrees"]  # request 2 was billed a write
    assert check["requests"][1]["recorded_write"] == 1501 and check["requests"][1]["predicted_read"] > 1400


def test_other_apis_are_not_simulated_under_bedrock_rules():
    record = TraceRecord(0.0, "openai.chat", "s", {"model": "gpt-4.1-mini", "messages": [
        {"role": "user", "content": "hi"}]})
    with pytest.raises(ValueError, match="simulated with --provider bedrock"):
        simulate_records([record], provider="bedrock")
    converse_record = TraceRecord(0.0, "bedrock.converse", "s", converse(SONNET_37, "q"))
    with pytest.raises(ValueError, match="cannot be simulated under anthropic's rules"):
        simulate_records([converse_record], provider="anthropic")


def _invoke(model: str, question: str, **extra) -> dict:
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, "messages": [
        {"role": "user", "content": question}], "model": model,
        "system": [{"type": "text", "text": words(1500), "cache_control": {"type": "ephemeral"}}]}
    body.update(extra)
    return body


def test_invoke_model_bodies_in_claude_messages_format_get_bedrock_s_rules():
    """An anthropic.messages trace with a Bedrock model id (InvokeModel): cache_control markers as on the Claude API,
    Bedrock's minimum (Sonnet 4.6: 2,048 on Bedrock, 1,024 on the Claude API), and the legacy integration's refusal
    of a top-level cache_control (provider-audit-2026-12.md section 3, Bedrock row: "Legacy Bedrock integration
    (Opus <=4.6) returns 400 on top-level cache_control")."""
    records = [TraceRecord(float(t), "anthropic.messages", "s", _invoke(model, q))
               for t, (model, q) in enumerate([(SONNET_37, "a"), (SONNET_37, "b")])]
    simulation = simulate_records(records)
    assert simulation.provider == "bedrock"
    assert [r.usage.cache_read > 1400 for r in simulation.requests] == [False, True]
    assert any("InvokeModel" in note for note in simulation.notes)
    below = simulate_records([TraceRecord(float(t), "anthropic.messages", "s", _invoke(SONNET_46, q))
                              for t, q in enumerate("ab")])
    assert [r.usage.cache_read + r.usage.cache_write for r in below.requests] == [0, 0]
    legacy = simulate_records([TraceRecord(0.0, "anthropic.messages", "s",
                                           _invoke(SONNET_46, "a", cache_control={"type": "ephemeral"}))])
    assert legacy.requests[0].error.startswith("cache_control (top-level, automatic caching) is refused by Bedrock")
    # the sources name Opus only: for Sonnet the refusal says it is assumed (review 14 item 1)
    assert "(assumed for this model: the sources name Opus 4.6 and earlier only)" in legacy.requests[0].error
    opus = simulate_records([TraceRecord(0.0, "anthropic.messages", "s", _invoke(
        "us.anthropic.claude-opus-4-5-20251101-v1:0", "a", cache_control={"type": "ephemeral"}))])
    assert opus.requests[0].error.startswith("cache_control (top-level") and "assumed" not in opus.requests[0].error


def test_converse_bodies_convert_to_the_other_apis_through_their_claude_equivalent():
    from promptcache.convert import convert_body

    body = converse(SONNET_37, "Where is 1042?")
    claude = convert_body(body, "bedrock.converse", "anthropic.messages").body
    assert claude["system"][0]["cache_control"] == {"type": "ephemeral"} and claude["model"] == SONNET_37
    assert list(claude) == ["max_tokens", "messages", "model", "system"]  # the Anthropic SDK's order
    chat = convert_body(body, "bedrock.converse", "openai.chat").body
    assert [m["role"] for m in chat["messages"]] == ["system", "user"]
    with pytest.raises(ValueError, match="conversion to bedrock.converse is not supported"):
        convert_body(claude, "anthropic.messages", "bedrock.converse")
