"""``verify --backend URL`` against vLLM, SGLang and llama.cpp by their documented HTTP shapes (no engine here).

Each fake answers only what the engine's own source defines (read 2026-12, cited in
``promptcache/verify/engines.py``):

* vLLM: ``/v1/models`` cards ``owned_by: "vllm"``; ``POST /tokenize`` ``TokenizeChatRequest`` ->
  ``{"count", "max_model_len", "tokens"}`` (``vllm/entrypoints/serve/tokenize/protocol.py``); ``POST
  /reset_prefix_cache`` -> 200, empty body, registered only with ``VLLM_SERVER_DEV_MODE=1``
  (``vllm/entrypoints/serve/cache/api_router.py``); ``/metrics`` gauge ``vllm:cache_config_info`` whose labels are
  the cache config (``block_size`` among them, ``vllm/v1/metrics/loggers.py``); streamed usage
  ``prompt_tokens_details.cached_tokens`` with ``--enable-prompt-tokens-details``.
* SGLang: ``owned_by: "sglang"`` (``ModelCard``), ``GET /get_server_info`` = the server args (``page_size``),
  ``/flush_cache`` 200 or 400 while requests run (``python/sglang/srt/entrypoints/http_server.py``),
  ``prompt_tokens_details`` only with ``--enable-cache-report`` (``UsageInfo`` in ``openai/protocol.py``).
* llama.cpp: every route ``503 {"error": {"message": "Loading model", "type": "unavailable_error", "code": 503}}``
  while loading (``tools/server/server-http.cpp``); ``POST /tokenize`` without ``content`` -> ``200 {"tokens":
  []}``, with it ``{"tokens": [...]}``; ``POST /apply-template`` -> ``{"prompt": text}``; ``GET /props`` with
  ``total_slots``; no cache reset route (``server-context.cpp``). The fake's "template" writes the ChatML ids as
  text, so ``/tokenize`` of it gives back the ids the chat completion counts.
* any other OpenAI-compatible server (Ollama, LM Studio, TGI, ...): ``/v1/models`` with another ``owned_by`` and
  ``/v1/chat/completions``, nothing else.

The cached tokens the fakes report come from a token trie (the figures are not what is tested: the shapes are).
The trie persists across replays (a server that cannot be reset stays warm), and ``prompt_extra`` adds tokens to
the prompt length the server reports (a server that runs another prompt than its tokenisation said).
"""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
import pytest
from click.testing import CliRunner

from promptcache.cli import main

from promptcache.tokens.chatml import encode_chatml
from promptcache.trace.records import TraceRecord, read_trace
from promptcache.verify.backends import BackendError, HTTPBackend
from promptcache.verify.report import verify_trace


