"""Client wrappers: real SDK clients through httpx2.MockTransport; traces, statistics, guard, redaction."""

from __future__ import annotations

import asyncio
import json
import warnings

import anthropic
import httpx2
import openai
import pytest

import promptcache
from promptcache import Conversation, PrefixStabilityError, PromptBuilder
from promptcache.clients.wrappers import AnthropicClient, AsyncAnthropicClient, AsyncOpenAIClient, OpenAIClient
from promptcache.errors import PrefixStabilityWarning
from promptcache.prompt.stability import LayerRegistry
from promptcache.trace.records import read_trace
from promptcache.trace import validate_trace

RULES = " ".join(f"Policy {i}: be precise about order numbers, dates and refund amounts." for i in range(1, 90))
TRACK = {"type": "function", "function": {"name": "track_parcel", "description": "Track a parcel.", "parameters": {
    "type": "object", "properties": {"parcel": {"type": "string"}}, "required": ["parcel"]}}}
KEY = "sk-test-secret-key-123"


def anthropic_reply(n: int) -> dict:
    usage = {"input_tokens": 20, "output_tokens": 5, "cache_read_input_tokens": 0 if n == 0 else 1500 + 40 * n,
             "cache_creation_input_tokens": 1500 if n == 0 else 40}
    return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
            "stop_reason": "end_turn", "stop_sequence": None, "content": [{"type": "text", "text": f"Answer {n}."}],
            "usage": usage}


def chat_reply(n: int, tool_call: bool) -> dict:
    message = ({"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{n:024d}", "type": "function", "function": {"name": "track_parcel", "arguments": '{"parcel":"P-7"}'}}]}
        if tool_call else {"role": "assistant", "content": f"Answer {n}."})
    return {"id": f"c{n}", "object": "chat.completion", "created": 1, "model": "gpt-4.1-mini",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if tool_call else "stop", "message": message}],
            "usage": {"prompt_tokens": 1600 + 50 * n, "completion_tokens": 7, "total_tokens": 1607 + 50 * n,
                      "prompt_tokens_details": {"cached_tokens": 0 if n == 0 else 1536}}}


def transport(reply):
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=reply(len(seen) - 1))

    return httpx2.MockTransport(handler), seen


def test_anthropic_wrapper_records_the_wire_bytes_and_usage(tmp_path) -> None:
    mock, seen = transport(anthropic_reply)
    raw = anthropic.Anthropic(api_key=KEY, http_client=httpx2.Client(transport=mock), max_retries=0)
    client = promptcache.wrap(raw, trace=tmp_path / "trace.jsonl", session="sup-001")
    assert isinstance(client, AnthropicClient) and client.models is client.recording_client.models  # the SDK's own
    chat = Conversation()
    base = PromptBuilder(registry=LayerRegistry()).system(RULES).tools([TRACK])
    for n, question in enumerate(["Where is P-7?", "And P-8?", "Thanks, and the refund?"]):
        response = client.send(base.history(chat).user(question, context={"customer": "A"}).build(),
                               model="claude-sonnet-4-6", max_tokens=300, session="sup-001" if n < 2 else "sup-002")
        assert response.content[0].text == f"Answer {n}."
    assert len(chat) == 6 and chat[-1].text == "Answer 2."  # turns and replies appended
    records = read_trace(tmp_path / "trace.jsonl", strict=True)
    assert validate_trace(tmp_path / "trace.jsonl") == []
    lines = (tmp_path / "trace.jsonl").read_text().splitlines()
    for record, line, request in zip(records, lines, seen):
        assert line.startswith('{"t":%s,"api":"anthropic.messages","session":"%s","body":%s,"usage":{'
                               % (json.dumps(record.t), record.session, request.content.decode()))
        assert list(record.body) == ["max_tokens", "messages", "model", "system", "tools"]  # the SDK's key order
    assert [r.session for r in records] == ["sup-001", "sup-001", "sup-002"]
    assert records[0].t < records[1].t < records[2].t
    assert records[1].usage == {"cache_creation_input_tokens": 40, "cache_read_input_tokens": 1540,
                                "input_tokens": 20, "output_tokens": 5}
    assert KEY not in (tmp_path / "trace.jsonl").read_text() and "x-api-key" not in lines[0]
    summary = client.stats.summary()
    assert summary["sessions"]["sup-001"]["cache_read_tokens"] == 1540
    assert summary["total"] == pytest.approx({
        "requests": 3, "prompt_tokens": 4760, "cache_read_tokens": 3120, "cache_write_tokens": 1580,
        # Sonnet 4.6 is $3 per million input tokens [A-PR] (providers.toml)
        "uncached_tokens": 60, "hit_rate": 3120 / 4760, "tokens_saved": 3120, "cost_unit": "USD",
        "cost": (60 + 0.1 * 3120 + 1.25 * 1580) * 3e-6, "cost_without_cache": 4760 * 3e-6,
        "savings": (4760 - (60 + 0.1 * 3120 + 1.25 * 1580)) * 3e-6})
    assert client.last_divergence.cause == "new_turn"


