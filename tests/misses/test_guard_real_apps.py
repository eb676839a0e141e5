"""The classifier on normal multi-prompt apps: a router beside an answerer, two prompts on one model,
the SDK's chunked truncation, and the identical run after a divergence (``static_after_divergence``)."""

from __future__ import annotations

import pytest

from promptcache.misses.causes import identical_after
from promptcache.misses.guard import PrefixGuard, classify_requests
from promptcache.trace.records import TraceRecord

A = "anthropic.messages"
HAIKU, SONNET = "claude-haiku-4-5", "claude-sonnet-4-6"
ROUTER = "Classify the customer's message as refund, trip or other. " + "Be terse. " * 300
ANSWER = "You are the travel desk assistant. " + "Be helpful and exact. " * 300
HANDBOOK = "You are the travel desk assistant of Harbor Travel. " + "Quote the fare rules exactly. " * 500


def body(system: str, model: str, *messages: str) -> dict:
    roles = ("user", "assistant")
    return {"model": model, "max_tokens": 4, "system": [{"type": "text", "text": system}],
            "messages": [{"role": roles[i % 2], "content": [{"type": "text", "text": text}]}
                         for i, text in enumerate(messages)]}


def run(*requests: tuple[str, dict]) -> list:
    """Classify ``(session, body)`` pairs as trace records, in order."""
    return classify_requests([TraceRecord(float(i), A, session, b) for i, (session, b) in enumerate(requests)])


# 1. static_after_divergence: the identical run right after the differing span

def test_identical_after_resynchronises_after_the_differing_span() -> None:
    head, tail = list(range(100)), list(range(1000, 1500))
    assert identical_after(head + [7, 8] + tail + [1], head + [9] + tail + [2], 100) == 500  # replaced, then 500
    assert identical_after(head + [7] * 20 + tail, head + tail, 100) == 500  # inserted span
    assert identical_after(head + tail, head + [7] * 20 + tail, 100) == 500  # removed span
    assert identical_after(head + [1, 2, 3], head + [4, 5, 6], 100) == 0  # never re-synchronised
    assert identical_after(head, head + [4], 100) == 0


def test_static_after_counts_the_handbook_after_the_clock(traces) -> None:
    stamp = classify_requests(traces["bad_timestamp_system"])[1]
    # Before: 3 (the ChatML tail both prompts end with, "<|im_end|>\n" after different user messages).
    assert (stamp.cause, stamp.token_offset, stamp.static_after_divergence) == ("volatile_value", 627, 3815)


# 2. a second model or a second prompt is not a cache bug

def test_router_and_answerer_in_other_sessions_are_first_requests() -> None:
    router, answer = run(("c-1", body(ROUTER, HAIKU, "Refund please")), ("c-2", body(ANSWER, SONNET, "Refund please")))
    assert router.cause == "first_request"
    assert (answer.cause, answer.expected, answer.layer, answer.path) == ("first_request", True, "params", "model")
    assert answer.detail == f"first request for model {SONNET}" and answer.hint == ""


def test_router_beside_the_answerer_in_one_session_is_a_first_request() -> None:
    _, answer = run(("c-1", body(ROUTER, HAIKU, "Refund please")), ("c-1", body(ANSWER, SONNET, "Refund please")))
    assert (answer.cause, answer.expected, answer.layer, answer.path) == ("first_request", True, "params", "model")
    assert answer.detail == f"first request for model {SONNET}; request 0 ({HAIKU}) is a different prompt"


def test_one_prompt_on_two_models() -> None:
    other = run(("s1", body(ROUTER, HAIKU, "hi there")), ("s2", body(ROUTER, SONNET, "hi there")))[1]
    assert (other.cause, other.expected, other.detail) == ("first_request", True, f"first request for model {SONNET}")
    switch = run(("s1", body(ROUTER, HAIKU, "hi there")), ("s1", body(ROUTER, SONNET, "hi there")))[1]
    assert (switch.cause, switch.expected, switch.layer, switch.path) == ("params_changed", False, "params", "model")
    # the offset and the shared count agree: nothing of another model's cache entry is shared
    assert (switch.token_offset, switch.common_prefix_tokens) == (0, 0)
    assert switch.problem().startswith(f"params_changed (token 0 of {switch.prompt_tokens:,}; 0 shared with earlier "
                                       "request index 0)")
    assert switch.detail.endswith(f"(the prompt is the same up to token {switch.prompt_tokens:,})")