class FakeEngine:
    """One engine's routes over a per-token prefix trie (``block`` rounds the reported hit down)."""

    def __init__(self, owner: str, *, block: int = 16, cache_report: bool = True, dev_mode: bool = True,
                 loading: int = 0, prompt_extra: dict[int, int] | None = None, refuse: set[int] | None = None,
                 server_info: str | None = None) -> None:
        self.owner, self.block, self.cache_report, self.dev_mode, self.loading = owner, block, cache_report, dev_mode, \
            loading
        self.prompt_extra, self.refuse, self.server_info = prompt_extra or {}, refuse or set(), server_info
        self.completions = 0
        self.seen: list[list[int]] = []
        self.paths: list[str] = []

    def cached(self, ids: list[int]) -> int:
        best = max((next((i for i, (a, b) in enumerate(zip(ids, old)) if a != b), min(len(ids), len(old)))
                    for old in self.seen), default=0)
        return min(best, len(ids) - 1) // self.block * self.block

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        self.paths.append(f"{request.method} {path}")
        if self.loading:
            self.loading -= 1
            return httpx2.Response(503, json={"error": {"message": "Loading model", "type": "unavailable_error",
                                                        "code": 503}})
        body = json.loads(request.read() or b"null")
        if path == "/v1/models" and self.owner != "not-openai":
            return httpx2.Response(200, json={"object": "list", "data": [
                {"id": "m", "object": "model", "created": 0, "owned_by": self.owner, "root": "m",
                 "max_model_len": 32768}]})
        if path == "/tokenize" and self.owner == "vllm":
            ids = encode_chatml(body["messages"], body.get("tools"))
            return httpx2.Response(200, json={"count": len(ids), "max_model_len": 32768, "tokens": ids})
        if path == "/tokenize" and self.owner == "llamacpp":
            if "content" not in body:
                return httpx2.Response(200, json={"tokens": []})
            return httpx2.Response(200, json={"tokens": [int(t) for t in body["content"].split()]})
        if path == "/apply-template" and self.owner == "llamacpp":
            ids = encode_chatml(body["messages"], body.get("tools"))
            return httpx2.Response(200, json={"prompt": " ".join(map(str, ids))})
        if path == "/props" and self.owner == "llamacpp":
            return httpx2.Response(200, json={"total_slots": 1, "n_ctx": 32768})
        if path == "/get_server_info" and self.server_info is not None:
            return httpx2.Response(200, text=self.server_info)
        if path == "/metrics" and self.owner == "vllm":
            return httpx2.Response(200, text='# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n'
                                             '# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{block_size='
                                             f'"{self.block}",cache_dtype="auto",enable_prefix_caching="True"}} 1.0\n')
        if path == "/get_server_info" and self.owner == "sglang":
            return httpx2.Response(200, json={"page_size": self.block, "model_path": "m", "version": "0.5"})
        if path == "/reset_prefix_cache" and self.owner == "vllm" and self.dev_mode:
            self.seen.clear()
            return httpx2.Response(200)
        if path == "/flush_cache" and self.owner == "sglang":
            self.seen.clear()
            return httpx2.Response(200, text="Cache flushed.\nPlease check backend logs for more details.\n")
        if path == "/v1/chat/completions":
            number, self.completions = self.completions, self.completions + 1
            if number in self.refuse:
                return httpx2.Response(400, json={"error": {"message": "request exceeds the available context size",
                                                            "type": "exceed_context_size_error", "code": 400}})
            ids = encode_chatml(body["messages"], body.get("tools"))
            extra = self.prompt_extra.get(number, 0)
            usage = {"prompt_tokens": len(ids) + extra, "completion_tokens": 1, "total_tokens": len(ids) + 1,
                     "prompt_tokens_details": {"cached_tokens": self.cached(ids)} if self.cache_report else None}
            self.seen.append(ids)
            chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
            events = [{**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "x"},
                                             "finish_reason": None}]},
                      {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
                      {**chunk, "choices": [], "usage": usage}]
            text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            return httpx2.Response(200, text=text, headers={"content-type": "text/event-stream"})
        return httpx2.Response(404, json={"detail": "Not Found"})


def backend(fake: FakeEngine, **options) -> HTTPBackend:
    return HTTPBackend("http://engine:8000", http_client=httpx2.Client(transport=httpx2.MockTransport(fake.handle)),
                       **options)


@pytest.fixture(scope="module")
def records(traces_dir):
    return read_trace(traces_dir / "bad_sliding_window.jsonl")[:4]


def test_vllm_tokenize_reset_and_block_size_come_from_its_routes(records):
    fake = FakeEngine("vllm", block=32)
    server = backend(fake)
    assert (server.engine, server.block_size, server.oracle_exact) == ("vllm", 32, True)
    report = verify_trace(records, server, reset_cache=True)
    assert "POST /reset_prefix_cache" in fake.paths and "POST /tokenize" in fake.paths
    summary = report.summary()
    assert summary["engine"] == "vllm" and summary["oracle_source"] == "the server's /tokenize (chat messages)"
    assert summary["block_size"] == 32 and all(r.oracle_tokens % 32 == 0 for r in report.requests)
    assert summary["hit_vs_oracle"] == 1.0 and summary["notes"] == []


def test_vllm_without_dev_mode_says_how_to_reset(records):
    report = verify_trace(records[:1], backend(FakeEngine("vllm", dev_mode=False)), reset_cache=True)
    assert any("VLLM_SERVER_DEV_MODE=1" in note for note in report.notes)
    assert not any("rerun with --reset-cache" in note for note in report.notes)


