"""``previous_response_id`` chains over a trace (``promptcache.trace.chain``) and how the readers report an
unknown chained prefix. Records come from real ``openai`` client calls (``responses_support.record``)."""

from __future__ import annotations

import pytest
from responses_support import record, reply

from promptcache.trace.chain import ChainResolver, UnknownPrefixError
from promptcache.trace.records import SkippedLines, TraceFormatError
from promptcache.trace.requests import usable_records

FIRST_OUTPUT = {"id": "msg_resp_a", "type": "message", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "It shipped.", "annotations": []}]}


def chained_trace(store: bool | None = None) -> list:
    extra = {} if store is None else {"store": store}
    return [record(0.0, "s1", reply("resp_a", "It shipped."), model="gpt-4.1-mini", instructions="Old rules.",
                   input="Where is order 1042?", **extra),
            record(3.0, "s1", reply("resp_b", "Friday."), model="gpt-4.1-mini", instructions="New rules.",
                   previous_response_id="resp_a", input=[{"role": "user", "content": "When will it arrive?"}]),
            record(6.0, "s1", reply("resp_c", "Yes."), model="gpt-4.1-mini", previous_response_id="resp_b",
                   input="Can I return it?")]


def test_a_chain_is_read_with_the_whole_input_the_api_assembles() -> None:
    first, second, third = usable_records(chained_trace())
    assert first.body["input"] == "Where is order 1042?"
    assert second.body == {"model": "gpt-4.1-mini", "input": [
        {"role": "user", "content": "Where is order 1042?"}, FIRST_OUTPUT,
        {"role": "user", "content": "When will it arrive?"}], "instructions": "New rules."}  # not carried over
    assert [item.get("content") for item in third.body["input"]][::2] == [
        "Where is order 1042?", "When will it arrive?", "Can I return it?"]
    assert "instructions" not in third.body and "previous_response_id" not in third.body
    assert third.line is None and third.t == 6.0 and third.session == "s1"


def test_an_unknown_earlier_response_is_reported_and_the_request_skipped() -> None:
    records = chained_trace()[1:]
    problems: list[TraceFormatError] = []
    usable = list(usable_records(records, on_problem=SkippedLines(problems.append), source="t.jsonl"))
    assert usable == []  # resp_b chains onto the skipped resp_a request: unknown too
    assert str(problems[0]) == ("t.jsonl: previous_response_id 'resp_a' names a response that is not in the trace (no "
                                "earlier record carries it in 'response'): the chained prefix (that response's input "
                                "and output) is unknown, so the request is not read as sent")
    assert len(problems) == 2
    with pytest.raises(TraceFormatError, match="previous_response_id 'resp_a'"):
        list(usable_records(records, strict=True))


def test_store_false_leaves_nothing_to_chain_onto() -> None:
    with pytest.raises(UnknownPrefixError, match="was sent with store: false, so the API keeps no copy"):
        resolver = ChainResolver()
        for one in chained_trace(store=False):
            resolver.resolve(one)


def test_the_resolver_keeps_at_most_max_responses() -> None:
    resolver = ChainResolver(max_responses=1)
    resolver.remember("resp_1", {"input": "a"}, [])
    resolver.remember("resp_2", {"input": "b"}, [])
    assert list(resolver.known) == ["resp_2"]
    with pytest.raises(UnknownPrefixError):
        resolver.expanded({"model": "m", "previous_response_id": "resp_1", "input": "c"})
