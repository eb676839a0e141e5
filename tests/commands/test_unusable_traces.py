"""A trace with nothing usable in it is an error (exit 2), not "0 requests, verdict good", in every command that
reads one; a line that is not UTF-8 is a malformed line like any other (named, skipped, fatal under --strict)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from promptcache.cli import main

RECORD = {"t": 0.0, "api": "anthropic.messages", "session": "s",
          "body": {"max_tokens": 16, "messages": [{"role": "user", "content": "hello"}], "model": "claude-sonnet-4-5"}}
GOOD_LINE = json.dumps(RECORD, separators=(",", ":")).encode()

UNUSABLE = {  # file content, lines skipped
    "empty": (b"", 0),
    "blank": (b"\n   \n\n", 0),
    "not_json": (b"hello world\n", 1),
    "unknown_api": (json.dumps({**RECORD, "api": "foo.bar"}).encode() + b"\n", 1),
    "not_utf8": (b"\xff\xfe{}\n", 1),
    "two_bad_lines": (b"{nope\n" + b"\x80\n", 2),
}
COMMANDS = {"simulate": ["simulate"], "diff": ["diff", "--at", "0"], "verify": ["verify"]}


def invoke(command: str, trace, *extra: str):
    args = COMMANDS[command]
    return CliRunner().invoke(main, [args[0], str(trace), *args[1:], *extra])


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", UNUSABLE)
def test_a_trace_without_a_usable_request_exits_2(tmp_path, command, name):
    content, skipped = UNUSABLE[name]
    trace = tmp_path / f"{name}.jsonl"
    trace.write_bytes(content)
    result = invoke(command, trace)
    assert result.exit_code == 2, result.output
    noun = "line" if skipped == 1 else "lines"
    assert result.stderr.rstrip().endswith(f"error: no usable requests in {trace} ({skipped} {noun} skipped)")
    assert "verdict" not in result.output and "0 requests" not in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", ["simulate", "diff"])
def test_records_whose_bodies_are_all_malformed_count_as_skipped_lines(tmp_path, command):
    trace = tmp_path / "bodies.jsonl"
    bad = {**RECORD, "body": {"model": "claude-sonnet-4-5"}}  # no messages: simulate skips the record
    trace.write_bytes(b"{nope\n" + json.dumps(bad).encode() + b"\n")
    result = invoke(command, trace)
    assert result.exit_code == 2, result.output
    assert result.stderr.rstrip().endswith(f"error: no usable requests in {trace} (2 lines skipped)")


def test_a_line_that_is_not_utf8_is_named_and_skipped_and_the_rest_simulated(tmp_path):
    trace = tmp_path / "mixed.jsonl"
    bad = b'{"t":1.0,"api":"anthropic.messages","session":"caf\xe9"}\n'  # Latin-1 e-acute
    trace.write_bytes(GOOD_LINE + b"\n" + bad)
    result = invoke("simulate", trace, "--format", "json")
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["requests"]) == 1
    offset = len(GOOD_LINE) + 1 + bad.index(b"\xe9")
    assert (f"warning: mixed.jsonl:2: not valid UTF-8 (byte 0xe9 at offset {offset}): traces are UTF-8 JSON Lines; "
            "re-save it as UTF-8; line skipped") in result.stderr
    strict = invoke("simulate", trace, "--strict")
    assert strict.exit_code == 2
    assert f"error: mixed.jsonl:2: not valid UTF-8 (byte 0xe9 at offset {offset})" in strict.stderr


def test_verify_reads_a_bad_trace_before_loading_the_backend(tmp_path):
    """A usage error in the trace comes back at once, with the --strict advice, not after the model loads."""
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(GOOD_LINE + b"\n\xff\n")
    result = invoke("verify", trace, "--strict", "--model", str(tmp_path / "no-such-model"))
    assert result.exit_code == 2, result.output
    assert "error: t.jsonl:2: not valid UTF-8 (byte 0xff at offset" in result.stderr
    assert "run without --strict to report it as a warning and go on" in result.stderr and "no-such-model" not in result.output
