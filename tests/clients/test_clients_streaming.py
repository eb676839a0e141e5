"""send(stream=True): the SDK's own Stream / AsyncStream comes back, read lazily from a real SSE body; the trace
line, statistics and conversation are recorded when the caller has read it (real SDKs, httpx2.MockTransport)."""

from __future__ import annotations

import asyncio
import gc
import json
import warnings

import anthropic
import httpx2
import openai
import pytest

import promptcache
from promptcache import Conversation, PromptBuilder
from promptcache.prompt.stability import LayerRegistry
from promptcache.trace.records import read_trace
from promptcache.trace import validate_trace

KEY = "sk-test-stream"
RULES = " ".join(f"Rule {i}: answer with the order number first." for i in range(1, 60))
ANTHROPIC_MODEL, OPENAI_MODEL = "claude-sonnet-4-6", "gpt-4.1-mini"

ANTHROPIC_EVENTS = [
    {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": ANTHROPIC_MODEL, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 1, "cache_read_input_tokens": 1500,
                  "cache_creation_input_tokens": 40}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "ping"},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Order "}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "A-7 ships today."}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
     "usage": {"output_tokens": 9}},
    {"type": "message_stop"},
]
ANTHROPIC_USAGE = {"input_tokens": 20, "output_tokens": 9, "cache_read_input_tokens": 1500,
                   "cache_creation_input_tokens": 40}


def chunk(delta: dict, finish: str | None = None, usage: dict | None = None) -> dict:
    choices = [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": OPENAI_MODEL, "choices": choices,
            "usage": usage}


OPENAI_USAGE = {"prompt_tokens": 1600, "completion_tokens": 6, "total_tokens": 1606,
                "prompt_tokens_details": {"cached_tokens": 1536}}
OPENAI_CHUNKS = [chunk({"role": "assistant", "content": ""}), chunk({"content": "Order "}),
                 chunk({"content": "A-7 ships today."}), chunk({}, finish="stop"), chunk({}, usage=OPENAI_USAGE)]


def sse_lines(provider: str) -> list[bytes]:
    """The SSE frames of one streamed reply, as the APIs send them (OpenAI ends with ``data: [DONE]``)."""
    if provider == "anthropic":
        return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in ANTHROPIC_EVENTS]
    return [f"data: {json.dumps(c)}\n\n".encode() for c in OPENAI_CHUNKS] + [b"data: [DONE]\n\n"]


class Body:
    """A streaming response body (iterable, or async with ``frames_async()``) that counts the SSE frames sent."""

    def __init__(self, provider: str) -> None:
        self.frames, self.sent = sse_lines(provider), 0

    def __iter__(self):
        for frame in self.frames:
            self.sent += 1
            yield frame

    async def frames_async(self):
        for frame in self.frames:
            self.sent += 1
            yield frame


def client_for(provider: str, *, is_async: bool = False, **options):
    """A wrapped SDK client whose transport answers each request with a streamed SSE body; returns (client, bodies)."""
    bodies: list[Body] = []

    def respond() -> httpx2.Response:
        bodies.append(Body(provider))
        body = bodies[-1].frames_async() if is_async else bodies[-1]
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    if is_async:
        async def handler(request: httpx2.Request) -> httpx2.Response:
            return respond()
        http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
        sdk = anthropic.AsyncAnthropic if provider == "anthropic" else openai.AsyncOpenAI
    else:
        http = httpx2.Client(transport=httpx2.MockTransport(lambda request: respond()))
        sdk = anthropic.Anthropic if provider == "anthropic" else openai.OpenAI
    return promptcache.wrap(sdk(api_key=KEY, http_client=http, max_retries=0), **options), bodies


def build(chat: Conversation, question: str = "Where is A-7?"):
    return PromptBuilder(registry=LayerRegistry()).system(RULES).history(chat).user(question).build()


def params(provider: str) -> dict:
    if provider == "anthropic":
        return {"model": ANTHROPIC_MODEL, "stream": True}
    return {"model": OPENAI_MODEL, "stream": True, "stream_options": {"include_usage": True}}


