"""Anthropic <-> OpenAI body conversion: exact shapes, round trips on every trace, clear errors."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from promptcache.convert import anthropic_to_openai, convert_body, openai_to_anthropic
from promptcache.trace import validate_body


def strip_cache_control(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: strip_cache_control(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [strip_cache_control(v) for v in obj]
    return obj


def as_blocks(body: dict[str, Any]) -> dict[str, Any]:
    """The documented equivalence: a string system / content is one text block."""
    out = dict(body)
    if isinstance(out.get("system"), str):
        out["system"] = [{"type": "text", "text": out["system"]}]
    out["messages"] = [{**m, "content": [{"type": "text", "text": m["content"]}]} if isinstance(m["content"], str) else m
                       for m in out["messages"]]
    return out


def dumps(body: Any) -> str:
    """JSON text with key order: equality of these is equality of the bytes the SDKs send."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def test_round_trips_on_every_trace(traces) -> None:
    checked = 0
    for records in traces.values():
        for record in records:
            if record.api == "anthropic.messages":
                expected = strip_cache_control(record.body)
                keep = openai_to_anthropic(anthropic_to_openai(record.body, shape="keep").body, shape="keep").body
                assert dumps(keep) == dumps(expected)
                default = openai_to_anthropic(anthropic_to_openai(record.body).body).body
                assert dumps(default) == dumps(as_blocks(expected))
            else:
                for shape_a, shape_o in (("keep", "keep"), ("blocks", "flat")):
                    there = openai_to_anthropic(record.body, shape=shape_a)
                    back = anthropic_to_openai(there.body, shape=shape_o, extra_params=there.dropped_params)
                    assert dumps(back.body) == dumps(record.body)
            checked += 1
    assert checked == 158


def test_converted_trace_bodies_are_valid(traces) -> None:
    for name in ("good_support_chat", "bad_summarize_each_turn", "bad_whitespace_drift"):
        for record in traces[name]:
            assert validate_body("openai.chat", anthropic_to_openai(record.body).body) == []
    for name in ("good_agent_tools", "good_rag_doc_qa", "mixed_multi_tenant", "bad_agent_tool_shuffle"):
        for record in traces[name]:
            assert validate_body("anthropic.messages", openai_to_anthropic(record.body).body) == []


ANTHROPIC_BODY = {
    "max_tokens": 512,
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Where is order HL-40718?", "cache_control": {"type": "ephemeral"}}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_01", "name": "lookup_order", "input": {"order_id": "HL-40718", "verbose": False}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": '{"status":"shipped"}', "is_error": False},
            {"type": "text", "text": "Thanks!"},
        ]},
    ],
    "model": "claude-sonnet-4-5",
    "cache_control": {"type": "ephemeral"},
    "metadata": {"user_id": "u-1"},
    "stop_sequences": ["END"],
    "system": [{"type": "text", "text": "You are Harbor."}, {"type": "text", "text": "Handbook v7.2", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
    "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
    "tools": [{"name": "lookup_order", "description": "Find an order.",
               "input_schema": {"type": "object", "required": ["order_id"], "properties": {"order_id": {"type": "string"}}}}],
}


def test_anthropic_to_openai_exact() -> None:
    result = anthropic_to_openai(ANTHROPIC_BODY)
    assert dumps(result.body) == dumps({
        "model": "claude-sonnet-4-5",
        "messages": [
            {"role": "system", "content": "You are Harbor.\n\nHandbook v7.2"},
            {"role": "user", "content": "Where is order HL-40718?"},
            {"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "toolu_01", "type": "function",
                 "function": {"name": "lookup_order", "arguments": '{"order_id": "HL-40718", "verbose": false}'}}]},
            {"role": "tool", "tool_call_id": "toolu_01", "content": '{"status":"shipped"}'},
            {"role": "user", "content": "Thanks!"},
        ],
        "max_completion_tokens": 512,
        "parallel_tool_calls": False,
        "stop": ["END"],
        "tool_choice": "required",
        "tools": [{"type": "function", "function": {"name": "lookup_order", "description": "Find an order.", "parameters": {
            "type": "object", "required": ["order_id"], "properties": {"order_id": {"type": "string"}}}}}],
    })
    assert result.dropped == {
        "system[1].cache_control": {"type": "ephemeral", "ttl": "1h"},
        "messages[0].content[0].cache_control": {"type": "ephemeral"},
        "messages[2].content[0].is_error": False,
        "cache_control": {"type": "ephemeral"},
        "metadata": {"user_id": "u-1"},
    }
    # schema key order is content: kept exactly as given
    assert list(result.body["tools"][0]["function"]["parameters"]) == ["type", "required", "properties"]
    assert result.sources[0] == ("system[0].text", "system[1].text")
    assert result.sources[2] == ("messages[1].content[0].text", "messages[1].content[1]")


