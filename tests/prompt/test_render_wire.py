"""The exact JSON the official SDKs put on the wire for a rendered Prompt (anthropic / openai via MockTransport)."""

from __future__ import annotations

import json

import anthropic
import httpx2
import openai
import pytest

from promptcache import Conversation, PromptBuilder
from promptcache.prompt.stability import LayerRegistry

RULES = " ".join(f"Rule {i}: answer in the customer's language and name policy section {i} when it applies."
                 for i in range(1, 81))
SCHEMA = {"type": "object", "required": ["order"], "properties": {"order": {"type": "string"}}}
TOOLS = [  # given out of order, in both shapes, with unsorted keys
    {"name": "lookup_order", "input_schema": SCHEMA, "description": "Look up an order."},
    {"type": "function", "function": {"parameters": SCHEMA, "name": "cancel_order", "description": "Cancel it.  "}},
]
CANONICAL_SCHEMA = {"properties": {"order": {"type": "string"}}, "required": ["order"], "type": "object"}
DOC = "Returns are accepted within 30 days.\r\nRefunds take 5 business days.   \n"
DOC_SECTION = '<document name="policy">\nReturns are accepted within 30 days.\nRefunds take 5 business days.\n</document>'
EXAMPLES = "<examples>\n<example>\nUser: Hi\nAssistant: Hello! How can I help?\n</example>\n</examples>"

ANTHROPIC_REPLY = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                   "stop_reason": "end_turn", "stop_sequence": None, "content": [{"type": "text", "text": "Done."}],
                   "usage": {"input_tokens": 12, "output_tokens": 3, "cache_read_input_tokens": 0,
                             "cache_creation_input_tokens": 0}}
CHAT_REPLY = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1-mini",
              "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Done."}}],
              "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}
RESPONSES_REPLY = {"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-4.1-mini", "status": "completed",
                   "output": [], "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}


def wire(reply: dict):
    """An httpx2 client whose transport records each request body and answers ``reply``."""
    seen: list[bytes] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.content)
        return httpx2.Response(200, json=reply)

    return httpx2.Client(transport=httpx2.MockTransport(handler)), seen


def dumps(body: dict) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.fixture
def base() -> PromptBuilder:
    return (PromptBuilder(registry=LayerRegistry()).system(RULES).tools(TOOLS).document(DOC, name="policy")
            .example("Hi", "Hello! How can I help?"))


def test_anthropic_body_on_the_wire(base: PromptBuilder) -> None:
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    prompt = base.cache_ttl(system="1h").history(history).user("Where is HL-1?", context={"customer": "A"}).build()
    http, seen = wire(ANTHROPIC_REPLY)
    client = anthropic.Anthropic(api_key="test", http_client=http, max_retries=0)
    client.messages.create(**prompt.to_anthropic("claude-sonnet-4-6", max_tokens=512, tool_choice={"type": "auto"}))
    expected = {
        "max_tokens": 512,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]},
            {"role": "user", "content": [{"type": "text", "text": "<context>\ncustomer: A\n</context>\n\nWhere is HL-1?",
                                          "cache_control": {"type": "ephemeral"}}]}],
        "model": "claude-sonnet-4-6",
        "system": [
            {"type": "text", "text": RULES, "cache_control": {"type": "ephemeral", "ttl": "1h"}},
            {"type": "text", "text": DOC_SECTION, "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": EXAMPLES, "cache_control": {"type": "ephemeral"}}],
        "tool_choice": {"type": "auto"},
        "tools": [
            {"description": "Cancel it.", "input_schema": CANONICAL_SCHEMA, "name": "cancel_order"},
            {"description": "Look up an order.", "input_schema": CANONICAL_SCHEMA, "name": "lookup_order"}],
    }
    assert seen == [dumps(expected)]


def test_anthropic_breakpoints_respect_the_model_minimum() -> None:
    prompt = PromptBuilder(registry=LayerRegistry()).system("Short rules.").tools(TOOLS).user("q").build()
    http, seen = wire(ANTHROPIC_REPLY)
    client = anthropic.Anthropic(api_key="test", http_client=http, max_retries=0)
    client.messages.create(**prompt.to_anthropic("claude-sonnet-4-6"))
    assert b"cache_control" not in seen[0]  # ~150 tokens: below Sonnet 4.6's 1,024, no marker at all
    plan = prompt.breakpoints("claude-sonnet-4-6")
    assert plan.breakpoints == () and [layer for layer, _ in plan.skipped] == ["system", "history"]


