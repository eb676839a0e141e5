"""``promptcache simulate`` and ``promptcache diff`` through the real click CLI."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner
from simbodies import EPHEMERAL, anthropic_body, system_block, user, words

from promptcache.cli import main
from promptcache.providers.profiles import UnknownModelWarning
from promptcache.simulate import simulate_records
from promptcache.trace.records import TraceRecord, write_trace

REQUEST_KEYS = ["index", "session", "prompt_tokens", "cache_read_tokens", "cache_write_tokens",
                "cache_write_5m_tokens", "cache_write_1h_tokens", "uncached_tokens", "cost", "miss_cause", "expected", "error"]
SUMMARY_KEYS = ["hit_rate", "write_rate", "cost", "cost_without_cache", "savings", "cost_unit"]


def run(*args: str):
    return CliRunner().invoke(main, list(map(str, args)))


def test_json_format_is_exactly_the_documented_shape(traces_dir):
    result = run("simulate", traces_dir / "good_support_chat.jsonl", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == ["provider", "model", "requests", "summary"]
    assert (doc["provider"], doc["model"]) == ("anthropic", "claude-sonnet-4-5")
    assert [list(r) for r in doc["requests"]] == [REQUEST_KEYS] * 17
    assert [r["index"] for r in doc["requests"]] == list(range(17))
    assert list(doc["summary"]) == SUMMARY_KEYS and doc["summary"]["cost_unit"] == "USD"
    first, second = doc["requests"][:2]
    assert (first["miss_cause"], first["cache_read_tokens"], first["error"]) == ("first_request", 0, None)
    assert second["miss_cause"] is None and second["session"] == "sup-002"
    for row in doc["requests"]:
        assert row["prompt_tokens"] == row["cache_read_tokens"] + row["cache_write_tokens"] + row["uncached_tokens"]
        assert row["cache_write_tokens"] == row["cache_write_5m_tokens"] + row["cache_write_1h_tokens"]
    summary = doc["summary"]
    assert summary["savings"] == pytest.approx(summary["cost_without_cache"] - summary["cost"])
    assert "token counts are approximate" in result.stderr


def test_refused_request_gets_an_error_and_the_run_goes_on(tmp_path):
    blocks = [system_block(f"part {i} " + words(300), EPHEMERAL) for i in range(4)]
    records = [TraceRecord(0.0, "anthropic.messages", "s", anthropic_body(blocks, [user("a")])),
               TraceRecord(5.0, "anthropic.messages", "s", anthropic_body(blocks, [user("b")], cache_control=EPHEMERAL)),
               TraceRecord(9.0, "anthropic.messages", "s", anthropic_body(blocks, [user("c")]))]
    trace = tmp_path / "five.jsonl"
    write_trace(trace, records)
    doc = json.loads(run("simulate", trace, "--format", "json").stdout)
    errors = [r["error"] for r in doc["requests"]]
    assert errors == [None, "A maximum of 4 blocks with cache_control may be provided. Found 5.", None]
    refused = doc["requests"][1]
    assert (refused["cache_read_tokens"], refused["uncached_tokens"], refused["cost"], refused["miss_cause"]) == (0, 0, 0, None)
    assert doc["requests"][2]["cache_read_tokens"] > 0  # reads what request 0 wrote


def test_table_format_and_the_min_hit_rate_gate(traces_dir):
    good = run("simulate", traces_dir / "good_rag_doc_qa.jsonl", "--min-hit-rate", "0.85")
    assert good.exit_code == 0, good.output
    assert "openai prompt cache, gpt-4.1-mini" in good.stdout
    assert "hit rate 88.7%" in good.stdout and "first_request" in good.stdout
    bad = run("simulate", traces_dir / "bad_rag_question_first.jsonl", "--min-hit-rate", "50%")
    assert bad.exit_code == 1
    assert "hit rate 0.0% is below --min-hit-rate 50.0%" in bad.stderr
    assert "new_turn, unexpected (messages[1].content)" in bad.stdout
    assert run("simulate", traces_dir / "good_rag_doc_qa.jsonl", "--min-hit-rate", "high").exit_code == 2


def test_when_caching_costs_more_the_table_says_so_and_the_json_keeps_the_sign(tmp_path):
    trace = tmp_path / "written_once.jsonl"  # one request: a 5m cache write (1.25x) that is never read
    write_trace(trace, [TraceRecord(0.0, "anthropic.messages", "s",
                                    anthropic_body([system_block(words(2000), EPHEMERAL)], [user("hi")]))])
    summary = json.loads(run("simulate", trace, "--format", "json").stdout)["summary"]
    assert summary["savings"] < 0 and summary["savings"] == pytest.approx(summary["cost_without_cache"] - summary["cost"])
    table = run("simulate", trace)
    assert table.exit_code == 0, table.output
    ratio = summary["cost"] / summary["cost_without_cache"]
    assert (f"1 request: hit rate 0.0%, written {summary['write_rate']:.1%}; input cost ${summary['cost']:,.4f} with "
            f"caching vs ${summary['cost_without_cache']:,.4f} without: caching costs ${-summary['savings']:,.4f} more "
            f"({ratio:.2f}x)") in table.stdout
    assert "$-" not in table.stdout and "savings" not in table.stdout and f"{ratio:.2f}" == "1.25"


def test_provider_and_model_convert_the_bodies(traces_dir):
    result = run("simulate", traces_dir / "good_agent_tools.jsonl", "--provider", "anthropic",
                 "--model", "claude-sonnet-4-5", "--format", "json")
    doc = json.loads(result.stdout)
    assert (doc["provider"], doc["model"]) == ("anthropic", "claude-sonnet-4-5")
    assert doc["summary"]["hit_rate"] > 0.8 and doc["summary"]["write_rate"] > 0
    assert "converted openai.chat bodies to anthropic.messages" in result.stderr
    assert "added top-level cache_control" in result.stderr
    foreign = run("simulate", traces_dir / "good_support_chat.jsonl", "--provider", "openai")
    assert foreign.exit_code == 2 and "pass --model" in foreign.stderr


def test_rule_overrides(traces_dir):
    trace = traces_dir / "bad_sliding_window.jsonl"
    normal = json.loads(run("simulate", trace, "--format", "json").stdout)
    strict = json.loads(run("simulate", trace, "--format", "json", "--rule", "min_cacheable_tokens=2048").stdout)
    assert [r["cache_read_tokens"] for r in normal["requests"][:3]] == [0, 1152, 1408]
    assert [r["cache_read_tokens"] for r in strict["requests"][:3]] == [0, 0, 0]  # README: "#2 and #3 also 0"
    bad = run("simulate", trace, "--rule", "lookback=5")
    assert bad.exit_code == 2 and "unknown rule override 'lookback'" in bad.stderr


def _broken_trace(traces_dir: Path, tmp_path: Path) -> Path:
    lines = (traces_dir / "good_rag_doc_qa.jsonl").read_text().splitlines()
    lines.insert(2, '{"t": 1.0, "api": "openai.chat", "session": "x", "body": ')
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_malformed_line_is_reported_with_its_number_and_skipped(traces_dir, tmp_path):
    path = _broken_trace(traces_dir, tmp_path)
    result = run("simulate", path, "--format", "json")
    assert result.exit_code == 0
    assert "broken.jsonl:3: not JSON" in result.stderr and "line skipped" in result.stderr
    assert len(json.loads(result.stdout)["requests"]) == 10
    strict = run("simulate", path, "--strict")
    assert strict.exit_code == 2 and "broken.jsonl:3: not JSON" in strict.stderr


def test_unknown_model_falls_back_to_the_most_conservative_values_with_a_warning(tmp_path):
    body = anthropic_body([system_block(words(2500), EPHEMERAL)], model="claude-nova-9")
    records = [TraceRecord(0.0, "anthropic.messages", "s", body), TraceRecord(5.0, "anthropic.messages", "s", body)]
    with pytest.warns(UnknownModelWarning, match="claude-nova-9"):
        simulation = simulate_records(records)
    assert simulation.requests[0].profile.min_cacheable_tokens == 4096  # highest Anthropic minimum
    assert [r.usage.cache_read for r in simulation.requests] == [0, 0]
    assert simulation.requests[1].miss_cause == "below_minimum" and simulation.cost_unit == "relative"
    trace = tmp_path / "unknown.jsonl"
    write_trace(trace, [TraceRecord(0.0, "anthropic.messages", "s", dict(body, model="claude-nova-10"))])
    result = run("simulate", trace)
    assert result.exit_code == 0 and "warning: model 'claude-nova-10' has no entry" in result.stderr


@pytest.mark.parametrize(("name", "index", "cause", "layer"), [
    ("bad_timestamp_system", 1, "volatile_value", "system"),
    ("bad_rag_question_first", 1, "new_turn", "turn"),
    ("bad_agent_tool_shuffle", 1, "tools_changed", "tools"),
    ("bad_summarize_each_turn", 1, "history_rewritten", "history"),
    ("bad_sliding_window", 3, "history_rewritten", "history"),
    ("bad_whitespace_drift", 1, "whitespace_only", "system"),
])
def test_diff_names_the_cause_of_each_bad_traces_first_miss(traces_dir, name, index, cause, layer):
    result = run("diff", traces_dir / f"{name}.jsonl", "--at", index, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["cause"], doc["miss_cause"], doc["layer"], doc["expected"]) == (cause, cause, layer, False)
    assert doc["token_offset"] == doc["common_prefix_tokens"] > 0
    assert any(op == "insert" for op, _ in doc["char_diff"])
    text = run("diff", traces_dir / f"{name}.jsonl", "--at", index)
    assert f"cause    {cause} (unexpected)" in text.stdout and "+ new" in text.stdout


def test_diff_of_two_body_files(traces_dir, tmp_path):
    lines = (traces_dir / "bad_timestamp_system.jsonl").read_text().splitlines()
    (tmp_path / "a.json").write_text(lines[0])                           # a whole trace record
    (tmp_path / "b.json").write_text(json.dumps(json.loads(lines[1])["body"]))  # a bare body
    result = run("diff", tmp_path / "a.json", tmp_path / "b.json")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "cause    volatile_value (unexpected)" in out and "block    system[0].text" in out
    assert "2026-03-18T14:00:23+00:00' vs '2026-03-18T14:00:00+00:00'" in out
    assert "layer    system" in out and "token    offset" in out


def test_diff_bad_input(traces_dir, tmp_path):
    trace = traces_dir / "bad_timestamp_system.jsonl"
    assert "indexes 0 to 16" in run("diff", trace, "--at", 99).stderr
    assert run("diff", trace).exit_code == 2
    (tmp_path / "x.json").write_text("{nope")
    result = run("diff", tmp_path / "x.json", tmp_path / "x.json")
    assert result.exit_code == 2 and "not JSON" in result.stderr


def test_ttl_miss_is_named_by_diff(tmp_path):
    body = anthropic_body([system_block(words(1200), EPHEMERAL)])
    trace = tmp_path / "idle.jsonl"
    write_trace(trace, [TraceRecord(0.0, "anthropic.messages", "s", body),
                        TraceRecord(400.0, "anthropic.messages", "s", body)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = json.loads(run("diff", trace, "--at", 1, "--format", "json").stdout)
    assert (doc["cause"], doc["miss_cause"]) == ("ttl_expired", "ttl_expired")


def test_the_retirement_warning_follows_as_of(tmp_path: Path):
    """Review 14 item 5: deepseek-chat was retired on 2026-07-24 ([D-R], provider-audit-2026-12.md): simulated
    --as-of 2026-07-01 it was still served, so no "retired" warning (the miss classifier's minimum lookup used to
    resolve the model as of today and warn); without --as-of the warning stays, once."""
    def body(question: str) -> dict:
        return {"model": "deepseek-chat", "messages": [{"role": "system", "content": words(300)},
                                                        {"role": "user", "content": question}]}
    trace = tmp_path / "ds.jsonl"  # a new user turn: the miss classifier looks up the model's minimum
    write_trace(trace, [TraceRecord(float(t), "openai.chat", "s", body(q)) for t, q in enumerate("ab")])
    then = run("simulate", str(trace), "--as-of", "2026-07-01")
    assert then.exit_code == 0, then.output
    assert "retired" not in then.stderr
    today = run("simulate", str(trace))
    assert today.exit_code == 0 and today.stderr.count("was retired on 2026-07-24") == 1
