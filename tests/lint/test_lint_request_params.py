"""What the history rules and breakpoint helpers read of a request: ``**params`` dicts, the SDKs' raw / streaming
response wrappers, and SDK param ``TypedDict`` calls read as the dicts they build (issue 11).

Real libcst parsing and the engine's own index; each test reads one snippet and compares what the engine sees.
"""

from __future__ import annotations

import libcst as cst
import pytest

from promptcache.lint.breakpoints import message_blocks_before_last_breakpoint
from promptcache.lint.config import LintConfig
from promptcache.lint.context import FileContext
from promptcache.lint.dict_view import entries, is_block
from promptcache.lint.index import Indexer
from promptcache.lint.prefilter import scan
from promptcache.lint.request_view import all_sinks, conversations, requests
from promptcache.lint.runner import lint_paths
from promptcache.lint.walk import TreeFacts, walk

CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"


def flow_of(code: str):
    module = cst.parse_module(code)
    indexer, facts = Indexer(), TreeFacts()
    context = FileContext("case.py", module, LintConfig(), indexer.index, facts, False)
    walk(module, [indexer], facts)
    return context.flow, module


def sent(code: str) -> list[tuple[str, str]]:
    """``(label, source)`` of every conversation the module sends."""
    flow, module = flow_of(code)
    return [(label, module.code_for_node(expr)) for label, expr, _, _ in conversations(flow)]


@pytest.mark.parametrize(("body", "expected"), [
    # a dict literal, an item assignment, dict(...) with .update(), the Responses API's input
    ("    params = {'model': 'm', 'messages': history}\n    return client.messages.create(**params)\n",
     [("messages=", "history")]),
    ("    params = {'model': 'm'}\n    params['messages'] = history[-8:]\n    return client.messages.create(**params)\n",
     [("messages=", "history[-8:]")]),
    ("    params = dict(model='m')\n    params.update(messages=[*history, q])\n    return client.messages.create(**params)\n",
     [("messages=", "[*history, q]")]),
    ("    params = {'model': 'm', 'input': history}\n    return client.responses.create(**params)\n",
     [("input=", "history")]),
    # a write under an `if`: both values may be sent
    ("    params = {'model': 'm', 'messages': history}\n    if q:\n        params['messages'] = history[-4:]\n"
     "    return client.messages.create(**params)\n",
     [("messages=", "history"), ("messages=", "history[-4:]")]),
    # a keyword beside **params is what the call sends
    ("    params = {'model': 'm', 'messages': q}\n    return client.messages.create(**params, messages=history)\n",
     [("messages=", "history")]),
    # the dict escapes before the call: not shown, so nothing is read
    ("    params = {'model': 'm', 'messages': history}\n    route(params)\n    return client.messages.create(**params)\n", []),
    # the raw-response wrapper sends the same request
    ("    return client.messages.with_raw_response.create(model='m', messages=history)\n", [("messages=", "history")]),
])
def test_conversations_read_keywords_and_params_dicts(body, expected):
    assert sent(CLAUDE + "from .util import route\ndef ask(history, q):\n" + body) == expected


def test_a_twilio_dict_is_not_a_conversation():
    code = "from twilio.rest import Client\nclient = Client()\ndef notify(history, to):\n" \
           "    sms = {'to': to, 'body': history[-1]}\n    return client.messages.create(**sms)\n"
    flow, _ = flow_of(code)
    assert conversations(flow) == [] and all_sinks(flow) == []


def test_a_params_request_makes_its_function_a_request_handler():
    code = CLAUDE + "def turn(history):\n    history = history[-8:]\n    params = {'model': 'm', 'messages': history}\n" \
                    "    return client.messages.create(**params)\n"
    flow, module = flow_of(code)
    assert [module.code_for_node(s.call.func) for s in all_sinks(flow)] == ["client.messages.create"]
    assert sorted(ref[2] for ref in flow.turns.history_refs) == ["history"]
    assert [detail for _, detail in flow.turns.trims] == ["history[-8:]"]


def test_cached_blocks_of_a_params_request():
    code = CLAUDE + "from datetime import datetime\ndef ask(q):\n    params = {'model': 'm', 'max_tokens': 9}\n" \
                    "    params['messages'] = [{'role': 'user', 'content': [\n" \
                    "        {'type': 'text', 'text': f'{datetime.now()}', 'cache_control': {'type': 'ephemeral'}},\n" \
                    "        {'type': 'text', 'text': q}]}]\n    return client.messages.create(**params)\n"
    flow, module = flow_of(code)
    (req,) = requests(flow)
    blocks = [module.code_for_node(b) for b, _ in message_blocks_before_last_breakpoint(flow, req.sink)]
    assert blocks == ["{'type': 'text', 'text': f'{datetime.now()}', 'cache_control': {'type': 'ephemeral'}}"]
    assert [f.slot.label for f in flow.breakpoint_flows] == ["a cached message block"]


