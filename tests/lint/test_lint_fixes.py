"""The fixes rules offer: PC301's ``sorted(...)`` must sort what the collection holds without raising."""

from __future__ import annotations

import pytest
from lint_support import lint_text

from lint_rules.ordering import ToolsFromUnorderedCollection

CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"


def pc301(code: str):
    (finding,) = lint_text(code, [ToolsFromUnorderedCollection])
    return finding


@pytest.mark.parametrize(
    ("code", "replacement"),
    [
        # names iterated by a comprehension: strings sort as they are
        (OPENAI + "from .specs import SPECS\ndef run(q, extra):\n    names = {'a'} | set(extra)\n"
         "    return client.chat.completions.create(model='m', messages=[], tools=[SPECS[n] for n in names])\n",
         "sorted(names)"),
        # the tool dicts themselves: by name, in the provider's shape
        (CLAUDE + "def run(specs):\n    tools = list(frozenset(specs))\n    return client.messages.create(model='m', messages=[], tools=tools)\n",
         'sorted(tools, key=lambda t: t["name"])'),
        (OPENAI + "def run(specs):\n    tools = list(frozenset(specs))\n    return client.chat.completions.create(model='m', messages=[], tools=tools)\n",
         'sorted(tools, key=lambda t: t["function"]["name"])'),
        # objects or dicts iterated by a comprehension that reads their name
        (CLAUDE + "def run(found):\n    return client.messages.create(model='m', messages=[], tools=[{'name': t.name} for t in set(found)])\n",
         "sorted(set(found), key=lambda t: t.name)"),
        (CLAUDE + "def run(found):\n    return client.messages.create(model='m', messages=[], tools=[{'name': t['name']} for t in set(found)])\n",
         'sorted(set(found), key=lambda t: t["name"])'),
    ],
)
def test_pc301_fix_sorts_by_the_right_key(code, replacement):
    finding = pc301(code)
    assert [e.content for e in finding.fix.edits] == [replacement]
    assert finding.fix.applicability.value == "unsafe"


def test_pc301_gives_the_reason_of_the_source():
    hashed = pc301(OPENAI + "def run(extra):\n    return client.chat.completions.create(model='m', messages=[], tools=list(set(extra)))\n")
    assert "hash randomisation" in hashed.message
    completed = pc301(
        CLAUDE + "import asyncio\nasync def run(loaders):\n    tools = [await f for f in asyncio.as_completed(loaders)]\n"
        "    return client.messages.create(model='m', messages=[], tools=tools)\n"
    )
    assert "completion order" in completed.message and "hash" not in completed.message