def event_text(provider: str, event) -> str:
    if provider == "anthropic":
        return event.delta.text if event.type == "content_block_delta" else ""
    return "".join(choice.delta.content or "" for choice in event.choices)


def check_recorded(provider: str, client, trace, chat: Conversation, text: str) -> None:
    assert text == "Order A-7 ships today."
    records = read_trace(trace, strict=True)
    assert len(records) == 1
    assert validate_trace(trace) == []  # the wire order (openai: model, stream, messages, ...) is the SDK order
    assert records[0].body["stream"] is True and records[0].session == "s1"
    total = client.stats.summary()["total"]
    if provider == "anthropic":
        assert records[0].usage == ANTHROPIC_USAGE
        assert (total["cache_read_tokens"], total["cache_write_tokens"], total["uncached_tokens"]) == (1500, 40, 20)
    else:
        assert records[0].usage == OPENAI_USAGE
        assert (total["cache_read_tokens"], total["prompt_tokens"]) == (1536, 1600)
    assert [m.role for m in chat] == ["user", "assistant"] and chat[-1].text == "Order A-7 ships today."


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_sync_stream_is_the_sdks_stream_and_is_recorded_when_read_out(provider, tmp_path) -> None:
    client, bodies = client_for(provider, trace=tmp_path / "t.jsonl", session="s1")
    chat = Conversation()
    stream = client.send(build(chat), **params(provider))
    assert isinstance(stream, (anthropic if provider == "anthropic" else openai).Stream)
    assert bodies[0].sent < len(bodies[0].frames)  # nothing read ahead of the caller
    assert not (tmp_path / "t.jsonl").exists() and len(chat) == 0  # recorded when the stream ends
    with stream:
        text = "".join(event_text(provider, event) for event in stream)
    check_recorded(provider, client, tmp_path / "t.jsonl", chat, text)
    with warnings.catch_warnings():  # the streamed request is the guard's reference: the next turn is expected
        warnings.simplefilter("error")
        second = client.send(build(chat, "And the refund?"), **params(provider))
        for _ in second:
            pass
    assert client.last_divergence.cause == "new_turn" and len(chat) == 4


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_an_async_stream_is_the_sdks_async_stream_and_is_recorded_when_read_out(provider, tmp_path) -> None:
    async def main() -> tuple:
        client, bodies = client_for(provider, is_async=True, trace=tmp_path / "t.jsonl", session="s1")
        chat = Conversation()
        stream = await client.send(build(chat), **params(provider))
        sdk = anthropic if provider == "anthropic" else openai
        assert isinstance(stream, sdk.AsyncStream) and bodies[0].sent < len(bodies[0].frames)
        assert not (tmp_path / "t.jsonl").exists()
        text = "".join([event_text(provider, event) async for event in stream])
        return client, chat, text

    client, chat, text = asyncio.run(main())
    check_recorded(provider, client, tmp_path / "t.jsonl", chat, text)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_next_and_a_stream_broken_off_or_dropped(provider, tmp_path) -> None:
    client, bodies = client_for(provider, trace=tmp_path / "t.jsonl", session="s1")
    chat = Conversation()
    stream = client.send(build(chat), **params(provider))
    first = next(stream)
    assert (first.type == "message_start") if provider == "anthropic" else (first.choices[0].delta.role == "assistant")
    stream.close()  # broken off: the request is recorded, with the usage read so far; the partial reply is not
    dropped = client.send(build(chat, "Other question"), **params(provider))
    del dropped
    gc.collect()  # dropped unread: recorded (without usage) when collected
    records = read_trace(tmp_path / "t.jsonl", strict=True)
    assert len(records) == 2 and records[1].usage is None and len(chat) == 0
    expected = {"anthropic": {"input_tokens": 20, "output_tokens": 1, "cache_read_input_tokens": 1500,
                              "cache_creation_input_tokens": 40}, "openai": None}[provider]
    assert records[0].usage == expected  # OpenAI's usage comes in the last chunk
    assert client.stats.summary()["total"]["requests"] == (1 if provider == "anthropic" else 0)