def test_openai_to_anthropic_exact() -> None:
    body = {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                         {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR", "detail": "low"}}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "describe", "arguments": '{"b": 1, "a": 2}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "a cat"},
            {"role": "user", "content": "And now?"},
        ],
        "prompt_cache_key": "tenant-a", "reasoning_effort": "low", "stop": "END", "temperature": 0.0,
        "tool_choice": {"type": "function", "function": {"name": "describe"}},
        "tools": [{"function": {"name": "describe", "parameters": {"type": "object"}}, "type": "function"}],
    }
    result = openai_to_anthropic(body)
    assert dumps(result.body) == dumps({
        "max_tokens": 4096,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                         {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "describe", "input": {"b": 1, "a": 2}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "a cat"},
                                         {"type": "text", "text": "And now?"}]},
        ],
        "model": "gpt-4.1-mini",
        "output_config": {"effort": "low"},
        "stop_sequences": ["END"],
        "system": [{"type": "text", "text": "Be brief."}],
        "temperature": 0.0,
        "tool_choice": {"type": "tool", "name": "describe"},
        "tools": [{"name": "describe", "input_schema": {"type": "object"}, "type": "custom"}],
    })
    assert result.dropped == {"messages[1].content[1].image_url.detail": "low", "prompt_cache_key": "tenant-a"}
    assert result.dropped_params == {"prompt_cache_key": "tenant-a"}
    assert "messages[0]: developer role read as system" in result.notes
    assert any(note.startswith("max_tokens: not set") for note in result.notes)


def test_wrapper_key_order_survives_a_round_trip() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"function": {"parameters": {"type": "object"}, "name": "f"}, "type": "function"},
                      {"type": "function", "function": {"name": "g", "parameters": {"type": "object"}}}]}
    back = anthropic_to_openai(openai_to_anthropic(body).body, extra_params={"max_completion_tokens": None}).body
    assert [list(t) for t in back["tools"]] == [["function", "type"], ["type", "function"]]
    assert list(back["tools"][0]["function"]) == ["parameters", "name"]


def test_convert_body_dispatch() -> None:
    assert convert_body(ANTHROPIC_BODY, "anthropic.messages", "openai.chat").body["model"] == "claude-sonnet-4-5"
    same = convert_body({"messages": [], "model": "m", "max_tokens": 1}, "anthropic.messages", "anthropic.messages")
    assert list(same.body) == ["max_tokens", "messages", "model"]
    with pytest.raises(ValueError, match="unknown api 'gemini'"):
        convert_body(ANTHROPIC_BODY, "anthropic.messages", "gemini")


@pytest.mark.parametrize(("convert", "body", "message"), [
    (anthropic_to_openai, {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "x"}],
                           "tools": [{"type": "web_search_20250305", "name": "web_search"}]},
     r"tools\[0\]: server tool 'web_search_20250305'"),
    (anthropic_to_openai, {"model": "m", "max_tokens": 1, "messages": [
        {"role": "user", "content": "x"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "tool_result", "tool_use_id": "t", "content": "r"}]}]},
     r"messages\[2\]: tool_result blocks must come first"),
    (anthropic_to_openai, {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "image", "source": {"type": "url", "url": "u"}}]}]}]},
     r"messages\[0\]\.content\[0\]: a tool_result with images"),
    (anthropic_to_openai, {"model": "m", "max_tokens": 1, "messages": [{"role": "system", "content": "x"}]},
     r"messages\[0\]: Anthropic messages need role"),
    (openai_to_anthropic, {"model": "m", "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"},
                                                     {"role": "user", "content": "z"}, {"role": "system", "content": "late"}]},
     r"messages\[3\]: a system message after the conversation started"),
    (openai_to_anthropic, {"model": "m", "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": None,
                           "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{oops"}}]}]},
     r"messages\[1\]\.tool_calls\[0\]: arguments are not JSON"),
    (openai_to_anthropic, {"model": "m", "messages": [{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}]},
     r"messages\[0\]\.content\[0\]: content part type 'input_audio'"),
    (openai_to_anthropic, {"model": "m"}, r"needs a 'messages' list"),
])
def test_unconvertible_input_names_the_message(convert, body, message) -> None:
    with pytest.raises(ValueError, match=message):
        convert(body)


def _capture(client_factory, call):
    """Send through the real SDK with a mock transport; return the JSON body that went on the wire."""
    seen: list[bytes] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.content)
        return httpx2.Response(400, json={"error": {"type": "invalid_request_error", "message": "captured"}})

    client = client_factory(httpx2.Client(transport=httpx2.MockTransport(handler)))
    with pytest.raises((anthropic.BadRequestError, openai.BadRequestError)):
        call(client)
    return seen[0].decode("utf-8")


def test_converted_bodies_are_what_the_sdks_send(traces) -> None:
    """Key order included: the SDK puts exactly the converted body on the wire."""
    source = traces["good_support_chat"][16].body
    converted = anthropic_to_openai(source).body
    wire = _capture(lambda http: openai.OpenAI(api_key="test", http_client=http, max_retries=0),
                    lambda client: client.chat.completions.create(**converted))
    assert wire == dumps(converted)
    back = openai_to_anthropic(traces["good_agent_tools"][17].body).body
    back.pop("temperature")  # anthropic 2.14's messages.create no longer takes temperature
    wire = _capture(lambda http: anthropic.Anthropic(api_key="test", http_client=http, max_retries=0),
                    lambda client: client.messages.create(**back))
    assert wire == dumps(back)
