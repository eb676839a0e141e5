"""The SDK examples run offline end to end: real SDK clients, mock transport, valid traces, and the offline
provider's usage is the simulators' (its printed hit rate is what `promptcache simulate` says on the trace)."""

from __future__ import annotations

import importlib
import json
import os
import re
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from promptcache.simulate import simulate_trace
from promptcache.trace.records import read_trace
from promptcache.providers.usage import normalize_usage

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


pytestmark = pytest.mark.usefixtures("examples_on_path")


@pytest.mark.parametrize(("module", "argv", "expected"), [
    ("support_bot", [], ["sup-002 turn 1: read 3,818", "documents: cache_control ttl=1h", "validator: ok"]),
    ("doc_qa", [], ["dev-103:  4,330 prompt tokens,  4,224 cached", "validator: ok"]),
    ("tool_agent", ["--provider", "anthropic"], ["step 4: answers", "tools in the order sent: get_service_status, "
                                                 "list_deployments, query_metrics, search_runbooks", "validator: ok"]),
])
def test_example_runs_offline_and_simulate_agrees(module: str, argv: list[str], expected: list[str], capsys,
                                                  tmp_path) -> None:
    trace = tmp_path / f"{module}.jsonl"
    assert importlib.import_module(module).main([*argv, "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    for text in expected:
        assert text in out
    printed = float(re.search(r"^hit rate ([\d.]+)%; check it with: promptcache simulate ", out, re.M).group(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        simulation = simulate_trace(trace)
    assert f"{simulation.summary()['hit_rate']:.1%}" == f"{printed}%"
    records = read_trace(trace, strict=True)
    assert [r.t for r in records] == sorted({r.t for r in records}) and records[1].t - records[0].t > 1.0
    reported = [normalize_usage(r.usage) for r in records]  # what the offline provider answered, per request
    assert [(u.cache_read, u.cache_write, u.uncached) for u in reported] == [
        (r.usage.cache_read, r.usage.cache_write, r.usage.uncached) for r in simulation.requests]


# --- --live: a missing, refused or unreachable key is one line on stderr and exit status 2 -----------------------

KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY")
NO_KEY = "error: --live sends to the real {name} API and needs a key: set {variable} (export {variable}=...), " \
         "or drop --live to run offline\n"


def refusal(path: str) -> tuple[int, bytes]:
    """Each provider's 401 for a wrong key."""
    body = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}} \
        if path.startswith("/v1/messages") else \
        {"error": {"message": "Incorrect API key provided: sk-wrong.", "type": "invalid_request_error",
                   "code": "invalid_api_key"}}
    return 401, json.dumps(body).encode()


@pytest.fixture
def refusing_api(local_api):
    """A local stand-in for api.anthropic.com / api.openai.com that refuses every key with the provider's 401."""
    local_api.answer = refusal
    return local_api


def test_live_without_a_key_exits_2_naming_the_variable_before_any_request(refusing_api, tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
    env |= {"ANTHROPIC_BASE_URL": refusing_api.url, "OPENAI_BASE_URL": refusing_api.url + "/v1"}
    trace = tmp_path / "support.jsonl"
    run = subprocess.run([sys.executable, str(EXAMPLES / "support_bot.py"), "--live", "--trace", str(trace)],
                         env=env, capture_output=True, text=True, timeout=60)  # the script as a user starts it
    assert (run.returncode, run.stdout, run.stderr) == (
        2, "", NO_KEY.format(name="Anthropic", variable="ANTHROPIC_API_KEY"))
    assert not trace.exists()
    assert refusing_api.requests == []


@pytest.mark.parametrize(("module", "argv", "provider", "variable"), [
    ("doc_qa", [], "OpenAI", "OPENAI_API_KEY"),
    ("tool_agent", [], "OpenAI", "OPENAI_API_KEY"),
    ("tool_agent", ["--provider", "anthropic"], "Anthropic", "ANTHROPIC_API_KEY"),
])
def test_each_live_example_checks_its_key_first(module, argv, provider, variable, monkeypatch, capsys,
                                                tmp_path) -> None:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(module).main([*argv, "--live", "--trace", str(tmp_path / "t.jsonl")])
    assert exit_info.value.code == 2
    assert capsys.readouterr() == ("", NO_KEY.format(name=provider, variable=variable))
    assert not (tmp_path / "t.jsonl").exists()


@pytest.mark.parametrize(("provider", "variables"), [("anthropic", {"ANTHROPIC_API_KEY": ""}),
                                                     ("openai", {"OPENAI_API_KEY": ""})])
def test_an_empty_key_counts_as_none(provider: str, variables: dict, monkeypatch, capsys) -> None:
    from live_api import live_client

    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as exit_info:
        live_client(provider)
    assert exit_info.value.code == 2
    variable = next(iter(variables))
    assert capsys.readouterr().err == NO_KEY.format(name={"anthropic": "Anthropic", "openai": "OpenAI"}[provider],
                                                    variable=variable)


def test_an_anthropic_auth_token_is_a_key_too(monkeypatch) -> None:
    from live_api import live_client

    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token")
    assert live_client("anthropic").auth_token == "token"


@pytest.mark.parametrize(("module", "argv", "variable", "sent", "expected"), [
    ("support_bot", [], "ANTHROPIC_API_KEY", ("/v1/messages", "sk-wrong"),
     "the Anthropic API refused the key in ANTHROPIC_API_KEY (401: invalid x-api-key)"),
    ("support_bot", [], "ANTHROPIC_AUTH_TOKEN", ("/v1/messages", "sk-wrong"),
     "the Anthropic API refused the key in ANTHROPIC_AUTH_TOKEN (401: invalid x-api-key)"),
    ("tool_agent", [], "OPENAI_API_KEY", ("/v1/chat/completions", "sk-wrong"),
     "the OpenAI API refused the key in OPENAI_API_KEY (401: Incorrect API key provided: sk-wrong.)"),
])
def test_live_with_a_refused_key_exits_2_naming_the_variable(module, argv, variable, sent, expected, refusing_api,
                                                             monkeypatch, capsys, tmp_path) -> None:
    from live_api import run

    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, "sk-wrong")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", refusing_api.url)
    monkeypatch.setenv("OPENAI_BASE_URL", refusing_api.url + "/v1")
    with pytest.raises(SystemExit) as exit_info:
        run(importlib.import_module(module).main, [*argv, "--live", "--trace", str(tmp_path / "t.jsonl")])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == f"error: {expected}; check {variable}, or drop --live to run offline\n"
    assert refusing_api.requests == [sent]  # a 401 is not retried


def test_live_with_an_unreachable_api_exits_2_naming_the_url(monkeypatch, capsys, tmp_path) -> None:
    from live_api import run

    with socket.socket() as closed:  # a port nothing listens on once the socket is closed
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    with pytest.raises(SystemExit) as exit_info:
        run(importlib.import_module("doc_qa").main, ["--live", "--trace", str(tmp_path / "t.jsonl")])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == (
        f"error: could not reach the OpenAI API at http://127.0.0.1:{port}/v1/chat/completions (Connection error.); "
        "check the network and OPENAI_BASE_URL, or drop --live to run offline\n")
