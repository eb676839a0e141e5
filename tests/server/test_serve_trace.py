"""``promptcache serve --trace FILE`` records what it serves: the body as received and the usage it answered,
the same lines as wrap() writes on the client's side (streams included)."""

from __future__ import annotations

import anthropic
import openai
from server_support import ServerProcess, unique_system

import promptcache
from promptcache.trace.records import read_trace


def test_serve_trace_records_the_bodies_and_usage_it_served(tmp_path) -> None:
    served, wrapped = tmp_path / "served.jsonl", tmp_path / "wrapped.jsonl"
    process = ServerProcess(["--kv-cache-mb", "16", "--trace", str(served)], tmp_path / "serve.log")
    try:
        process.wait_ready()
        a = promptcache.wrap(anthropic.Anthropic(base_url=process.url, api_key="k", max_retries=0, timeout=120),
                             trace=wrapped, session="default")
        o = promptcache.wrap(openai.OpenAI(base_url=f"{process.url}/v1", api_key="k", max_retries=0, timeout=120),
                             trace=wrapped, session="default")
        system = unique_system()
        user = [{"role": "user", "content": "Where is order 1042?"}]
        a.messages.create(model="claude-sonnet-4-6", max_tokens=2, system=system, messages=user)
        with a.messages.stream(model="claude-sonnet-4-6", max_tokens=2, system=system, messages=user) as stream:
            stream.get_final_message()
        list(o.chat.completions.create(model="gpt-4.1-mini", max_tokens=2, stream=True, stream_options={"include_usage": True},
                                       messages=[{"role": "system", "content": system}, *user]))
        first = o.responses.create(model="gpt-4.1-mini", instructions=system, input="Where?", max_output_tokens=2)
        list(o.responses.create(model="gpt-4.1-mini", instructions=system, input="And 1043?", max_output_tokens=2,
                                previous_response_id=first.id, stream=True))
        o.models.list()  # not an API call with a prompt: not recorded
        assert "recording the API calls to" in process.log()
    finally:
        process.stop()
    server_side, client_side = list(read_trace(served, strict=True)), list(read_trace(wrapped, strict=True))
    assert [(r.api, r.body, r.usage, r.response) for r in server_side] == \
        [(r.api, r.body, r.usage, r.response) for r in client_side]
    assert len(server_side) == 5 and server_side[1].usage["cache_read_input_tokens"] > 0
    assert server_side[3].response["id"] == first.id and server_side[4].body["previous_response_id"] == first.id
    assert server_side[4].usage["input_tokens_details"]["cached_tokens"] > 0