def test_two_prompts_on_one_model() -> None:
    other = run(("s1", body(ROUTER, SONNET, "hi there")), ("s2", body(ANSWER, SONNET, "hi there")))[1]
    assert (other.cause, other.expected, other.layer) == ("first_request", True, "system")
    assert other.detail == "a different prompt: shares 3 tokens with request 0"
    assert (other.token_offset, other.common_prefix_tokens) == (3, 3)
    # Was system_changed (unexpected) in one session. Changed: the wrappers' default session="default" puts
    # every template an app sends through one client in one session, so the rule is the other-model one:
    # too little identical content after the divergence is another prompt in any session.
    same = run(("s1", body(ROUTER, SONNET, "hi there")), ("s1", body(ANSWER, SONNET, "hi there")))[1]
    assert (same.cause, same.expected, same.detail) == ("first_request", True,
                                                        "a different prompt: shares 3 tokens with request 0")


@pytest.mark.parametrize(("before", "after", "cause"), [
    (HANDBOOK, HANDBOOK.replace("exactly. Quote", "exactly.  Quote", 1), "whitespace_only"),
    ("Local time: 2025-03-01T08:00:00Z. " + ROUTER, "Local time: 2025-03-01T09:14:00Z. " + ROUTER, "volatile_value"),
    ("Customer: Alice. " + HANDBOOK, "Customer: Bob. " + HANDBOOK, "system_changed"),  # a long identical part follows
])
def test_one_session_does_not_excuse_a_real_break(before: str, after: str, cause: str) -> None:
    second = run(("s1", body(before, SONNET, "hi")), ("s1", body(after, SONNET, "hi")))[1]
    assert (second.cause, second.expected) == (cause, False)


def test_a_reordered_tool_set_in_one_session_stays_unexpected() -> None:
    tools = [{"name": n, "description": f"the {n} tool", "input_schema": {"type": "object"}} for n in "abc"]
    first, second = (dict(body(ROUTER, SONNET, "hi"), tools=t) for t in (tools, tools[::-1]))
    reordered = run(("s1", first), ("s1", second))[1]
    assert (reordered.cause, reordered.expected) == ("tools_changed", False)
    assert reordered.detail.startswith("reordered")


def test_a_per_user_name_at_the_top_of_a_shared_prompt_stays_system_changed() -> None:
    named = run(("s1", body("Customer: Alice.\n" + HANDBOOK, SONNET, "hi")),
                ("s2", body("Customer: Bob.\n" + HANDBOOK, SONNET, "hello")))[1]
    assert (named.cause, named.expected) == ("system_changed", False)
    assert named.static_after_divergence > 3000


def test_runtime_guard_takes_the_session() -> None:
    guard = PrefixGuard(A)
    assert guard.check(body(ROUTER, SONNET, "hi"), session="s1") is None
    assert guard.check(body(ANSWER, SONNET, "hi"), session="s2") is None
    assert guard.last.detail == "a different prompt: shares 3 tokens with request 0"
    unknown = PrefixGuard(A)  # without sessions (read as one session) another prompt is still another prompt
    unknown.check(body(ROUTER, SONNET, "hi"))
    assert unknown.check(body(ANSWER, SONNET, "hi")) is None and unknown.last.cause == "first_request"
    assert unknown.check(body(ANSWER.replace("exact.", "exact!", 1), SONNET, "hi")).cause == "system_changed"


# 3. the SDK's chunked truncation

def history(n: int) -> list[str]:
    return [f"message {i}: " + "about the plan " * 10 for i in range(n)]


