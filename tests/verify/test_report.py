"""The verify report: runtime causes under memory pressure, refused requests, progress, worst requests."""

from __future__ import annotations

import json

from verify_support import tiny_engine

from promptcache.trace import TraceRecord, read_trace
from promptcache.verify import verify_trace
from promptcache.verify_backends import LocalBackend


def test_a_small_pool_evicts_and_the_shortfall_is_reported(traces_dir, tiny_model):
    # 150 blocks of 16 tokens hold one ~2.2k-token tenant prompt: switching tenants evicts the other's prefix.
    backend = LocalBackend(tiny_engine(tiny_model, num_blocks=150))
    report = verify_trace(traces_dir / "mixed_multi_tenant.jsonl", backend)
    short = [r for r in report.requests if r.cached_tokens < r.oracle_tokens]
    assert short and report.hit_vs_oracle < 1.0
    assert all(r.divergence.cause == "evicted" and not r.divergence.expected for r in short)
    assert "evicted" in short[0].divergence.detail
    assert all(r.cached_tokens <= r.oracle_tokens for r in report.requests)
    good, verdict = report.verdict()
    assert not good and verdict.startswith("bad: evicted")


def test_a_refused_request_is_reported_and_the_rest_replayed(traces_dir, tiny_model):
    records = read_trace(traces_dir / "good_support_chat.jsonl")[:3]
    body = json.loads(json.dumps(records[1].body))
    marker = {"type": "ephemeral"}
    body["tools"] = [dict(tool, cache_control=marker) for tool in body["tools"]]  # 3 + system + last = 5 markers
    records[1] = TraceRecord(records[1].t, records[1].api, records[1].session, body)
    seen = []
    report = verify_trace(records, LocalBackend(tiny_engine(tiny_model)),
                          progress=lambda done, total, result: seen.append((done, total, result.index)))
    assert seen == [(1, 3, 0), (2, 3, 1), (3, 3, 2)]
    failed = report.requests[1]
    assert failed.error == "ValueError: A maximum of 4 blocks with cache_control may be provided. Found 5."
    assert report.summary()["errors"] == 1 and report.summary()["failed"][0]["index"] == 1
    assert report.requests[2].cached_tokens == report.requests[2].oracle_tokens > 4000
    assert report.summary()["requests"] == 3 and report.totals()[0] == sum(
        r.prompt_tokens for r in report.requests if r.error is None)


def test_worst_requests_put_unexpected_misses_first(replayed):
    report = replayed("bad_whitespace_drift.jsonl")
    worst = report.worst()
    assert len(worst) == 5 and all(not r.divergence.expected for r in worst)
    assert [r.missed_tokens for r in worst] == sorted((r.missed_tokens for r in worst), reverse=True)
    assert {r.divergence.cause for r in worst} == {"whitespace_only"}
