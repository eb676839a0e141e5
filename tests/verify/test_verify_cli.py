"""``promptcache verify`` and ``promptcache demo`` from the command line, on the tiny ChatML model saved to a folder
(``--model DIR --tokenizer chatml``: the same loading path as ``promptcache serve --model``)."""

from __future__ import annotations

import json
import socket
from importlib import resources

import pytest
from click.testing import CliRunner

from promptcache.cli import main

ROW_KEYS = {"index", "session", "prompt_tokens", "cached_tokens", "oracle_tokens", "ttft_s"}
TRACE = "bad_summarize_each_turn.jsonl"  # 12 requests of ~2k tokens, local reuse 77%


@pytest.fixture(scope="module")
def run(tiny_model_dir):
    def invoke(*args: str):
        return CliRunner().invoke(main, ["verify", *args, "--model", str(tiny_model_dir), "--tokenizer", "chatml"])
    return invoke


def test_json_output_has_the_issue_shape(run, traces_dir):
    result = run(str(traces_dir / TRACE), "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert set(document) == {"requests", "summary"}
    rows, summary = document["requests"], document["summary"]
    assert all(set(row) == ROW_KEYS for row in rows)
    assert [row["index"] for row in rows] == list(range(12)) and rows[0]["session"] == "kitchen-001"
    assert summary["requests"] == 12
    assert summary["prompt_tokens"] == sum(r["prompt_tokens"] for r in rows)
    assert summary["cached_tokens"] == sum(r["cached_tokens"] for r in rows)
    assert summary["hit_rate"] == summary["cached_tokens"] / summary["prompt_tokens"]
    assert summary["oracle_hit_rate"] == sum(r["oracle_tokens"] for r in rows) / summary["prompt_tokens"]
    assert summary["hit_vs_oracle"] == 1.0 and summary["oracle"] == "exact" and summary["good"] is False
    assert summary["worst"][0]["cause"] == "history_rewritten"
    assert summary["worst"][0]["summary"].startswith("history_rewritten in history at messages[0]")
    assert all(isinstance(r["ttft_s"], float) and r["ttft_s"] > 0 for r in rows)


def test_min_hit_rate_is_a_ci_gate(run, traces_dir):
    below = run(str(traces_dir / TRACE), "--format", "json", "--min-hit-rate", "0.9")
    assert below.exit_code == 1
    assert "below --min-hit-rate 90.0%" in below.stderr
    above = run(str(traces_dir / TRACE), "--format", "json", "--min-hit-rate", "70%")
    assert above.exit_code == 0


def test_table_output(run, traces_dir):
    result = run(str(traces_dir / "bad_sliding_window.jsonl"))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "sqltutor-001" in out and "hit / oracle 1.000" in out
    assert "verdict: bad: history_rewritten on 17 of 20 requests" in out
    assert "worst requests" in out and "slid" in out


def test_bad_arguments_and_trace_lines(run, traces_dir, tmp_path):
    assert CliRunner().invoke(main, ["verify", str(traces_dir / TRACE), "--backend", "ftp://x"]).exit_code == 2
    lines = (traces_dir / TRACE).read_text().splitlines()[:2]
    broken = tmp_path / "broken.jsonl"
    broken.write_text(lines[0] + "\n{not json\n" + lines[1] + "\n")
    strict = run(str(broken), "--strict")
    assert strict.exit_code == 2 and "broken.jsonl:2: not JSON" in strict.stderr
    lenient = run(str(broken), "--format", "json")
    assert lenient.exit_code == 0
    assert "line skipped" in lenient.stderr
    assert json.loads(lenient.stdout)["summary"]["requests"] == 2


def test_demo_on_a_model_folder(tiny_model_dir, traces_dir):
    for name, shared in (("demo_good_support_chat.jsonl", "good_support_chat.jsonl"),
                         ("demo_bad_timestamp_system.jsonl", "bad_timestamp_system.jsonl")):
        bundled = resources.files("promptcache").joinpath("data", "traces", name).read_text()
        assert (traces_dir / shared).read_text().startswith(bundled)  # the first lines, byte for byte
    result = CliRunner().invoke(main, ["demo", "--model", str(tiny_model_dir), "--tokenizer", "chatml",
                                       "--kv-cache-mb", "16"])
    assert result.exit_code == 0, result.output
    assert "good: hit rate 72.8% (oracle 72.8%)" in result.output
    assert "good: every miss is a first request" in result.output
    assert "bad: hit rate 10.2% (oracle 10.2%)" in result.output
    assert "bad: volatile_value on 3 of 4 requests" in result.output
    assert "first unexpected miss (index 1): volatile_value in system at system[0].text" in result.output


def test_an_unreachable_url_is_a_clear_exit_2(traces_dir):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    for extra in ([], ["--model", "m"], ["--model", "m", "--min-hit-rate", "0"]):
        result = CliRunner().invoke(main, ["verify", str(traces_dir / TRACE), "--backend", url, *extra])
        assert result.exit_code == 2, result.output
        assert f"error: cannot use backend {url}: cannot reach {url}" in result.stderr
        assert "start the server" in result.stderr and "Traceback" not in result.output


def test_failed_requests_exit_2_unless_allowed(run, traces_dir, tmp_path):
    lines = [json.loads(line) for line in (traces_dir / TRACE).read_text().splitlines()[:2]]
    broken = [{**record, "body": {**record["body"], "tools": [{"name": "x"}]}} for record in lines]
    all_bad = tmp_path / "all_bad.jsonl"
    all_bad.write_text("".join(json.dumps(r) + "\n" for r in broken))
    result = run(str(all_bad), "--format", "json")
    assert result.exit_code == 2 and "every request failed" in result.stderr
    summary = json.loads(result.stdout)["summary"]
    assert summary["hit_rate"] is None and summary["hit_vs_oracle"] is None and summary["errors"] == 2
    one_bad = tmp_path / "one_bad.jsonl"
    one_bad.write_text(json.dumps(lines[0]) + "\n" + json.dumps(broken[1]) + "\n")
    failed = run(str(one_bad), "--format", "json")
    assert failed.exit_code == 2 and "1 of 2 requests failed (first: index 1: invalid body: " in failed.stderr
    assert "pass --allow-failures" in failed.stderr and json.loads(failed.stdout)["summary"]["failed"][0]["index"] == 1
    assert run(str(one_bad), "--format", "json", "--allow-failures").exit_code == 0  # still listed in 'failed'
    gated = run(str(one_bad), "--format", "json", "--min-hit-rate", "0")
    assert gated.exit_code == 2 and "1 of 2 requests failed" in gated.stderr
