"""The miss-cause classifier on the shared traces and on targeted edits."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptcache.tokens.chatml import encode_chatml
from promptcache.convert import anthropic_to_openai
from promptcache.misses.rendering import decompose, layer_fingerprints
from promptcache.misses.guard import MissCause, PrefixGuard, classify_requests, compare_bodies
from promptcache.misses.prefix_index import PrefixIndex, common_prefix, common_suffix

A, O = "anthropic.messages", "openai.chat"

# README "A correct tool concludes" per bad trace: (0-based index of the first unexpected divergence,
# cause, layer, block path).
FIRST_MISS = {
    "bad_timestamp_system": (1, "volatile_value", "system", "system[0].text"),
    # Tools are shuffled AND their keys permuted: the first tool differs by name, so the order changed;
    # the set is equal in canonical form, which the detail says ("reordered ... canonical form").
    "bad_agent_tool_shuffle": (1, "tools_changed", "tools", "tools[0]"),
    "bad_summarize_each_turn": (1, "history_rewritten", "history", "messages[0].content[0].text"),
    "bad_sliding_window": (3, "history_rewritten", "history", "messages[1]"),
    "bad_whitespace_drift": (1, "whitespace_only", "system", "system[0].text"),
    # The question comes first: the divergence is in the turn, and ~6k identical tokens follow it.
    "bad_rag_question_first": (1, "new_turn", "turn", "messages[1].content"),
}


@pytest.fixture(scope="module")
def classified(traces):
    return {name: classify_requests(records) for name, records in traces.items()}


@pytest.mark.parametrize("name", sorted(FIRST_MISS))
def test_first_unexpected_divergence_of_each_bad_trace(classified, name: str) -> None:
    divergences = classified[name]
    index, cause, layer, path = FIRST_MISS[name]
    first = next(i for i, d in enumerate(divergences) if not d.expected)
    d = divergences[first]
    assert (first, d.cause, d.layer, d.path) == (index, cause, layer, path)
    assert d.hint


def test_details_of_the_bad_traces(classified, traces) -> None:
    stamp = classified["bad_timestamp_system"][1]
    assert stamp.detail == "datetime '2026-03-18T14:00:23+00:00' vs '2026-03-18T14:00:00+00:00'"
    assert stamp.snippet[stamp.diff_at:].startswith("23+00:00") and stamp.earlier_snippet[stamp.diff_at:].startswith("00+00:00")
    assert [d.cause for d in classified["bad_timestamp_system"][1:]] == ["volatile_value"] * 16
    shuffle = classified["bad_agent_tool_shuffle"][1]
    assert shuffle.detail.startswith("reordered: the tool set and every schema are equal in canonical form")
    assert all(d.cause == "tools_changed" for d in classified["bad_agent_tool_shuffle"][1:])
    sliding = classified["bad_sliding_window"]
    assert [d.cause for d in sliding[:3]] == ["first_request", "new_turn", "new_turn"]
    assert all(d.cause == "history_rewritten" and d.detail.startswith("slid:") for d in sliding[3:])
    question = classified["bad_rag_question_first"][1]
    assert not question.expected and question.static_after_divergence >= 5900
    assert question.hint.startswith("put variable content last")
    good = classified["good_rag_doc_qa"][1]
    assert good.expected and good.static_after_divergence < 10


def test_whitespace_drift_misses_are_the_readme_ones(classified) -> None:
    """README trace 9: misses at #2, #3, #5 (first use of a variant) and the system-level hits #7, #8,
    #10, #11, #12 (the session's earlier turns used another variant); #4, #6, #9, #13, #14 are fine."""
    divergences = classified["bad_whitespace_drift"]
    assert [i + 1 for i, d in enumerate(divergences) if not d.expected] == [2, 3, 5, 7, 8, 10, 11, 12]
    assert {d.cause for d in divergences if not d.expected} == {"whitespace_only"}
    assert divergences[6].earlier_index == 4  # #7 is compared with its own conversation's #5, not #1


@pytest.mark.parametrize("name", ["good_support_chat", "good_rag_doc_qa", "good_agent_tools", "mixed_multi_tenant"])
def test_good_traces_report_only_expected_divergences(classified, name: str) -> None:
    divergences = classified[name]
    assert all(d.expected for d in divergences), [d.summary() for d in divergences if not d.expected]
    assert divergences[0].cause == "first_request"
    assert {d.cause for d in divergences[1:]} <= {"new_turn", "other_cache_key"}


def test_multi_tenant_first_requests_are_other_cache_keys(classified) -> None:
    causes = [d.cause for d in classified["mixed_multi_tenant"][:4]]
    assert causes == ["first_request", "other_cache_key", "other_cache_key", "new_turn"]


