"""The benchmark script runs end to end (quick mode), so it cannot rot; its figures are not judged here."""

from __future__ import annotations

import json

from click.testing import CliRunner

from promptcache.cli import main


def test_engine_bench_quick_runs_every_benchmark_and_prints_json():
    result = CliRunner().invoke(main, ["engine-bench", "--quick"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{"):])
    assert data["meta"]["quick"] is True
    assert set(data) == {"meta", "ttft", "throughput", "no_reuse", "fragmentation", "eviction", "hit_rate"}
    # exact, model-independent figures of the quick sizes
    assert data["ttft"]["cached_tokens"] == 240
    rows = {r["system"]: r for r in data["throughput"]["rows"]}
    assert rows["engine"]["prefill_tokens_computed"] == 96 + 3 * 16
    assert rows["engine"]["output_tokens"] == rows["generate loop"]["output_tokens"] == 12
    assert data["no_reuse"]["hit_tokens"] == 0
    assert data["fragmentation"]["requests"] == 32 and data["fragmentation"]["peak"]["blocks_used"] > 0
    assert {r["policy"] for r in data["eviction"]["rows"]} == {"lru", "lfu", "priority"}
    at_25 = data["eviction"]["hit_rate_at_25pct"]
    assert at_25["lfu"] >= at_25["lru"] and at_25["priority"] >= at_25["lru"]
    assert all(r["hit_over_oracle"] == 1.0 for r in data["hit_rate"]["rows"])


def test_engine_bench_rejects_an_unknown_benchmark():
    result = CliRunner().invoke(main, ["engine-bench", "--quick", "--only", "nonsense"])
    assert result.exit_code != 0 and "unknown benchmark" in result.output
