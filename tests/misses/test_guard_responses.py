"""The runtime guard on OpenAI Responses bodies: the API inferred from the body, divergences at Responses paths."""

from __future__ import annotations

from responses_support import LONG_INSTRUCTIONS, sent

from promptcache.misses.guard import PrefixGuard
from promptcache.simulate.render import render_prompt


def test_the_guard_infers_responses_bodies_and_names_their_paths() -> None:
    guard = PrefixGuard()
    instructions = f"Now: 2026-03-18T14:00:00Z\n\n{LONG_INSTRUCTIONS}"
    first = sent(model="gpt-4.1-mini", instructions=instructions, input="Where is order 1042?")
    assert guard.check(first) is None
    follow = sent(model="gpt-4.1-mini", instructions=instructions, input=[
        {"role": "user", "content": "Where is order 1042?"}, {"role": "assistant", "content": "It shipped."},
        {"role": "user", "content": "Thanks"}])
    assert guard.check(follow) is None  # appends: a new turn
    stamped = sent(model="gpt-4.1-mini", instructions=f"Now: 2026-03-18T14:02:11Z\n\n{LONG_INSTRUCTIONS}",
                   input="Where is order 1042?")
    divergence = guard.check(stamped)
    assert (divergence.cause, divergence.layer, divergence.path) == ("volatile_value", "system", "instructions")


def test_render_prompt_reads_a_responses_body_as_its_chat_view() -> None:
    body = sent(model="local-model", instructions="Rules.", input="Hi")
    chat = {"model": "local-model", "messages": [{"role": "system", "content": "Rules."},
                                                  {"role": "user", "content": "Hi"}]}
    assert render_prompt(body, "openai.responses").tokens == render_prompt(chat, "openai.chat").tokens


def test_a_chained_request_is_classified_against_the_request_it_continues() -> None:
    """verify / diff / simulate: instructions sent on the first turn only are a system change of the chain, not
    "a different prompt"; a chain that resends them is a new turn; the reference is the chain's own parent."""
    from promptcache.misses.guard import classify_requests
    from promptcache.trace.chain import ChainResolver
    from promptcache.trace.records import TraceRecord

    def record(n: int, body: dict, session: str = "s") -> TraceRecord:
        reply = [{"type": "message", "id": f"m{n}", "status": "completed", "role": "assistant",
                  "content": [{"type": "output_text", "text": f"Answer {n}.", "annotations": []}]}]
        return TraceRecord(float(n), "openai.responses", session, sent(model="gpt-4.1-mini", **body),
                           response={"id": f"resp_{n}", "output": reply})

    other_run = record(0, {"instructions": LONG_INSTRUCTIONS, "input": "Where is order 7?"}, "other")
    first = record(1, {"instructions": LONG_INSTRUCTIONS, "input": "Where is order 1042?"})
    good = record(2, {"instructions": LONG_INSTRUCTIONS, "input": "And 1043?", "previous_response_id": "resp_1"})
    bad = record(3, {"input": "And 1044?", "previous_response_id": "resp_2"})
    resolver = ChainResolver()
    records = [resolver.resolve(r) for r in (other_run, first, good, bad)]
    assert records[3].continues == "resp_2" and "previous_response_id" not in records[3].body
    divergences = classify_requests(records)
    assert (divergences[2].cause, divergences[2].expected, divergences[2].earlier_index) == ("new_turn", True, 1)
    assert (divergences[3].cause, divergences[3].expected, divergences[3].earlier_index) == \
        ("system_changed", False, 2)
    assert "previous_response_id does not carry instructions over" in divergences[3].detail
