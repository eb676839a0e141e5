"""wrap(client) records the SDK calls an app already makes (messages.create / stream, chat.completions.create /
parse, responses.create / stream; sync, async, raw): exact wire bytes, usage, stats and the guard per call site.
Real anthropic and openai clients through httpx2.MockTransport."""

from __future__ import annotations

import asyncio
import gc
import json
import warnings
from pathlib import Path

import anthropic
import httpx2
import openai
import pydantic
import pytest

import promptcache
from promptcache import PrefixStabilityError, PrefixStabilityWarning
from promptcache.trace.records import read_trace

KEY = "sk-ant-test-secret-0123"
RULES = "You are the support agent of Acme. " + " ".join(f"Rule {i}: answer with the order number first."
                                                          for i in range(1, 80))
A_MODEL, O_MODEL = "claude-sonnet-4-6", "gpt-4.1-mini"
A_USAGE = {"input_tokens": 12, "output_tokens": 5, "cache_read_input_tokens": 1200, "cache_creation_input_tokens": 0}
O_USAGE = {"prompt_tokens": 1300, "completion_tokens": 4, "total_tokens": 1304,
           "prompt_tokens_details": {"cached_tokens": 1280}}
R_USAGE = {"input_tokens": 1300, "input_tokens_details": {"cached_tokens": 1024}, "output_tokens": 4,
           "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 1304}

A_MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": A_MODEL, "stop_reason": "end_turn",
             "stop_sequence": None, "content": [{"type": "text", "text": "Order A-7 ships today."}], "usage": A_USAGE}
O_COMPLETION = {"id": "c1", "object": "chat.completion", "created": 1, "model": O_MODEL, "usage": O_USAGE,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": '{"order": "A-7", "ships": "today"}'}}]}
R_RESPONSE = {"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": O_MODEL,
              "output": [{"type": "message", "id": "m1", "status": "completed", "role": "assistant",
                          "content": [{"type": "output_text", "text": "A-7 ships today.", "annotations": []}]}],
              "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "usage": R_USAGE}


def a_events() -> list[dict]:
    start = {**A_MESSAGE, "content": [], "stop_reason": None,
             "usage": {"input_tokens": 12, "output_tokens": 1, "cache_read_input_tokens": 1200,
                       "cache_creation_input_tokens": 0}}
    return [{"type": "message_start", "message": start},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Order A-7."}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
             "usage": {"output_tokens": 5}},
            {"type": "message_stop"}]


def o_chunks() -> list[dict]:
    def chunk(delta: dict, finish: str | None = None, usage: dict | None = None) -> dict:
        return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": O_MODEL, "usage": usage,
                "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return [chunk({"role": "assistant", "content": ""}), chunk({"content": "A-7."}), chunk({}, "stop"),
            chunk({}, usage=O_USAGE)]


def r_events() -> list[dict]:
    started = {**R_RESPONSE, "status": "in_progress", "output": [], "usage": None}
    item = R_RESPONSE["output"][0]
    part = item["content"][0]
    events = [("response.created", {"response": started}), ("response.in_progress", {"response": started}),
              ("response.output_item.added", {"output_index": 0, "item": {**item, "status": "in_progress",
                                                                          "content": []}}),
              ("response.content_part.added", {"item_id": "m1", "output_index": 0, "content_index": 0,
                                               "part": {**part, "text": ""}}),
              ("response.output_text.delta", {"item_id": "m1", "output_index": 0, "content_index": 0,
                                              "delta": part["text"], "logprobs": []}),
              ("response.output_text.done", {"item_id": "m1", "output_index": 0, "content_index": 0,
                                             "text": part["text"], "logprobs": []}),
              ("response.content_part.done", {"item_id": "m1", "output_index": 0, "content_index": 0, "part": part}),
              ("response.output_item.done", {"output_index": 0, "item": item}),
              ("response.completed", {"response": R_RESPONSE})]
    return [{"type": kind, "sequence_number": n, **fields} for n, (kind, fields) in enumerate(events)]


