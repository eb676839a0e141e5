"""``GET /metrics``: the engine's cache metrics and the server's request metrics, in Prometheus text.

Engine figures come from ``engine.stats()`` (taken on the engine thread just
before each scrape) and are exposed through a custom collector, so they are
always exactly the engine's counters (prometheus-client docs, "Custom
Collectors"). Server figures (HTTP requests by endpoint and status, TTFT) are
ordinary prometheus-client metrics. Each app gets its own registry, so several
servers can live in one process (tests).

Names (all prefixed ``promptcache_``; counters end in ``_total``):

=========================================  ======================================================
``prefix_cache_queries_total``              prompt tokens looked up in the prefix cache
``prefix_cache_hits_total``                 of those, tokens served from cache
``prefix_cache_requests_total``             admissions counted (re-admissions after preemption apart)
``prefix_cache_hit_rate``                   hits / queries (cumulative); ``..._recent_hit_rate``
``prompt_tokens_total``                     prompt tokens of finished requests
``cached_tokens_total``                     prefix-hit tokens of finished requests (the usage figure)
``computed_prompt_tokens_total``            prompt tokens run through the model
``generation_tokens_total``                 output tokens of finished requests
``requests_finished_total`` / ``aborted``   engine requests (a stop string finishes, a client leaving aborts)
``requests_running`` / ``requests_waiting``  now
``kv_blocks{state=...}``                    used, cached_evictable, empty, total
``kv_evictions_total``                      cached blocks evicted
``kv_internal_fragmentation``               1 - tokens stored / slots allocated (used blocks)
``kv_sharing_factor``                       tokens referenced per token stored
``http_requests_total{endpoint,status}``    HTTP requests answered
``time_to_first_token_seconds``             histogram, arrival to first token
=========================================  ======================================================
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

PREFIX = "promptcache"
TTFT_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0)


class _EngineCollector:
    """Yields metric families from the latest ``engine.stats()`` snapshot."""

    def __init__(self) -> None:
        self.snapshot: Mapping[str, Any] | None = None

    def collect(self) -> Iterator[Metric]:
        stats = self.snapshot
        if stats is None:
            return
        model = stats["model"]["name"]

        def counter(name: str, doc: str, value: float) -> CounterMetricFamily:
            family = CounterMetricFamily(f"{PREFIX}_{name}", doc, labels=["model"])
            family.add_metric([model], value)
            return family

        def gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
            family = GaugeMetricFamily(f"{PREFIX}_{name}", doc, labels=["model"])
            family.add_metric([model], value)
            return family

        prefix, tokens, requests, kv = stats["prefix_cache"], stats["tokens"], stats["requests"], stats["kv"]
        yield counter("prefix_cache_queries", "Prompt tokens looked up in the prefix cache.", prefix["queries"])
        yield counter("prefix_cache_hits", "Prompt tokens served from the prefix cache.", prefix["hits"])
        yield counter("prefix_cache_requests", "Requests admitted (first admissions).", prefix["requests"])
        yield counter("prefix_cache_preempted_queries", "Tokens looked up on re-admission after preemption.",
                      prefix["preempted_queries"])
        yield counter("prefix_cache_preempted_hits", "Tokens hit on re-admission after preemption.",
                      prefix["preempted_hits"])
        yield counter("prefix_cache_resets", "Prefix cache resets.", prefix["resets"])
        yield gauge("prefix_cache_hit_rate", "Hit tokens / queried tokens, cumulative.", prefix["hit_rate"])
        yield gauge("prefix_cache_recent_hit_rate", "Hit rate over the recent admissions window.",
                    prefix["recent_hit_rate"])
        yield counter("prompt_tokens", "Prompt tokens of finished requests.", tokens["prompt_tokens"])
        yield counter("cached_tokens", "Prefix-hit tokens of finished requests.", tokens["cached_tokens"])
        yield counter("computed_prompt_tokens", "Prompt tokens run through the model.",
                      tokens["computed_prompt_tokens"])
        yield counter("generation_tokens", "Output tokens of finished requests.", tokens["generated_tokens"])
        yield counter("requests_finished", "Engine requests finished.", requests["finished"])
        yield counter("requests_aborted", "Engine requests aborted.", requests["aborted"])
        yield counter("preemptions", "Requests preempted (recomputed later).", requests["preemptions"])
        yield gauge("requests_running", "Requests running now.", requests["running"])
        yield gauge("requests_waiting", "Requests waiting now.", requests["waiting"])
        blocks = GaugeMetricFamily(f"{PREFIX}_kv_blocks", "KV blocks by state.", labels=["model", "state"])
        for state in ("used", "cached_evictable", "empty", "total"):
            blocks.add_metric([model, state], kv[f"blocks_{state}"])
        yield blocks
        yield counter("kv_evictions", "Cached KV blocks evicted.", kv["evictions"])
        yield gauge("kv_usage", "Fraction of KV blocks in use.", kv["usage"])
        yield gauge("kv_internal_fragmentation", "1 - tokens stored / slots allocated over used blocks.",
                    kv["internal_fragmentation"])
        yield gauge("kv_sharing_factor", "Tokens referenced by running requests per token stored.",
                    kv["sharing_factor"])
        yield gauge("kv_pool_bytes", "Bytes of the KV pool.", kv["pool_bytes"])


class ServerMetrics:
    """The registry of one server and its metrics."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self._engine = _EngineCollector()
        self.registry.register(self._engine)
        self.http_requests = Counter(f"{PREFIX}_http_requests", "HTTP requests answered.", ["endpoint", "status"],
                                     registry=self.registry)
        self.ttft = Histogram(f"{PREFIX}_time_to_first_token_seconds", "Seconds from arrival to the first token.",
                              buckets=TTFT_BUCKETS, registry=self.registry)

    def observe_ttft(self, seconds: float) -> None:
        self.ttft.observe(seconds)

    def render(self, engine_stats: Mapping[str, Any]) -> bytes:
        """Prometheus text exposition with ``engine_stats`` as the engine's figures."""
        self._engine.snapshot = engine_stats
        return generate_latest(self.registry)


class RequestCounter:
    """Pure ASGI middleware counting answered HTTP requests by route and status.

    Pure ASGI rather than ``@app.middleware("http")``: Starlette's
    ``BaseHTTPMiddleware`` wraps ``receive``, which hides a client's
    disconnect from ``request.is_disconnected()`` while a handler waits for
    the first token.
    """

    def __init__(self, app: ASGIApp, counter: Counter) -> None:
        self.app = app
        self.counter = counter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = {"code": 500}

        async def send_and_record(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_record)
        finally:
            endpoint = getattr(scope.get("route"), "path", "unmatched")
            self.counter.labels(endpoint, str(status["code"])).inc()
