"""Anthropic rules pinned with exact numbers (provider-cache-rules.md, "Anthropic")."""

from __future__ import annotations

import pytest
from simbodies import (
    EPHEMERAL, SONNET, anthropic_body, anthropic_tokens, assistant, system_block, user, words,
)

from promptcache.simulate import AnthropicSimulator
from promptcache.simulate.render import render_prompt

HOUR = {"type": "ephemeral", "ttl": "1h"}
LONG = words(1200)  # a system prompt above Sonnet 4.5's 1,024-token minimum


def conversation(turns: int) -> list[dict]:
    messages = [user(f"question {i}") if i % 2 == 0 else assistant(f"answer {i}") for i in range(2 * turns + 1)]
    return messages


def marked_last(messages: list[dict], marker: dict = EPHEMERAL) -> list[dict]:
    out = [dict(m, content=[dict(b) for b in m["content"]]) for m in messages]
    out[-1]["content"][-1]["cache_control"] = marker
    return out


def test_first_request_writes_up_to_the_last_breakpoint_and_a_repeat_reads_it():
    body = anthropic_body([system_block(LONG, EPHEMERAL)], marked_last(conversation(1)))
    sim = AnthropicSimulator()
    first = sim.simulate(body, 0.0)
    render = first.render
    last_end = render.blocks[-1].end
    assert first.error is None
    assert (first.usage.cache_read, first.usage.cache_write_5m, first.usage.cache_write_1h) == (0, last_end, 0)
    assert first.usage.uncached == len(render) - last_end  # input_tokens = N - C
    second = sim.simulate(body, 10.0)
    assert (second.usage.cache_read, second.usage.cache_write, second.usage.uncached) == (last_end, 0, len(render) - last_end)


def test_below_the_model_minimum_caches_nothing_and_is_no_error():
    body = anthropic_body([system_block(words(900), EPHEMERAL)])
    assert anthropic_tokens(body) < 1024
    sim = AnthropicSimulator()
    results = [sim.simulate(body, t) for t in (0.0, 5.0)]
    for result in results:
        assert result.error is None
        assert (result.usage.cache_read, result.usage.cache_write) == (0, 0)
        assert result.usage.uncached == result.prompt_tokens
    assert results[1].runtime_cause == "below_minimum"


def test_minimum_is_per_model():
    body = anthropic_body([system_block(words(2500), EPHEMERAL)])  # ~2.5k tokens
    sonnet, haiku = AnthropicSimulator(), AnthropicSimulator(model="claude-haiku-4-5")  # 1,024 vs 4,096
    assert sonnet.simulate(body, 0).usage.cache_write > 0
    assert haiku.simulate(body, 0).usage.cache_write == 0


def _many_blocks(marker_at: int, count: int = 30) -> dict:
    texts = [f"note {i}" for i in range(count)]
    blocks = [{"type": "text", "text": text} for text in texts]
    blocks[marker_at]["cache_control"] = EPHEMERAL
    return anthropic_body([system_block(LONG)], [{"role": "user", "content": blocks}])


@pytest.mark.parametrize(("distance", "found"), [(19, True), (20, False)])
def test_lookback_finds_an_entry_19_blocks_back_but_not_20(distance, found):
    sim = AnthropicSimulator()
    writer = sim.simulate(_many_blocks(2), 0.0)  # system block = block 0, user blocks 1.. : entry at block 3
    entry_end = writer.render.blocks[3].end
    assert writer.usage.cache_write == entry_end
    reader = sim.simulate(_many_blocks(2 + distance), 10.0)  # breakpoint `distance` blocks after the entry
    assert reader.usage.cache_read == (entry_end if found else 0)


