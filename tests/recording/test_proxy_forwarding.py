"""The proxy's forwarding, against a fake upstream on a loopback port (uvicorn in a thread): headers reach upstream
(the session header does not), a stream reaches the client before upstream has finished it, the redaction hook and
the session header shape the trace line, and the live line names the guard's cause of a miss."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import anthropic
import openai
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from promptcache.misses.guard import PrefixGuard
from promptcache.providers.usage import UsageStats
from promptcache.recording.exchange import ExchangeRecorder
from promptcache.recording.proxy import ProxyLog, create_proxy_app
from promptcache.trace.recorder import TraceClock
from promptcache.trace.records import read_trace

USAGE = {"prompt_tokens": 900, "completion_tokens": 2, "total_tokens": 902, "prompt_tokens_details": {"cached_tokens": 768}}
A_USAGE = {"input_tokens": 12, "output_tokens": 2, "cache_read_input_tokens": 880, "cache_creation_input_tokens": 0}
RULES = "You are the support agent of Acme. " + " ".join(f"Rule {i}: cite the order number." for i in range(90))


class Upstream:
    """A fake provider: keeps each request's headers; a streamed chat reply waits for ``release`` before its end."""

    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []
        self.release = threading.Event()

    async def chat(self, request: Request):
        self.headers.append(dict(request.headers))
        body = await request.json()
        if not body.get("stream"):
            return JSONResponse({"id": "c", "object": "chat.completion", "created": 1, "model": body["model"],
                                 "usage": USAGE, "choices": [{"index": 0, "finish_reason": "stop",
                                                              "message": {"role": "assistant", "content": "ok"}}]})

        def chunk(delta: dict, finish: str | None = None, usage: dict | None = None) -> bytes:
            data = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": body["model"], "usage": usage,
                    "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]}
            return f"data: {json.dumps(data)}\n\n".encode()

        async def events():
            yield chunk({"role": "assistant", "content": "first"})
            while not self.release.is_set():  # the rest only once the client has shown it got the first chunk
                await __import__("asyncio").sleep(0.01)
            yield chunk({}, "stop")
            yield chunk({}, usage=USAGE)
            yield b"data: [DONE]\n\n"
        return StreamingResponse(events(), media_type="text/event-stream")

    async def messages(self, request: Request):
        self.headers.append(dict(request.headers))
        body = await request.json()
        return JSONResponse({"id": "m", "type": "message", "role": "assistant", "model": body["model"],
                             "stop_reason": "end_turn", "stop_sequence": None, "usage": A_USAGE,
                             "content": [{"type": "text", "text": "ok"}]})

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"]),
                                 Route("/v1/messages", self.messages, methods=["POST"])])


@contextmanager
def running(app) -> Iterator[str]:
    """``app`` under uvicorn on a free loopback port, in a thread; yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="error"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def redact(body: dict) -> dict:
    return {**body, "messages": [{**m, "content": "[redacted]"} if m["role"] == "user" else m
                                 for m in body["messages"]]}


def test_headers_streams_sessions_redaction_and_the_live_line(tmp_path) -> None:
    upstream, lines = Upstream(), []
    trace = tmp_path / "t.jsonl"
    recorder = ExchangeRecorder(trace=TraceClock(trace), guard=PrefixGuard(), stats=UsageStats(), redact=redact)
    with running(upstream.app()) as base, running(create_proxy_app(base, recorder, log=ProxyLog(lines.append))) as url:
        gpt = openai.OpenAI(base_url=f"{url}/v1", api_key="sk-secret-1", max_retries=0,
                            default_headers={"x-team": "support", "x-promptcache-session": "ticket-7"})
        chat = [{"role": "system", "content": RULES}, {"role": "user", "content": "Where is A-7?"}]
        stream = gpt.chat.completions.create(model="gpt-4.1-mini", messages=chat, stream=True,
                                             stream_options={"include_usage": True})
        first = next(iter(stream))  # arrives while upstream still holds the rest back: nothing is buffered
        assert first.choices[0].delta.content == "first" and not upstream.release.is_set()
        upstream.release.set()
        assert [c for c in stream][-1].usage.prompt_tokens == 900
        gpt.chat.completions.create(model="gpt-4.1-mini", messages=chat)
        claude = anthropic.Anthropic(base_url=url, api_key="sk-secret-2", max_retries=0)
        for now in ("10:00:00", "10:00:07"):
            claude.messages.create(model="claude-sonnet-4-6", max_tokens=8, system=f"{RULES} Now {now}.",
                                   messages=[{"role": "user", "content": "hi"}])

    assert upstream.headers[0]["authorization"] == "Bearer sk-secret-1" and upstream.headers[0]["x-team"] == "support"
    assert upstream.headers[2]["authorization"] == "Bearer sk-secret-2"  # anthropic 2.15 sends its key so
    assert all("x-promptcache-session" not in headers for headers in upstream.headers)
    got = list(read_trace(trace, strict=True))
    assert [r.session for r in got] == ["ticket-7", "ticket-7", "default", "default"]
    assert got[0].body["messages"][1]["content"] == "[redacted]" and got[0].usage == USAGE
    assert "secret" not in trace.read_text()
    assert lines[0] == "#1 200 openai.chat gpt-4.1-mini: cached 768 written 0 uncached 132"
    assert lines[-2] == "#4 200 anthropic.messages claude-sonnet-4-6: cached 880 written 0 uncached 12"
    assert lines[-1].startswith("   miss: volatile_value in system at system") and "'10:00:07'" in lines[-1]
    assert recorder.stats.summary()["total"]["requests"] == 4
