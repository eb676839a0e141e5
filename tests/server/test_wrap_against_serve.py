"""promptcache.wrap() around the official clients pointed at ``promptcache serve`` over real HTTP: the SDK calls the
app makes are recorded with the bytes sent and the usage the server returned (streams too), and the guard warns."""

from __future__ import annotations

import asyncio
import json

import anthropic
import openai
import pytest
from server_support import unique_system

import promptcache
from promptcache import PrefixStabilityWarning
from promptcache.trace.records import read_trace


def test_wrapped_calls_against_serve_record_the_server_s_usage(server, tmp_path) -> None:
    trace = tmp_path / "t.jsonl"
    system = unique_system()
    # the SDK clients are closed (`with`): a socket left open is a ResourceWarning in whatever test runs next
    with anthropic.Anthropic(base_url=server, api_key="test-key", max_retries=0, timeout=120) as raw_a, \
            openai.OpenAI(base_url=f"{server}/v1", api_key="test-key", max_retries=0, timeout=120) as raw_o:
        a = promptcache.wrap(raw_a, trace=trace, session="app")
        o = promptcache.wrap(raw_o, trace=trace, session="app")
        user = [{"role": "user", "content": "Where is order 1042?"}]
        replies = [a.messages.create(model="claude-sonnet-4-6", max_tokens=2, system=system, messages=user)]
        with a.messages.stream(model="claude-sonnet-4-6", max_tokens=2, system=system, messages=user) as stream:
            replies.append(stream.get_final_message())
        chat = [{"role": "system", "content": system}, *user]
        chunks = list(o.chat.completions.create(model="gpt-4.1-mini", max_tokens=2, messages=chat, stream=True,
                                                stream_options={"include_usage": True}))

    got = list(read_trace(trace, strict=True))
    assert [r.api for r in got] == ["anthropic.messages", "anthropic.messages", "openai.chat"]
    assert [r.usage for r in got[:2]] == [reply.usage.model_dump(exclude_none=True) for reply in replies]
    assert got[1].usage["cache_read_input_tokens"] > 0  # the same prompt again: served from the cache
    assert got[2].usage == chunks[-1].usage.model_dump(exclude_none=True)
    assert got[2].usage["prompt_tokens_details"]["cached_tokens"] > 0
    assert a.stats.summary()["total"]["requests"] == 2 and o.stats.summary()["total"]["requests"] == 1
    assert "test-key" not in trace.read_text()


def test_a_timestamp_in_the_system_prompt_of_an_async_app_warns_naming_system(server, tmp_path) -> None:
    raw = anthropic.AsyncAnthropic(base_url=server, api_key="test-key", max_retries=0, timeout=120)
    client = promptcache.wrap(raw, trace=tmp_path / "t.jsonl")
    system = unique_system()

    async def ask(now: str):
        return await client.messages.create(model="claude-sonnet-4-6", max_tokens=2, system=f"{system} Now: {now}.",
                                            messages=[{"role": "user", "content": "Where is order 1042?"}])

    async def main() -> None:
        await ask("2026-12-01T10:00:00Z")
        with pytest.warns(PrefixStabilityWarning, match=r"volatile_value in system at system"):
            await ask("2026-12-01T10:00:09Z")
        await raw.close()

    asyncio.run(main())
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    assert len(lines) == 2 and "10:00:09" in json.loads(lines[1])["body"]["system"]


def test_a_wrapped_responses_chain_against_serve_records_what_verify_needs(server, tmp_path) -> None:
    """responses.create, plain and streamed, through wrap(): each line keeps the reply's id and output, so the request that
    names it in previous_response_id is read with its whole chained input, and verify replays the trace."""
    trace = tmp_path / "responses.jsonl"
    raw = openai.OpenAI(base_url=f"{server}/v1", api_key="test-key", max_retries=0, timeout=120)
    client = promptcache.wrap(raw, trace=trace, session="chat-1")
    instructions = unique_system(200)
    first = client.responses.create(model="gpt-4.1-mini", instructions=instructions, input="Where is order 1042?",
                                    max_output_tokens=2)
    events = list(client.responses.create(model="gpt-4.1-mini", instructions=instructions, input="And order 1043?",
                                          previous_response_id=first.id, max_output_tokens=2, stream=True))
    second = events[-1].response  # response.incomplete: cut by max_output_tokens, as OpenAI ends it
    assert second.usage.input_tokens_details.cached_tokens > 0  # the chained prefix, from the cache

    records = list(read_trace(trace, strict=True))
    assert [r.api for r in records] == ["openai.responses"] * 2
    assert records[0].response["id"] == first.id
    assert [item["type"] for item in records[0].response["output"]] == [item.type for item in first.output]
    assert records[1].body["previous_response_id"] == first.id and records[1].response["id"] == second.id
    assert [r.usage["input_tokens"] for r in records] == [first.usage.input_tokens, second.usage.input_tokens]
    assert client.stats.summary()["total"]["cache_read_tokens"] == second.usage.input_tokens_details.cached_tokens
    raw.close()

    from click.testing import CliRunner

    from promptcache.cli import main

    run = CliRunner().invoke(main, ["verify", str(trace), "--format", "json"])
    assert run.exit_code == 0, run.output
    summary = json.loads(run.stdout)["summary"]
    assert summary["requests"] == 2 and summary["errors"] == 0 and summary["cached_tokens"] > 0
