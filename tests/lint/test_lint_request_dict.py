"""What :mod:`promptcache.lint.request_dict` reads of a request dict sent as ``**params``, one shape at a time.

Each snippet builds ``params`` in ``ask()`` and ends with ``client.messages.create(**params)``; the test reads the
request through :func:`promptcache.lint.request_view.requests` (real libcst parsing, the engine's own index) and
compares what each key may hold: the source of a value, ``-`` for not set, ``?`` for not shown.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from promptcache.lint.config import LintConfig
from promptcache.lint.context import FileContext
from promptcache.lint.index import Indexer
from promptcache.lint.request_view import requests
from promptcache.lint.walk import TreeFacts, walk

HEAD = "import anthropic\nfrom .util import route, BASE_TOOLS\nclient = anthropic.Anthropic()\n"


def read(body: str, prelude: str = "", tail: str = "    return client.messages.create(**params)\n") -> dict | None:
    """``{key: [value source | '-' | '?']}`` for the keys of the last request of the snippet, and ``'*'`` for
    any other key; None when the call is not read as a request."""
    code = HEAD + textwrap.dedent(prelude) + "def ask(q, history, tools=None, hard=False, **kwargs):\n"
    code += textwrap.indent(textwrap.dedent(body), "    ") + tail
    module = cst.parse_module(code)
    indexer, facts = Indexer(), TreeFacts()
    context = FileContext("case.py", module, LintConfig(), indexer.index, facts, False)
    walk(module, [indexer], facts)
    found = requests(context.flow)
    if not found:
        return None

    def show(values):
        return ["?" if v.unseen else "-" if v.expr is None else module.code_for_node(v.expr) for v in values]
    content = found[-1].content
    out = {k: show(v) for k, v in content.entries.items()}
    out["*"] = show(content.rest)
    return out


@pytest.mark.parametrize(("body", "expected"), [
    # a dict literal, dict(...), an item assignment, .update() with a dict and with keywords
    ("params = {'model': 'm', 'messages': history}\n", {"model": ["'m'"], "messages": ["history"], "*": ["-"]}),
    ("params = dict(model='m', messages=history)\n", {"model": ["'m'"], "messages": ["history"], "*": ["-"]}),
    ("params = {'model': 'm'}\nparams['messages'] = history\n", {"model": ["'m'"], "messages": ["history"], "*": ["-"]}),
    ("params = {'model': 'm'}\nparams.update({'messages': history})\nparams.update(system='S')\n",
     {"model": ["'m'"], "messages": ["history"], "system": ["'S'"], "*": ["-"]}),
    # a write under an `if` the call is not in: both values are possible
    ("params = {'model': 'm', 'messages': history}\nif tools:\n    params['tools'] = tools\n",
     {"model": ["'m'"], "messages": ["history"], "tools": ["-", "tools"], "*": ["-"]}),
    # pop / del
    ("params = {'model': 'm', 'messages': history, 'stream': True}\nparams.pop('stream')\n",
     {"model": ["'m'"], "messages": ["history"], "stream": ["-"], "*": ["-"]}),
    # a merge of the caller's **kwargs: any key may be missing or hold anything; a later write is definite
    ("params = {'model': 'm', **kwargs}\nparams['messages'] = history\n",
     {"model": ["'m'", "?"], "messages": ["history"], "*": ["-", "?"]}),
    # a non-literal key
    ("params = {'model': 'm', 'messages': history}\nfor k in ('a', 'b'):\n    params[k] = 1\n",
     {"model": ["'m'", "?"], "messages": ["history", "?"], "*": ["-", "?"]}),
])
def test_shapes(body, expected):
    assert read(body) == expected


def test_escape_before_the_call_is_not_seen_through():
    got = read("params = {'model': 'm', 'messages': history}\nroute(params)\n")
    assert got == {"model": ["'m'", "?"], "messages": ["history", "?"], "*": ["-", "?"]}


def test_an_alias_is_an_escape():
    got = read("params = {'model': 'm', 'messages': history}\nother = params\nother['model'] = 'x'\n")
    assert got["model"] == ["'m'", "?"]


def test_reads_and_logging_are_not_escapes():
    got = read("params = {'model': 'm', 'messages': history}\nprint(len(params), params.get('model'))\n"
               "n = params['model']\n")
    assert got == {"model": ["'m'"], "messages": ["history"], "*": ["-"]}


def test_a_write_after_the_call_is_not_seen_outside_a_loop():
    got = read("params = {'model': 'm', 'messages': history}\n",
               tail="    r = client.messages.create(**params)\n    params['model'] = 'x'\n    return r\n")
    assert got["model"] == ["'m'"]


def test_a_write_after_the_call_in_the_loop_is_seen_from_the_next_pass():
    got = read("params = {'model': 'm', 'messages': history, 'tool_choice': 'any'}\n",
               tail="    for _ in range(3):\n        r = client.messages.create(**params)\n        params['tool_choice'] = 'auto'\n")
    assert got["tool_choice"] == ["'any'", "'auto'"]


def test_a_write_in_the_other_branch_is_not_seen():
    got = read("params = {'model': 'm', 'messages': history}\nif hard:\n    params['thinking'] = {'type': 'enabled'}\n"
               "    return client.messages.create(**params)\nelse:\n", tail="        return client.messages.create(**params)\n")
    assert "thinking" not in got


def test_a_helper_returning_the_dict_reads_its_parameters_as_the_arguments():
    prelude = "def _params(messages, model='m'):\n    out = {'model': model, 'max_tokens': 9}\n    out['messages'] = messages\n    return out\n"
    got = read("params = _params(history)\n", prelude)
    assert got == {"model": ["model"], "max_tokens": ["9"], "messages": ["history"], "*": ["-"]}


def test_a_dict_without_request_keys_is_not_a_request():
    assert read("params = {'to': q, 'body': 'hi'}\n") is None
    assert read("params = dict(kwargs)\n") is None


def test_a_module_constant_is_read_unless_something_changes_it():
    got = read("params = {**BASE, 'messages': history}\n", "BASE = {'model': 'm', 'max_tokens': 9}\n")
    assert got == {"model": ["'m'"], "max_tokens": ["9"], "messages": ["history"], "*": ["-"]}
    got = read("params = {**BASE, 'messages': history}\n", "BASE = {'model': 'm'}\ndef setup(m):\n    BASE['model'] = m\n")
    assert got == {"messages": ["history"], "*": ["-", "?"]}


def test_a_call_in_a_lambda_runs_later_so_the_dict_is_not_read():
    got = read("params = {'model': 'm', 'messages': history}\n",
               tail="    fn = lambda: client.messages.create(**params)\n    params['model'] = 'x'\n    return fn()\n")
    assert got is None


def test_a_client_returned_by_a_call_is_read():
    got = read("params = {'model': 'm', 'messages': history}\n", "def get_client():\n    return client\n",
               tail="    return get_client().messages.create(**params)\n")
    assert got == {"model": ["'m'"], "messages": ["history"], "*": ["-"]}


def test_a_copy_holds_what_the_original_holds_where_it_is_made():
    got = read("base = {'model': 'm', 'messages': history}\nparams = base.copy()\nparams['tools'] = tools\n"
               "base['model'] = 'x'\n")
    assert got == {"model": ["'m'"], "messages": ["history"], "tools": ["tools"], "*": ["-"]}


def test_a_lambda_that_changes_the_dict_makes_it_unseen():
    got = read("params = {'model': 'm', 'messages': history}\ntweak = lambda: params.update(model='x')\ntweak()\n")
    assert got["model"] == ["'m'", "?"]
