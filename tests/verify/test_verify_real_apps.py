"""verify on normal apps: the SDK's chunked truncation and a router beside an answerer are not "bad"."""

from __future__ import annotations

from verify_support import tiny_engine

from promptcache.trace.records import TraceRecord
from promptcache.verify.report import verify_trace
from promptcache.verify.backends import LocalBackend

A = "anthropic.messages"
SYSTEM = [{"type": "text", "text": "You are a helpful assistant for ACME. " * 40, "cache_control": {"type": "ephemeral"}}]


def body(model: str, messages: list[str], system: list | None = None) -> dict:
    roles = ("user", "assistant")
    return {"model": model, "max_tokens": 4, "system": system or SYSTEM,
            "messages": [{"role": roles[i % 2], "content": text} for i, text in enumerate(messages)]}


def test_a_chunked_truncation_and_a_router_are_good(tiny_model) -> None:
    turns = [f"message {i}: tell me more about the plan" for i in range(9)]
    router = [{"type": "text", "text": "Classify the message as refund, trip or other. " * 20}]
    records = [TraceRecord(0.0, A, "long", body("claude-haiku-4-5", turns[-1:], router)),
               TraceRecord(1.0, A, "long", body("claude-sonnet-4-6", turns)),
               TraceRecord(2.0, A, "long", body("claude-sonnet-4-6", [*turns[6:], "reply", "next"]))]
    report = verify_trace(records, LocalBackend(tiny_engine(tiny_model)))
    causes = [(r.divergence.cause, r.divergence.expected) for r in report.requests]
    assert causes == [("first_request", True), ("first_request", True), ("history_rewritten", True)]
    assert report.requests[2].divergence.detail == "truncated from the oldest end (6 of 9 messages dropped at once)"
    assert report.verdict() == (True, "good: every miss is a first request, a new turn, another cache key or a "
                                      "chunked truncation")


def test_the_verdict_counts_only_unexpected_misses_of_its_cause(tiny_model) -> None:
    turns = [f"message {i}: tell me more about the plan" for i in range(9)]
    slid = [*turns[2:], "reply", "next"]  # 2 of 9 dropped: a slide
    records = [TraceRecord(0.0, A, "long", body("claude-sonnet-4-6", turns)),
               TraceRecord(1.0, A, "long", body("claude-sonnet-4-6", slid)),
               TraceRecord(2.0, A, "long", body("claude-sonnet-4-6", [*slid, "r1", "n1"])),
               TraceRecord(3.0, A, "long", body("claude-sonnet-4-6", [*slid[6:], "r1", "n1", "r2", "n2"]))]
    # request 3: 6 of 11 dropped: chunked, after a request that only appended (a truncation right
    # after a truncation is a sliding window, not a chunk)
    report = verify_trace(records, LocalBackend(tiny_engine(tiny_model)))
    assert [(r.divergence.cause, r.divergence.expected) for r in report.requests] == [
        ("first_request", True), ("history_rewritten", False), ("new_turn", True), ("history_rewritten", True)]
    assert report.verdict() == (False, "bad: history_rewritten on 1 of 4 requests")
