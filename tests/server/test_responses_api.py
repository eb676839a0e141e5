"""``POST /v1/responses`` of ``promptcache serve`` driven by the official ``openai`` client.

Most tests use the session's ``promptcache serve`` subprocess; the one that needs a reply ended by the
server's default limit (``response.completed``) uses the app in process with a 2-token default, since the
subprocess's 256-token default costs seconds of decoding. Expected prompt ids are the Chat view's ChatML rendering (``encode_chatml`` of
``responses_to_chat``; the server's template is ChatML, checked against
``/tokenize`` in ``test_server_clients.py``) and expected hits come from the
oracle (:func:`server_support.oracle_hit`), which shares no code with the block manager.
"""

from __future__ import annotations

import httpx
import openai
import pytest
from fastapi.testclient import TestClient
from server_support import HEADER, oracle_hit, unique_system

from local_backend import LocalEngine
from local_backend.server import create_app
from promptcache.convert import responses_to_chat
from promptcache.tokens.chatml import encode_chatml

TOOL = {"type": "function", "name": "lookup_order", "description": "Find an order by its number.",
        "parameters": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
        "strict": False}


@pytest.fixture(scope="module")
def short_default_client():
    """The real client on the app in process, whose default output limit is 2 tokens."""
    with TestClient(create_app(LocalEngine(kv_cache_mb=16), default_max_tokens=2)) as client:
        yield openai.OpenAI(base_url="http://testserver/v1", api_key="x", http_client=client, max_retries=0)


def prompt_ids(**body) -> list[int]:
    """The prompt the server renders for a Responses body: its Chat view in ChatML, generation prompt included."""
    view = responses_to_chat({"model": "m", **body}).body
    return encode_chatml(view["messages"], view.get("tools"))


def test_a_shared_instructions_prefix_is_served_from_the_cache(openai_client):
    instructions = unique_system(300)
    raw = openai_client.responses.with_raw_response.create(
        model="gpt-4.1-mini", instructions=instructions, input="Where is order 1042?", max_output_tokens=1)
    one = raw.parse()
    ids1 = prompt_ids(instructions=instructions, input="Where is order 1042?")
    assert one.id.startswith("resp_") and one.object == "response" and one.model == "gpt-4.1-mini"
    assert one.usage.input_tokens == len(ids1) and one.usage.input_tokens_details.cached_tokens == 0
    assert one.usage.output_tokens == 1 and one.usage.total_tokens == len(ids1) + 1
    assert one.usage.output_tokens_details.reasoning_tokens == 0 and raw.headers[HEADER] == "0"
    assert one.status == "incomplete" and one.incomplete_details.reason == "max_output_tokens"  # its own limit
    assert one.output[0].type == "message" and one.output[0].content[0].type == "output_text"
    assert one.output_text == one.output[0].content[0].text

    two = openai_client.responses.create(model="gpt-4.1-mini", instructions=instructions,
                                         input=[{"role": "user", "content": "And order 1043?"}], max_output_tokens=1)
    ids2 = prompt_ids(instructions=instructions, input=[{"role": "user", "content": "And order 1043?"}])
    expected = oracle_hit([ids1], ids2)
    assert expected >= len(encode_chatml([{"role": "system", "content": instructions}], add_generation_prompt=False)) \
        // 16 * 16 > 0
    assert two.usage.input_tokens == len(ids2)
    assert two.usage.input_tokens_details.cached_tokens == expected


def test_streaming_events_end_with_the_whole_response_and_its_usage(short_default_client, openai_client):
    instructions = unique_system(200)
    short_default_client.responses.create(model="m", instructions=instructions, input="Hi")
    with short_default_client.responses.stream(model="m", instructions=instructions, input="Where is it?") as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [event.type for event in events]
    assert kinds[:4] == ["response.created", "response.in_progress", "response.output_item.added",
                         "response.content_part.added"]
    assert kinds[-4:] == ["response.output_text.done", "response.content_part.done", "response.output_item.done",
                          "response.completed"]  # the server's default limit ended it: completed
    assert set(kinds[4:-4]) == {"response.output_text.delta"}
    assert [event.sequence_number for event in events] == list(range(len(events)))
    ids = prompt_ids(instructions=instructions, input="Where is it?")
    expected = oracle_hit([prompt_ids(instructions=instructions, input="Hi")], ids)
    assert final.status == "completed" and final.usage.input_tokens == len(ids) and final.usage.output_tokens == 2
    assert final.usage.input_tokens_details.cached_tokens == expected > 0
    assert final.output_text == "".join(e.delta for e in events if e.type == "response.output_text.delta")

    openai_client.responses.create(model="gpt-4.1-mini", instructions=instructions, input="Hi", max_output_tokens=1)
    created = openai_client.responses.create(model="gpt-4.1-mini", instructions=instructions, input="Where is it?",
                                             max_output_tokens=2, stream=True)  # serve, its own limit: incomplete
    last = list(created)[-1]
    assert last.type == "response.incomplete" and last.response.usage.input_tokens == len(ids)
    assert last.response.usage.input_tokens_details.cached_tokens == expected


