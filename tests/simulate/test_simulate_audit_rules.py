"""Rules the December 2026 audit found wrong in the simulators (shared/research/provider-audit-2026-12.md), each
test citing the doc sentence it implements."""

from __future__ import annotations

from simbodies import EPHEMERAL, anthropic_body, assistant, openai_body, openai_body_with_tokens, system_block, user, words

from promptcache.simulate import AnthropicSimulator, OpenAISimulator

HOUR = {"type": "ephemeral", "ttl": "1h"}
LONG = words(1200)


def test_automatic_caching_with_another_ttl_on_an_explicitly_marked_last_block_is_refused():
    """[A-PC] (Claude docs "Prompt caching", automatic caching, "Edge cases"; audit 2.1 row "Automatic caching, last
    block already marked"): "If the last block has an explicit `cache_control` with a different TTL, the API returns a
    400 error." """
    body = anthropic_body([system_block(LONG)], [user("question", marker=HOUR)], cache_control=EPHEMERAL)
    result = AnthropicSimulator().simulate(body, 0.0)
    assert result.error is not None and "already has an explicit cache_control with ttl '1h'" in result.error
    assert result.usage.prompt_tokens == 0  # a refused request is not billed


def test_automatic_caching_with_the_same_ttl_on_a_marked_last_block_is_a_no_op():
    """[A-PC]: "If the last block already has an explicit `cache_control` with the same TTL, automatic caching is a
    no-op." The request caches exactly as with the explicit marker alone."""
    explicit = anthropic_body([system_block(LONG)], [user("question", marker=HOUR)])
    both = anthropic_body([system_block(LONG)], [user("question", marker=HOUR)], cache_control=HOUR)
    alone, combined = AnthropicSimulator().simulate(explicit, 0.0), AnthropicSimulator().simulate(both, 0.0)
    assert combined.error is None and combined.usage == alone.usage and alone.usage.cache_write_1h > 1200


def test_four_explicit_breakpoints_leave_no_slot_for_automatic_caching():
    """[A-PC]: "If 4 explicit block-level breakpoints already exist, the API returns a 400 error (no slots left for
    automatic caching)." (also when the automatic target is one of them)"""
    messages = [user("a", marker=EPHEMERAL), assistant("b"), user("c", marker=EPHEMERAL)]
    body = anthropic_body([system_block(LONG, EPHEMERAL), system_block("more", EPHEMERAL)], messages,
                          cache_control=EPHEMERAL)
    assert AnthropicSimulator().simulate(body, 0.0).error == \
        "A maximum of 4 blocks with cache_control may be provided. Found 5."


def test_an_explicit_default_effort_reads_what_an_omitted_one_wrote():
    """Audit 2.1 row "Invalidation: thinking, effort" ([A-PC], [A-TH]): an explicit default effort is the same prompt
    as an omitted one; another effort invalidates the messages level."""
    messages = [user("question", marker=EPHEMERAL)]
    sim = AnthropicSimulator()
    first = sim.simulate(anthropic_body([system_block(LONG, EPHEMERAL)], messages), 0.0)
    same = sim.simulate(anthropic_body([system_block(LONG, EPHEMERAL)], messages, output_config={"effort": "high"}), 5.0)
    assert same.usage.cache_read == first.usage.cache_write_5m
    other = sim.simulate(anthropic_body([system_block(LONG, EPHEMERAL)], messages, output_config={"effort": "low"}), 9.0)
    assert 0 < other.usage.cache_read < first.usage.cache_write_5m  # the system entry survives; messages do not


def _chat(**settings):
    return openai_body_with_tokens(1300, **settings)


def test_openai_cache_affecting_settings_change_the_prefix():
    """[O-G] (OpenAI guide "Prompt caching", GPT-5.6 era; audit 2.2 row "Cache-affecting settings", probe 5):
    `parallel_tool_calls`, `reasoning.effort` and `text.verbosity` are among the settings that change the cached
    prefix. The same prompt under another value reads nothing; under the same values it reads 1,280 tokens."""
    for setting, first, second in (("reasoning_effort", "low", "high"), ("parallel_tool_calls", True, False),
                                   ("verbosity", "low", "medium")):
        sim = OpenAISimulator()
        sim.simulate(_chat(**{setting: first}), 0.0)
        assert sim.simulate(_chat(**{setting: second}), 5.0).usage.cache_read == 0, setting
        assert sim.simulate(_chat(**{setting: first}), 10.0).usage.cache_read == 1280, setting