def test_read_after_5m01s_idle_misses_and_a_read_at_4m59s_refreshes_the_ttl():
    body = anthropic_body([system_block(LONG, EPHEMERAL)])
    n = AnthropicSimulator().simulate(body, 0).render.blocks[0].end
    refreshed = AnthropicSimulator()
    assert refreshed.simulate(body, 0.0).usage.cache_write == n
    assert refreshed.simulate(body, 299.0).usage.cache_read == n        # 4m59s: hit, TTL now runs to 599 s
    assert refreshed.simulate(body, 598.0).usage.cache_read == n        # alive only thanks to the refresh
    idle = AnthropicSimulator()
    idle.simulate(body, 0.0)
    late = idle.simulate(body, 301.0)                                   # 5m01s idle
    assert (late.usage.cache_read, late.usage.cache_write) == (0, n)
    assert late.runtime_cause == "ttl_expired"


def test_one_hour_ttl_and_the_write_split():
    body = anthropic_body([system_block(LONG, HOUR)], marked_last(conversation(1)))
    sim = AnthropicSimulator()
    first = sim.simulate(body, 0.0)
    system_end, last_end = first.render.blocks[0].end, first.render.blocks[-1].end
    assert (first.usage.cache_write_1h, first.usage.cache_write_5m) == (system_end, last_end - system_end)
    # an hour later the 5m entry is gone, the 1h entry (read at 59 min) is still there
    assert sim.simulate(body, 3540.0).usage.cache_read == system_end
    assert sim.simulate(body, 3540.0 + 3601.0).usage.cache_read == 0


def test_1h_marker_after_5m_marker_is_an_error():
    body = anthropic_body([system_block(LONG, EPHEMERAL)], marked_last(conversation(1), HOUR))
    result = AnthropicSimulator().simulate(body, 0.0)
    assert result.error == ("messages[2].content[0]: a cache_control with ttl '1h' must not come after one with "
                            "ttl '5m' (longer TTLs first)")
    assert result.usage.prompt_tokens == 0


def test_fifth_breakpoint_is_an_error_and_changes_nothing():
    blocks = [system_block(f"part {i} " + words(300), EPHEMERAL) for i in range(4)]
    four = anthropic_body(blocks)
    five = anthropic_body(blocks, cache_control=EPHEMERAL)  # automatic caching uses the fifth slot
    sim = AnthropicSimulator()
    refused = sim.simulate(five, 0.0)
    assert refused.error == "A maximum of 4 blocks with cache_control may be provided. Found 5."
    assert refused.usage.prompt_tokens == 0 and refused.prompt_tokens == anthropic_tokens(five)
    accepted = sim.simulate(four, 1.0)
    assert accepted.error is None and accepted.usage.cache_read == 0  # the refused request wrote nothing
    assert accepted.usage.cache_write == accepted.render.blocks[3].end


@pytest.mark.parametrize(("block", "reason"), [
    ({"type": "text", "text": "", "cache_control": EPHEMERAL}, "cache_control cannot be set on empty text blocks"),
    ({"type": "thinking", "thinking": "hm", "signature": "x", "cache_control": EPHEMERAL},
     "cache_control cannot be set on thinking blocks"),
])
def test_markers_on_uncacheable_blocks_are_errors(block, reason):
    messages = [user("q"), {"role": "assistant", "content": [block, {"type": "text", "text": "a"}]}, user("r")]
    result = AnthropicSimulator().simulate(anthropic_body([system_block(LONG)], messages), 0.0)
    assert result.error == f"messages[1].content[0]: {reason}"


def test_bad_marker_type_and_ttl_are_errors():
    bad_type = anthropic_body([system_block(LONG, {"type": "persistent"})])
    bad_ttl = anthropic_body([system_block(LONG, {"type": "ephemeral", "ttl": "2h"})])
    assert AnthropicSimulator().simulate(bad_type, 0).error == "system[0]: cache_control.type must be 'ephemeral'"
    assert AnthropicSimulator().simulate(bad_ttl, 0).error == \
        "system[0]: cache_control.ttl must be one of 5m, 1h, not '2h'"


def test_automatic_caching_moves_with_the_conversation():
    sim = AnthropicSimulator()
    first = sim.simulate(anthropic_body(LONG, conversation(1), cache_control=EPHEMERAL), 0.0)
    second = sim.simulate(anthropic_body(LONG, conversation(2), cache_control=EPHEMERAL), 20.0)
    assert second.usage.cache_read == first.render.blocks[-1].end
    assert second.usage.cache_write == second.render.blocks[-1].end - first.render.blocks[-1].end