def test_sglang_page_size_flush_and_an_approximate_oracle(records):
    fake = FakeEngine("sglang", block=1, cache_report=False)
    server = backend(fake)
    assert (server.engine, server.block_size, server.oracle_exact) == ("sglang", 1, False)
    report = verify_trace(records, server, reset_cache=True)
    assert "POST /flush_cache" in fake.paths and "POST /tokenize" not in fake.paths
    summary = report.summary()
    assert summary["oracle"] == "approximate" and "local ChatML" in summary["oracle_source"]
    assert any("--enable-cache-report" in note for note in summary["notes"])


def test_a_loading_server_is_retried_then_reported_not_ready():
    fake = FakeEngine("llamacpp", loading=2)
    assert backend(fake, ready_timeout=30).engine == "llama.cpp"  # two 503s, then ready
    with pytest.raises(BackendError, match=r"is not ready: it still answered 503 \(Loading model\)"):
        backend(FakeEngine("llamacpp", loading=10_000), ready_timeout=0.2)


def test_vllm_shaped_tokenize_on_llama_cpp_is_an_error_not_an_oracle_of_0(records):
    server = backend(FakeEngine("llamacpp"), engine="vllm")  # the misdetection the issue saw
    assert any("--engine vllm was passed, but the server says it is llama.cpp" in note for note in server.notes)
    report = verify_trace(records[:2], server)
    assert report.errors == 2
    assert "returned no token ids" in report.requests[0].error and "--engine NAME" in report.requests[0].error
    assert report.requests[0].engine_cause.cause == "oracle_unusable"
    assert report.outcome()[0] == 2 and "every request failed" in report.outcome()[1]



@pytest.fixture(scope="module")
def sliding(traces_dir):
    return read_trace(traces_dir / "bad_sliding_window.jsonl")


def test_a_warm_llama_server_is_a_warm_cache_not_a_template_that_drops_history(sliding):
    fake = FakeEngine("llamacpp", block=1)  # llama-server has no reset route: a second replay finds it warm
    first = verify_trace(sliding, backend(fake))
    assert first.requests[0].cached_tokens == 0 and first.hit_vs_oracle == 1.0
    assert first.summary()["engine_verdict"] is None
    second = verify_trace(sliding, backend(fake), reset_cache=True)
    again = verify_trace(sliding, backend(fake))
    for report in (second, again):
        summary = report.summary()
        assert summary["oracle"] == "exact" and summary["hit_vs_oracle"] > 1.5
        assert summary["engine_verdict"] is None and summary["verdict"] == summary["app_verdict"]
        assert summary["app_verdict"].startswith("bad: history_rewritten")
        (warm,) = [note for note in summary["notes"] if "cached more than the oracle" in note]
        assert "llama-server --cache-reuse N" in warm and "restart the server to start cold" in warm
        assert "rerun with --reset-cache" not in warm and "does not read them as a template" in warm


def test_a_server_of_no_known_engine_replays_as_a_generic_openai_server(records):
    fake = FakeEngine("library")  # Ollama's owned_by; no /props, /get_server_info, /version, /tokenize
    server = backend(fake)
    assert (server.engine, server.block_size, server.oracle_exact) == ("openai", 16, False)
    report = verify_trace(records, server, reset_cache=True)
    summary = report.summary()
    assert summary["errors"] == 0 and summary["engine"] == "openai" and summary["oracle"] == "approximate"
    assert not any(path.endswith(("/tokenize", "/flush_cache", "/reset_prefix_cache")) for path in fake.paths)
    notes = "\n".join(summary["notes"])
    assert "generic OpenAI-compatible server (--engine openai)" in notes
    assert "assumes 16-token blocks; pass --block-size N" in notes
    assert "this server has no route that tokenises a chat" in notes
    assert "restart the server to start cold" in notes and "SGLang" not in notes
    assert backend(fake, engine="openai", block_size=1).block_size == 1


def test_only_the_servers_refusals_are_refused(records):
    fake = FakeEngine("llamacpp", block=1, refuse={1}, prompt_extra={2: 3})
    report = verify_trace(records, backend(fake))
    refused, mismatched = report.requests[1], report.requests[2]
    assert refused.engine_cause.cause == "refused" and "BadRequestError" in refused.error
    assert mismatched.engine_cause.cause == "oracle_unusable" and mismatched.error.startswith("oracle unusable: ")
    assert "ran " in mismatched.error and "prompt tokens but its tokenisation gave" in mismatched.error
    follow = report.requests[3]  # the server ran request 2: the oracle counts it for request 3
    assert follow.error is None and follow.oracle_tokens >= follow.cached_tokens > 0
    assert not any("cached more than the oracle" in note for note in report.notes)
    verdict = report.summary()["engine_verdict"]
    assert "refused 1 of 4 requests" in verdict and "no usable oracle for 1 of 4 requests" in verdict