def sse(events: list[dict], *, named: bool, done: bool = False) -> list[bytes]:
    """The SSE frames of a streamed reply, one chunk each, as the APIs send them."""
    frames = [(f"event: {e['type']}\n" if named and "type" in e else "") + f"data: {json.dumps(e)}\n\n" for e in events]
    return [frame.encode() for frame in frames] + ([b"data: [DONE]\n\n"] if done else [])


class Frames:
    """A streamed body: the frames one by one, never read ahead by httpx2."""

    def __init__(self, frames: list[bytes]) -> None:
        self.frames = frames

    def __iter__(self):
        yield from self.frames


class AsyncFrames(Frames):
    def __aiter__(self):
        async def frames():
            for frame in self.frames:
                yield frame
        return frames()

    __iter__ = None  # type: ignore[assignment]


def answer(request: httpx2.Request) -> httpx2.Response:
    """What the provider would answer at this path, streamed when the body asks for it."""
    body = json.loads(request.content)
    stream = body.get("stream") is True
    path = request.url.path
    if path.endswith("/messages"):
        content = sse(a_events(), named=True) if stream else A_MESSAGE
    elif path.endswith("/chat/completions"):
        content = sse(o_chunks(), named=False, done=True) if stream else O_COMPLETION
    else:
        content = sse(r_events(), named=True) if stream else R_RESPONSE
    if isinstance(content, list):
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=Frames(content))
    return httpx2.Response(200, json=content)


class Provider:
    """A fake provider endpoint behind httpx2.MockTransport: keeps every request that reached it."""

    def __init__(self, reply=answer) -> None:
        self.requests: list[httpx2.Request] = []
        self.reply = reply

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return self.reply(request)

    async def handle_async(self, request: httpx2.Request) -> httpx2.Response:
        response = self.handle(request)
        if isinstance(response.stream, httpx2.SyncByteStream) and not response.is_closed:  # streamed frames
            frames = b"".join(response.stream).split(b"\n\n")
            response = httpx2.Response(response.status_code, headers=response.headers,
                                       content=AsyncFrames([frame + b"\n\n" for frame in frames if frame]))
        return response

    def sdk(self, name: str, *, is_async: bool = False, **options):
        """``promptcache.wrap`` of the named SDK's client (``anthropic`` / ``openai``) on this endpoint."""
        if is_async:
            http = httpx2.AsyncClient(transport=httpx2.MockTransport(self.handle_async))
            raw = (anthropic.AsyncAnthropic if name == "anthropic" else openai.AsyncOpenAI)(
                api_key=KEY, http_client=http, max_retries=2)
        else:
            http = httpx2.Client(transport=httpx2.MockTransport(self.handle))
            raw = (anthropic.Anthropic if name == "anthropic" else openai.OpenAI)(
                api_key=KEY, http_client=http, max_retries=2)
        return promptcache.wrap(raw, **options)


def sent_bodies(provider: Provider) -> list[str]:
    return [request.content.decode() for request in provider.requests]


def records(path: Path):
    return list(read_trace(path, strict=True))


def wire_bodies(path: Path) -> list[str]:
    """The body of each trace line as it was written (the line is ``{"t":..,"api":..,"session":..,"body":BODY...``)."""
    return [line.split(',"body":', 1)[1].rsplit(',"usage":', 1)[0] for line in path.read_text().splitlines()]


def line_of(marker: str) -> int:
    """The line of this file that carries ``marker`` (a comment at a call site)."""
    return next(n for n, line in enumerate(Path(__file__).read_text().splitlines(), 1) if line.endswith(marker))


def test_messages_create_is_recorded_with_the_exact_bytes_usage_and_stats(tmp_path) -> None:
    provider = Provider()
    client = provider.sdk("anthropic", trace=tmp_path / "t.jsonl")
    reply = client.messages.create(model=A_MODEL, max_tokens=64, system=RULES,
                                   messages=[{"role": "user", "content": "Where is A-7?"}])
    assert reply.content[0].text == "Order A-7 ships today."
    [record] = records(tmp_path / "t.jsonl")
    assert record.api == "anthropic.messages" and wire_bodies(tmp_path / "t.jsonl") == sent_bodies(provider)
    assert record.usage == A_USAGE
    assert record.session == "default"
    total = client.stats.summary()["total"]
    assert total["requests"] == 1 and total["cache_read_tokens"] == 1200
    text = (tmp_path / "t.jsonl").read_text()
    assert KEY not in text and "x-api-key" not in text.lower()


