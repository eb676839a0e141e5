"""``openai.responses`` records and bodies: the record api, the ``response`` key and the Responses shape checker.

Valid bodies come from the real ``openai`` client (``responses_support.sent``); each invalid one changes one
field of such a body.
"""

from __future__ import annotations

import copy
import re

import pytest
from responses_support import LOOKUP_TOOL, record, sent

from promptcache.providers.apis import OPENAI_RESPONSES, infer_api
from promptcache.trace import Level, TraceFormatError, body_issues, check_body, parse_record, validate_trace
from promptcache.trace.records import read_trace, write_trace


def found(issues) -> list[tuple[str, str]]:
    return [(issue.path, issue.message) for issue in issues]


def agent_body() -> dict:
    return sent(model="gpt-4.1-mini", instructions="You are the support agent.", tools=[LOOKUP_TOOL], input=[
        {"role": "user", "content": "Where is order 1042?"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me look."}]},
        {"type": "function_call", "call_id": "call_1", "name": "lookup_order", "arguments": '{"order": "1042"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": '{"status": "shipped"}'},
        {"role": "user", "content": [{"type": "input_text", "text": "Thanks. When will it arrive?"}]}],
        max_output_tokens=200, reasoning={"effort": "low"}, text={"verbosity": "low"}, prompt_cache_key="support")


def test_real_client_bodies_are_valid_at_every_level() -> None:
    body = agent_body()
    assert list(body) == ["model", "input", "instructions", "max_output_tokens", "prompt_cache_key", "reasoning",
                          "text", "tools"]  # the SDK's order (OPENAI_RESPONSES_KEYS)
    assert body_issues(OPENAI_RESPONSES, body) == []
    assert body_issues(OPENAI_RESPONSES, sent(model="gpt-4.1-mini", input="Hello")) == []
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    chained = sent(model="gpt-4.1-mini", previous_response_id="resp_1",
                   input=[reasoning, {"type": "function_call_output", "call_id": "call_9", "output": "ok"}])
    assert body_issues(OPENAI_RESPONSES, chained) == []  # the call may be in the previous response


def test_infer_api_tells_a_responses_body_by_its_input() -> None:
    assert infer_api(agent_body()) == OPENAI_RESPONSES
    assert infer_api({"model": "m", "input": "hi"}) == OPENAI_RESPONSES
    assert infer_api({"model": "m", "messages": [{"role": "system", "content": "x"}]}) == "openai.chat"


@pytest.mark.parametrize(("change", "level", "expected"), [
    (lambda b: b.pop("input"), Level.STRUCTURE,
     ("body.input", "missing: a Responses body needs input (a string or a list of input items)")),
    (lambda b: b.update(input=5), Level.STRUCTURE,
     ("body.input", "input must be a string or a list of input items, not an integer")),
    (lambda b: b["input"].append(3), Level.STRUCTURE, ("body.input[5]", "an input item must be an object, not an integer")),
    (lambda b: b["input"][0].update(role="robot"), Level.STRUCTURE,
     ("body.input[0].role", "must be one of user, assistant, system, developer, not 'robot'")),
    (lambda b: b["input"][2].pop("arguments"), Level.STRUCTURE,
     ("body.input[2].arguments", "a function_call needs string 'arguments'")),
    (lambda b: b["input"][1]["content"][0].update(type="input_text"), Level.API,
     ("body.input[1].content[0].type", "Invalid value: 'input_text'. Supported values for assistant content are: "
                                       "'output_text', 'refusal'.")),
    (lambda b: b["input"][3].update(call_id="call_2"), Level.API,
     ("body.input[3]", "No tool call found for function call output with call_id call_2.")),
    (lambda b: b["input"].pop(3), Level.API, ("body.input[2]", "No tool output found for function call call_1.")),
    (lambda b: b["input"].append({"type": "hologram"}), Level.API,
     ("body.input[5].type", "Invalid value: 'hologram'. Supported values are: 'message', 'function_call', "
                            "'function_call_output', 'reasoning', ...")),
    (lambda b: b["tools"].append(dict(LOOKUP_TOOL)), Level.API, ("body.tools[1]", "duplicate tool name 'lookup_order'")),
    (lambda b: b["tools"][0].update(parameters={"type": "array"}), Level.API,
     ("body.tools[0].parameters", "parameters of 'lookup_order' must be an object schema (or null)")),
    (lambda b: b["input"][2].update(arguments='{"order": 1042}'), Level.TRACE,
     ("body.input[2].arguments", "arguments do not match the tool schema: 1042 is not of type 'string'")),
    (lambda b: b["input"].__setitem__(4, {"role": "assistant", "content": "Soon."}), Level.TRACE,
     ("body.input[4]", "the last input item must be a user message or a function_call_output")),
])
def test_each_problem_is_found_at_its_level(change, level, expected) -> None:
    body = copy.deepcopy(agent_body())
    change(body)
    issues = found(body_issues(OPENAI_RESPONSES, body, level))
    assert expected in issues
    if level > Level.STRUCTURE:
        assert expected not in found(body_issues(OPENAI_RESPONSES, body, Level(level - 1)))


def test_structure_failures_raise_with_the_path() -> None:
    with pytest.raises(ValueError, match=r"^body.input\[0\].content: content is required"):
        check_body(OPENAI_RESPONSES, {"model": "m", "input": [{"role": "user"}]})
    issue = body_issues(OPENAI_RESPONSES, {"model": "m", "input": [{"role": "user"}]}, Level.API)[0]
    assert issue.provider_message(OPENAI_RESPONSES) == (
        "Missing required parameter: 'input[0].content'. A message is {'role': 'user', 'content': '...'} (content: a "
        "string or a list of input_text parts).", "input[0].content")


def test_a_record_carries_the_response_it_got(tmp_path) -> None:
    one = record(0.0, "s1", model="gpt-4.1-mini", instructions="Be brief.", input="Where is order 1042?")
    assert one.response["id"] == "resp_1" and one.response["output"][0]["content"][0]["text"] == "It shipped on Monday."
    path = tmp_path / "t.jsonl"
    write_trace(path, [one])
    line = path.read_text()
    assert line.startswith('{"t":0.0,"api":"openai.responses","session":"s1","body":{"model":"gpt-4.1-mini",')
    assert '"usage":{"input_tokens":10,' in line and ',"response":{"id":"resp_1","output":[' in line
    assert read_trace(path, strict=True) == [one]
    assert validate_trace(path) == []


@pytest.mark.parametrize(("line", "message"), [
    ('{"t":0.0,"api":"openai.chat","session":"s","body":{},"response":{"id":"r","output":[]}}',
     "response is recorded for openai.responses requests only (the Response's id and output)"),
    ('{"t":0.0,"api":"openai.responses","session":"s","body":{},"response":{"id":"r"}}',
     'response must be {"id": "resp_...", "output": [output items]} or null'),
])
def test_a_bad_response_key_is_a_record_problem(line, message) -> None:
    with pytest.raises(TraceFormatError, match=re.escape(message)):
        parse_record(line)
