"""The benchmark script runs end to end (quick mode), so it cannot rot; its figures are not judged here."""

from __future__ import annotations

import io
import json
import logging
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from local_backend.benchmarks.report import detail_tables, summary_table
from local_backend.benchmarks.throughput import CONTINUOUS_BATCHING_LOGGER
from local_backend.embedded import EMBEDDED_NOTICE
from promptcache.cli import main


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_engine_bench_quick_runs_every_benchmark_and_prints_json():
    # transformers' generate_batch logger writes to its own stderr handler (CliRunner cannot see it): listen there
    logger = logging.getLogger(CONTINUOUS_BATCHING_LOGGER)
    listener, level = Records(), logger.level
    logger.addHandler(listener)
    try:
        result = CliRunner().invoke(main, ["engine-bench", "--quick"])
    finally:
        logger.removeHandler(listener)
    assert result.exit_code == 0, result.output
    assert [r.getMessage() for r in listener.records] == []  # no "Cannot get memory breakdown ... psutil" ERROR
    assert logger.level == level  # silenced around generate_batch only
    data = json.loads(result.stdout[result.stdout.index("{"):])
    assert data["meta"]["quick"] is True
    assert set(data) == {"meta", "ttft", "throughput", "no_reuse", "fragmentation", "eviction", "hit_rate"}
    # a smoke test: quick sizes are not judged (null in the JSON, "ran" in the table), except hit / oracle, which does
    # not depend on size; no timing, speed-up or overhead is printed (the JSON keeps them)
    assert [data[name]["passed"] for name in data if name != "meta"] == [None] * 5 + [True]
    assert "engine-bench --quick: a smoke test" in result.stderr and "smoke test: every benchmark ran" in result.stderr
    assert result.stderr.count(" ran ") >= 5 and "FAIL" not in result.stderr
    assert not re.search(r"\d+(\.\d+)?x|[+-]\d+(\.\d+)?%| ms\b|tok/s|ideal", result.stderr), result.stderr
    assert "ETA" not in result.stderr  # no progress bar in a pipe
    for quick in (True, False):  # the smoke run's tables and a full run's, from the same figures
        results = {**data, "meta": {**data["meta"], "quick": quick}}
        for width in (80, 120):
            console = Console(file=io.StringIO(), width=width, record=True)
            console.print(summary_table(results, console))
            console.print(detail_tables(results, console))
            out = console.export_text()
            assert max(len(line.rstrip()) for line in out.splitlines()) <= width and "\u2026" not in out
            numbers = [f"{row[k]:,}" for row in data["hit_rate"]["rows"]
                       for k in ("requests", "prompt_tokens", "cached_tokens", "oracle_tokens")]
            numbers += [f"{row['evictions']:,}" for row in data["eviction"]["rows"]]
            if not quick:
                numbers += [f"{row['total_tok_s']:,.0f}" for row in data["throughput"]["rows"]]
                numbers += [f"{data['ttft']['speedup']:.1f}x"]
            assert [n for n in numbers if not re.search(rf"(?<![\w.,]){re.escape(n)}(?![\w,]|\.\d)", out)] == []
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


def test_engine_bench_rejects_an_unknown_benchmark_naming_the_option_and_the_valid_names():
    result = CliRunner().invoke(main, ["engine-bench", "--quick", "--only", "ttft,nonsense", "--only", "x"])
    assert result.exit_code == 2 and result.stdout == ""
    # nothing else before the error: no embedded-model notice, no table
    assert result.stderr.startswith("Usage: ") and EMBEDDED_NOTICE.split(":")[0] not in result.stderr
    assert result.stderr.endswith(
        "Error: Invalid value for '--only': unknown benchmark 'nonsense', 'x'; choose from ttft, throughput, "
        "no_reuse, fragmentation, eviction, hit_rate (comma-separated or repeated)\n")


def run_quick(*args: str, env: dict | None = None) -> tuple[dict, str]:
    """``engine-bench --quick ARGS``: its JSON and its stderr."""
    result = CliRunner().invoke(main, ["engine-bench", "--quick", *args], env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def test_engine_bench_only_takes_a_comma_separated_list_and_a_quick_run_on_tiny_has_no_embedded_notice():
    data, stderr = run_quick("--only", "hit_rate, ttft", "--only", "fragmentation")
    assert list(data) == ["meta", "ttft", "fragmentation", "hit_rate"]
    assert (data["meta"]["timing_model"], data["meta"]["cache_model"]) == ("tiny", "tiny")
    assert "embedded default model" not in stderr  # no embedded model ran


def test_engine_bench_draws_a_progress_bar_over_its_benchmarks_on_a_terminal():
    data, stderr = run_quick("--only", "hit_rate,eviction", env={"TTY_COMPATIBLE": "1"})
    assert list(data) == ["meta", "eviction", "hit_rate"]  # stdout is still the JSON alone
    assert "engine-bench" in stderr and "/2" in stderr and "benchmarks" in stderr and "ETA" in stderr


def test_engine_bench_quick_honours_an_explicit_timing_model_and_then_prints_the_notice():
    data, stderr = run_quick("--only", "ttft", "--timing-model", "embedded")
    assert list(data) == ["meta", "ttft"]
    assert (data["meta"]["timing_model"], data["meta"]["cache_model"]) == ("embedded", "tiny")
    assert "timing model embedded" in stderr and stderr.count("embedded default model: random weights") == 1
    assert data["ttft"]["cached_tokens"] == 240


@pytest.mark.parametrize("kind", ["missing folder", "a folder", "not writable"])
def test_engine_bench_checks_the_json_file_before_running_anything(tmp_path, monkeypatch, kind):
    target = {"missing folder": tmp_path / "nope" / "x.json", "a folder": tmp_path,
              "not writable": tmp_path / "x.json"}[kind]
    expected = {"missing folder": f"the folder {tmp_path / 'nope'} does not exist; create it first (nothing is "
                                  "created for you) or pass a path inside an existing folder",
                "a folder": "it is a folder; pass a file path inside it",
                "not writable": f"the folder {tmp_path} is not writable; pass a path you can write to"}[kind]
    if kind == "not writable":  # root may write anywhere: make this folder read-only to the check
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == tmp_path else real_access(p, mode))
    result = CliRunner().invoke(main, ["engine-bench", "--quick", "--only", "ttft", "--json", str(target)])
    assert (result.exit_code, result.stdout) == (2, "")  # nothing ran: no JSON, no table
    assert result.stderr == f"error: cannot write {target}: {expected}\n"
