"""The official ``openai`` and ``anthropic`` clients against ``promptcache serve``: cached tokens and usage.

Expected hits come from the oracle (:func:`server_support.oracle_hit`) over
the server's own token ids (``/tokenize``, itself checked against
``promptcache.tokens.chatml``).
"""

from __future__ import annotations

import anthropic
import httpx
import pytest
from server_support import HEADER, anthropic_expected, oracle_hit, unique_system

from promptcache.tokens.chatml import chatml_encoding, encode_chatml
from promptcache.convert import anthropic_to_openai
from promptcache.misses.prefix_index import common_prefix

BLOCK = 16


def usage_fields(usage) -> dict[str, int]:
    return {k: getattr(usage, k) for k in ("cache_read_input_tokens", "cache_creation_input_tokens", "input_tokens")}


def test_openai_second_turn_caches_the_block_aligned_common_prefix(openai_client, tokenize):
    first = [{"role": "system", "content": unique_system()}, {"role": "user", "content": "Where is order 1042?"}]
    raw = openai_client.chat.completions.with_raw_response.create(model="gpt-4.1-mini", messages=first,
                                                                  max_tokens=1, temperature=0)
    one = raw.parse()
    ids1 = tokenize(first)
    assert ids1 == encode_chatml(first)
    assert one.usage.prompt_tokens == len(ids1)
    assert one.usage.prompt_tokens_details.cached_tokens == 0
    assert raw.headers[HEADER] == "0"
    assert one.model == "gpt-4.1-mini" and one.choices[0].finish_reason in ("stop", "length")

    second = [*first, {"role": "assistant", "content": "It left the warehouse on Monday."},
              {"role": "user", "content": "And order 1043?"}]
    raw = openai_client.chat.completions.with_raw_response.create(model="gpt-4.1-mini", messages=second,
                                                                  max_tokens=1, temperature=0)
    two = raw.parse()
    ids2 = tokenize(second)
    expected = oracle_hit([ids1], ids2)
    assert expected == min(common_prefix(ids1, ids2), len(ids2) - 1) // BLOCK * BLOCK
    assert expected >= len(encode_chatml(first[:1], add_generation_prompt=False)) // BLOCK * BLOCK > 0
    assert two.usage.prompt_tokens == len(ids2)
    assert two.usage.prompt_tokens_details.cached_tokens == expected
    assert raw.headers[HEADER] == str(expected)


