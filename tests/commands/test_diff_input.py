"""``promptcache diff A.json B.json`` refuses a body file it cannot use with one line naming the file (exit 2), and
checks the bodies against ``--api`` instead of silently dropping what that API does not have."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from promptcache.cli import main

ANTHROPIC = {"max_tokens": 64, "messages": [{"role": "user", "content": "What is 2 + 2?"}],
             "model": "claude-sonnet-4-5", "system": "You are a careful calculator."}
OPENAI = {"model": "gpt-4o", "messages": [{"role": "system", "content": "You are a careful calculator."},
                                          {"role": "user", "content": "What is 2 + 2?"}]}


def diff(tmp_path, earlier, new, *extra):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for path, content in ((a, earlier), (b, new)):
        path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return CliRunner().invoke(main, ["diff", str(a), str(b), *extra])


@pytest.mark.parametrize(("content", "message"), [
    (b"\xff\xfe{}", "not valid UTF-8 (byte 0xff at offset 0): request bodies are UTF-8 JSON; re-save it as UTF-8"),
    (b'{"model": "m"\n"messages": []}', "not JSON (Expecting ',' delimiter at line 2, column 1); give one request "
                                        "body per file"),
    (b"[1, 2]", "expected a JSON object (a request body or a trace record), not list"),
    (b"{}", "cannot tell whether this body is anthropic.messages or openai.chat (it has no messages); pass --api "
            "anthropic.messages or --api openai.chat"),
])
def test_an_unusable_body_file_is_named_and_exits_2(tmp_path, content, message):
    result = diff(tmp_path, ANTHROPIC, content)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"error: {tmp_path / 'b.json'}: {message}"
    assert "api=" not in result.stderr and "Traceback" not in result.output


def test_a_bom_is_accepted(tmp_path):
    result = diff(tmp_path, ANTHROPIC, b"\xef\xbb\xbf" + json.dumps(ANTHROPIC).encode(), "--format", "json")
    assert result.exit_code == 0, result.output
    assert result.stdout == diff(tmp_path, ANTHROPIC, ANTHROPIC, "--format", "json").stdout


@pytest.mark.parametrize(("bodies", "given", "other", "problem"), [
    (ANTHROPIC, "openai.chat", "anthropic.messages", "body: unknown key(s) ['system'] for openai.chat"),
    (OPENAI, "anthropic.messages", "openai.chat",
     "body.messages[0].role: must be one of user, assistant, not 'system'"),
])
def test_bodies_of_the_other_api_are_refused_with_the_api_to_pass(tmp_path, bodies, given, other, problem):
    result = diff(tmp_path, bodies, bodies, "--api", given)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (f"error: {tmp_path / 'a.json'}: not a request body of {given}: {problem}; "
                                     f"these look like {other} bodies; pass --api {other}")
    assert diff(tmp_path, bodies, bodies, "--api", other).exit_code == 0


def test_a_system_change_is_seen_under_the_right_api(tmp_path):
    changed = {**ANTHROPIC, "system": "You are a sloppy calculator."}
    result = diff(tmp_path, ANTHROPIC, changed, "--format", "json")
    assert result.exit_code == 0 and json.loads(result.stdout)["cause"] == "system_changed"