def test_every_sdk_path_is_recorded_sync(tmp_path) -> None:
    provider = Provider()
    trace = tmp_path / "t.jsonl"
    a = provider.sdk("anthropic", trace=trace, session="s")
    o = provider.sdk("openai", trace=trace, session="s")
    user = [{"role": "user", "content": "Where is A-7?"}]
    a.messages.with_raw_response.create(model=A_MODEL, max_tokens=64, system=RULES, messages=user).parse()
    with a.messages.stream(model=A_MODEL, max_tokens=64, system=RULES, messages=user) as stream:
        assert stream.get_final_text() == "Order A-7."
    for event in a.messages.create(model=A_MODEL, max_tokens=64, system=RULES, messages=user, stream=True):
        pass
    chat = [{"role": "system", "content": RULES}, *user]
    o.chat.completions.create(model=O_MODEL, messages=chat)
    for _ in o.chat.completions.create(model=O_MODEL, messages=chat, stream=True,
                                       stream_options={"include_usage": True}):
        pass

    class Order(pydantic.BaseModel):
        order: str
        ships: str

    with warnings.catch_warnings():  # the first request of this call site: nothing of its own to compare with
        warnings.simplefilter("error", PrefixStabilityWarning)
        parsed = o.chat.completions.parse(model=O_MODEL, messages=chat, response_format=Order)
    assert parsed.choices[0].message.parsed == Order(order="A-7", ships="today")
    o.responses.create(model=O_MODEL, instructions=RULES, input="Where is A-7?")
    with o.responses.stream(model=O_MODEL, instructions=RULES, input="Where is A-7?") as stream:
        assert stream.get_final_response().output_text == "A-7 ships today."
    with o.responses.with_streaming_response.create(model=O_MODEL, instructions=RULES, input="Where?") as raw:
        raw.read()

    got = records(trace)
    assert [r.api for r in got] == ["anthropic.messages"] * 3 + ["openai.chat"] * 3 + ["openai.responses"] * 3
    assert wire_bodies(trace) == sent_bodies(provider)
    assert [r.usage for r in got] == [A_USAGE] * 3 + [O_USAGE] * 3 + [R_USAGE] * 3
    assert a.stats is not o.stats and a.stats.summary()["total"]["requests"] == 3
    assert o.stats.summary()["total"]["requests"] == 6 and o.stats.summary()["total"]["cache_read_tokens"] == 3 * 1280 + 3 * 1024


def test_every_sdk_path_is_recorded_async(tmp_path) -> None:
    provider = Provider()
    trace = tmp_path / "t.jsonl"
    a = provider.sdk("anthropic", is_async=True, trace=trace, session="s")
    o = provider.sdk("openai", is_async=True, trace=trace, session="s")
    user = [{"role": "user", "content": "Where is A-7?"}]

    async def main() -> None:
        await a.messages.create(model=A_MODEL, max_tokens=64, system=RULES, messages=user)
        async with a.messages.stream(model=A_MODEL, max_tokens=64, system=RULES, messages=user) as stream:
            assert await stream.get_final_text() == "Order A-7."
        raw = await a.messages.with_raw_response.create(model=A_MODEL, max_tokens=64, system=RULES, messages=user)
        await raw.parse()
        chat = [{"role": "system", "content": RULES}, *user]
        stream = await o.chat.completions.create(model=O_MODEL, messages=chat, stream=True,
                                                 stream_options={"include_usage": True})
        async for _ in stream:
            pass
        await o.responses.create(model=O_MODEL, instructions=RULES, input="Where is A-7?")
        async with o.responses.stream(model=O_MODEL, instructions=RULES, input="Where is A-7?") as stream:
            await stream.get_final_response()

    asyncio.run(main())
    got = records(trace)
    assert wire_bodies(trace) == sent_bodies(provider)
    assert [r.usage for r in got] == [A_USAGE] * 3 + [O_USAGE] + [R_USAGE] * 2


