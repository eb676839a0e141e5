"""``promptcache verify --backend URL`` against ``promptcache serve``, and the same replay in process.

The slice is the first three requests of the shared sliding-window trace (an
OpenAI trace whose prompts fit the test server's 2,048-token context).
"""

from __future__ import annotations

import json

import httpx2
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from server_support import tiny_llama

from local_backend import LocalEngine
from local_backend.server import create_app
from local_backend.embedded import EMBEDDED_CONTEXT
from local_backend.tokenizer import ChatMLTokenizer
from promptcache.cli import main
from promptcache.trace.records import TraceRecord, read_trace
from promptcache.verify.report import verify_trace
from promptcache.verify.backends import HTTPBackend, LocalBackend

REQUESTS = 3


@pytest.fixture(scope="module")
def trace_slice(traces_dir, tmp_path_factory):
    lines = (traces_dir / "bad_sliding_window.jsonl").read_text().splitlines()[:REQUESTS]
    path = tmp_path_factory.mktemp("verify") / "sliding_3.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_verify_against_serve_matches_the_exact_oracle_and_the_local_replay(server, trace_slice):
    httpx_backend = HTTPBackend(server, model="gpt-4.1-mini")
    try:
        served = verify_trace(trace_slice, httpx_backend)
    finally:
        httpx_backend.close()
    assert served.oracle_exact and not served.notes
    assert [r.error for r in served.requests] == [None] * REQUESTS
    assert [r.cached_tokens for r in served.requests] == [r.oracle_tokens for r in served.requests]
    assert served.requests[0].cached_tokens == 0 and served.requests[1].cached_tokens > 1000
    assert served.hit_vs_oracle == 1.0 and all(r.ttft_s > 0 for r in served.requests)

    local = verify_trace(trace_slice, LocalBackend(LocalEngine(kv_cache_mb=64)))
    assert [(r.prompt_tokens, r.cached_tokens, r.oracle_tokens) for r in local.requests] == \
        [(r.prompt_tokens, r.cached_tokens, r.oracle_tokens) for r in served.requests]


def test_verify_cli_json_against_a_url(server, trace_slice):
    result = CliRunner().invoke(main, ["verify", str(trace_slice), "--backend", f"{server}/v1", "--model",
                                       "gpt-4.1-mini", "--format", "json", "--reset-cache"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [row["index"] for row in document["requests"]] == list(range(REQUESTS))
    assert document["summary"]["backend"] == server and document["summary"]["oracle"] == "exact"
    assert document["summary"]["hit_vs_oracle"] == 1.0 and document["summary"]["notes"] == []
    warm = CliRunner().invoke(main, ["verify", str(trace_slice), "--backend", server, "--format", "json"])
    assert json.loads(warm.stdout)["summary"]["hit_vs_oracle"] > 1.0  # the cache is warm from the first replay
    assert "rerun with --reset-cache" in json.loads(warm.stdout)["summary"]["notes"][0]


class WithoutTokenize(httpx2.BaseTransport):
    """A server like SGLang's, with no ``/tokenize``: that path answers 404, the rest goes to ``inner``."""

    def __init__(self, inner: httpx2.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.path == "/tokenize":
            return httpx2.Response(404, json={"detail": "Not Found"})
        return self.inner.handle_request(request)


def test_a_server_without_tokenize_gives_an_approximate_oracle(trace_slice):
    with TestClient(create_app(LocalEngine(kv_cache_mb=64))) as client:
        http = httpx2.Client(transport=WithoutTokenize(client._transport))  # the openai client's httpx
        backend = HTTPBackend("http://testserver", http_client=http)
        report = verify_trace(trace_slice, backend)
    assert backend.model == "promptcache-embedded"  # the first of /v1/models
    assert not report.oracle_exact and report.summary()["oracle"] == "approximate"
    assert "no /tokenize" in report.notes[0]
    # The local fallback is the same ChatML tokenizer here, so even the approximate oracle is met exactly.
    assert [r.cached_tokens for r in report.requests] == [r.oracle_tokens for r in report.requests]


class Recording(httpx2.BaseTransport):
    """Records each request (path, Authorization header, JSON body) before passing it to ``inner``; with
    ``refuse_auto`` it answers ``tool_choice: "auto"`` the way vLLM does without ``--enable-auto-tool-choice``."""

    def __init__(self, inner: httpx2.BaseTransport, refuse_auto: bool = False) -> None:
        self.inner = inner
        self.refuse_auto = refuse_auto
        self.seen: list[tuple[str, str | None, object]] = []

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.read() or b"null")
        self.seen.append((request.url.path, request.headers.get("authorization"), body))
        if self.refuse_auto and request.url.path == "/v1/chat/completions" and body.get("tool_choice") == "auto":
            return httpx2.Response(400, json={"error": {
                "message": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
                "type": "BadRequestError", "param": None, "code": 400}})
        return self.inner.handle_request(request)

    def chat_bodies(self) -> list[dict]:
        return [body for path, _, body in self.seen if path == "/v1/chat/completions"]


@pytest.fixture(scope="module")
def tool_records(traces_dir):
    """Two requests with tools: an Anthropic one without tool_choice, an OpenAI one forcing a function."""
    anthropic_record = read_trace(traces_dir / "good_support_chat.jsonl")[0]
    openai_record = read_trace(traces_dir / "good_agent_tools.jsonl")[0]
    name = openai_record.body["tools"][0]["function"]["name"]
    forced = {**openai_record.body, "tool_choice": {"type": "function", "function": {"name": name}}}
    return [anthropic_record, TraceRecord(openai_record.t + 1000, openai_record.api, openai_record.session, forced)]


def tiny_app():
    return create_app(LocalEngine(tiny_llama(context=EMBEDDED_CONTEXT), tokenizer=ChatMLTokenizer(), num_blocks=2048))


def test_tools_go_with_the_trace_tool_choice_and_the_api_key(tool_records, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "key-from-env")
    with TestClient(tiny_app()) as client:
        recording = Recording(client._transport)
        backend = HTTPBackend("http://testserver", http_client=httpx2.Client(transport=recording))
        report = verify_trace(tool_records, backend)
        explicit = Recording(client._transport)
        HTTPBackend("http://testserver", api_key="key-given", http_client=httpx2.Client(transport=explicit))
    assert [r.error for r in report.requests] == [None, None] and not report.notes
    first, second = recording.chat_bodies()
    assert first["tool_choice"] == "auto" and [t["function"]["name"] for t in first["tools"]] == \
        [t["name"] for t in tool_records[0].body["tools"]]
    assert second["tool_choice"] == tool_records[1].body["tool_choice"] and first["max_tokens"] == 1
    assert {auth for _, auth, _ in recording.seen} == {"Bearer key-from-env"}
    assert {auth for _, auth, _ in explicit.seen} == {"Bearer key-given"}


def test_a_server_refusing_auto_tool_choice_gets_none_and_a_note(tool_records):
    with TestClient(tiny_app()) as client:
        recording = Recording(client._transport, refuse_auto=True)
        backend = HTTPBackend("http://testserver", http_client=httpx2.Client(transport=recording))
        report = verify_trace(tool_records[:1] * 2, backend)
    assert [r.error for r in report.requests] == [None, None]
    assert [body["tool_choice"] for body in recording.chat_bodies()] == ["auto", "none", "none"]
    assert len(report.notes) == 1 and "refused tool_choice 'auto'" in report.notes[0]
    assert "--enable-auto-tool-choice" in report.notes[0]
    assert report.requests[1].cached_tokens == report.requests[1].oracle_tokens > 4000
