"""The verify report: runtime causes under memory pressure, refused requests, progress, worst requests."""

from __future__ import annotations

import io
import json

from rich.console import Console
from verify_support import tiny_engine

from promptcache.commands.verify import print_report

from promptcache.trace.records import TraceRecord, read_trace
from promptcache.verify.report import verify_trace
from promptcache.verify.backends import LocalBackend


def test_a_small_pool_evicts_and_the_shortfall_is_reported(traces_dir, tiny_model):
    # 150 blocks of 16 tokens hold one ~2.2k-token tenant prompt: switching tenants evicts the other's prefix.
    backend = LocalBackend(tiny_engine(tiny_model, num_blocks=150))
    report = verify_trace(traces_dir / "mixed_multi_tenant.jsonl", backend)
    short = [r for r in report.requests if r.cached_tokens < r.oracle_tokens]
    assert short and report.hit_vs_oracle < 1.0
    # the engine's capacity, not the app: an engine cause; the app keeps the classifier's (benign) divergences
    assert all(r.engine_cause.cause == "evicted" and r.divergence.expected for r in short)
    assert "evicted" in short[0].engine_cause.detail
    assert all(r.cached_tokens <= r.oracle_tokens for r in report.requests)
    good, verdict = report.verdict()
    assert good and verdict == (f"app: good; engine: evicted on {len(short)} of 22 (give the engine a larger KV "
                                "pool: --kv-cache-mb MiB or --num-blocks N)")
    summary = report.summary()
    assert summary["app_verdict"].startswith("good:") and summary["engine_verdict"].startswith("evicted on")
    assert [c["index"] for c in summary["engine_causes"]] == [r.index for r in short]


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
    assert failed.error == "invalid body: A maximum of 4 blocks with cache_control may be provided. Found 5."
    assert failed.engine_cause is None  # the app's body, not the engine
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


def test_a_warm_backend_with_nothing_to_reuse_has_no_ratio_and_json_stays_valid(traces_dir, tiny_model):
    records = read_trace(traces_dir / "good_rag_doc_qa.jsonl")[:1]
    backend = LocalBackend(tiny_engine(tiny_model))
    verify_trace(records, backend)
    warm = verify_trace(records, backend)  # the same request again: cached, yet the oracle (this replay) has none
    assert warm.requests[0].oracle_tokens == 0 < warm.requests[0].cached_tokens
    assert warm.hit_vs_oracle is None and warm.hit_rate > 0
    document = json.loads(json.dumps(warm.to_dict(), allow_nan=False))
    assert document["summary"]["hit_vs_oracle"] is None
    assert any("rerun with --reset-cache" in note for note in document["summary"]["notes"])
    out = io.StringIO()
    print_report(warm, Console(file=out, width=200))
    assert "hit / oracle n/a" in out.getvalue()


def test_nothing_measured_reads_n_a(traces_dir, tiny_model):
    records = read_trace(traces_dir / "good_rag_doc_qa.jsonl")[:2]
    # a tool object the engine's renderer refuses (a tool that is not an object is a malformed body: skipped)
    broken = [TraceRecord(r.t, r.api, r.session, {**r.body, "tools": [{"name": "x"}]}) for r in records]
    report = verify_trace(broken, LocalBackend(tiny_engine(tiny_model)))
    assert [r.error for r in report.requests] == ["invalid body: tools[0]: type must be 'function' (got None); a "
                                                  "tool is {'type': 'function', 'function': {'name': ..., "
                                                  "'parameters': {...}}}"] * 2
    summary = report.summary()
    assert summary["hit_rate"] is summary["oracle_hit_rate"] is summary["hit_vs_oracle"] is None
    assert summary["good"] is False and summary["verdict"].startswith("n/a: every request failed")
    out = io.StringIO()
    print_report(report, Console(file=out, width=200))
    assert "hit rate n/a, oracle n/a, hit / oracle n/a" in out.getvalue()


def test_the_gate_does_not_count_hits_above_the_oracle():
    # newcomer (issue 16): a warm llama-server (no reset route) hit 100% of a trace whose oracle is 12%, and
    # --min-hit-rate 50% passed; each request's hits now count only up to its oracle tokens
    from promptcache.verify.report import RequestResult, VerifyReport

    def report(exact: bool) -> VerifyReport:
        rows = [RequestResult(i, float(i), "s", "openai.chat", 1000, 1000, 120, None) for i in range(3)]
        return VerifyReport("t.jsonl", "http://x", "m", 1, exact, rows)

    warm = report(True)
    assert warm.hit_rate == 1.0 and warm.gated_hit_rate == 0.12
    code, line = warm.outcome(0.5)
    assert code == 1 and line == ("hit rate 12.0% is below --min-hit-rate 50.0% (hits above the oracle not counted: "
                                  "100.0% measured; the cache was warm before the replay)")
    assert warm.outcome(0.1) == (0, None)
    assert report(False).outcome(0.5) == (0, None)  # an approximate oracle (SGLang) caps nothing
