"""``promptcache simulate --check-usage`` on traces recorded through promptcache.wrap() against ``promptcache serve``
(issue 14, Build 5): every request's recorded usage is read and compared with the simulation."""

from __future__ import annotations

import json
import os
import time

import anthropic
import openai
from click.testing import CliRunner
from server_support import unique_system

import promptcache
from promptcache.cli import main

VISIBLE_AFTER_S = 1.2
"""Requests are spaced this far apart: the simulator makes a written entry readable 1 s after the request that
wrote it (``entry_visible_after_seconds``, assumed in providers.toml) while serve's is readable at once, so
requests recorded closer together would disagree by design, not by a rule change."""


def _check(trace) -> tuple[dict, str]:
    runner = CliRunner()
    table = runner.invoke(main, ["simulate", str(trace), "--check-usage"], env={"COLUMNS": "80"})
    assert table.exit_code == 0, table.output
    document = runner.invoke(main, ["simulate", str(trace), "--check-usage", "--format", "json"])
    assert document.exit_code == 0, document.output
    if os.environ.get("PROMPTCACHE_SHOW_CHECK"):
        print(table.stdout)
    return json.loads(document.stdout)["usage_check"], " ".join(table.stdout.split())  # lines wrap at 80 columns


def test_check_usage_on_an_anthropic_trace_recorded_against_serve(server, tmp_path) -> None:
    trace = tmp_path / "anthropic.jsonl"
    client = promptcache.wrap(anthropic.Anthropic(base_url=server, api_key="test-key", max_retries=0, timeout=120),
                              trace=trace, session="app")
    system = [{"type": "text", "text": unique_system(900), "cache_control": {"type": "ephemeral"}}]
    for question in ("Where is order 1042?", "And order 1043?", "And order 1044?"):
        time.sleep(VISIBLE_AFTER_S)
        client.messages.create(model="claude-sonnet-4-6", max_tokens=2, system=system,
                               messages=[{"role": "user", "content": question}])
    check, text = _check(trace)
    assert check["summary"]["checked"] == 3 and not check["unchecked"]
    assert [r["recorded_read"] > 0 for r in check["requests"]] == [False, True, True]
    assert "simulated vs recorded usage" in text and "predicted 3 of 3 requests within 1 block (128 tokens)" in text
    assert {r["verdict"] for r in check["requests"]} <= {"exact", "within"}


def test_check_usage_on_an_openai_trace_recorded_against_serve(server, tmp_path) -> None:
    trace = tmp_path / "openai.jsonl"
    client = promptcache.wrap(openai.OpenAI(base_url=f"{server}/v1", api_key="test-key", max_retries=0, timeout=120),
                              trace=trace, session="app")
    system = unique_system(900)
    for question in ("Where is order 1042?", "And order 1043?"):
        time.sleep(VISIBLE_AFTER_S)
        client.chat.completions.create(model="gpt-4.1-mini", max_tokens=2, messages=[
            {"role": "system", "content": system}, {"role": "user", "content": question}])
    check, text = _check(trace)
    assert check["summary"]["checked"] == 2 and not check["unchecked"]
    assert check["requests"][1]["recorded_read"] > 0
    assert {r["verdict"] for r in check["requests"]} <= {"exact", "within"}
    assert "predicted 2 of 2 requests within 1 block (128 tokens)" in text