def test_token_counts_are_those_of_the_chatml_rendering(classified, traces) -> None:
    record, earlier = traces["bad_timestamp_system"][1], traces["bad_timestamp_system"][0]
    messages = anthropic_to_openai(record.body).body
    tokens = encode_chatml(messages["messages"], messages["tools"], add_generation_prompt=False)
    earlier_body = anthropic_to_openai(earlier.body).body
    earlier_tokens = encode_chatml(earlier_body["messages"], earlier_body["tools"], add_generation_prompt=False)
    d = classified["bad_timestamp_system"][1]
    assert d.prompt_tokens == len(tokens)
    assert d.common_prefix_tokens == d.token_offset == common_prefix(tokens, earlier_tokens)


BASE = {
    "max_tokens": 100,
    "messages": [{"role": "user", "content": [{"type": "text", "text": "How do returns work?"}]}],
    "model": "claude-sonnet-4-5",
    "system": [{"type": "text", "text": "You are Harbor, the support assistant.\n\nBe concise."},
               {"type": "text", "text": "Returns are accepted within 30 days of delivery."},
               {"type": "text", "text": "Example: user asks about shipping; answer with the rates table."}],
    "tools": [{"name": "lookup_order", "description": "Find an order.",
               "input_schema": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}},
              {"name": "start_return", "input_schema": {"type": "object", "properties": {}}}],
}


def edited(edit) -> dict:
    body = copy.deepcopy(BASE)
    edit(body)
    return body


@pytest.mark.parametrize(("edit", "cause", "layer", "path"), [
    (lambda b: b["system"][0].update(text="You are Harbor,  the support assistant.\n\nBe concise."), "whitespace_only", "system", "system[0].text"),
    (lambda b: b["system"][0].update(text="You are Harbor, the sales assistant.\n\nBe concise."), "system_changed", "system", "system[0].text"),
    (lambda b: b["system"][1].update(text="Returns are accepted within 60 days of delivery."), "document_changed", "documents", "system[1].text"),
    (lambda b: b["tools"].reverse(), "tools_changed", "tools", "tools[0]"),
    (lambda b: b["tools"][0].update(input_schema={"type": "object", "required": ["order"], "properties": {"order": {"type": "string"}}}),
     "json_key_order", "tools", "tools[0]"),
    (lambda b: b["tools"].pop(), "tools_changed", "tools", "tools"),  # the new request has no tools[1]
    (lambda b: b.update(model="claude-opus-4-5"), "params_changed", "params", "model"),  # not the first layer
    (lambda b: b.update(tool_choice={"type": "any"}), "params_changed", "turn", "tool_choice"),
    (lambda b: b["messages"][0]["content"][0].update(text="How do exchanges work?"), "new_turn", "turn", "messages[0].content[0].text"),
    (lambda b: b["messages"][0]["content"][0].update(cache_control={"type": "ephemeral"}), "repeat", None, None),
])
def test_targeted_edits(edit, cause, layer, path) -> None:
    d = compare_bodies((A, edited(edit)), [(A, BASE)])
    assert (d.cause, d.layer, d.path) == (cause, layer, path), d.summary()
    assert d.expected == (cause in ("new_turn", "repeat"))


def test_tools_change_details() -> None:
    removed = compare_bodies((A, edited(lambda b: b["tools"].pop())), [(A, BASE)])
    assert removed.detail == "removed: start_return"
    changed = compare_bodies((A, edited(lambda b: b["tools"][1]["input_schema"].update(required=["x"]))), [(A, BASE)])
    assert changed.detail == "schema changed: start_return"


def test_layer_hints_name_the_examples_layer() -> None:
    body = edited(lambda b: b["system"][2].update(text="Example: user asks about sizes; answer with the size chart."))
    d = compare_bodies((A, body), [(A, BASE)])
    assert (d.cause, d.layer) == ("document_changed", "documents")  # raw-body rule: later system blocks are documents
    guard = PrefixGuard()
    guard.compare(BASE, A, layers={"system[2]": "examples"})
    hinted = guard.compare(body, A, layers={"system[2]": "examples"})
    assert (hinted.cause, hinted.layer, hinted.path) == ("examples_changed", "examples", "system[2].text")


def test_openai_specific_causes() -> None:
    base = {"model": "gpt-4.1-mini", "messages": [{"role": "system", "content": "Answer in JSON."},
                                                  {"role": "user", "content": "Weather in Oslo?"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "w", "schema": {"type": "object", "properties": {}}}}}
    reordered = copy.deepcopy(base)
    reordered["response_format"]["json_schema"] = {"schema": {"properties": {}, "type": "object"}, "name": "w"}
    d = compare_bodies((O, reordered), [(O, base)])
    assert (d.cause, d.path, d.token_offset) == ("json_key_order", "response_format", 0)
    effort = dict(base, reasoning_effort="high")
    assert compare_bodies((O, effort), [(O, base)]).cause == "params_changed"
    keyed = dict(base, prompt_cache_key="tenant-b")
    assert compare_bodies((O, keyed), [(O, dict(base, prompt_cache_key="tenant-a"))]).cause == "other_cache_key"


