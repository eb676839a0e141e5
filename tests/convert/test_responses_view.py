"""The Chat Completions view of OpenAI Responses bodies (``promptcache.convert.from_responses``), its path map,
the way back (``to_responses``), and the miss classifier reading Responses bodies through the view.

Responses bodies come from the real ``openai`` client (``responses_support.sent``).
"""

from __future__ import annotations

import pytest
from responses_support import LOOKUP_TOOL, sent

from promptcache import PromptBuilder
from promptcache.convert import chat_to_responses, convert_body, responses_to_chat
from promptcache.misses.guard import compare_bodies
from promptcache.misses.rendering import decompose
from promptcache.tokens.chatml import encode_chatml

CHAT_TOOL = {"type": "function", "function": {"name": "lookup_order", "description": "Find an order by its number.",
                                              "parameters": LOOKUP_TOOL["parameters"], "strict": False}}


def agent() -> dict:
    return sent(model="gpt-4.1-mini", instructions="You are the support agent.", tools=[{"type": "web_search"}, LOOKUP_TOOL],
                input=[{"role": "user", "content": "Where is order 1042?"},
                       {"type": "reasoning", "id": "rs_1", "summary": []},
                       {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
                       {"type": "function_call", "call_id": "call_1", "name": "lookup_order",
                        "arguments": '{"order": "1042"}'},
                       {"type": "function_call_output", "call_id": "call_1", "output": '{"status": "shipped"}'},
                       {"role": "user", "content": [{"type": "input_text", "text": "When will it arrive?"},
                                                    {"type": "input_image", "image_url": "https://example.com/a.png",
                                                     "detail": "low"}]}],
                max_output_tokens=300, reasoning={"effort": "low", "summary": "auto"}, text={"verbosity": "low"},
                tool_choice={"type": "function", "name": "lookup_order"}, prompt_cache_key="support-v1",
                include=["reasoning.encrypted_content"])


def test_the_chat_view_of_a_real_client_body() -> None:
    view = responses_to_chat(agent())
    assert view.body == {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "system", "content": "You are the support agent."},
            {"role": "user", "content": "Where is order 1042?"},
            {"role": "assistant", "content": [{"type": "text", "text": "Checking."}], "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "lookup_order",
                                                                  "arguments": '{"order": "1042"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": '{"status": "shipped"}'},
            {"role": "user", "content": [{"type": "text", "text": "When will it arrive?"},
                                         {"type": "image_url", "image_url": {"url": "https://example.com/a.png",
                                                                             "detail": "low"}}]}],
        "max_completion_tokens": 300, "prompt_cache_key": "support-v1", "reasoning_effort": "low",
        "tool_choice": {"type": "function", "function": {"name": "lookup_order"}}, "tools": [CHAT_TOOL],
        "verbosity": "low"}
    assert list(view.body) == ["model", "messages", "max_completion_tokens", "prompt_cache_key", "reasoning_effort",
                               "tool_choice", "tools", "verbosity"]  # the Chat SDK's order
    assert view.dropped == {"input[1]": {"type": "reasoning", "id": "rs_1", "summary": []},
                            "tools[0]": {"type": "web_search"}, "reasoning.summary": "auto",
                            "include": ["reasoning.encrypted_content"]}


@pytest.mark.parametrize(("chat_path", "responses_path"), [
    ("messages[0]", "instructions"), ("messages[0].content", "instructions"),
    ("messages[1].content", "input[0].content"), ("messages[2].content[0].text", "input[2].content[0].text"),
    ("messages[2].tool_calls[0]", "input[3]"), ("messages[3].content", "input[4].output"),
    ("messages[4].content[1]", "input[5].content[1]"), ("messages[4]", "input[5]"),
    ("tools[0]", "tools[1]"), ("model", "model")])
def test_the_path_map_names_the_responses_paths(chat_path, responses_path) -> None:
    assert responses_to_chat(agent()).source_path(chat_path) == responses_path


def test_chained_state_is_dropped_with_a_note() -> None:
    view = responses_to_chat(sent(model="m", previous_response_id="resp_1", input="More?"))
    assert view.dropped == {"previous_response_id": "resp_1"}
    assert view.notes == ("previous_response_id: the earlier response's input and output are not in this body; the "
                          "chained prefix is unknown (resolve the chain first: promptcache.trace.chain)",)


