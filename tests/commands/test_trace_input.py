"""How simulate, verify and diff read a trace file that is not quite JSON Lines: a BOM, CRLF, a JSON error's
place, a gzip file or one pretty-printed JSON document (one clear line each), many bad lines (capped), and the same
--strict advice from all three."""

from __future__ import annotations

import gzip
import json

import pytest
from click.testing import CliRunner

from promptcache.cli import main

RECORD = {"t": 0.0, "api": "anthropic.messages", "session": "s",
          "body": {"max_tokens": 16, "messages": [{"role": "user", "content": "hello"}], "model": "claude-sonnet-4-5"}}
LINE = json.dumps(RECORD, separators=(",", ":"))
SECOND = json.dumps({**RECORD, "t": 1.0}, separators=(",", ":"))
COMMANDS = {"simulate": ["simulate"], "diff": ["diff", "--at", "0"], "verify": ["verify"]}
NO_MODEL = ["--model", "/nonexistent/model"]  # verify reads the trace before this is looked at


def invoke(command: str, trace, *extra: str):
    args = COMMANDS[command]
    return CliRunner().invoke(main, [args[0], str(trace), *args[1:], *extra])


def test_a_bom_at_the_start_is_accepted(tmp_path):
    trace = tmp_path / "bom.jsonl"
    trace.write_bytes(b"\xef\xbb\xbf" + LINE.encode() + b"\n" + SECOND.encode() + b"\n")
    result = invoke("simulate", trace, "--format", "json", "--strict")
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["requests"]) == 2 and "warning" not in result.stderr


def test_crlf_lines_are_accepted(tmp_path):
    trace = tmp_path / "crlf.jsonl"
    trace.write_bytes(LINE.encode() + b"\r\n" + SECOND.encode() + b"\r\n")
    result = invoke("simulate", trace, "--format", "json", "--strict")
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["requests"]) == 2


def test_a_json_error_names_the_trace_line_and_the_char_only(tmp_path):
    trace = tmp_path / "m.jsonl"
    trace.write_text(LINE + "\n" + '{"t": 1, "api": "x"\n')
    result = invoke("simulate", trace, "--format", "json")
    assert "warning: m.jsonl:2: not JSON (Expecting ',' delimiter at char 20); line skipped" in result.stderr
    assert "column" not in result.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_a_gzip_file_is_one_line_not_one_per_line(tmp_path, command):
    trace = tmp_path / "t.jsonl.gz"
    trace.write_bytes(gzip.compress(("\n".join([LINE] * 400) + "\n").encode()))
    lines = sum(1 for line in trace.read_bytes().split(b"\n") if line.strip())
    result = invoke(command, trace, *(NO_MODEL if command == "verify" else []))
    assert result.exit_code == 2, result.output
    noun = "line" if lines == 1 else "lines"
    assert result.stderr.splitlines() == [
        f"warning: t.jsonl.gz is gzip-compressed; decompress it first (gunzip); {lines} {noun} skipped",
        f"error: no usable requests in {trace} ({lines} {noun} skipped)"]


@pytest.mark.parametrize("command", COMMANDS)
def test_one_pretty_printed_json_document_is_one_line(tmp_path, command):
    trace = tmp_path / "body.json"
    trace.write_text(json.dumps(RECORD["body"], indent=2) + "\n")
    lines = len(trace.read_text().splitlines())
    result = invoke(command, trace, *(NO_MODEL if command == "verify" else []))
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "warning: body.json is one JSON document, not JSON Lines: pass it as a request body (promptcache diff "
        f"A.json B.json) or write one request per line; {lines} lines skipped",
        f"error: no usable requests in {trace} ({lines} lines skipped)"]
    strict = invoke(command, trace, "--strict", *(NO_MODEL if command == "verify" else []))
    assert strict.exit_code == 2 and strict.stderr.startswith("error: body.json is one JSON document")


@pytest.mark.parametrize("command", COMMANDS)
def test_many_malformed_lines_are_capped_and_counted(tmp_path, command):
    trace = tmp_path / "junk.jsonl"
    trace.write_text("".join(f"junk {i}\n" for i in range(25)) + LINE + "\n")
    extra = ["--format", "json"] if command != "verify" else [*NO_MODEL, "--format", "json"]
    result = invoke(command, trace, *extra)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings[:10] == [f"warning: junk.jsonl:{n}: not JSON (Expecting value at char 0); line skipped"
                             for n in range(1, 11)]
    assert warnings[10:] == ["warning: ... and 15 more lines skipped (the first 10 are shown)"]
    empty = tmp_path / "allj.jsonl"
    empty.write_text("".join(f"junk {i}\n" for i in range(25)))
    result = invoke(command, empty, *extra)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"error: no usable requests in {empty} (25 lines skipped)"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_gives_the_same_strict_advice(tmp_path, command):
    trace = tmp_path / "t.jsonl"
    trace.write_text(LINE + "\n{nope\n")
    result = invoke(command, trace, "--strict", *(NO_MODEL if command == "verify" else []))
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == ("error: t.jsonl:2: not JSON (Expecting property name enclosed in "
                                              "double quotes at char 1) (run without --strict to report it as a "
                                              "warning and go on)")
