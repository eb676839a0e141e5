"""Rendering for the simulators: whole-prompt tokens, block ends as token offsets, other encodings."""

from __future__ import annotations

import tiktoken
from simbodies import EPHEMERAL, anthropic_body, openai_body, system_block, user, words

from promptcache.tokens.chatml import IM_END_ID, IM_START_ID, chatml_encoding
from promptcache.simulate import AnthropicSimulator
from promptcache.simulate.render import render_prompt


def copy_of_cl100k(name: str = "cl100k_copy") -> tiktoken.Encoding:
    base = chatml_encoding()
    return tiktoken.Encoding(name=name, pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                             special_tokens={"<|endoftext|>": 100257})


def test_other_encodings_retokenise_between_the_chatml_specials():
    body = anthropic_body([system_block(words(50), EPHEMERAL)], [user("alpha beta", "gamma\n\ndelta")])
    native = render_prompt(body, "anthropic.messages")
    other = render_prompt(body, "anthropic.messages", encoding=copy_of_cl100k())
    start = other.tokens[0]
    assert other.encoding == "cl100k_copy" and start == copy_of_cl100k().n_vocab
    mapped = [IM_START_ID if t == start else IM_END_ID if t == start + 1 else t for t in other.tokens]
    assert mapped == native.tokens
    assert [b.end for b in other.blocks] == [b.end for b in native.blocks]
    assert [(m.start, m.end) for m in other.messages] == [(m.start, m.end) for m in native.messages]


def test_message_spans_cover_the_framing():
    body = openai_body([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])
    render = render_prompt(body, "openai.chat", model="gpt-4.1-mini", encoding=chatml_encoding())
    # <|im_start|> system \n be brief <|im_end|> \n | <|im_start|> user \n hi <|im_end|> \n
    assert [(m.role, m.start, m.end) for m in render.messages] == [("system", 0, 7), ("user", 7, 13)]
    assert len(render) == 13
    assert [b.path for b in render.blocks] == ["messages[0].content", "messages[1].content"]
    assert [b.level for b in render.blocks] == ["system", "messages"]


def test_tool_json_is_hashed_as_sent():
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    swapped = {"function": tool["function"], "type": "function"}
    a = render_prompt(openai_body([{"role": "user", "content": "x"}], tools=[tool]), "openai.chat")
    b = render_prompt(openai_body([{"role": "user", "content": "x"}], tools=[swapped]), "openai.chat")
    assert a.tokens != b.tokens and len(a) == len(b)
    assert a.blocks[0].content != b.blocks[0].content


def test_response_format_is_a_prefix_ahead_of_the_messages():
    plain = openai_body([{"role": "user", "content": "x"}])
    schema = {"type": "json_object"}
    shaped = render_prompt(dict(plain, response_format=schema), "openai.chat", encoding=chatml_encoding())
    base = render_prompt(plain, "openai.chat", encoding=chatml_encoding())
    extra = len(chatml_encoding().encode('{"type": "json_object"}'))
    assert len(shaped) == len(base) + extra and shaped.tokens[extra:] == base.tokens
    assert shaped.blocks[0].end == base.blocks[0].end + extra


def test_markers_are_not_block_content():
    marked = render_prompt(anthropic_body([system_block("hello", EPHEMERAL)]), "anthropic.messages")
    plain = render_prompt(anthropic_body([system_block("hello")]), "anthropic.messages")
    assert marked.blocks[0].content == plain.blocks[0].content == '{"type":"text","text":"hello"}'
    assert marked.blocks[0].marker == EPHEMERAL and plain.blocks[0].marker is None


def test_a_string_is_one_text_block():
    """Rules doc: "A string system or content is one text block" (the same cache content)."""
    text = words(1500)
    strings = anthropic_body(text, [{"role": "user", "content": "Where is my parcel?"}], cache_control=EPHEMERAL)
    blocks = anthropic_body([system_block(text)], [user("Where is my parcel?")], cache_control=EPHEMERAL)
    a, b = render_prompt(strings, "anthropic.messages"), render_prompt(blocks, "anthropic.messages")
    assert [x.path for x in a.blocks] == ["system", "messages[0].content"]
    assert [x.content for x in a.blocks] == [x.content for x in b.blocks] and a.tokens == b.tokens
    sim = AnthropicSimulator()
    assert sim.simulate(strings, 0.0).usage.cache_write == a.blocks[-1].end  # automatic caching: the last block
    again = sim.simulate(blocks, 10.0).usage
    assert (again.cache_read, again.cache_write) == (b.blocks[-1].end, 0)