def test_a_stream_is_recorded_when_broken_off_or_dropped(tmp_path) -> None:
    provider = Provider()
    client = provider.sdk("anthropic", trace=tmp_path / "t.jsonl", session="s")
    user = [{"role": "user", "content": "Where is A-7?"}]
    stream = client.messages.create(model=A_MODEL, max_tokens=64, system=RULES, messages=user, stream=True)
    for event in stream:
        if event.type == "message_start":
            break
    stream.close()
    assert records(tmp_path / "t.jsonl")[0].usage == {**A_USAGE, "output_tokens": 1}  # what was read: the start
    client.messages.create(model=A_MODEL, max_tokens=64, system=RULES, messages=user, stream=True)  # never read
    gc.collect()
    assert len(records(tmp_path / "t.jsonl")) == 2


def test_a_timestamp_in_the_system_prompt_warns_at_the_app_line_naming_system(tmp_path) -> None:
    provider = Provider()
    client = provider.sdk("anthropic", trace=tmp_path / "t.jsonl")

    def ask(system: str):
        return client.messages.create(model=A_MODEL, max_tokens=64, system=system,  # site: ask
                                      messages=[{"role": "user", "content": "Where is A-7?"}])

    ask(RULES + " Now: 2026-12-01 10:00:00.")
    with pytest.warns(PrefixStabilityWarning) as caught:
        ask(RULES + " Now: 2026-12-01 10:00:07.")
    [warning] = caught.list
    assert "volatile_value in system" in str(warning.message) and "system" in str(warning.message)
    assert warning.filename.endswith("test_wrap_sdk_calls.py") and warning.lineno == line_of("# site: ask")
    assert len(provider.requests) == 2  # warn mode sends it


def test_a_responses_chain_is_guarded_as_the_api_reads_it(tmp_path) -> None:
    """previous_response_id: the API puts the earlier input and reply first, and does not carry instructions
    over. A chained request that leaves them out loses the whole cached prefix: the guard says so."""
    client = Provider().sdk("openai", trace=tmp_path / "t.jsonl")

    def ask(**params):
        return client.responses.create(model=O_MODEL, max_output_tokens=16, **params)  # site: chain

    first = ask(instructions=RULES, input="Where is A-7?")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrefixStabilityWarning)
        ask(instructions=RULES, input="And A-8?", previous_response_id=first.id)  # the chain, as it should be
    with pytest.warns(PrefixStabilityWarning, match=r"system_changed .*send the same instructions on every request"):
        client.responses.create(model=O_MODEL, max_output_tokens=16, input="And A-9?",  # another line, and
                                previous_response_id=first.id)  # instructions left out: the chain is the reference
    assert client.recorder.chains.known[first.id][0] == {"role": "user", "content": "Where is A-7?"}


@pytest.mark.parametrize("name", ["anthropic", "openai"])
def test_guard_raise_stops_the_request_before_it_is_sent_and_is_not_retried(tmp_path, name) -> None:
    provider = Provider()
    client = provider.sdk(name, trace=tmp_path / "t.jsonl", guard="raise")

    def ask(system: str):
        if name == "anthropic":
            return client.messages.create(model=A_MODEL, max_tokens=64, system=system,
                                          messages=[{"role": "user", "content": "Where is A-7?"}])
        return client.chat.completions.create(model=O_MODEL, messages=[
            {"role": "system", "content": system}, {"role": "user", "content": "Where is A-7?"}])

    ask(RULES)
    with pytest.raises(PrefixStabilityError, match="system") as raised:
        ask("Today is 2026-12-01. " + RULES)
    assert raised.value.divergence.layer == "system"
    assert len(provider.requests) == 1 and len(records(tmp_path / "t.jsonl")) == 1
    ask(RULES)  # the stable prompt still goes out
    assert len(provider.requests) == 2


