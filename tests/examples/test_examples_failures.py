"""The examples when things go wrong: every error of the live API is one line (exit 1, or 2 for the key and the
connection), and each run writes a fresh trace (--trace replaced only when the run succeeds; a bad path is one line)."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from promptcache.simulate import simulate_trace
from promptcache.trace.records import read_trace

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY")


pytestmark = pytest.mark.usefixtures("examples_on_path")


@pytest.fixture
def failing_api(local_api, monkeypatch):
    """The local API with both SDKs' keys and base URLs pointed at it; the test sets ``answer``."""
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", local_api.url)
    monkeypatch.setenv("OPENAI_BASE_URL", local_api.url + "/v1")
    return local_api


def anthropic_error(kind: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


def openai_error(kind: str, message: str, code: str | None = None) -> bytes:
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": code}}).encode()


CREDIT = "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade."
RETRY = "; rate limited / overloaded: retry later"


@pytest.mark.parametrize(("module", "argv", "status", "body", "line", "requests"), [
    ("support_bot", [], 429, anthropic_error("rate_limit_error", "Number of request tokens has exceeded your limit"),
     "the Anthropic API answered HTTP 429: Number of request tokens has exceeded your limit" + RETRY, 3),
    ("support_bot", [], 529, anthropic_error("overloaded_error", "Overloaded"),
     "the Anthropic API answered HTTP 529: Overloaded" + RETRY, 3),
    ("tool_agent", ["--provider", "anthropic"], 500, anthropic_error("api_error", "Internal server error"),
     "the Anthropic API answered HTTP 500: Internal server error; the provider's server failed: retry later", 3),
    ("support_bot", [], 400, anthropic_error("invalid_request_error", CREDIT),
     f"the Anthropic API answered HTTP 400: {CREDIT}", 1),
    ("doc_qa", [], 429, openai_error("requests", "Rate limit reached for gpt-4.1-mini", "rate_limit_exceeded"),
     "the OpenAI API answered HTTP 429: Rate limit reached for gpt-4.1-mini" + RETRY, 3),
    ("tool_agent", [], 400, openai_error("invalid_request_error", "max_completion_tokens is too large"),
     "the OpenAI API answered HTTP 400: max_completion_tokens is too large", 1),
    ("support_bot", [], 200, b"not json", "the Anthropic API answered HTTP 200 with a response that cannot be read: "
     "the body is not JSON (Expecting value: line 1 column 1 (char 0)): 'not json'", 1),
    ("doc_qa", [], 200, b"{}", "the OpenAI API answered HTTP 200 with a response that cannot be read: "
     "the body is not a chat completion (it needs usage and choices): '{}'", 1),
])
def test_every_api_error_is_one_line_and_exit_1(module, argv, status, body, line, requests, failing_api, capsys,
                                                tmp_path) -> None:
    from live_api import run

    failing_api.answer = lambda path: (status, body)
    with pytest.raises(SystemExit) as exit_info:
        run(importlib.import_module(module).main, [*argv, "--live", "--trace", str(tmp_path / "t.jsonl")])
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == f"error: {line}\n"
    assert len(failing_api.requests) == requests  # the SDKs' own retries (2) of 429 and 5xx, none of 400 and 200


def test_the_script_prints_no_traceback(failing_api, tmp_path) -> None:
    failing_api.answer = lambda path: (529, anthropic_error("overloaded_error", "Overloaded"))
    run = subprocess.run([sys.executable, str(EXAMPLES / "support_bot.py"), "--live", "--trace",
                          str(tmp_path / "t.jsonl")], capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stderr) == (1, f"error: the Anthropic API answered HTTP 529: Overloaded{RETRY}\n")


@pytest.mark.parametrize(("module", "argv", "requests"), [("support_bot", [], 5), ("doc_qa", [], 5),
                                                          ("tool_agent", [], 4)])
def test_a_second_run_replaces_the_trace(module, argv, requests, capsys, tmp_path) -> None:
    trace = tmp_path / "t.jsonl"
    outputs = []
    for _ in range(2):
        assert importlib.import_module(module).main([*argv, "--trace", str(trace)]) == 0
        outputs.append(capsys.readouterr())
    assert outputs[0].err == "" and outputs[1].err == f"replacing existing trace {trace}\n"
    assert outputs[0].out == outputs[1].out  # the same run, the same report
    assert f"({requests} requests), validator: ok" in outputs[1].out
    records = read_trace(trace, strict=True)
    assert len(records) == requests and records[0].t == 0.0
    printed = re.search(r"^hit rate ([\d.]+%); check it with", outputs[1].out, re.M).group(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert f"{simulate_trace(trace).summary()['hit_rate']:.1%}" == printed


def test_a_trace_in_a_missing_folder_is_one_line_and_exit_2(capsys, tmp_path) -> None:
    from live_api import run

    missing = tmp_path / "nonexistent" / "x.jsonl"
    with pytest.raises(SystemExit) as exit_info:
        run(importlib.import_module("support_bot").main, ["--trace", str(missing)])
    assert exit_info.value.code == 2
    assert capsys.readouterr() == ("", f"error: trace {str(missing)!r}: the folder {missing.parent} does not exist; "
                                       "create it first (nothing is created for you) or pass a path inside an "
                                       "existing folder\n")
    assert not missing.parent.exists()


def test_a_trace_under_the_home_folder(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert importlib.import_module("doc_qa").main(["--trace", "~/qa.jsonl"]) == 0
    assert f"trace: {tmp_path / 'qa.jsonl'} (5 requests), validator: ok" in capsys.readouterr().out


@pytest.mark.parametrize(("module", "argv", "status", "body"), [
    ("support_bot", [], 429, anthropic_error("rate_limit_error", "Number of request tokens has exceeded your limit")),
    ("doc_qa", [], 401, openai_error("invalid_request_error", "Incorrect API key provided", "invalid_api_key")),
    ("tool_agent", ["--provider", "anthropic"], 400, anthropic_error("invalid_request_error", CREDIT)),
])
def test_a_failed_live_run_keeps_the_previous_trace(module, argv, status, body, failing_api, capsys,
                                                    tmp_path) -> None:
    from live_api import run

    trace = tmp_path / "t.jsonl"
    assert importlib.import_module(module).main([*argv, "--trace", str(trace)]) == 0  # offline: a good trace
    before = trace.read_bytes()
    capsys.readouterr()
    failing_api.answer = lambda path: (status, body)
    with pytest.raises(SystemExit) as exit_info:
        run(importlib.import_module(module).main, [*argv, "--live", "--trace", str(trace)])
    assert exit_info.value.code == (2 if status == 401 else 1)
    assert trace.read_bytes() == before and len(read_trace(trace, strict=True)) > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]  # the run's own recording is removed
    assert "replacing" not in capsys.readouterr().err


def test_a_successful_live_run_replaces_the_previous_trace(failing_api, capsys, tmp_path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"t":0.0,"api":"anthropic.messages","session":"old","body":{"max_tokens":1,"messages":'
                     '[{"role":"user","content":"hi"}],"model":"claude-sonnet-4-6"}}\n')
    trace.chmod(0o640)
    usage = {"input_tokens": 20, "output_tokens": 5, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    failing_api.answer = lambda path: (200, json.dumps({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6", "stop_reason": "end_turn",
        "stop_sequence": None, "content": [{"type": "text", "text": "ok"}], "usage": usage}).encode())
    assert importlib.import_module("support_bot").main(["--live", "--trace", str(trace)]) == 0
    assert capsys.readouterr().err == f"replacing existing trace {trace}\n"
    records = read_trace(trace, strict=True)
    assert len(records) == 5 and {r.session for r in records} == {"sup-001", "sup-002"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"] and trace.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("kind", ["folder", "not a trace"])
def test_a_trace_path_that_is_a_folder_or_another_file_is_refused(kind, capsys, tmp_path) -> None:
    from live_api import run

    given = tmp_path / ("traces" if kind == "folder" else "notes.py")
    if kind == "folder":
        given.mkdir()
        expected = (f"error: trace {str(given)!r} is a folder; pass a file path inside it, e.g. "
                    f"{str(given / 'trace.jsonl')!r}\n")
    else:
        given.write_text("import os\n")
        expected = (f"error: trace {str(given)!r} exists and is not a trace (line 1: not JSON (Expecting value at "
                    "char 0)); pass a new file name, or a trace file to replace\n")
    with pytest.raises(SystemExit) as exit_info:
        run(importlib.import_module("doc_qa").main, ["--trace", str(given)])
    assert exit_info.value.code == 2 and capsys.readouterr() == ("", expected)
    assert given.is_dir() if kind == "folder" else given.read_text() == "import os\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [given.name]