def test_gpt56_implicit_lookup_finds_an_earlier_user_message_ending():
    """[O-G]: in implicit mode lookup also checks "up to 20 earlier eligible message endings" (user messages): turn 2
    of a conversation reads what turn 1 wrote at the end of its user message."""
    system = {"role": "developer", "content": words(1500)}
    turn1 = [system, {"role": "user", "content": "first question"}]
    turn2 = [*turn1, {"role": "assistant", "content": "an answer"}, {"role": "user", "content": "second question"}]
    sim = OpenAISimulator()
    first = sim.simulate(openai_body(turn1, model="gpt-5.6"), 0.0)
    second = sim.simulate(openai_body(turn2, model="gpt-5.6"), 5.0)
    assert second.usage.cache_read == second.render.messages[1].end == first.usage.cache_write_5m


def _mid_system(model: str, question: str) -> dict:
    messages = [user(words(1200)), assistant("ok"), {"role": "system", "content": "From now on, be terse."},
                user(question, marker=EPHEMERAL)]
    return anthropic_body(None, messages, model=model)


def test_mid_conversation_system_messages_are_accepted_on_the_models_that_take_them():
    """Audit 2.1 row "Mid-conversation system messages" ([A-PC]): `{"role": "system"}` in messages is taken by Opus
    4.8+, Fable 5, Mythos 5 and Opus 5, not by Sonnet 5. It is cached like any other block."""
    sim = AnthropicSimulator()
    first = sim.simulate(_mid_system("claude-opus-5", "q"), 0.0)
    assert first.error is None and first.usage.cache_write_5m == first.render.blocks[-1].end
    assert [b.role for b in first.render.blocks] == ["user", "assistant", "system", "user"]
    assert sim.simulate(_mid_system("claude-opus-5", "q"), 5.0).usage.cache_read == first.usage.cache_write_5m
    refused = AnthropicSimulator().simulate(_mid_system("claude-sonnet-4-5", "q"), 0.0)
    assert refused.error.startswith("messages[2].role: 'system' messages inside messages are taken by Opus 4.8+")


def _thinking_turns(model: str, *, new_question: bool) -> list[dict]:
    thinking = {"type": "thinking", "thinking": "Let me look the order up. " * 40, "signature": "sig"}
    call = {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"order": 1042}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "shipped",
              "cache_control": EPHEMERAL}
    messages = [user("Where is order 1042?"), {"role": "assistant", "content": [thinking, call]},
                {"role": "user", "content": [result]}]
    if new_question:
        messages = [*messages, assistant("It shipped."), user("And 1043?", marker=EPHEMERAL)]
    tools = [{"name": "lookup", "description": "Find an order.", "input_schema": {"type": "object"}}]
    return anthropic_body([system_block(LONG)], messages, model=model, tools=tools)


def test_earlier_thinking_blocks_are_stripped_on_last_turn_only_models():
    """Claude docs "Extended thinking", "Thinking block preservation by model": "Claude Sonnet 4.5 and earlier Sonnet
    models keep only the last turn"; "Claude Sonnet 4.6 and later Sonnet models keep all". A new (non-tool-result)
    user turn strips the earlier thinking blocks, so the prefix written during the tool loop is not read past them."""
    for model, kept in (("claude-sonnet-4-5", False), ("claude-sonnet-4-6", True)):
        sim = AnthropicSimulator()
        loop = sim.simulate(_thinking_turns(model, new_question=False), 0.0)
        assert loop.error is None and loop.usage.cache_write_5m == loop.render.blocks[-1].end, model
        later = sim.simulate(_thinking_turns(model, new_question=True), 5.0)
        thinking_seen = any(b.value.get("type") == "thinking" for b in later.render.blocks
                            if isinstance(b.value, dict))
        assert thinking_seen is kept, model
        if kept:
            assert later.usage.cache_read == loop.usage.cache_write_5m, model
        else:
            assert later.usage.cache_read < loop.render.blocks[2].end, model  # not past the first user turn