def test_each_call_site_is_its_own_guard_session_and_call_options_set_one(tmp_path) -> None:
    provider = Provider()
    client = provider.sdk("anthropic", trace=tmp_path / "t.jsonl", guard="raise")
    router = "Route the ticket to one queue. " + " ".join(f"Queue {i}: billing." for i in range(60))
    user = [{"role": "user", "content": "Where is A-7?"}]
    for _ in range(2):
        client.messages.create(model=A_MODEL, max_tokens=64, system=RULES, messages=user)
        client.messages.create(model="claude-haiku-4-5", max_tokens=8, system=router, messages=user)
    assert len(provider.requests) == 4
    with client.call_options(guard="off"):
        client.messages.create(model=A_MODEL, max_tokens=64, system="Now 10:00:01. " + RULES, messages=user)
    with client.call_options(session="ticket-42"):
        client.messages.create(model=A_MODEL, max_tokens=64, system=RULES, messages=user)
    assert [r.session for r in records(tmp_path / "t.jsonl")] == ["default"] * 5 + ["ticket-42"]
    with pytest.raises(ValueError, match="guard must be one of"), client.call_options(guard="loud"):
        pass


def test_refused_requests_are_not_recorded_and_other_endpoints_pass_through(tmp_path) -> None:
    def reply(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/count_tokens"):
            return httpx2.Response(200, json={"input_tokens": 900})
        return httpx2.Response(400, json={"type": "error", "error": {"type": "invalid_request_error",
                                                                     "message": "max_tokens: required"}})
    provider = Provider(reply)
    client = provider.sdk("anthropic", trace=tmp_path / "t.jsonl")
    assert client.messages.count_tokens(model=A_MODEL, messages=[{"role": "user", "content": "hi"}]).input_tokens == 900
    with pytest.raises(anthropic.BadRequestError, match="max_tokens"):
        client.messages.create(model=A_MODEL, max_tokens=64, messages=[{"role": "user", "content": "hi"}])
    assert not (tmp_path / "t.jsonl").exists() or records(tmp_path / "t.jsonl") == []
    assert client.stats.summary()["total"]["requests"] == 0


def test_only_the_wrapped_provider_s_apis_are_recorded(tmp_path) -> None:
    """The OpenAI Assistants API posts to /v1/threads/ID/messages: not Anthropic's /v1/messages."""
    def reply(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json={"id": "msg_1", "object": "thread.message", "created_at": 1,
                                          "thread_id": "thread_1", "role": "user", "content": [], "attachments": [],
                                          "metadata": {}, "status": "completed"})
    client = Provider(reply).sdk("openai", trace=tmp_path / "t.jsonl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        client.beta.threads.messages.create("thread_1", role="user", content="hi")
    assert not (tmp_path / "t.jsonl").exists()


def test_a_gzip_response_is_read(tmp_path) -> None:
    import gzip

    def reply(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-encoding": "gzip", "content-type": "application/json"},
                               content=Frames([gzip.compress(json.dumps(A_MESSAGE).encode())]))
    client = Provider(reply).sdk("anthropic", trace=tmp_path / "t.jsonl")
    client.messages.create(model=A_MODEL, max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    with client.messages.with_streaming_response.create(model=A_MODEL, max_tokens=8,
                                                         messages=[{"role": "user", "content": "hi"}]) as raw:
        raw.parse()
    assert [r.usage for r in records(tmp_path / "t.jsonl")] == [A_USAGE, A_USAGE]


def test_the_app_s_own_client_is_left_as_it_was(tmp_path) -> None:
    provider = Provider()
    http = httpx2.Client(transport=httpx2.MockTransport(provider.handle), headers={"x-team": "support"})
    raw = anthropic.Anthropic(api_key=KEY, http_client=http, max_retries=0)
    client = promptcache.wrap(raw, trace=tmp_path / "t.jsonl")
    raw.messages.create(model=A_MODEL, max_tokens=8, messages=[{"role": "user", "content": "direct"}])
    client.messages.create(model=A_MODEL, max_tokens=8, messages=[{"role": "user", "content": "wrapped"}])
    assert [r.body["messages"][0]["content"] for r in records(tmp_path / "t.jsonl")] == ["wrapped"]
    assert all(request.headers["x-team"] == "support" for request in provider.requests)  # the app's settings
    client.close()
    assert not http.is_closed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        raw.messages.create(model=A_MODEL, max_tokens=8, messages=[{"role": "user", "content": "still works"}])