def test_openai_tools_are_rendered_into_the_prompt(openai_client):
    tools = [{"type": "function", "function": {"name": "lookup_order", "description": "Find an order by number.",
                                               "parameters": {"type": "object",
                                                              "properties": {"order": {"type": "string"}},
                                                              "required": ["order"]}}}]
    messages = [{"role": "system", "content": unique_system(30)}, {"role": "user", "content": "Status of 1042?"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "lookup_order", "arguments": "{\"order\": \"1042\"}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "{\"status\": \"shipped\"}"}]
    reply = openai_client.chat.completions.create(model="gpt-4.1-mini", messages=messages, tools=tools,
                                                  tool_choice="auto", max_tokens=1)
    assert reply.usage.prompt_tokens == len(encode_chatml(messages, tools)) > len(encode_chatml(messages))


def test_openai_completions_and_cache_reset(openai_client, server):
    prompt = unique_system(200)
    n = len(chatml_encoding().encode(prompt, disallowed_special=()))
    assert httpx.post(f"{server}/tokenize", json={"prompt": prompt}).json()["count"] == n
    first = openai_client.completions.create(model="promptcache-test", prompt=prompt, max_tokens=2)
    assert first.usage.prompt_tokens == n and first.usage.prompt_tokens_details.cached_tokens == 0
    again = openai_client.completions.create(model="promptcache-test", prompt=prompt, max_tokens=2)
    assert again.usage.prompt_tokens_details.cached_tokens == (n - 1) // BLOCK * BLOCK
    assert again.model == "promptcache-test" and again.choices[0].finish_reason in ("stop", "length")
    reset = httpx.post(f"{server}/v1/cache/reset", timeout=30)
    assert reset.status_code == 200 and reset.json() == {"reset": True}
    cold = openai_client.completions.create(model="promptcache-test", prompt=prompt, max_tokens=2)
    assert cold.usage.prompt_tokens_details.cached_tokens == 0


def test_models_lists_the_served_names(openai_client):
    assert [m.id for m in openai_client.models.list().data] == ["promptcache-test", "gpt-4.1-mini",
                                                                 "claude-sonnet-4-6"]


def test_anthropic_usage_follows_the_breakpoint_mapping(anthropic_client):
    system = unique_system()
    marked_system = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
    question = {"role": "user", "content": [{"type": "text", "text": "Where is order 1042?",
                                             "cache_control": {"type": "ephemeral"}}]}
    chat1 = [{"role": "system", "content": system}, {"role": "user", "content": "Where is order 1042?"}]
    prompt1 = encode_chatml(chat1)
    system_offset = len(encode_chatml(chat1[:1], add_generation_prompt=False))
    last1 = len(encode_chatml(chat1, add_generation_prompt=False))
    assert system_offset < last1 < len(prompt1)

    raw = anthropic_client.messages.with_raw_response.create(model="claude-sonnet-4-6", max_tokens=1,
                                                             system=marked_system, messages=[question])
    cold = raw.parse()
    assert usage_fields(cold.usage) == anthropic_expected(len(prompt1), 0, last1)
    assert cold.usage.cache_creation_input_tokens == last1 and raw.headers[HEADER] == "0"
    assert cold.model == "claude-sonnet-4-6" and cold.stop_reason in ("end_turn", "max_tokens")

    # Turn 2, the marker moved to the newest user block (the shared trace's pattern).
    answer = {"role": "assistant", "content": [{"type": "text", "text": "It left the warehouse on Monday."}]}
    follow = {"role": "user", "content": [{"type": "text", "text": "And order 1043?",
                                           "cache_control": {"type": "ephemeral"}}]}
    plain_question = {"role": "user", "content": [{"type": "text", "text": "Where is order 1042?"}]}
    chat2 = [*chat1, {"role": "assistant", "content": "It left the warehouse on Monday."},
             {"role": "user", "content": "And order 1043?"}]
    prompt2 = encode_chatml(chat2)
    hit2 = oracle_hit([prompt1], prompt2)
    raw = anthropic_client.messages.with_raw_response.create(model="claude-sonnet-4-6", max_tokens=1,
                                                             system=marked_system,
                                                             messages=[plain_question, answer, follow])
    warm = raw.parse()
    last2 = len(encode_chatml(chat2, add_generation_prompt=False))
    assert int(raw.headers[HEADER]) == hit2 >= system_offset // BLOCK * BLOCK
    assert usage_fields(warm.usage) == anthropic_expected(len(prompt2), hit2, last2)
    assert warm.usage.cache_read_input_tokens == hit2 and warm.usage.cache_creation_input_tokens == last2 - hit2

    # Only the system marker: the read is capped at the system breakpoint.
    raw = anthropic_client.messages.with_raw_response.create(model="claude-sonnet-4-6", max_tokens=1,
                                                             system=marked_system,
                                                             messages=[plain_question, answer, follow | {
                                                                 "content": [{"type": "text",
                                                                              "text": "And order 1043?"}]}])
    capped = raw.parse()
    hit3 = int(raw.headers[HEADER])
    assert hit3 == oracle_hit([prompt1, prompt2], prompt2) > system_offset
    assert usage_fields(capped.usage) == anthropic_expected(len(prompt2), hit3, system_offset)
    assert capped.usage.cache_read_input_tokens == system_offset and capped.usage.cache_creation_input_tokens == 0

    # No marker at all: read = the engine hit, nothing written.
    raw = anthropic_client.messages.with_raw_response.create(model="claude-sonnet-4-6", max_tokens=1, system=system,
                                                             messages=[plain_question])
    unmarked = raw.parse()
    hit4 = int(raw.headers[HEADER])
    assert hit4 == oracle_hit([prompt1, prompt2], prompt1)
    assert usage_fields(unmarked.usage) == anthropic_expected(len(prompt1), hit4, None)

    # Top-level cache_control (automatic caching): the breakpoint is the last block of the last message.
    raw = anthropic_client.messages.with_raw_response.create(
        model="claude-sonnet-4-6", max_tokens=1, system=system, messages=[plain_question, answer, follow],
        extra_body={"cache_control": {"type": "ephemeral"}})
    auto = raw.parse()
    assert usage_fields(auto.usage) == anthropic_expected(len(prompt2), int(raw.headers[HEADER]), last2)


def test_anthropic_tools_and_tool_use_are_rendered(anthropic_client):
    tools = [{"name": "lookup_order", "description": "Find an order by number.",
              "input_schema": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
              "cache_control": {"type": "ephemeral"}}]
    body = {"max_tokens": 1, "model": "claude-sonnet-4-6", "system": unique_system(30), "tools": tools,
            "messages": [
                {"role": "user", "content": "Status of 1042?"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "lookup_order",
                                                   "input": {"order": "1042"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01",
                                              "content": "{\"status\": \"shipped\"}"}]}]}
    chat = anthropic_to_openai(body).body
    expected = len(encode_chatml(chat["messages"], chat["tools"]))
    reply = anthropic_client.messages.create(**body)
    usage = reply.usage
    assert usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens == expected
    tools_offset = len(encode_chatml([], chat["tools"], add_generation_prompt=False))
    assert usage.cache_creation_input_tokens + usage.cache_read_input_tokens == tools_offset
    counted = anthropic_client.messages.count_tokens(model="claude-sonnet-4-6", system=body["system"], tools=tools,
                                                      messages=body["messages"])
    assert counted.input_tokens == expected


def test_anthropic_more_than_four_breakpoints_is_a_400(anthropic_client):
    blocks = [{"type": "text", "text": f"part {i}", "cache_control": {"type": "ephemeral"}} for i in range(5)]
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client.messages.create(model="claude-sonnet-4-6", max_tokens=1, system=blocks[:2],
                                         messages=[{"role": "user", "content": blocks[2:]}])
    assert caught.value.status_code == 400
    assert caught.value.body == {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "A maximum of 4 blocks with cache_control may be provided. Found 5."}}
