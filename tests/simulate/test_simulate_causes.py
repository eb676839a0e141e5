"""Runtime miss causes and the ``expected`` flag: what a CI consumer of ``simulate --format json`` relies on."""

from __future__ import annotations

import json

from click.testing import CliRunner
from simbodies import EPHEMERAL, anthropic_body, assistant, system_block, user, words

from promptcache.cli import main
from promptcache.misses.causes import HINTS, RUNTIME_CAUSES, MissCause
from promptcache.simulate import AnthropicSimulator, simulate_records
from promptcache.trace.records import TraceRecord, write_trace

HINT = "add cache_control (top-level automatic caching or a marker on the stable prefix)"


def conversation(marker: dict | None) -> list[TraceRecord]:
    """Two turns of one conversation over a 1,500-token system prompt; ``marker`` on the system block."""
    system = [system_block(words(1500), marker)]
    first = anthropic_body(system, [user("Where is my parcel?")])
    second = anthropic_body(system, [user("Where is my parcel?"), assistant("In transit."), user("When?")])
    return [TraceRecord(0.0, "anthropic.messages", "s", first), TraceRecord(20.0, "anthropic.messages", "s", second)]


def test_a_request_without_any_cache_control_is_a_no_breakpoint_miss() -> None:
    """/tmp/rev/nomark.jsonl: nothing is written or read, so the append is no ordinary new turn."""
    assert MissCause.NO_BREAKPOINT in RUNTIME_CAUSES and HINTS[MissCause.NO_BREAKPOINT] == HINT
    result = AnthropicSimulator().simulate(conversation(None)[0].body, 0.0)
    assert result.runtime_cause == "no_breakpoint" and result.usage.cache_write == 0
    first, second = simulate_records(conversation(None)).requests
    assert (first.miss_cause, first.expected) == ("first_request", True)
    assert (second.miss_cause, second.expected, second.divergence.hint) == ("no_breakpoint", False, HINT)
    assert "no cache_control anywhere" in second.divergence.detail
    hit = simulate_records(conversation(EPHEMERAL)).requests[1]  # the same conversation with a marker: a hit
    assert (hit.miss_cause, hit.expected) == (None, True) and hit.usage.cache_read > 1500


def test_diff_names_no_breakpoint_in_both_modes(tmp_path) -> None:
    records = conversation(None)
    write_trace(tmp_path / "t.jsonl", records)
    for i, record in enumerate(records):
        (tmp_path / f"{i}.json").write_text(json.dumps(record.body))
    for args in (["diff", tmp_path / "t.jsonl", "--at", "1"], ["diff", tmp_path / "0.json", tmp_path / "1.json"]):
        result = CliRunner().invoke(main, list(map(str, args)))
        assert result.exit_code == 0, result.output
        assert "cause    no_breakpoint (unexpected)" in result.stdout and f"hint     {HINT}" in result.stdout


def test_expected_tells_an_unexpected_new_turn_from_an_ordinary_one(simulated) -> None:
    """The question-first RAG trace: miss_cause stays new_turn, but it is flagged unexpected."""
    rows = simulated("bad_rag_question_first").to_dict()["requests"]
    assert [(r["miss_cause"], r["expected"]) for r in rows[:3]] == [
        ("first_request", True), ("new_turn", False), ("new_turn", False)]
    good = simulated("good_rag_doc_qa").to_dict()["requests"]
    assert all(r["expected"] for r in good) and {r["miss_cause"] for r in good} <= {"first_request", None}


def test_the_table_marks_unexpected_new_turns(traces_dir) -> None:
    result = CliRunner().invoke(main, ["simulate", str(traces_dir / "bad_rag_question_first.jsonl")],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert result.stdout.count("new_turn, unexpected") == 9 and "9 unexpected misses" in result.stdout


def test_an_openai_classic_prompt_below_the_minimum_is_below_minimum_not_new_turn() -> None:
    """Review 14 item 13: OpenAI guide [O-G]: caching applies from the model's minimum; gpt-5.5's is 2,048
    (providers.toml, assumed). A 1,800-token conversation asked twice with a new question is never stored, so the
    second request's miss is below_minimum (expected, nothing to fix), not new_turn at messages[1].content."""
    def body(question: str) -> dict:
        return {"model": "gpt-5.5", "messages": [{"role": "system", "content": words(1700)},
                                                  {"role": "user", "content": question}]}
    simulation = simulate_records([TraceRecord(float(t), "openai.chat", "s", body(q))
                                   for t, q in enumerate(["Where is order 1042?", "And order 1043?"])])
    first, second = simulation.requests
    assert second.prompt_tokens < 2048 and second.usage.cache_read == 0
    assert (first.miss_cause, second.miss_cause, second.expected) == ("first_request", "below_minimum", True)
    assert "below the minimum cacheable prompt of 2,048 tokens for gpt-5.5" in second.divergence.detail
