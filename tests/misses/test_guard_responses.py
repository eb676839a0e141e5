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