def test_a_body_that_cannot_be_converted_is_not_the_servers_refusal(records):
    bad = TraceRecord(99.0, "openai.responses", "s9", {"model": "m", "input": [
        {"role": "user", "content": [{"type": "input_image", "file_id": "file-1"}]}]})
    report = verify_trace([*records[:1], bad], backend(FakeEngine("llamacpp", block=1)))
    row = report.requests[1]
    assert row.error.startswith("invalid body: ") and "file_id" in row.error
    assert row.engine_cause is None and report.summary()["engine_verdict"] is None


def test_a_wrong_engine_is_named_plainly(records):
    vllm = backend(FakeEngine("vllm"), engine="llama.cpp")
    assert any("--engine llama.cpp was passed, but the server says it is vllm" in note for note in vllm.notes)
    report = verify_trace(records[:1], vllm)
    error = report.requests[0].error
    assert "_NoRoute" not in error and "has no /apply-template route" in error and "pass --engine" in error
    with pytest.raises(BackendError, match=r"/v1/models answered 404: check that the URL is an OpenAI-compatible"):
        backend(FakeEngine("not-openai"))  # python -m http.server, say
    sglang = backend(FakeEngine("library", server_info="<html>not json</html>"), engine="sglang")
    assert sglang.block_size == 1 and any("does not expose its cache block size at /get_server_info" in note
                                          for note in sglang.notes)
    reset = verify_trace(records[:1], backend(FakeEngine("llamacpp"), engine="sglang"), reset_cache=True)
    (note,) = [n for n in reset.notes if "did not reset" in n]
    assert "answered 404: this server has no sglang reset route" in note and "retry when it is idle" not in note


@contextlib.contextmanager
def serving(fake: FakeEngine):
    """``fake`` behind a real HTTP server on a free loopback port (for the commands, which open their own client)."""

    class Handler(BaseHTTPRequestHandler):
        def answer(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            response = fake.handle(httpx2.Request(self.command, f"http://fake{self.path}", content=body))
            data = response.read()
            self.send_response(response.status_code)
            self.send_header("content-type", response.headers.get("content-type", "application/json"))
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = answer

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def test_report_and_verify_read_the_engine_and_its_block_size_as_verify_does(traces_dir, tmp_path):
    trace = str(traces_dir / "bad_sliding_window.jsonl")
    runner = CliRunner()
    with serving(FakeEngine("library")) as url:  # an Ollama-like server
        generic = runner.invoke(main, ["report", trace, "--backend", url, "-o", str(tmp_path / "g.html")])
        verified = runner.invoke(main, ["verify", trace, "--backend", url, "--engine", "openai", "--block-size", "1",
                                        "--format", "json"])
    assert generic.exit_code == 0, generic.output
    assert "generic OpenAI-compatible server (--engine openai)" in " ".join(generic.stderr.split())
    assert "(16-token blocks)" in (tmp_path / "g.html").read_text()
    assert verified.exit_code == 0, verified.output
    summary = json.loads(verified.stdout)["summary"]
    assert (summary["engine"], summary["block_size"], summary["oracle"]) == ("openai", 1, "approximate")
    with serving(FakeEngine("llamacpp", block=1)) as url:
        llama = runner.invoke(main, ["report", trace, "--backend", url, "-o", str(tmp_path / "l.html")])
        told = runner.invoke(main, ["report", trace, "--backend", url, "--engine", "vllm", "-o",
                                    str(tmp_path / "v.html")])
    assert llama.exit_code == 0, llama.output
    assert "(1-token blocks)" in (tmp_path / "l.html").read_text()  # llama.cpp caches per token, not 16
    assert "--engine vllm was passed, but the server says it is llama.cpp" in " ".join(told.stderr.split())
    refused = runner.invoke(main, ["report", trace, "--engine", "vllm", "-o", str(tmp_path / "x.html")])
    assert refused.exit_code == 2 and "--engine need --backend" in refused.output
