"""``simulate`` / ``diff`` on normal apps: a prompt below the model's minimum, a model without a USD price,
a trace that mixes APIs."""

from __future__ import annotations

import json

from click.testing import CliRunner
from simbodies import anthropic_body, openai_body, system_block, user, words

from promptcache.cli import main
from promptcache.simulate import simulate_records
from promptcache.trace.records import TraceRecord, write_trace

A, O = "anthropic.messages", "openai.chat"
SONNET_46 = "claude-sonnet-4-6"  # minimum 1,024 tokens


def short_prompt(question: str) -> dict:
    """A 6xx-token prompt without cache_control: the SDK rightly places none below the minimum."""
    return anthropic_body([system_block(words(600))], [user(question)], model=SONNET_46)


def run(*args: object):
    return CliRunner().invoke(main, list(map(str, args)))


def test_a_prompt_below_the_minimum_is_below_minimum_not_no_breakpoint(tmp_path) -> None:
    records = [TraceRecord(0.0, A, "s0", short_prompt("msg 0")), TraceRecord(5.0, A, "s1", short_prompt("msg 1"))]
    second = simulate_records(records).requests[1]
    assert (second.miss_cause, second.expected, second.divergence.hint) == ("below_minimum", True, "")
    assert second.divergence.detail == (f"the prompt ({second.prompt_tokens:,} tokens) is below the minimum cacheable "
                                        f"prompt of 1,024 tokens for {SONNET_46}: nothing to cache, nothing to fix")
    write_trace(tmp_path / "t.jsonl", records)
    for i, record in enumerate(records):
        (tmp_path / f"{i}.json").write_text(json.dumps(record.body))
    for args in (["diff", tmp_path / "t.jsonl", "--at", "1"], ["diff", tmp_path / "0.json", tmp_path / "1.json"]):
        result = run(*args)
        assert result.exit_code == 0, result.output
        assert "cause    below_minimum (expected)" in result.stdout and "hint " not in result.stdout
    table = run("simulate", tmp_path / "t.jsonl")
    assert "unexpected" not in table.stdout


def test_breakpoints_below_the_minimum_of_a_long_prompt_stay_unexpected() -> None:
    marked = [system_block(words(300), {"type": "ephemeral"}), system_block(words(1500))]
    records = [TraceRecord(float(t), A, "s", anthropic_body(marked, [user(q)], model=SONNET_46))
               for t, q in ((0, "a"), (5, "b"))]
    second = simulate_records(records).requests[1]
    assert (second.miss_cause, second.expected) == ("below_minimum", False)
    assert second.divergence.hint.startswith("put the cache breakpoint after at least")


def test_usd_for_a_model_without_a_price_is_one_line(tmp_path) -> None:
    unpriced = "claude-mythos-preview"  # no USD price in providers.toml
    write_trace(tmp_path / "t.jsonl", [TraceRecord(0.0, A, "s", dict(short_prompt("hi"), model=unpriced))])
    result = run("simulate", tmp_path / "t.jsonl", "--unit", "USD")
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (f"error: no USD price for model '{unpriced}' in providers.toml; use --unit "
                                     f"relative or pass --model with a price")
    assert "Traceback" not in result.output


def test_a_trace_mixing_apis_says_so(tmp_path) -> None:
    records = [TraceRecord(0.0, A, "a-1", short_prompt("hi")),
               TraceRecord(1.0, O, "o-1", openai_body([{"role": "user", "content": "hi"}], model="gpt-4.1-mini")),
               TraceRecord(2.0, O, "o-1", openai_body([{"role": "user", "content": "hello"}], model="gpt-4.1-mini"))]
    write_trace(tmp_path / "t.jsonl", records)
    for extra in ((), ("--provider", "anthropic")):
        result = run("simulate", tmp_path / "t.jsonl", *extra)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("error: the trace mixes APIs (1 anthropic.messages, 2 openai.chat requests); "
                                        "its openai.chat model 'gpt-4.1-mini' is not an Anthropic model: simulate "
                                        "each API's requests with its own provider")
    converted = run("simulate", tmp_path / "t.jsonl", "--provider", "anthropic", "--model", SONNET_46)
    assert converted.exit_code == 0, converted.output