def test_openai_agent_loop_trace_passes_the_validator(tmp_path) -> None:
    mock, seen = transport(lambda n: chat_reply(n, tool_call=n % 2 == 0))
    client = promptcache.wrap(openai.OpenAI(api_key=KEY, http_client=httpx2.Client(transport=mock), max_retries=0),
                              trace=tmp_path / "agent.jsonl", session="ops-1", guard="raise")
    assert isinstance(client, OpenAIClient)
    chat = Conversation()
    base = PromptBuilder(registry=LayerRegistry()).system(RULES).tools([TRACK])
    prompt = base.history(chat).user("Where is parcel P-7?").build()
    for _ in range(3):
        response = client.send(prompt, model="gpt-4.1-mini", prompt_cache_key="support", max_completion_tokens=200)
        calls = response.choices[0].message.tool_calls
        builder = base.history(chat)
        if calls:
            for call in calls:
                builder = builder.tool_result(call.id, {"parcel": "P-7", "status": "in transit"})
        else:
            builder = builder.user("And when will it arrive?")
        prompt = builder.build()
    records = read_trace(tmp_path / "agent.jsonl", strict=True)
    assert validate_trace(records) == [] and len(records) == 3
    assert list(records[1].body) == ["model", "messages", "max_completion_tokens", "prompt_cache_key", "tools"]
    assert records[1].body["messages"][-2:] == [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_" + "0" * 24, "type": "function", "function": {
            "name": "track_parcel", "arguments": '{"parcel":"P-7"}'}}]},
        {"role": "tool", "tool_call_id": "call_" + "0" * 24, "content": '{"parcel":"P-7","status":"in transit"}'}]
    assert [json.loads(r.content) for r in seen] == [r.body for r in records]
    assert client.stats.summary()["total"]["cache_read_tokens"] == 3072


def test_redaction_hook_changes_the_trace_not_the_wire(tmp_path) -> None:
    mock, seen = transport(anthropic_reply)

    def redact(body: dict) -> dict:
        for message in body["messages"]:
            for block in message["content"]:
                block["text"] = block["text"].replace("ann@example.com", "<email>")
        return body

    client = promptcache.wrap(anthropic.Anthropic(api_key=KEY, http_client=httpx2.Client(transport=mock)),
                              trace=tmp_path / "t.jsonl", redact=redact)
    prompt = PromptBuilder(registry=LayerRegistry()).system(RULES).user("Mail ann@example.com please").build()
    client.send(prompt, model="claude-sonnet-4-6")
    assert b"ann@example.com" in seen[0].content
    text = (tmp_path / "t.jsonl").read_text()
    assert "ann@example.com" not in text and "Mail <email> please" in text
    assert validate_trace(tmp_path / "t.jsonl") == []


