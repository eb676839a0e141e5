"""``promptcache proxy --upstream <serve>``: the official clients get what they get without it (streams too), the
trace it writes verifies like one recorded by wrap(), keys never reach the trace, and 32 concurrent streams pass."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
from click.testing import CliRunner
from server_support import free_port, unique_system

import promptcache
from promptcache.cli import main
from promptcache.misses.guard import PrefixGuard
from promptcache.providers.usage import UsageStats
from promptcache.recording.exchange import ExchangeRecorder
from promptcache.recording.proxy import ProxyLog, create_proxy_app
from promptcache.trace.records import read_trace

KEY = "sk-ant-proxy-secret-42"


class ProxyProcess:
    """``promptcache proxy --upstream URL --trace TRACE`` on a free port; its stdout (one line a request) kept."""

    def __init__(self, upstream: str, trace: Path, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log
        self._log = open(log, "wb")  # noqa: SIM115 - closed in stop()
        command = [sys.executable, "-m", "promptcache.cli", "proxy", "--upstream", upstream, "--port", str(self.port),
                   "--trace", str(trace), "--session", "app"]
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log()
            try:
                if httpx.get(f"{self.url}/health", timeout=1.0).status_code == 200:  # forwarded to serve
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(f"the proxy did not come up:\n{self.log()}")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=15)
        self._log.close()


def lines_after(trace: Path, before: int, count: int) -> list[str]:
    """The ``count`` trace lines after the first ``before``: the proxy writes a line just after the response
    has gone out (its guard and recording run in the background), so wait a moment for the last ones."""
    deadline = time.monotonic() + 10
    while len(trace.read_text().splitlines()) < before + count and time.monotonic() < deadline:
        time.sleep(0.02)
    return trace.read_text().splitlines()[before:]


@pytest.fixture(scope="module")
def proxied(server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("proxy")
    process = ProxyProcess(server, folder / "trace.jsonl", folder / "proxy.log")
    try:
        yield process, folder / "trace.jsonl"
    finally:
        process.stop()


def clients(url: str):
    return (anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0, timeout=120),
            openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0, timeout=120))


def test_the_clients_get_the_same_answers_through_the_proxy(server, proxied) -> None:
    proxy, trace = proxied
    system = unique_system()
    user = [{"role": "user", "content": "Where is order 1042?"}]
    answers = []
    for url in (server, proxy.url):  # direct first: the proxied request is the same prompt again, cached
        a, o = clients(url)
        message = a.messages.create(model="claude-sonnet-4-6", max_tokens=4, extra_body={"temperature": 0}, system=system,
                                    messages=user)
        with a.messages.stream(model="claude-sonnet-4-6", max_tokens=4, extra_body={"temperature": 0}, system=system,
                               messages=user) as stream:
            streamed = stream.get_final_text()
        chat = [{"role": "system", "content": system}, *user]
        chunks = list(o.chat.completions.create(model="gpt-4.1-mini", max_tokens=4, temperature=0, messages=chat,
                                                stream=True, stream_options={"include_usage": True}))
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        events = list(o.responses.create(model="gpt-4.1-mini", instructions=system, input="Where is order 1042?",
                                         max_output_tokens=4, temperature=0, stream=True))
        answers.append((message.content[0].text, message.usage.input_tokens + message.usage.cache_read_input_tokens,
                        streamed, text, chunks[-1].usage.prompt_tokens, events[-1].response.output_text,
                        events[-1].response.usage.input_tokens))
    assert answers[0] == answers[1]
    with pytest.raises(openai.NotFoundError) as direct:
        clients(server)[1].chat.completions.create(model="gpt-9", messages=user)
    with pytest.raises(openai.NotFoundError) as through:
        clients(proxy.url)[1].chat.completions.create(model="gpt-9", messages=user)
    assert through.value.body == direct.value.body  # an upstream error comes back as it came
    recorded = [json.loads(line) for line in lines_after(trace, 0, 5)]
    assert recorded[3]["api"] == "openai.responses" and recorded[3]["response"]["id"] == events[-1].response.id
    deadline = time.monotonic() + 10
    while "404 openai.chat gpt-9" not in proxy.log() and time.monotonic() < deadline:
        time.sleep(0.02)
    log = proxy.log()
    assert "200 anthropic.messages claude-sonnet-4-6: cached" in log and "200 openai.chat gpt-4.1-mini" in log
    assert "404 openai.chat gpt-9" in log
    text = trace.read_text()
    assert KEY not in text and "x-api-key" not in text and "authorization" not in text.lower()


def test_the_proxy_trace_verifies_like_a_wrap_trace(server, proxied, tmp_path) -> None:
    proxy, trace = proxied
    system = unique_system()
    wrapped = tmp_path / "wrap.jsonl"
    turns = [("Where is order 1042?", "It left on Monday."), ("And order 1043?", "It ships today."),
             ("Thanks. Any delay?", None)]

    def conversation(client) -> None:
        history: list[dict] = []
        for question, reply in turns:
            history.append({"role": "user", "content": question})
            client.messages.create(model="claude-sonnet-4-6", max_tokens=2, system=system, messages=list(history))
            if reply:
                history.append({"role": "assistant", "content": reply})

    conversation(promptcache.wrap(clients(server)[0], trace=wrapped, session="app"))
    before = len(trace.read_text().splitlines()) if trace.exists() else 0
    conversation(clients(proxy.url)[0])
    proxied_lines = lines_after(trace, before, len(turns))
    only = tmp_path / "proxy.jsonl"
    only.write_text("\n".join(proxied_lines) + "\n")
    assert [json.loads(line)["body"] for line in proxied_lines] == [r.body for r in read_trace(wrapped)]
    results = []
    for path in (wrapped, only):
        run = CliRunner().invoke(main, ["verify", str(path), "--format", "json"])
        assert run.exit_code == 0, run.output
        summary = json.loads(run.stdout)["summary"]
        results.append({key: summary[key] for key in ("requests", "prompt_tokens", "cached_tokens", "oracle_tokens",
                                                      "verdict", "good")})
    assert results[0] == results[1] and results[0]["requests"] == 3 and results[0]["cached_tokens"] > 0


def test_32_concurrent_streams_through_the_proxy_all_complete(proxied) -> None:
    proxy, trace = proxied
    system = unique_system()
    before = len(trace.read_text().splitlines()) if trace.exists() else 0

    async def main_() -> list[str]:
        client = openai.AsyncOpenAI(base_url=f"{proxy.url}/v1", api_key=KEY, max_retries=0, timeout=300)

        async def one(n: int) -> str:
            stream = await client.chat.completions.create(
                model="gpt-4.1-mini", max_tokens=3, stream=True, stream_options={"include_usage": True},
                messages=[{"role": "system", "content": system}, {"role": "user", "content": f"Order {n}?"}])
            finish = None
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].finish_reason:
                    finish = chunk.choices[0].finish_reason
            return finish
        return await asyncio.gather(*(one(n) for n in range(32)))

    assert all(finish in ("stop", "length") for finish in asyncio.run(main_()))
    lines = [json.loads(line) for line in lines_after(trace, before, 32)]
    assert len(lines) == 32 and all(line["usage"]["prompt_tokens"] > 0 for line in lines)
    assert sorted(line["body"]["messages"][1]["content"] for line in lines) == sorted(f"Order {n}?" for n in range(32))


def test_an_unreachable_upstream_is_a_502_naming_it() -> None:
    from starlette.testclient import TestClient

    dead = f"http://127.0.0.1:{free_port()}"
    recorder, lines = ExchangeRecorder(trace=None, guard=PrefixGuard(), stats=UsageStats()), []
    with TestClient(create_proxy_app(dead, recorder, log=ProxyLog(lines.append))) as http:
        claude = anthropic.Anthropic(base_url="http://testserver", api_key=KEY, http_client=http, max_retries=0)
        with pytest.raises(anthropic.InternalServerError) as raised:
            claude.messages.create(model="claude-sonnet-4-6", max_tokens=2, messages=[{"role": "user", "content": "hi"}])
        assert raised.value.status_code == 502 and dead in raised.value.message
        gpt = openai.OpenAI(base_url="http://testserver/v1", api_key=KEY, http_client=http, max_retries=0)
        with pytest.raises(openai.InternalServerError, match=f"upstream {dead} cannot be reached"):
            gpt.chat.completions.create(model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}])
    assert lines[0].startswith(f"#1 502 anthropic.messages claude-sonnet-4-6: upstream {dead} cannot be reached")
    assert lines[1].startswith("#2 502 openai.chat gpt-4.1-mini")


def test_bad_options_are_usage_errors() -> None:
    run = CliRunner().invoke(main, ["proxy", "--upstream", "api.openai.com"])
    assert run.exit_code == 2 and "is not an http(s) URL" in run.output
    run = CliRunner().invoke(main, ["proxy", "--upstream", "http://127.0.0.1:99999"])
    assert run.exit_code == 2 and "is not a URL" in run.output
    run = CliRunner().invoke(main, ["proxy", "--upstream", "http://127.0.0.1:8000/v1"])
    assert run.exit_code == 2 and "give the server's root, http://127.0.0.1:8000" in run.output
    run = CliRunner().invoke(main, ["proxy", "--upstream", "http://x", "--redact", "nope"])
    assert run.exit_code == 2 and "is not module:function" in run.output
    run = CliRunner().invoke(main, ["proxy", "--upstream", "http://x", "--trace", "/no/such/folder/t.jsonl"])
    assert run.exit_code == 2 and "--trace" in run.output
