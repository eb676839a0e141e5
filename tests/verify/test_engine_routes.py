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
  []}`` (``server-context.cpp``).

The cached tokens the fakes report come from a token trie (the figures are not what is tested: the shapes are).
"""

from __future__ import annotations

import json

import httpx2
import pytest

from promptcache.tokens.chatml import encode_chatml
from promptcache.trace.records import read_trace
from promptcache.verify.backends import BackendError, HTTPBackend
from promptcache.verify.report import verify_trace


class FakeEngine:
    """One engine's routes over a per-token prefix trie (``block`` rounds the reported hit down)."""

    def __init__(self, owner: str, *, block: int = 16, cache_report: bool = True, dev_mode: bool = True,
                 loading: int = 0) -> None:
        self.owner, self.block, self.cache_report, self.dev_mode, self.loading = owner, block, cache_report, dev_mode, \
            loading
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
        if path == "/v1/models":
            return httpx2.Response(200, json={"object": "list", "data": [
                {"id": "m", "object": "model", "created": 0, "owned_by": self.owner, "root": "m",
                 "max_model_len": 32768}]})
        if path == "/tokenize" and self.owner == "vllm":
            ids = encode_chatml(body["messages"], body.get("tools"))
            return httpx2.Response(200, json={"count": len(ids), "max_model_len": 32768, "tokens": ids})
        if path == "/tokenize" and self.owner == "llamacpp":
            return httpx2.Response(200, json={"tokens": []} if "content" not in body else {"tokens": [1, 2]})
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
            ids = encode_chatml(body["messages"], body.get("tools"))
            usage = {"prompt_tokens": len(ids), "completion_tokens": 1, "total_tokens": len(ids) + 1,
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
    report = verify_trace(records[:2], server)
    assert report.errors == 2
    assert "returned no token ids" in report.requests[0].error and "--engine NAME" in report.requests[0].error
    assert report.outcome()[0] == 2 and "every request failed" in report.outcome()[1]
