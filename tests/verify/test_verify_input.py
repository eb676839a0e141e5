"""``verify`` picks a trace's usable records as ``simulate`` and ``diff`` do (one reader,
``promptcache.trace.requests.usable_records``), before the model loads, and nothing in its report path raises on
a body that reader let through."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from promptcache.cli import main

TRACE = "bad_summarize_each_turn.jsonl"
OPENAI_BODY = {"model": "gpt-4o", "messages": [{"role": "system", "content": "Be brief."},
                                               {"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def run(tiny_model_dir):
    def invoke(*args: str, model: str | None = None):
        return CliRunner().invoke(main, ["verify", *args, "--model", model or str(tiny_model_dir),
                                         "--tokenizer", "chatml"])
    return invoke


@pytest.fixture
def mixed(traces_dir, tmp_path):
    """Line 1 and 4 good; line 2 without messages; line 3 an OpenAI body labelled anthropic.messages."""
    good = [json.loads(line) for line in (traces_dir / TRACE).read_text().splitlines()[:2]]
    no_messages = {**good[1], "t": good[0]["t"] + 0.5,
                   "body": {k: v for k, v in good[1]["body"].items() if k != "messages"}}
    labelled_wrong = {**good[1], "t": good[0]["t"] + 0.7, "body": OPENAI_BODY}
    trace = tmp_path / "mixed.jsonl"
    trace.write_text("".join(json.dumps(r) + "\n" for r in (good[0], no_messages, labelled_wrong, good[1])))
    return trace


def test_malformed_bodies_are_skipped_with_the_warning_simulate_gives(run, mixed):
    result = run(str(mixed), "--format", "json")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert ("warning: mixed.jsonl:2: malformed request body: body.messages: missing: a request body needs a "
            "non-empty list of messages; line skipped") in result.stderr
    assert ("warning: mixed.jsonl:3: malformed request body: body.messages[0].role: must be one of user, "
            "assistant, not 'system'; line skipped") in result.stderr
    assert json.loads(result.stdout)["summary"]["requests"] == 2
    simulate = CliRunner().invoke(main, ["simulate", str(mixed), "--format", "json"])
    for line in (2, 3):  # the same words from simulate
        assert f"mixed.jsonl:{line}: malformed request body" in simulate.stderr


def test_a_malformed_body_is_fatal_under_strict(run, mixed):
    result = run(str(mixed), "--strict")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.strip().endswith(
        "error: mixed.jsonl:2: malformed request body: body.messages: missing: a request body needs a non-empty "
        "list of messages (run without --strict to report it as a warning and go on)")


def test_the_trace_is_read_before_the_model_loads(run, tmp_path):
    trace = tmp_path / "only_bad.jsonl"
    trace.write_text(json.dumps({"t": 0.0, "api": "anthropic.messages", "session": "s", "body": OPENAI_BODY}) + "\n")
    result = run(str(trace), model=str(tmp_path / "no-such-model"))
    assert result.exit_code == 2
    assert result.stderr.strip().endswith(f"error: no usable requests in {trace} (1 line skipped)")
    assert "no-such-model" not in result.stderr


def test_a_body_the_classifier_cannot_render_is_replayed_with_a_note(run, traces_dir, tmp_path):
    good = [json.loads(line) for line in (traces_dir / TRACE).read_text().splitlines()[:2]]
    image = {"type": "image", "source": None}  # passes the structural check; no classifier rendering
    odd = {**good[1], "body": {**good[1]["body"], "messages": [{"role": "user", "content": [image]}]}}
    trace = tmp_path / "odd.jsonl"
    trace.write_text(json.dumps(good[0]) + "\n" + json.dumps(odd) + "\n")
    result = run(str(trace), "--format", "json")
    assert "Traceback" not in result.output, result.output
    summary = json.loads(result.stdout)["summary"]
    assert summary["requests"] == 2
    assert any(note.startswith("odd.jsonl:2: request 1 could not be compared with earlier requests (")
               for note in summary["notes"]), summary["notes"]
    table = run(str(trace))
    assert "Traceback" not in table.output and "could not be compared" in table.stdout


@pytest.mark.parametrize(("rate", "passed", "code"), [("99%", False, 1), ("0", True, 0)])
def test_the_json_summary_records_the_gate(run, traces_dir, rate, passed, code):
    result = run(str(traces_dir / TRACE), "--format", "json", "--min-hit-rate", rate)
    assert result.exit_code == code, result.output
    assert json.loads(result.stdout)["summary"]["gate"] == {"min_hit_rate": 0.99 if rate == "99%" else 0.0,
                                                            "passed": passed}
