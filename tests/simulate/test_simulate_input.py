"""Bad simulate input: reported with its line number and skipped (or exit 2 under --strict), never mistaken
for an API refusal; rule overrides checked against ModelProfile up front."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pytest
from click.testing import CliRunner
from simbodies import EPHEMERAL, anthropic_body, system_block, user, words

from promptcache.cli import main
from promptcache.providers.profiles import check_overrides
from promptcache.simulate import simulate_trace
from promptcache.trace.records import TraceFormatError, TraceFormatWarning, TraceRecord, write_trace


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def records(*times: float) -> list[TraceRecord]:
    system = [system_block(words(1500), EPHEMERAL)]
    return [TraceRecord(t, "anthropic.messages", "s", anthropic_body(system, [user(f"question {i}")]))
            for i, t in enumerate(times)]


def test_a_t_that_does_not_increase_is_reported(tmp_path) -> None:
    trace = tmp_path / "late.jsonl"
    write_trace(trace, records(0.0, 30.0, 12.0))
    with pytest.warns(TraceFormatWarning, match=r"late.jsonl:3: t=12 is not after the previous request's t=30; t "
                                                r"must be strictly increasing; simulated at t=30"):
        simulation = simulate_trace(trace)
    assert [r.usage.cache_read > 0 for r in simulation.requests] == [False, True, True]
    with pytest.raises(TraceFormatError, match=r"late.jsonl:3: t=12 is not after"):
        simulate_trace(trace, strict=True)
    strict = run("simulate", trace, "--strict")
    assert strict.exit_code == 2 and "error: late.jsonl:3: t=12 is not after" in strict.stderr
    loose = run("simulate", trace, "--format", "json")
    assert loose.exit_code == 0 and "warning: late.jsonl:3: t=12 is not after" in loose.stderr
    assert len(json.loads(loose.stdout)["requests"]) == 3


def test_increasing_t_is_quiet(tmp_path) -> None:
    write_trace(tmp_path / "ok.jsonl", records(0.0, 12.0, 30.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceFormatWarning)
        simulate_trace(tmp_path / "ok.jsonl")


def test_rule_overrides_are_checked_up_front(traces_dir) -> None:
    trace = traces_dir / "good_support_chat.jsonl"
    for rule, message in [("min_cacheable_tokens=abc", "rule override min_cacheable_tokens='abc': expected a whole "
                                                       "number >= 0"),
                          ("lookback_blocks=-5", "rule override lookback_blocks=-5: expected a whole number >= 1"),
                          ("unit_rule=weird", "expected one of boundary, fixed"),
                          ("model=gpt-4o", "model identifies the model, it is not a rule"),
                          ("read_multiplier=-1", "expected a number >= 0"),
                          ("no_such_rule=1", "unknown rule override 'no_such_rule'")]:
        result = run("simulate", trace, "--rule", rule)
        assert result.exit_code == 2 and message in result.stderr, (rule, result.output)
    assert check_overrides({"lookback_blocks": None, "read_multiplier": 1, "ttl_seconds": {"5m": 300}}) == {
        "lookback_blocks": None, "read_multiplier": 1.0, "ttl_seconds": {"5m": 300}}
    ok = run("simulate", trace, "--rule", "breakpoint_lookback=50", "--rule", "min_cacheable_tokens=2048")
    assert ok.exit_code == 0, ok.output


def mixed_trace(tmp_path):
    """Lines 1, 2, 4: requests; line 3: a record whose body is no request body."""
    good = records(0.0, 10.0, 20.0)
    trace = tmp_path / "mixed.jsonl"
    lines = [good[0].to_json(), good[1].to_json(),
             '{"t": 15.0, "api": "anthropic.messages", "session": "x", "body": {"messages": 5}}', good[2].to_json()]
    trace.write_text("\n".join(lines) + "\n")
    return trace


def test_a_body_that_is_no_request_is_a_malformed_line(tmp_path) -> None:
    """/tmp/rev/m.jsonl: not 'refused by the API', no cost_unit switch, no model '' warning, no ', ' in the title."""
    trace = mixed_trace(tmp_path)
    result = run("simulate", trace)
    assert result.exit_code == 0, result.output
    assert ("warning: mixed.jsonl:3: malformed request body: body.messages: must be a non-empty list of messages, "
            "not an integer; line skipped") in result.stderr  # JSON kinds, as serve's 400s word them
    assert "refused" not in result.stdout and "model ''" not in result.stderr
    assert "anthropic prompt cache, claude-sonnet-4-5 " in result.stdout and "claude-sonnet-4-5," not in result.stdout
    doc = json.loads(run("simulate", trace, "--format", "json").stdout)
    assert [r["index"] for r in doc["requests"]] == [0, 1, 2] and doc["summary"]["cost_unit"] == "USD"
    assert all(r["error"] is None for r in doc["requests"]) and doc["model"] == "claude-sonnet-4-5"
    strict = run("simulate", trace, "--strict")
    assert strict.exit_code == 2 and "error: mixed.jsonl:3: malformed request body: body.messages" in strict.stderr


def test_bodies_that_cannot_be_rendered_or_have_no_model_are_malformed(tmp_path) -> None:
    base = records(0.0)[0].body
    late_result = {**base, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "hi"}, {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}]}
    bodies = [base, {k: v for k, v in base.items() if k != "model"}, late_result,
              {**base, "messages": [{"role": "user", "content": [{"text": "no type"}]}]}]
    trace = tmp_path / "odd.jsonl"
    write_trace(trace, [TraceRecord(float(i), "anthropic.messages", "s", b) for i, b in enumerate(bodies)])
    problems: list[TraceFormatError] = []
    simulation = simulate_trace(trace, on_problem=problems.append)
    assert len(simulation.requests) == 1
    assert [(p.line, p.reason.split(":")[1].strip()) for p in problems] == [
        (2, "body.model"), (3, "cannot be rendered"), (4, "body.messages[0].content[0]")]
    assert "missing (pass --model)" in problems[0].reason
    with_model = simulate_trace(trace, model="claude-sonnet-4-5", on_problem=problems.append)
    assert len(with_model.requests) == 2  # --model supplies the missing one


def test_diff_counts_like_simulate_and_reports_warnings_once(tmp_path) -> None:
    trace = mixed_trace(tmp_path)
    result = run("diff", trace, "--at", "2")
    assert result.exit_code == 0, result.output
    assert "new      request 2 (s, t=20 s)" in result.stdout
    assert result.stderr.count("warning: mixed.jsonl:3: malformed request body") == 1
    assert "TraceFormatWarning" not in result.output and "tokenizers.py" not in result.output
    out_of_range = run("diff", trace, "--at", "3")
    assert out_of_range.exit_code == 2
    assert "error: --at 3: the trace has 3 requests (indexes 0 to 2; malformed lines are not counted)" in \
        out_of_range.stderr


def test_a_foreign_model_names_the_provider_properly(traces_dir) -> None:
    result = run("simulate", traces_dir / "good_support_chat.jsonl", "--provider", "openai")
    assert result.exit_code == 2
    assert ("the trace's model 'claude-sonnet-4-5' is not an OpenAI model; pass --model (for example an OpenAI "
            "model id)") in result.stderr


def test_diff_prints_the_tokenizer_fallback_as_a_warning_line(traces_dir) -> None:
    """A fresh process (the fallback warns once per process): no raw 'tokenizers.py:101: ...Warning' lines."""
    command = [sys.executable, "-c", "from promptcache.cli import main; main()", "diff",
               str(traces_dir / "good_rag_doc_qa.jsonl"), "--at", "1"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert "Warning:" not in result.stderr and "tokenizers.py" not in result.stderr
    assert all(line.startswith(("warning: ", "note: ")) for line in result.stderr.splitlines() if line)
