"""``openai.responses`` traces through ``promptcache simulate``, ``diff`` and ``convert`` (click's CliRunner).

The trace is recorded from real ``openai`` client calls (``responses_support.agent_trace``): a function call
answered through ``previous_response_id``, a session whose instructions differ in one word, and a request
chained onto a response the trace does not hold.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from responses_support import agent_trace

from promptcache.cli import main
from promptcache.trace.records import read_trace, write_trace

UNKNOWN = ("t.jsonl:4: previous_response_id 'resp_gone' names a response that is not in the trace (no earlier "
           "record carries it in 'response'): the chained prefix (that response's input and output) is unknown, so "
           "the request is not read as sent; line skipped")


@pytest.fixture()
def trace(tmp_path):
    path = tmp_path / "t.jsonl"
    write_trace(path, agent_trace())
    return path


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def rounded(tokens: int) -> int:
    """OpenAI's cached tokens for a common prefix of ``tokens`` (provider-cache-rules.md): 1,024 + 128 k."""
    return 0 if tokens < 1024 else 1024 + 128 * ((tokens - 1024) // 128)


def test_simulate_reads_the_chain_and_names_responses_paths(trace):
    result = invoke("simulate", trace, "--format", "json")
    assert result.exit_code == 0, result.output
    assert f"warning: {UNKNOWN}" in result.stderr
    rows = json.loads(result.stdout)["requests"]
    assert [row["session"] for row in rows] == ["s1", "s1", "s2"]  # the unknown chain is not simulated
    first, chained, other = rows
    assert first["cache_read_tokens"] == 0 and first["miss_cause"] == "first_request"
    # the chained request is #0's whole prompt plus the call and its output: #0 is a prefix of it
    assert chained["cache_read_tokens"] == rounded(first["prompt_tokens"]) > 2048 and chained["miss_cause"] is None
    assert other["miss_cause"] == "system_changed" and other["expected"] is False

    diff = invoke("diff", trace, "--at", "2", "--format", "json")
    assert diff.exit_code == 0, diff.output
    report = json.loads(diff.stdout)
    assert (report["cause"], report["layer"], report["path"]) == ("system_changed", "system", "instructions")
    assert other["cache_read_tokens"] == rounded(report["token_offset"]) >= 1024
    assert report["char_diff"][:3] == [["equal", "tion 29 of the handbook).\n\nRule 30: you "], ["delete", "a"],
                                       ["insert", "we"]]

    table = invoke("simulate", trace)
    assert "note: read openai.responses bodies through their openai.chat view" in table.stdout


def test_a_responses_trace_simulates_as_its_chat_conversion(trace, tmp_path):
    chat = tmp_path / "chat.jsonl"
    converted = invoke("convert", trace, "--to", "openai.chat", "-o", chat)
    assert converted.exit_code == 0, converted.output
    assert f"warning: {UNKNOWN}" in converted.stderr
    assert "converted 3 records to openai.chat; 1 skipped" in converted.stderr
    assert "dropped (records): response (3), usage (3)" in converted.stderr
    records = read_trace(chat, strict=True)
    assert [r.api for r in records] == ["openai.chat"] * 3 and records[1].body["messages"][2]["tool_calls"][0]["id"] \
        == "call_1"
    as_responses = json.loads(invoke("simulate", trace, "--format", "json").stdout)["requests"]
    as_chat = json.loads(invoke("simulate", chat, "--format", "json").stdout)["requests"]
    keys = ("prompt_tokens", "cache_read_tokens", "miss_cause")
    assert [[r[k] for k in keys] for r in as_responses] == [[r[k] for k in keys] for r in as_chat]

    back = invoke("convert", chat, "--to", "openai.responses")
    assert back.exit_code == 0, back.output
    bodies = [json.loads(line)["body"] for line in back.stdout.splitlines()]
    assert bodies[0]["instructions"] == records[0].body["messages"][0]["content"]
    assert [item.get("type", "message") for item in bodies[1]["input"]] == ["message", "function_call",
                                                                            "function_call_output"]


def test_anthropic_conversion_and_copies(trace, tmp_path):
    messages = invoke("convert", trace, "--to", "anthropic.messages")
    assert messages.exit_code == 0, messages.output
    first = json.loads(messages.stdout.splitlines()[0])
    assert first["api"] == "anthropic.messages" and list(first["body"])[:3] == ["max_tokens", "messages", "model"]
    assert first["body"]["tools"][0]["input_schema"]["required"] == ["order"]
    same = invoke("convert", trace, "--to", "openai.responses")
    assert same.exit_code == 0 and same.stdout == trace.read_text()  # already openai.responses: copied as recorded
    assert "converted 0 records to openai.responses (4 already openai.responses, copied)" in same.stderr


def test_diff_of_two_bodies_and_of_a_chained_body(tmp_path):
    records = agent_trace()
    paths = []
    for k in (0, 2, 1):
        path = tmp_path / f"r{k}.json"
        path.write_text(records[k].to_json())
        paths.append(path)
    result = invoke("diff", paths[0], paths[1], "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["path"] == "instructions"
    chained = invoke("diff", paths[0], paths[2])
    assert chained.exit_code == 2
    assert "previous_response_id 'resp_a': the chained prefix (the earlier response's input and output) is not in " \
           "this file" in chained.stderr