@pytest.mark.parametrize(("item", "message"), [
    ({"type": "web_search_call", "id": "ws_1", "status": "completed"}, "input[1]: 'web_search_call' items have no Chat"),
    ({"type": "item_reference", "id": "msg_1"}, "input[1]: an item_reference names an item stored at OpenAI"),
    ({"role": "user", "content": [{"type": "input_image", "file_id": "file-1", "detail": "auto"}]},
     "input[1].content[0]: an input_image by file_id has no Chat Completions counterpart"),
])
def test_what_has_no_chat_counterpart_is_refused_by_path(item, message) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        responses_to_chat({"model": "m", "input": [{"role": "user", "content": "Hi"}, item]})


def test_chat_to_responses_inverts_the_view() -> None:
    body = agent()
    del body["include"]
    back = chat_to_responses(responses_to_chat(body).body).body
    assert back["instructions"] == body["instructions"]
    assert back["tools"] == [{"type": "function", **{k: v for k, v in LOOKUP_TOOL.items() if k != "type"}}]
    assert back["tool_choice"] == body["tool_choice"] and back["reasoning"] == {"effort": "low"}
    assert back["text"] == {"verbosity": "low"} and back["max_output_tokens"] == 300
    assert [item.get("type", item.get("role")) for item in back["input"]] == [
        "user", "assistant", "function_call", "function_call_output", "user"]  # the reasoning item had no view
    assert responses_to_chat(back).body == responses_to_chat(body).body


def test_anthropic_and_responses_convert_through_chat() -> None:
    body = sent(model="claude-sonnet-4-6", instructions="Be brief.", input="Where is order 1042?", max_output_tokens=50)
    anthropic = convert_body(body, "openai.responses", "anthropic.messages").body
    assert anthropic == {"max_tokens": 50, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "Where is order 1042?"}]}], "model": "claude-sonnet-4-6",
        "system": [{"type": "text", "text": "Be brief."}]}
    again = convert_body(anthropic, "anthropic.messages", "openai.responses").body
    assert again == {"model": "claude-sonnet-4-6", "input": [{"role": "user", "content": "Where is order 1042?"}],
                     "instructions": "Be brief.", "max_output_tokens": 50}


def test_one_prompt_renders_the_same_tokens_through_either_openai_api() -> None:
    prompt = PromptBuilder().system("You are the support agent.").document("Handbook: returns take 5 days.") \
        .history([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]).user("Refund?").build()
    chat = prompt.to_openai_chat("gpt-4.1-mini")
    responses = prompt.to_openai_responses("gpt-4.1-mini")
    assert decompose(responses, "openai.responses").tokens == decompose(chat, "openai.chat").tokens \
        == encode_chatml(chat["messages"], add_generation_prompt=False)


def test_divergences_are_reported_at_responses_paths() -> None:
    long = "\n\n".join(f"Rule {i}: answer briefly and cite the order number." for i in range(200))
    first = sent(model="gpt-4.1-mini", instructions=long, tools=[LOOKUP_TOOL], input="Where is order 1042?")
    changed = sent(model="gpt-4.1-mini", instructions=long.replace("Rule 150:", "Rule 150 :"), tools=[LOOKUP_TOOL],
                   input="Where is order 1042?")
    divergence = compare_bodies(("openai.responses", changed), [("openai.responses", first)])
    assert (divergence.cause, divergence.layer, divergence.path) == ("system_changed", "system", "instructions")
    other_tool = dict(LOOKUP_TOOL, description="Find an order.")
    tools = compare_bodies(("openai.responses", {**first, "tools": [other_tool]}), [("openai.responses", first)])
    assert (tools.cause, tools.path, tools.detail) == ("tools_changed", "tools[0]", "schema changed: lookup_order")
    turn2 = sent(model="gpt-4.1-mini", instructions=long, tools=[LOOKUP_TOOL], input=[
        {"role": "user", "content": "Where is order 1042?"}, {"role": "assistant", "content": "It shipped."},
        {"role": "user", "content": "Thanks"}])
    edited = {**turn2, "input": [{"role": "user", "content": "Where is order 1043?"}, *turn2["input"][1:]]}
    history = compare_bodies(("openai.responses", edited), [("openai.responses", turn2)])
    assert (history.cause, history.layer, history.path) == ("history_rewritten", "history", "input[0].content")
    assert history.detail == "edited: input[0] was rewritten (summary or edit of an earlier turn)"
    effort = compare_bodies(("openai.responses", {**turn2, "reasoning": {"effort": "high"}}),
                            [("openai.responses", {**turn2, "reasoning": {"effort": "low"}})])
    assert (effort.cause, effort.path) == ("params_changed", "effort")
