"""``simulate --check-usage``: simulated cache read / write against the usage recorded in the trace (issue 14,
Build 5). The tolerance is one block, 128 tokens (promptcache.simulate.calibrate.BLOCK_TOKENS)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from simbodies import words

from promptcache.cli import main
from promptcache.simulate import simulate_trace
from promptcache.simulate.calibrate import BLOCK_TOKENS, check_usage

SYSTEM = [{"type": "text", "text": words(1500), "cache_control": {"type": "ephemeral"}}]


def _line(t: float, question: str, usage: dict | None) -> dict:
    body = {"max_tokens": 64, "messages": [{"role": "user", "content": question}], "model": "claude-sonnet-4-5",
            "system": SYSTEM}
    line = {"t": t, "api": "anthropic.messages", "session": "s1", "body": body}
    if usage is not None:
        line["usage"] = usage
    return line


def _trace(tmp_path, lines) -> str:
    path = tmp_path / "recorded.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def _usage(read: int, write: int, uncached: int = 12) -> dict:
    return {"input_tokens": uncached, "output_tokens": 5, "cache_creation_input_tokens": write,
            "cache_read_input_tokens": read}


def test_exact_within_and_disagreeing_requests_are_told_apart(tmp_path):
    written = 1503  # the system block through its breakpoint, cl100k (the simulator's stand-in tokenizer)
    path = _trace(tmp_path, [_line(0.0, "Where is order 1042?", _usage(0, written)),
                             _line(5.0, "And order 1043?", _usage(written - 60, 0, 60 + 12)),
                             _line(10.0, "And order 1044?", _usage(0, written))])  # the provider wrote again
    calibration = check_usage(simulate_trace(path))
    assert [c.verdict for c in calibration.checks] == ["exact", "within", "disagrees"]
    assert calibration.summary() == ("predicted 2 of 3 requests within 1 block (128 tokens): 1 exact, 1 within, "
                                     "1 disagreeing")
    assert calibration.tolerance == BLOCK_TOKENS == 128
    strict = check_usage(simulate_trace(path), tolerance=0)
    assert [c.verdict for c in strict.checks] == ["exact", "disagrees", "disagrees"]


def test_the_cli_shows_the_disagreement_with_both_numbers(tmp_path):
    path = _trace(tmp_path, [_line(0.0, "Where is order 1042?", _usage(0, 1503)),
                             _line(5.0, "And order 1043?", _usage(0, 1503, uncached=13))])  # same prompt size
    run = CliRunner().invoke(main, ["simulate", path, "--check-usage"], env={"COLUMNS": "80"})
    assert run.exit_code == 0, run.output
    check = run.stdout[run.stdout.index("simulated vs recorded usage"):]
    row = next(line for line in check.splitlines() if line.split()[:1] == ["1"])
    assert row.split()[2:6] == ["1,503", "0", "0", "1,503"]  # #, session, read sim / rec, write sim / rec
    assert "disagrees" in row
    assert "predicted 1 of 2 requests within 1 block (128 tokens): 1 exact, 0 within, 1" in run.stdout
    assert "docs/simulate.md" in run.stdout


def test_a_trace_without_recorded_usage_is_a_usage_error(tmp_path):
    path = _trace(tmp_path, [_line(0.0, "q", None)])
    run = CliRunner().invoke(main, ["simulate", path, "--check-usage"])
    assert run.exit_code == 2
    assert "no request of the trace carries usage comparable with the simulation (no usage recorded)" in run.output
    assert "promptcache.wrap" in run.output


def test_usage_of_another_api_is_not_compared(tmp_path):
    chat = {"t": 0.0, "api": "openai.chat", "session": "s", "body": {"model": "gpt-4.1-mini", "messages": [
        {"role": "system", "content": words(1500)}, {"role": "user", "content": "q"}]},
        "usage": {"prompt_tokens": 1510, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 0}}}
    path = _trace(tmp_path, [chat])
    simulation = simulate_trace(path, provider="anthropic", model="claude-sonnet-4-5")
    with pytest.raises(ValueError, match="its usage was recorded from openai.chat, not anthropic"):
        check_usage(simulation)


def test_the_json_document_carries_the_check(tmp_path):
    path = _trace(tmp_path, [_line(0.0, "q", _usage(0, 1503))])
    run = CliRunner().invoke(main, ["simulate", path, "--check-usage", "--format", "json", "--usage-tolerance", "0"])
    check = json.loads(run.stdout)["usage_check"]
    assert check["tolerance_tokens"] == 0 and check["summary"]["exact"] == 1
    assert check["requests"][0] == {"index": 0, "session": "s1", "verdict": "exact", "refusal": None, "scale": 1.0,
                                    "predicted_read": 0, "predicted_write": 1503, "recorded_read": 0,
                                    "recorded_write": 1503, "predicted_prompt": check["requests"][0]["predicted_prompt"],
                                    "recorded_prompt": 1515}


def test_usage_tolerance_without_check_usage_is_a_usage_error(tmp_path):
    path = _trace(tmp_path, [_line(0.0, "q", _usage(0, 10))])
    run = CliRunner().invoke(main, ["simulate", path, "--usage-tolerance", "5"])
    assert run.exit_code == 2
    assert "--usage-tolerance needs --check-usage" in run.output


def test_a_served_request_the_rules_refuse_is_a_disagreement(tmp_path):
    """Review 14 item 1: recorded usage means the provider served the request; a simulator that refuses it is
    wrong (a rule changed, or an assumed refusal is false), so it counts as disagreeing, not as 'not checked'.
    Here: a 1h cachePoint on Claude 3.7 Sonnet, which Bedrock's 1h TTL does not cover ("Haiku/Sonnet/Opus 4.5 and
    later", provider-audit-2026-12.md section 3, Bedrock row); the recorded usage shows a write."""
    def converse(question: str, ttl: str) -> dict:
        return {"modelId": "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
                "system": [{"text": words(1500)}, {"cachePoint": {"type": "default", "ttl": ttl}}],
                "messages": [{"role": "user", "content": [{"text": question}]}]}
    lines = [{"t": 0.0, "api": "bedrock.converse", "session": "s", "body": converse("a", "5m"),
              "usage": {"inputTokens": 9, "outputTokens": 5, "cacheWriteInputTokens": 1501}},
             {"t": 5.0, "api": "bedrock.converse", "session": "s", "body": converse("b", "1h"),
              "usage": {"inputTokens": 9, "outputTokens": 5, "cacheWriteInputTokens": 2262}}]
    path = _trace(tmp_path, lines)
    calibration = check_usage(simulate_trace(path))
    assert [c.verdict for c in calibration.checks] == ["within", "refused"]
    assert calibration.unchecked == []
    assert calibration.checks[1].refusal.startswith("system[1].cachePoint.ttl '1h' is not available")
    assert calibration.summary() == ("predicted 1 of 2 requests within 1 block (128 tokens): 0 exact, 1 within, "
                                     "1 disagreeing (1 served by the provider but refused by the rules)")
    run = CliRunner().invoke(main, ["simulate", path, "--check-usage"], env={"COLUMNS": "80"})
    assert run.exit_code == 0, run.output
    assert "request 1: the provider served a request the rules refuse: system[1].cachePoint.ttl" in \
        " ".join(run.stdout.split())
    document = json.loads(CliRunner().invoke(main, ["simulate", path, "--check-usage", "--format", "json"]).stdout)
    assert document["usage_check"]["summary"]["disagrees"] == 1
    assert document["usage_check"]["requests"][1]["verdict"] == "refused"