def test_prefix_guard_runtime() -> None:
    guard = PrefixGuard(max_requests=2)
    assert guard.check(BASE, A) is None and guard.last.cause == "first_request"
    follow = edited(lambda b: b["messages"].extend([{"role": "assistant", "content": [{"type": "text", "text": "Within 30 days."}]},
                                                     {"role": "user", "content": [{"type": "text", "text": "And refunds?"}]}]))
    assert guard.check(follow, A) is None and guard.last.cause == "new_turn"
    stamped = edited(lambda b: b["system"][0].update(text="Now: 2026-03-18T14:00:23Z\nYou are Harbor, the support assistant."))
    stamped2 = edited(lambda b: b["system"][0].update(text="Now: 2026-03-18T14:05:11Z\nYou are Harbor, the support assistant."))
    guard.check(stamped, A)
    found = guard.check(stamped2, A)
    assert found is not None and found.cause == "volatile_value" and found.detail.startswith("datetime")
    assert len(guard.index) == 2  # bounded: the oldest requests were dropped
    runtime = found.with_cause(MissCause.TTL_EXPIRED, "idle 5m01s")
    assert (runtime.cause, runtime.expected, runtime.detail) == ("ttl_expired", False, "idle 5m01s")


def test_layer_fingerprints() -> None:
    spaced = edited(lambda b: b["system"][0].update(text="You are Harbor, the support assistant.\n\n\nBe concise.  "))
    before, after = layer_fingerprints(BASE, A), layer_fingerprints(spaced, A)
    assert list(before) == ["tools", "system", "documents", "turn"]
    assert before["system"].exact != after["system"].exact and before["system"].canonical == after["system"].canonical
    assert before["tools"] == after["tools"] and before["documents"] == after["documents"]
    reordered = edited(lambda b: b["tools"][0].update(input_schema={"required": ["order"], "type": "object",
                                                                    "properties": {"order": {"type": "string"}}}))
    keyed = layer_fingerprints(reordered, A)["tools"]
    assert keyed.exact != before["tools"].exact and keyed.canonical == before["tools"].canonical


def test_decompose_covers_the_rendering(traces) -> None:
    for records in traces.values():
        for record in records[:3]:
            r = decompose(record.body, record.api)
            assert r.pieces[0].start == 0 and r.pieces[-1].end == len(r.data)
            assert all(a.end == b.start for a, b in zip(r.pieces, r.pieces[1:], strict=False))
            assert {p.layer for p in r.pieces} <= {"tools", "system", "documents", "examples", "history", "turn"}
    with pytest.raises(ValueError, match="unknown layer 'footer'"):
        decompose(BASE, A, layers={"system[0]": "footer"})
    with pytest.raises(ValueError, match="needs a 'messages' list"):
        decompose({"model": "m"}, O)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), max_size=300), min_size=1, max_size=8), st.lists(st.integers(0, 3), max_size=300))
def test_prefix_index_finds_the_longest_common_prefix(earlier: list[list[int]], new: list[int]) -> None:
    """Against brute force: the index returns a sequence with the maximal common prefix (ties: the latest)."""
    index = PrefixIndex(max_entries=100)
    for key, tokens in enumerate(earlier):
        index.add(key, tokens)

    def brute(a: list[int], b: list[int]) -> int:
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n

    lengths = [brute(new, tokens) for tokens in earlier]
    best = index.best(new)
    assert lengths[best] == max(lengths)
    assert best == max(k for k, n in enumerate(lengths) if n == max(lengths))
    for tokens in earlier:
        assert common_prefix(new, tokens) == brute(new, tokens)
        assert common_suffix(new, tokens) == brute(new[::-1], tokens[::-1])


def test_api_is_inferred_from_the_body(traces) -> None:
    from promptcache.providers.apis import infer_api

    for records in traces.values():
        assert {infer_api(r.body) for r in records} == {records[0].api}
    with pytest.raises(ValueError, match="pass api= explicitly"):
        infer_api({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    guard = PrefixGuard()
    assert guard.check(BASE) is None and guard.last.cause == "first_request"


def test_the_guard_keeps_compact_renderings(traces) -> None:
    """Issue: ~1.4 MB retained per 30k-token request. Stored: token ids as array('I'), no rendered bytes."""
    records = traces["good_support_chat"]
    guard = PrefixGuard()
    assert PrefixGuard().index.max_entries == 256  # the default cap (was 1,024)
    found = [guard.compare(r.body, r.api) for r in records]
    assert [d.cause for d in found] == [d.cause for d in classify_requests(records)]
    for stored in guard.renderings.values():
        assert stored.compacted and stored.tokens.typecode == "I" and stored.tokens.itemsize == 4
        assert stored.data == b""
    last = records[-1]
    full = decompose(last.body, last.api)
    stored = full.compact()
    assert stored is full.compact() and stored.expand().tokens == full.tokens and stored.expand().data == full.data
    assert common_prefix(full.tokens, stored.tokens) == len(full.tokens)  # a list and an array compare as tokens
    assert common_suffix(full.tokens[5:], stored.tokens) == len(full.tokens) - 5
    small = PrefixGuard(max_requests=3)
    for r in records[:6]:
        small.compare(r.body, r.api)
    assert sorted(small.renderings) == [3, 4, 5]
