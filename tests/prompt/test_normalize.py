"""The canonical form of stable layers: text normalisation, canonical tool JSON, deterministic tool order."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptcache.tokens.chatml import TEXT_PART_SEPARATOR
from promptcache.errors import PromptError
from promptcache.prompt.normalize import (SECTION_SEPARATOR, ToolSet, canonical_json_text, join_sections, normalize_text,
                                   order_tools, tool_spec)

SCHEMA = {"type": "object", "required": ["q"], "properties": {"q": {"type": "string", "description": "query"},
                                                               "k": {"type": "integer"}}}


@pytest.mark.parametrize(("raw", "expected"), [
    ("\ufeffHello", "Hello"),                                  # BOM
    ("zero\u200bwidth\u200c\u200d\u2060", "zerowidth"),        # zero-width characters
    ("Cafe\u0301", "Caf\u00e9"),                                # NFC
    ("a\r\nb\rc", "a\nb\nc"),                                   # CRLF / CR
    ("title  \nbody\t\nend\u00a0", "title\nbody\nend"),        # trailing whitespace, NBSP included
    ("    indented\n      more\n    back", "indented\n  more\nback"),  # dedent
    ("\n\n  \nfirst\n\n\n\nsecond\n\n", "first\n\nsecond"),    # edge blank lines, blank runs
    ("keep  inner  spaces", "keep  inner  spaces"),
])
def test_normalize_text_steps(raw: str, expected: str) -> None:
    assert normalize_text(raw) == expected


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab \t\n\r\u00a0\u200b\ufeffe\u0301")), max_size=40))
def test_normalize_text_is_idempotent_and_clean(text: str) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once
    assert "\r" not in once and "\u200b" not in once and "\ufeff" not in once and "\n\n\n" not in once
    assert all(line == line.rstrip() for line in once.split("\n"))


def test_section_separator_is_the_one_of_the_converter_and_chatml() -> None:
    assert SECTION_SEPARATOR == TEXT_PART_SEPARATOR == "\n\n"
    assert join_sections(["a", "", "b"]) == "a\n\nb"


def test_tools_in_every_shape_give_one_canonical_form() -> None:
    anthropic = {"name": "search", "description": "Find  \r\n things", "input_schema": SCHEMA}
    chat = {"type": "function", "function": {"name": "search", "description": "Find\n things", "parameters": SCHEMA}}
    responses = {"type": "function", "name": "search", "description": "Find\n things", "parameters": SCHEMA}
    specs = [tool_spec(t) for t in (anthropic, chat, responses)]
    assert specs[0] == specs[1] == specs[2]
    assert specs[0].description == "Find\n things"
    assert specs[0].json == ('{"description":"Find\\n things","name":"search","parameters":{"properties":{"k":'
                             '{"type":"integer"},"q":{"description":"query","type":"string"}},"required":["q"],'
                             '"type":"object"},"strict":null}')
    assert list(specs[0].parameters) == ["properties", "required", "type"]  # keys sorted at every depth
    assert specs[0].parameters["required"] == ["q"]  # arrays keep their order


def test_canonical_json_text_is_compact_and_sorted() -> None:
    assert canonical_json_text({"b": 1, "a": {"d": [2, 1], "c": "é"}}) == '{"a":{"c":"é","d":[2,1]},"b":1}'


def test_tool_order_by_name_or_frozen_registration() -> None:
    specs = [tool_spec({"name": n, "input_schema": SCHEMA}) for n in ("zeta", "alpha", "mid")]
    assert [s.name for s in order_tools(specs)] == ["alpha", "mid", "zeta"]
    assert [s.name for s in order_tools(specs, "registered")] == ["zeta", "alpha", "mid"]
    assert [s.name for s in ToolSet(specs)] == ["zeta", "alpha", "mid"]
    with pytest.raises(ValueError, match="unknown tool order 'random'"):
        order_tools(specs, "random")


@pytest.mark.parametrize(("tool", "message"), [
    ({"description": "no name", "input_schema": SCHEMA}, r"tools\[0\]: the tool has no name; give every tool a 'name'"),
    ({"type": "function", "function": {"description": "x"}}, r"tools\[0\]: the tool has no name"),
    ({"name": "has space", "input_schema": SCHEMA}, r"tools\[0\] 'has space': invalid tool name"),
    ({"name": "when", "input_schema": {"type": "object", "properties": {"at": {"default": datetime.date(2026, 1, 1)}}}},
     r"tools\[0\] 'when'\.input_schema\.properties\.at\.default: a date is not JSON-serialisable"),
    ({"name": "s", "input_schema": {"type": "object", "enum": {1, 2}}}, r"input_schema\.enum: a set is not JSON"),
    ({"name": "s", "input_schema": {"type": "number", "maximum": float("nan")}}, r"maximum: nan is not valid JSON"),
    ({"name": "s", "input_schema": "object"}, r"the schema must be a JSON object, not str"),
    ({"name": "s", "input_schema": SCHEMA, "cache_control": {"type": "ephemeral"}}, r"tools may not carry cache_control"),
    ({"name": "s", "input_schema": SCHEMA, "color": "red"}, r"unknown key\(s\) \['color'\]"),
    ({"type": "web_search_20250305", "name": "web"}, r"tool type 'web_search_20250305' is not a function tool"),
    ("search", r"tools\[0\]: a tool must be a dict, not str"),
])
def test_bad_tools_are_refused_naming_the_item(tool, message: str) -> None:
    with pytest.raises(PromptError, match=message):
        tool_spec(tool)


def test_a_toolset_refuses_duplicate_names_naming_both() -> None:
    with pytest.raises(PromptError, match=r"tools\[2\] 'a': duplicate tool name \(also tools\[0\]\)"):
        ToolSet([{"name": "a", "input_schema": SCHEMA}, {"name": "b", "input_schema": SCHEMA},
                 {"name": "a", "input_schema": SCHEMA}])


def test_schema_descriptions_are_normalised_and_data_values_kept() -> None:
    """Two code paths writing one schema with different whitespace in a property description: one cache entry."""
    def tool(description: str, default: str) -> dict:
        return {"name": "lookup", "description": "Look an order up.", "input_schema": {
            "type": "object", "title": "Lookup  ", "properties": {
                "order": {"type": "string", "description": description, "default": default,
                          "enum": ["  A ", "B"], "examples": ["x\r\ny "]},
                "description": {"type": "string", "description": "The  note.\n"}}}}
    crlf = tool("\n    The order number,\r\n    e.g. HL-40718.   \n", "  keep  ")
    plain = tool("The order number,\ne.g. HL-40718.", "  keep  ")
    a, b = tool_spec(crlf), tool_spec(plain)
    assert a.json == b.json
    props = a.parameters["properties"]
    assert props["order"]["description"] == "The order number,\ne.g. HL-40718." and a.parameters["title"] == "Lookup"
    assert (props["order"]["default"], props["order"]["enum"], props["order"]["examples"]) == (
        "  keep  ", ["  A ", "B"], ["x\r\ny "])  # data, byte for byte
    assert props["description"] == {"description": "The  note.", "type": "string"}  # a property named description