def test_writes_only_at_breakpoints_reads_need_an_earlier_write_at_that_position():
    # automatic caching only: the unchanged system string was never written on its own (trace 7's pitfall)
    sim = AnthropicSimulator()
    sim.simulate(anthropic_body(LONG, [user("first summary")], cache_control=EPHEMERAL), 0.0)
    rewritten = sim.simulate(anthropic_body(LONG, [user("second summary")], cache_control=EPHEMERAL), 30.0)
    assert rewritten.usage.cache_read == 0


def test_entry_is_readable_about_one_second_after_its_writer_starts():
    body = anthropic_body([system_block(LONG, EPHEMERAL)])
    sim = AnthropicSimulator()
    sim.simulate(body, 0.0)
    assert sim.simulate(body, 0.5).usage.cache_read == 0
    assert sim.simulate(body, 1.0).usage.cache_read > 0


def test_markers_are_not_part_of_the_key():
    sim = AnthropicSimulator()
    first = sim.simulate(anthropic_body([system_block(LONG)], marked_last(conversation(1))), 0.0)
    moved = sim.simulate(anthropic_body([system_block(LONG)], marked_last(conversation(2))), 5.0)
    assert moved.usage.cache_read == first.render.blocks[-1].end


@pytest.mark.parametrize(("change", "level"), [
    ({"tool_choice": {"type": "any"}}, "messages"),
    ({"thinking": {"type": "enabled", "budget_tokens": 2048}}, "messages"),
    ({"speed": "fast"}, "system"),
])
def test_parameters_invalidate_at_their_level(change, level):
    tools = [{"name": "lookup", "description": words(50), "input_schema": {"type": "object"},
              "cache_control": EPHEMERAL}]
    system = [system_block(LONG, EPHEMERAL)]

    def body(**extra):
        return anthropic_body(system, marked_last(conversation(1)), tools=tools, **extra)

    sim = AnthropicSimulator()
    base = sim.simulate(body(), 0.0)
    blocks = base.render.blocks
    changed = sim.simulate(body(**change), 10.0)
    expected = {"messages": blocks[1].end, "system": 0}[level]  # tools end < 1,024: never written
    assert changed.usage.cache_read == expected


def test_adding_an_image_invalidates_the_messages_level():
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    plain = anthropic_body([system_block(LONG, EPHEMERAL)], marked_last(conversation(1)))
    with_image = anthropic_body([system_block(LONG, EPHEMERAL)],
                                conversation(1)[:-1] + [{"role": "user", "content": [image, {"type": "text",
                                                         "text": "question 2", "cache_control": EPHEMERAL}]}])
    sim = AnthropicSimulator()
    base = sim.simulate(plain, 0.0)
    assert sim.simulate(with_image, 5.0).usage.cache_read == base.render.blocks[0].end


def test_model_is_part_of_the_key():
    body = anthropic_body([system_block(LONG, EPHEMERAL)])
    sim = AnthropicSimulator()
    sim.simulate(body, 0.0)
    other = sim.simulate(dict(body, model="claude-opus-4-8"), 5.0)
    assert other.usage.cache_read == 0 and other.profile.model == "claude-opus-4-8"


def test_block_ends_are_token_offsets_of_the_whole_rendering():
    body = anthropic_body([system_block(LONG, EPHEMERAL)], [user("alpha", "beta")])
    render = render_prompt(body, "anthropic.messages", model=SONNET)
    ends = [b.end for b in render.blocks]
    assert [b.path for b in render.blocks] == ["system[0]", "messages[0].content[0]", "messages[0].content[1]"]
    # <|im_start|> "system" "\n" + 1,200 words | <|im_end|> "\n" <|im_start|> "user" "\n" "alpha" | "\n\n" "beta"
    assert ends == [3 + 1200, 3 + 1200 + 5 + 1, 3 + 1200 + 5 + 1 + 2]
    assert len(render) == ends[-1] + 2