def test_previous_response_id_chains_one_growing_prefix(openai_client):
    instructions = unique_system(250)
    first = openai_client.responses.create(model="gpt-4.1-mini", instructions=instructions,
                                           input="Where is order 1042?", max_output_tokens=1)
    second = openai_client.responses.create(model="gpt-4.1-mini", instructions=instructions, previous_response_id=first.id,
                                            input="And when will it arrive?", max_output_tokens=1)
    ids1 = prompt_ids(instructions=instructions, input="Where is order 1042?")
    ids2 = prompt_ids(instructions=instructions, input=[
        {"role": "user", "content": "Where is order 1042?"},
        {"role": "assistant", "content": [{"type": "output_text", "text": first.output_text}]},
        {"role": "user", "content": "And when will it arrive?"}])
    assert second.previous_response_id == first.id
    assert second.usage.input_tokens == len(ids2)
    assert second.usage.input_tokens_details.cached_tokens == oracle_hit([ids1], ids2) >= len(ids1) - 16


def test_an_unknown_or_unstored_previous_response_is_a_400(openai_client):
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.responses.create(model="gpt-4.1-mini", previous_response_id="resp_missing", input="Hi")
    assert caught.value.status_code == 400 and caught.value.param == "previous_response_id"
    assert caught.value.code == "previous_response_not_found"
    assert caught.value.body["message"].startswith("Previous response with id 'resp_missing' not found.")
    unstored = openai_client.responses.create(model="gpt-4.1-mini", input="Hi", store=False, max_output_tokens=1)
    with pytest.raises(openai.BadRequestError, match=f"Previous response with id '{unstored.id}' not found"):
        openai_client.responses.create(model="gpt-4.1-mini", previous_response_id=unstored.id, input="More")


def test_tools_and_function_calls_are_rendered_into_the_prompt(openai_client):
    items = [{"role": "user", "content": "Status of 1042?"},
             {"type": "function_call", "call_id": "call_1", "name": "lookup_order", "arguments": '{"order": "1042"}'},
             {"type": "function_call_output", "call_id": "call_1", "output": '{"status": "shipped"}'}]
    instructions = unique_system(30)
    reply = openai_client.responses.create(model="gpt-4.1-mini", instructions=instructions, input=items, tools=[TOOL],
                                           tool_choice="auto", max_output_tokens=1)
    assert reply.usage.input_tokens == len(prompt_ids(instructions=instructions, input=items, tools=[TOOL]))
    assert reply.usage.input_tokens > len(prompt_ids(instructions=instructions, input=items))
    assert [tool.name for tool in reply.tools] == ["lookup_order"]


@pytest.mark.parametrize(("body", "message", "param"), [
    ({"model": "gpt-4.1-mini"}, "Missing required parameter: 'input'.", "input"),
    ({"model": "gpt-4.1-mini", "input": [{"role": "user"}]},
     "Missing required parameter: 'input[0].content'.", "input[0].content"),
    ({"model": "gpt-4.1-mini", "input": [{"type": "function_call_output", "call_id": "c9", "output": "x"}]},
     "input[0]: No tool call found for function call output with call_id c9.", "input[0]"),
    ({"model": "gpt-4.1-mini", "input": "Hi", "tools": [{"type": "web_search"}]},
     "tools[0]: built-in tool 'web_search' is not served by this server; send function tools only", "tools[0]"),
    ({"model": "gpt-4.1-mini", "input": "Hi", "background": True},
     "background: not supported by this server; run the request in the foreground", "background"),
    ({"model": "gpt-4.1-mini", "input": []}, "input: the request has no input", "input"),
    ({"model": "gpt-4.1-mini", "input": ""}, "input: the request has no input", "input"),
    ({"model": "gpt-4.1-mini", "input": "Hi", "tool_choice": {"type": "function", "name": "nope"}},
     "tool_choice: no function named 'nope' in tools", "tool_choice"),
])
def test_malformed_bodies_get_a_provider_shaped_400_and_the_server_keeps_serving(server, openai_client, body,
                                                                                 message, param):
    answer = httpx.post(f"{server}/v1/responses", json=body, timeout=30)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["message"].startswith(message) and error["param"] == param
    assert error["type"] == "invalid_request_error"
    assert openai_client.responses.create(model="gpt-4.1-mini", input="Still there?", max_output_tokens=1).status \
        == "incomplete"
