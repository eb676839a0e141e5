"""Property: appending turns to a conversation only ever extends the rendered token sequence; <= 4 breakpoints."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptcache import Conversation, PromptBuilder
from promptcache.tokens.chatml import chatml_encoding
from promptcache.prompt.stability import LayerRegistry

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}
TOOLS = [{"name": "search", "description": "Search the handbook.", "input_schema": SCHEMA},
         {"name": "escalate", "description": "Hand over to a person.", "input_schema": SCHEMA}]
LONG_DOC = "\n".join(f"Section {i}. Customers may return unused gear within thirty days; staff explain the steps."
                     for i in range(1, 80))
MODELS = ["claude-sonnet-4-6", "claude-opus-5", "claude-haiku-4-5", "claude-opus-4-7"]
REGISTRY = LayerRegistry()

texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=60)
turns = st.lists(st.tuples(
    texts,                                                                  # the user's text
    st.none() | st.dictionaries(st.sampled_from(["user", "plan", "locale"]), texts, max_size=2),  # context
    st.one_of(texts, st.lists(texts, min_size=1, max_size=2)),             # reply: text, or tool calls
), min_size=2, max_size=6)


def count_markers(body: dict) -> int:
    return json.dumps(body).count('"cache_control"')


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=turns, tools=st.booleans(), document=st.booleans(), example=st.booleans(),
       ttl=st.sampled_from([{}, {"system": "1h"}, {"documents": "1h"}, {"system": "1h", "history": "5m"}]),
       model=st.sampled_from(MODELS), automatic=st.booleans())
def test_requests_only_extend_each_other(turns, tools, document, example, ttl, model, automatic) -> None:
    base = PromptBuilder(registry=REGISTRY).system("You are the support assistant.").cache_ttl(**ttl)
    if tools:
        base = base.tools(TOOLS)
    if document:
        base = base.document(LONG_DOC, name="handbook")
    if example:
        base = base.example("Can I return boots?", "Yes, within thirty days if unused.")
    conversation = Conversation()
    previous: list[int] | None = None
    pending: list[str] = []
    for n, (text, context, reply) in enumerate(turns):
        builder = base.history(conversation)
        for call_id in pending:
            builder = builder.tool_result(call_id, {"found": text})
        prompt = builder.user(text, context=context).build()
        tokens = prompt.to_tokens(chatml_encoding() if n == 0 else None)
        assert prompt.count_tokens() == len(tokens)
        if previous is not None:
            assert tokens[:len(previous)] == previous  # request n is a prefix of request n+1
            assert len(tokens) > len(previous)
        previous = tokens
        params = {"cache_control": {"type": "ephemeral"}} if automatic else {}
        body = prompt.to_anthropic(model, **params)
        assert count_markers(body) <= 4 and len(prompt.breakpoints(model).breakpoints) <= 4
        if isinstance(reply, str):
            answer = {"role": "assistant", "content": reply}
            pending = []
        else:
            pending = [f"call_{n}_{i}" for i in range(len(reply))]
            answer = {"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": "search", "arguments": json.dumps({"q": q})}}
                for cid, q in zip(pending, reply)]}
        conversation.record(prompt, answer)
    assert conversation.truncations == 0 and len(conversation) == 2 * len(turns)