@pytest.mark.parametrize(("dropped", "expected"), [(22, True), (12, True), (11, False), (2, False)])  # half of 23: 11.5
def test_chunked_truncation_from_the_oldest_end(dropped: int, expected: bool) -> None:
    turns = history(23)  # 23 messages, the last a user turn
    later = [*turns[dropped:], "reply", "next question"]
    first, truncated = run(("long", body(HANDBOOK, SONNET, *turns)), ("long", body(HANDBOOK, SONNET, *later)))
    assert (truncated.cause, truncated.expected) == ("history_rewritten", expected)
    if expected:
        assert truncated.detail == f"truncated from the oldest end ({dropped} of 23 messages dropped at once)"
        assert truncated.hint == ""
    else:
        assert truncated.hint.startswith("only append to the history")


def test_a_summary_replacing_the_history_is_no_truncation() -> None:
    turns = history(9)
    summary = ["Summary of the conversation so far.", "ok", "next question"]
    _, summarised = run(("long", body(HANDBOOK, SONNET, *turns)), ("long", body(HANDBOOK, SONNET, *summary)))
    assert (summarised.cause, summarised.expected) == ("history_rewritten", False)


# 4. review follow-ups: the identical content after the divergence is summed over the re-synchronised runs

def test_identical_after_sums_the_runs_after_two_changed_values() -> None:
    head, mid, tail = list(range(100)), list(range(500, 510)), list(range(1000, 1500))
    # two replaced values: the 10-token run between them and the 500-token tail count (was 10)
    assert identical_after(head + [7] + mid + [8] + tail, head + [9] + mid + [6, 6] + tail, 100) == 510
    # runs are taken in order: a tail that only occurs earlier in the old prompt is not counted again
    assert identical_after(head + tail + [1] + tail, head + [2] + tail + [3], 100) == 500


def test_two_changed_values_at_the_top_of_a_shared_handbook_stay_system_changed() -> None:
    def prompt(name: str, stamp: str) -> str:
        return f"Customer: {name}. Local time: {stamp}.\n\n" + HANDBOOK

    first, second = run(("u-1", body(prompt("Alice", "2025-03-01 09:14"), SONNET, "hi")),
                        ("u-2", body(prompt("Bob", "2025-03-01 11:52"), SONNET, "hello")))
    assert first.cause == "first_request"
    assert (second.cause, second.expected, second.layer) == ("system_changed", False, "system")
    assert second.static_after_divergence > 3000 and second.hint.startswith("keep the system prompt")


# 5. chunked truncation: against the answerer's own latest request, and only a real chunk

def test_the_answerers_chunked_truncation_beside_a_router_in_one_session() -> None:
    turns = history(23)
    later = [*turns[12:], "reply", "next question"]
    *_, truncated = run(("s", body(HANDBOOK, SONNET, *turns)), ("s", body(ROUTER, HAIKU, turns[-1])),
                        ("s", body(HANDBOOK, SONNET, *later)))
    # the session's latest request is the router's; the answerer's own (request 0) is compared with
    assert (truncated.cause, truncated.expected, truncated.earlier_index) == ("history_rewritten", True, 0)
    assert truncated.detail == "truncated from the oldest end (12 of 23 messages dropped at once)"


def test_a_three_message_window_is_a_sliding_window() -> None:
    log = history(13)
    requests = [("s", body(HANDBOOK, SONNET, *log[end - 3:end])) for end in range(3, 14, 2)]  # keep the last 3
    causes = [(d.cause, d.expected) for d in run(*requests)]
    assert causes == [("first_request", True)] + [("history_rewritten", False)] * 5


def test_a_truncation_right_after_a_truncation_is_no_chunk() -> None:
    turns = history(21)
    once = [*turns[12:], "r1", "q1"]  # 12 of 21 dropped: a chunk
    twice = [*once[6:], "r2", "q2"]  # 6 of 11 dropped by the very next request: a window sliding every turn
    _, first, second = run(*(("s", body(HANDBOOK, SONNET, *m)) for m in (turns, once, twice)))
    assert (first.cause, first.expected) == ("history_rewritten", True)
    assert (second.cause, second.expected) == ("history_rewritten", False)
