"""Malformed request bodies get provider-shaped 400s that name the field and the fix (in process, through the
official clients), and the server keeps serving."""

from __future__ import annotations

import anthropic
import openai
import pytest
from fastapi.testclient import TestClient
from server_support import tiny_llama

from local_backend import LocalEngine
from local_backend.server import create_app
from local_backend.tokenizer import ChatMLTokenizer

HI = {"role": "user", "content": "hi"}
TOOL = {"name": "lookup_order", "description": "Find an order.",
        "input_schema": {"type": "object", "properties": {"order": {"type": "string"}}}}


@pytest.fixture(scope="module")
def client():
    engine = LocalEngine(tiny_llama(), tokenizer=ChatMLTokenizer(), num_blocks=128)
    with TestClient(create_app(engine, default_max_tokens=1)) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def sdk(client):
    return openai.OpenAI(base_url="http://testserver/v1", api_key="x", http_client=client, max_retries=0)


@pytest.fixture(scope="module")
def claude(client):
    return anthropic.Anthropic(base_url="http://testserver", api_key="x", http_client=client, max_retries=0)


def openai_error(sdk, **body) -> dict:
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.chat.completions.create(model="m", max_tokens=1, **body)
    return caught.value.body


def anthropic_error(claude, **body) -> str:
    with pytest.raises(anthropic.BadRequestError) as caught:
        claude.messages.create(model="m", max_tokens=1, **body)
    assert caught.value.body["error"]["type"] == "invalid_request_error"
    return caught.value.body["error"]["message"]


def test_openai_tools_and_messages_are_validated(sdk, client):
    error = openai_error(sdk, messages=[HI], tools=[1])
    assert error["param"] == "tools[0]" and error["message"].startswith("tools[0]: a tool must be an object")
    error = openai_error(sdk, messages=[HI], tools=[{"type": "function"}])
    assert error["param"] == "tools[0]" and "'function' is required" in error["message"]
    error = openai_error(sdk, messages=[HI], tools=[{"type": "function", "function": {"name": "bad name!"}}])
    assert "tool name 'bad name!' must match" in error["message"]
    error = openai_error(sdk, messages=[{"role": "user"}])
    assert error["param"] == "messages[0].content"
    assert error["message"].startswith("Missing required parameter: 'messages[0].content'.")
    error = openai_error(sdk, messages=[HI, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "lookup_order", "arguments": {"order": "1"}}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "{}"}])
    assert error["param"] == "messages[1].tool_calls[0].function.arguments"
    assert error["message"].startswith("Invalid type for 'messages[1].tool_calls[0].function.arguments': expected "
                                       "a string, but got an object instead.")
    error = openai_error(sdk, messages=[{"role": "user", "content": [{"type": "text", "text": 5}]}])
    assert error["param"] == "messages[0].content[0].text" and "expected a string, but got an integer" in \
        error["message"]
    refused = client.post("/tokenize", json={"messages": [HI], "tools": [1]})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "tools[0]"
    assert sdk.chat.completions.create(model="m", messages=[HI]).usage.completion_tokens == 1


def test_anthropic_blocks_tools_and_markers_are_validated(claude, client):
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "lookup_order",
                                             "input": {"order": "1"}}]}
    message = anthropic_error(claude, tools=[TOOL], messages=[HI, use, {"role": "user", "content": "and then?"}])
    assert message.startswith("messages.2: `tool_use` ids were found without `tool_result` blocks immediately "
                              "after: toolu_01.")
    message = anthropic_error(claude, tools=[{"name": "lookup_order"}], messages=[HI])
    assert message.startswith("tools.0: input_schema of 'lookup_order' is required")
    message = anthropic_error(claude, messages=[{"role": "user", "content": [
        {"type": "text", "text": "hi", "cache_control": {"type": "bogus"}}]}])
    assert message.startswith("messages.0.content.0.cache_control: bad cache_control {'type': 'bogus'}")
    message = anthropic_error(claude, messages=[HI], system=[{"type": "text", "text": "x",
                                                              "cache_control": {"type": "ephemeral", "ttl": "2h"}}])
    assert message.startswith("system.0.cache_control: bad cache_control")
    message = anthropic_error(claude, messages=[{"role": "user", "content": [{"type": "text"}]}])
    assert message.startswith("messages.0.content.0.text: Field required.")
    message = anthropic_error(claude, messages=[{"role": "user", "content": [{"type": "text", "text": 5}]}])
    assert message.startswith("messages.0.content.0.text: Input should be a valid string, not an integer.")
    message = anthropic_error(claude, messages=[HI, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_02", "name": "lookup_order", "input": "1"}]}])
    assert message.startswith("messages.1.content.0.input: Input should be an object, not a string.")
    message = anthropic_error(claude, messages=[{"role": "user"}])
    assert message.startswith("messages.0.content: Field required.")
    five, hour = {"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"}
    message = anthropic_error(claude, system=[{"type": "text", "text": "rules", "cache_control": five}], messages=[
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": hour}]}])
    assert message == ("messages.0.content.0.cache_control: a ttl='1h' breakpoint follows a ttl='5m' one at "
                       "system.0.cache_control; cache_control blocks with a longer TTL must come before shorter ones "
                       "(put the 1h markers on the earlier, more stable blocks)")
    message = anthropic_error(claude, tools=[{**TOOL, "cache_control": five}], cache_control=hour, messages=[HI])
    assert message.startswith("cache_control: a ttl='1h' breakpoint follows a ttl='5m' one at tools.0.cache_control")
    ordered = claude.messages.create(model="m", max_tokens=1, system=[
        {"type": "text", "text": "rules", "cache_control": hour}], cache_control=five, messages=[HI])
    assert ordered.usage.output_tokens == 1  # 1h before 5m is the documented order
    counted = client.post("/v1/messages/count_tokens", json={"model": "m", "messages": [
        {"role": "user", "content": [{"type": "text"}]}]})
    assert counted.status_code == 400 and counted.json()["type"] == "error"
    answered = claude.messages.create(model="m", max_tokens=1, tools=[TOOL], messages=[
        HI, use, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "ok"}]}])
    assert answered.usage.output_tokens == 1


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/completions", "/v1/messages",
                                  "/v1/messages/count_tokens"])
def test_a_body_that_is_not_utf8_is_a_400_saying_so(client, path):
    body = '{"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "caf\u00e9"}]}'.encode("latin-1")
    response = client.post(path, content=body, headers={"content-type": "application/json"})
    offset = body.index("\u00e9".encode("latin-1"))
    message = (f"the request body is not valid UTF-8 (byte 0xe9 at offset {offset}: invalid "
               "continuation byte); send the JSON encoded as UTF-8")
    assert response.status_code == 400
    if path.startswith("/v1/messages"):  # Anthropic-shaped
        assert response.json() == {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    else:  # OpenAI-shaped
        assert response.json()["error"]["message"] == message
        assert response.json()["error"]["type"] == "invalid_request_error"


def test_a_utf8_body_with_a_byte_order_mark_is_read(client):
    body = b"\xef\xbb\xbf" + b'{"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}'
    response = client.post("/v1/messages/count_tokens", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text


def test_an_endpoint_the_server_does_not_have_is_a_404_listing_the_ones_it_has(client):
    answer = client.post("/v1/assistants", json={"model": "m"})
    assert answer.status_code == 404
    message = answer.json()["error"]["message"]
    assert message.startswith("POST /v1/assistants: Not Found; this server serves ")
    for path in ("/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages", "/v1/models"):
        assert path in message