def test_the_guard_warns_or_raises_on_a_rewritten_history() -> None:
    mock, seen = transport(anthropic_reply)
    raw = anthropic.Anthropic(api_key=KEY, http_client=httpx2.Client(transport=mock))
    base = PromptBuilder(registry=LayerRegistry()).system(RULES)
    history = [{"role": "user", "content": "Where is P-7?"}, {"role": "assistant", "content": "In transit."}]
    edited = [{"role": "user", "content": "Summary: asked about P-7."}, {"role": "assistant", "content": "In transit."}]
    for mode in ("warn", "raise"):
        client = promptcache.wrap(raw, guard=mode)
        client.send(base.history(history).user("When?").build(), model="claude-sonnet-4-6")
        client.send(base.history(history + [{"role": "user", "content": "When?"},
                                            {"role": "assistant", "content": "Friday."}]).user("OK").build(),
                    model="claude-sonnet-4-6")
        rewritten = base.history(edited).user("And P-8?").build()
        if mode == "warn":
            with pytest.warns(PrefixStabilityWarning, match=r"history_rewritten in history at messages\[0\]"):
                client.send(rewritten, model="claude-sonnet-4-6")
            assert len(seen) == 3
        else:
            with pytest.raises(PrefixStabilityError, match=r"^history layer \(messages\[0\]\.content\[0\]\.text\): "
                                                           r"history_rewritten") as info:
                client.send(rewritten, model="claude-sonnet-4-6")
            assert info.value.divergence.cause == "history_rewritten" and "only append" in str(info.value)
            assert len(seen) == 5  # refused before sending


def test_the_conversations_own_chunk_truncation_is_not_reported() -> None:
    mock, seen = transport(anthropic_reply)
    client = promptcache.wrap(anthropic.Anthropic(api_key=KEY, http_client=httpx2.Client(transport=mock)),
                              guard="raise")
    chat = Conversation(budget_tokens=600)
    base = PromptBuilder(registry=LayerRegistry()).system(RULES)
    for n in range(12):
        client.send(base.history(chat).user(f"Question {n}: " + "tell me more about the parcel. " * 12).build(),
                    model="claude-sonnet-4-6")
    assert chat.truncations >= 2 and len(seen) == 12


def test_async_wrappers() -> None:
    async def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        return httpx2.Response(200, json=anthropic_reply(1) if "max_tokens" in body else chat_reply(1, False))

    async def main() -> tuple:
        http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
        a = promptcache.wrap(anthropic.AsyncAnthropic(api_key=KEY, http_client=http))
        o = promptcache.wrap(openai.AsyncOpenAI(api_key=KEY, http_client=http))
        assert isinstance(a, AsyncAnthropicClient) and isinstance(o, AsyncOpenAIClient)
        chat = Conversation()
        prompt = PromptBuilder(registry=LayerRegistry()).system(RULES).history(chat).user("Hi").build()
        first = await a.send(prompt, model="claude-sonnet-4-6")
        second = await o.send(PromptBuilder(registry=LayerRegistry()).system(RULES).history(chat).user("Again").build(),
                              model="gpt-4.1-mini")
        return first, second, chat, a.stats.summary(), o.stats.summary()

    first, second, chat, a_stats, o_stats = asyncio.run(main())
    assert first.content[0].text == "Answer 1." and second.choices[0].message.content == "Answer 1."
    assert [m.text for m in chat] == ["Hi", "Answer 1.", "Again", "Answer 1."]
    assert a_stats["total"]["cache_read_tokens"] == 1540 and o_stats["total"]["cache_read_tokens"] == 1536


def test_wrap_refuses_other_objects_and_bad_modes() -> None:
    with pytest.raises(TypeError, match=r"wrap\(\) takes an anthropic.Anthropic / AsyncAnthropic or openai.OpenAI"):
        promptcache.wrap(object())
    with pytest.raises(ValueError, match="guard must be one of warn, raise, off"):
        promptcache.wrap(anthropic.Anthropic(api_key=KEY), guard="loud")
    client = promptcache.wrap(anthropic.Anthropic(api_key=KEY))
    with pytest.raises(TypeError, match="send\\(\\) takes a promptcache Prompt"):
        client.send({"messages": []}, model="claude-sonnet-4-6")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(promptcache.wrap(openai.AzureOpenAI(api_key=KEY, api_version="2024-10-21",
                                                              azure_endpoint="https://x.example.com")), OpenAIClient)