def test_openai_chat_body_on_the_wire(base: PromptBuilder) -> None:
    history = [{"role": "user", "content": [{"type": "text", "text": "Hi"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "Hello"},
                                                 {"type": "tool_use", "id": "call_1", "name": "lookup_order",
                                                  "input": {"order": "HL-1"}}]}]
    prompt = base.history(history).tool_result("call_1", "shipped").user("Thanks!").build()
    http, seen = wire(CHAT_REPLY)
    client = openai.OpenAI(api_key="test", http_client=http, max_retries=0)
    client.chat.completions.create(**prompt.to_openai_chat("gpt-4.1-mini", prompt_cache_key="support-v1",
                                                           max_completion_tokens=300))
    expected = {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "system", "content": f"{RULES}\n\n{DOC_SECTION}\n\n{EXAMPLES}"},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "lookup_order", "arguments": '{"order": "HL-1"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "shipped"},
            {"role": "user", "content": "Thanks!"}],
        "max_completion_tokens": 300,
        "prompt_cache_key": "support-v1",
        "tools": [
            {"function": {"description": "Cancel it.", "name": "cancel_order", "parameters": CANONICAL_SCHEMA},
             "type": "function"},
            {"function": {"description": "Look up an order.", "name": "lookup_order", "parameters": CANONICAL_SCHEMA},
             "type": "function"}],
    }
    assert seen == [dumps(expected)]


def test_openai_responses_body_on_the_wire(base: PromptBuilder) -> None:
    history = [{"role": "user", "content": "Hi"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "call_1", "type": "function", "function": {"name": "lookup_order", "arguments": '{"order":"HL-1"}'}}]}]
    prompt = base.history(history).tool_result("call_1", "shipped").build()
    http, seen = wire(RESPONSES_REPLY)
    client = openai.OpenAI(api_key="test", http_client=http, max_retries=0)
    client.responses.create(**prompt.to_openai_responses("gpt-4.1-mini", prompt_cache_key="support-v1"))
    expected = {
        "model": "gpt-4.1-mini",
        "input": [{"role": "user", "content": "Hi"},
                  {"type": "function_call", "call_id": "call_1", "name": "lookup_order", "arguments": '{"order":"HL-1"}'},
                  {"type": "function_call_output", "call_id": "call_1", "output": "shipped"}],
        "instructions": f"{RULES}\n\n{DOC_SECTION}\n\n{EXAMPLES}",
        "prompt_cache_key": "support-v1",
        "tools": [{"description": "Cancel it.", "name": "cancel_order", "parameters": CANONICAL_SCHEMA, "strict": False,
                   "type": "function"},
                  {"description": "Look up an order.", "name": "lookup_order", "parameters": CANONICAL_SCHEMA,
                   "strict": False, "type": "function"}],
    }
    assert seen == [dumps(expected)]


def _without_markers(value):
    if isinstance(value, dict):
        return {k: _without_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_markers(v) for v in value]
    return value


def test_history_is_append_only_across_turns_on_the_wire(base: PromptBuilder) -> None:
    """Five turns through both SDKs: every request's messages extend the previous request's, byte for byte."""
    anthropic_http, anthropic_seen = wire(ANTHROPIC_REPLY)
    openai_http, openai_seen = wire(CHAT_REPLY)
    a_client = anthropic.Anthropic(api_key="test", http_client=anthropic_http, max_retries=0)
    o_client = openai.OpenAI(api_key="test", http_client=openai_http, max_retries=0)
    a_chat, o_chat = Conversation(), Conversation()
    for turn in range(5):
        question = f"Question {turn}: what about order HL-{100 + turn}?"
        prompt = base.history(a_chat).user(question, context={"turn": turn}).build()
        a_chat.record(prompt, a_client.messages.create(**prompt.to_anthropic("claude-sonnet-4-6")))
        prompt = base.history(o_chat).user(question, context={"turn": turn}).build()
        o_chat.record(prompt, o_client.chat.completions.create(**prompt.to_openai_chat("gpt-4.1-mini")))
    for seen, key in ((anthropic_seen, "messages"), (openai_seen, "messages")):
        bodies = [json.loads(raw) for raw in seen]
        assert len({json.dumps({k: v for k, v in b.items() if k != key}) for b in map(_without_markers, bodies)}) == 1
        for earlier, later in zip(bodies, bodies[1:]):
            old, new = _without_markers(earlier[key]), _without_markers(later[key])
            assert new[:len(old)] == old and len(new) == len(old) + 2
    # the moving breakpoint is on the newest message only
    last = json.loads(anthropic_seen[-1])
    marked = [i for i, m in enumerate(last["messages"]) if any("cache_control" in b for b in m["content"])]
    assert marked == [len(last["messages"]) - 1]
    assert len(last["messages"]) == 9 and last["messages"][-2]["content"] == [{"type": "text", "text": "Done."}]


def test_async_clients_send_the_same_bytes(base: PromptBuilder) -> None:
    import asyncio

    prompt = base.user("Where is HL-1?").build()
    sync_http, sync_seen = wire(ANTHROPIC_REPLY)
    anthropic.Anthropic(api_key="t", http_client=sync_http).messages.create(**prompt.to_anthropic("claude-sonnet-4-6"))
    seen: list[bytes] = []

    async def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.content)
        return httpx2.Response(200, json=ANTHROPIC_REPLY)

    async def main() -> None:
        client = anthropic.AsyncAnthropic(api_key="t", http_client=httpx2.AsyncClient(
            transport=httpx2.MockTransport(handler)))
        await client.messages.create(**prompt.to_anthropic("claude-sonnet-4-6"))

    asyncio.run(main())
    assert seen == sync_seen