def test_cache_key_of_a_params_request():
    code = OPENAI + "import time\ndef ask(q):\n    params = {'model': 'm', 'input': q, 'prompt_cache_key': f'k-{time.time()}'}\n" \
                    "    return client.responses.create(**params)\n"
    flow, module = flow_of(code)
    assert [module.code_for_node(f.slot.expr) for f in flow.cache_key_flows] == ["f'k-{time.time()}'"]


@pytest.mark.parametrize(("callee", "api"), [
    ("client.beta.messages.with_raw_response.create", "anthropic"),
    ("client.messages.with_streaming_response.create", "anthropic"),
    ("client.beta.messages.with_raw_response.parse", "anthropic"),
    ("client.messages.parse", "anthropic"),
    ("client.chat.completions.with_raw_response.create", "openai_chat"),
    ("client.chat.completions.with_streaming_response.parse", "openai_chat"),
    ("client.responses.with_raw_response.create", "openai_responses"),
    ("self._client().responses.with_streaming_response.create", "openai_responses"),
    ("client.messages.with_raw_response.count_tokens", None),
    ("client.with_raw_response.create", None),
])
def test_response_wrappers_are_sinks(callee, api):
    flow, _ = flow_of(CLAUDE + f"def ask(self, history):\n    return {callee}(model='m', messages=history)\n")
    call, scope = next((c, s) for c, s in flow.index.calls if isinstance(c.func, cst.Attribute) and c.func.attr.value != "Anthropic")
    assert flow.sinks.api_of(call, scope) == api


@pytest.mark.parametrize("call", [
    b"c.messages.with_raw_response.create(", b"c.beta.messages.with_streaming_response.create (",
    b"c.responses.with_raw_response.parse(", b"c.chat.completions.with_streaming_response.create(", b"c.messages.parse(",
])
def test_the_prefilter_passes_wrapped_calls(call):
    assert scan(b"def ask(c, q):\n    return " + call + b"model='m', input=q)\n").sink_like


def test_a_file_with_only_a_wrapped_call_is_linted(write_tree):
    """No SDK import (the client is passed in): the wrapped call alone makes the file LLM code."""
    code = "from datetime import datetime\ndef ask(client, q):\n" \
           "    return client.responses.with_raw_response.create(model='m', instructions=f'{datetime.now()}', input=q)\n"
    root = write_tree({"ask.py": code})
    config = LintConfig(root=root)
    with_prefilter = lint_paths([root], config, jobs=1)
    without = lint_paths([root], config, jobs=1, prefilter_files=False)
    assert [(f.code, f.line) for f in with_prefilter.findings] == [("PC101", 3)]
    assert [f.to_json() for f in with_prefilter.findings] == [f.to_json() for f in without.findings]


@pytest.mark.parametrize(("source", "expected"), [
    ("{'type': 'text', 'text': t}", [("type", "'text'"), ("text", "t")]),
    ("TextBlockParam(type='text', text=t, cache_control=C)", [("type", "'text'"), ("text", "t"), ("cache_control", "C")]),
    ("anthropic.types.beta.BetaTextBlockParam(type='text', text=t)", [("type", "'text'"), ("text", "t")]),
    ("ChatCompletionSystemMessageParam(role='system', content=s)", [("role", "'system'"), ("content", "s")]),
    ("BetaCacheControlEphemeralParam({'type': 'ephemeral'}, ttl='1h')", [("type", "'ephemeral'"), ("ttl", "'1h'")]),
    ("WebSearchTool20250305Param(name='web_search', type='web_search_20250305')",
     [("name", "'web_search'"), ("type", "'web_search_20250305'")]),
    # not read: another positional argument, a **mapping, a class that is not an SDK param
    ("TextBlockParam(block)", None),
    ("TextBlockParam(**block)", None),
    ("TextBlock(type='text', text=t)", None),
    ("Param(type='text')", None),
])
def test_dict_view_reads_sdk_param_calls_as_dicts(source, expected):
    node = cst.parse_expression(source)
    module = cst.Module([])
    got = entries(node)
    assert (None if got is None else [(k, module.code_for_node(v)) for k, v in got]) == expected
    assert is_block(node) == (expected is not None)


def test_an_sdk_system_message_is_a_system_slot():
    code = OPENAI + "from openai.types.chat import ChatCompletionSystemMessageParam, ChatCompletionUserMessageParam\n" \
                    "def ask(q, rules):\n    return client.chat.completions.create(model='m', messages=[\n" \
                    "        ChatCompletionSystemMessageParam(role='system', content=rules),\n" \
                    "        ChatCompletionUserMessageParam(role='user', content=q)])\n"
    flow, module = flow_of(code)
    assert [(s.label, module.code_for_node(s.expr)) for s in flow.system_slots if s.label.endswith("message")] == [
        ("the system message", "rules")]
