"""The fixes rules offer: PC301's ``sorted(...)`` must sort what the collection holds without raising.

The key is decided from what the collection holds: tool names sort as they
are, tool definitions by their name in the provider's shape, objects by
``.name``; when the elements cannot be known the fix describes what to do and
carries no edit. The fixed programs are run against the real SDK clients
(through ``httpx.MockTransport``) to show the key works on the elements.
"""

from __future__ import annotations

import pytest
from lint_support import apply, lint_text, sent_tool_names

from lint_rules.ordering import ToolsFromUnorderedCollection

CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"
NO_EDIT = "Sort the tools by name before they reach tools="


def pc301(code: str):
    (finding,) = lint_text(code, [ToolsFromUnorderedCollection])
    return finding


@pytest.mark.parametrize(
    ("code", "replacement"),
    [
        # tool NAMES: strings sort as they are, no key
        pytest.param(CLAUDE + 'from .specs import TOOLS\nENABLED = {"a", "b"}\ndef run(q):\n'
                     '    return client.messages.create(model="m", messages=[], tools=[TOOLS[n] for n in ENABLED])\n',
                     "sorted(ENABLED)", id="names-constant-bound-to-a-set-literal"),
        pytest.param(CLAUDE + 'from .specs import TOOLS\nSEARCH = "search"\nENABLED = frozenset({SEARCH, "fetch"})\ndef run(q):\n'
                     '    return client.messages.create(model="m", messages=[], tools=[TOOLS[n] for n in ENABLED])\n',
                     "sorted(ENABLED)", id="names-through-a-constant-bound-to-a-string"),
        pytest.param(CLAUDE + 'from .specs import TOOLS\ndef run(q):\n'
                     '    return client.messages.create(model="m", messages=[], tools=[TOOLS[n] for n in {"a", "b"}])\n',
                     'sorted({"a", "b"})', id="names-set-literal-in-place"),
        pytest.param(OPENAI + "from .specs import SPECS\ndef run(q, extra):\n    names = {'a'} | set(extra)\n"
                     "    return client.chat.completions.create(model='m', messages=[], tools=[SPECS[n] for n in names])\n",
                     "sorted(names)", id="names-set-union"),
        pytest.param(OPENAI + "REGISTRY = {'a': {'type': 'function'}, 'b': {'type': 'function'}}\ndef ask(q, allowed):\n"
                     "    names = REGISTRY.keys() & allowed\n"
                     "    return client.chat.completions.create(model='m', messages=[], tools=[REGISTRY[n] for n in names])\n",
                     "sorted(names)", id="names-dict-keys"),
        pytest.param(CLAUDE + "def run(extra):\n    return client.messages.create(model='m', messages=[], "
                     "tools=[{'name': n, 'input_schema': {}} for n in set(extra)])\n",
                     "sorted(set(extra))", id="names-used-as-the-name-field"),
        pytest.param(CLAUDE + "from .specs import SPECS\ndef run(extra):\n    names = set()\n    names.add('a')\n    names.update(extra)\n"
                     "    return client.messages.create(model='m', messages=[], tools=[SPECS[n] for n in names])\n",
                     "sorted(names)", id="names-added-one-by-one"),
        # tool DICTS: by the name key of the shape
        pytest.param(CLAUDE + "from .specs import SPECS\ndef run(extra):\n    tools = [SPECS[n] for n in set(extra)]\n"
                     "    return client.messages.create(model='m', messages=[], tools=tools)\n",
                     'sorted(tools, key=lambda t: t["name"])', id="dicts-anthropic-shape"),
        pytest.param(OPENAI + "from .specs import SPECS\ndef run(extra):\n    tools = [SPECS[n] for n in set(extra)]\n"
                     "    return client.chat.completions.create(model='m', messages=[], tools=tools)\n",
                     'sorted(tools, key=lambda t: t["function"]["name"])', id="dicts-openai-chat-shape"),
        pytest.param(OPENAI + "from .specs import SPECS\ndef run(extra):\n    tools = [SPECS[n] for n in set(extra)]\n"
                     "    return client.responses.create(model='m', input='q', tools=tools)\n",
                     'sorted(tools, key=lambda t: t["name"])', id="dicts-openai-responses-shape"),
        pytest.param("from langchain_openai import ChatOpenAI\n"
                     "TABLE = {'a': {'type': 'function', 'function': {'name': 'a'}}, 'b': {'type': 'function', 'function': {'name': 'b'}}}\n"
                     "def run(extra):\n    tools = [TABLE[n] for n in set(extra)]\n    return ChatOpenAI().bind_tools(tools)\n",
                     'sorted(tools, key=lambda t: t["function"]["name"])', id="dicts-shape-read-from-the-literal-table"),
        pytest.param(CLAUDE + "def run(found):\n    return client.messages.create(model='m', messages=[], "
                     "tools=[{'name': t['name']} for t in set(found)])\n",
                     'sorted(set(found), key=lambda t: t["name"])', id="dicts-read-by-name-in-the-comprehension"),
        pytest.param(CLAUDE + "import asyncio\nasync def run(loaders):\n    tools = [await f for f in asyncio.as_completed(loaders)]\n"
                     "    return client.messages.create(model='m', messages=[], tools=tools)\n",
                     'sorted(tools, key=lambda t: t["name"])', id="dicts-in-completion-order"),
        # OBJECTS: by .name
        pytest.param(CLAUDE + "def run(found):\n    return client.messages.create(model='m', messages=[], "
                     "tools=[{'name': t.name} for t in set(found)])\n",
                     "sorted(set(found), key=lambda t: t.name)", id="objects-read-by-attribute"),
        pytest.param(CLAUDE + "from .tools import Tool\nTOOLSET = {Tool(name='a'), Tool(name='b')}\ndef run(q):\n"
                     "    return client.messages.create(model='m', messages=[], tools=[t.schema() for t in TOOLSET])\n",
                     "sorted(TOOLSET, key=lambda t: t.name)", id="objects-constructed-with-a-name"),
    ],
)
def test_pc301_fix_sorts_by_the_key_the_elements_need(code, replacement):
    finding = pc301(code)
    assert [e.content for e in finding.fix.edits] == [replacement]
    assert finding.fix.applicability.value == "unsafe"


@pytest.mark.parametrize(
    "code",
    [
        # elements made by a call the linter cannot see into: names? objects?
        pytest.param(CLAUDE + "from .tools import make_tool\ndef run(extra):\n"
                     "    return client.messages.create(model='m', messages=[], tools=[make_tool(n) for n in set(extra)])\n",
                     id="made-by-a-call"),
        # a frozenset of parameters: hashable, so not tool dicts, but names or objects?
        pytest.param(CLAUDE + "def run(specs):\n    tools = list(frozenset(specs))\n"
                     "    return client.messages.create(model='m', messages=[], tools=tools)\n", id="frozenset-of-a-parameter"),
        pytest.param(CLAUDE + "def run(specs):\n    return client.messages.create(model='m', messages=[], tools=[*set(specs)])\n",
                     id="unpacked-set"),
        # objects made by a factory looked up in a table: a .name is not promised
        pytest.param(CLAUDE + "from .tools import FACTORIES\nTOOLSET = {FACTORIES['a'](name='a'), FACTORIES['b'](name='b')}\n"
                     "def run(q):\n    return client.messages.create(model='m', messages=[], tools=[t.schema() for t in TOOLSET])\n",
                     id="made-by-a-factory-from-a-table"),
        # futures in completion order: sorted() cannot compare them
        pytest.param(CLAUDE + "import asyncio\nasync def run(loaders):\n"
                     "    return client.messages.create(model='m', messages=[], tools=[await f for f in asyncio.as_completed(loaders)])\n",
                     id="futures"),
        # a user wrapper (extra sink shape unknown) or agent tools: the elements may be functions or objects
        pytest.param("from langchain.agents import create_agent\ndef build(extra):\n"
                     "    tools = list(set(extra))\n    return create_agent(model='m', tools=tools)\n", id="agent-tools"),
    ],
)
def test_pc301_offers_no_edit_when_the_elements_cannot_be_known(code):
    finding = pc301(code)
    assert finding.fix.edits == ()
    assert finding.fix.description.startswith(NO_EDIT)


def test_pc301_reports_the_literal_and_sorts_where_the_tools_are_built():
    code = (CLAUDE + 'from .specs import TOOLS\n\nENABLED = {"a", "b"}\n\n\ndef run(q):\n'
            '    return client.messages.create(model="m", messages=[], tools=[TOOLS[n] for n in ENABLED])\n')
    finding = pc301(code)
    assert (finding.line, finding.column, finding.end_column) == (5, 11, 21)  # the corpus marks the unsorted source
    (edit,) = finding.fix.edits
    assert (edit.start_line, edit.start_column, edit.end_line, edit.end_column) == (9, 84, 9, 91)
    assert apply(code, finding.fix.edits).splitlines()[8].endswith("tools=[TOOLS[n] for n in sorted(ENABLED)])")
    assert 'ENABLED = {"a", "b"}' in apply(code, finding.fix.edits)  # the constant keeps its type
    assert finding.fix.description == "Wrap `ENABLED` in sorted(...) where the tools are built (the collection keeps its type)"


def test_pc301_gives_the_reason_of_the_source():
    hashed = pc301(OPENAI + "def run(extra):\n    return client.chat.completions.create(model='m', messages=[], tools=list(set(extra)))\n")
    assert "hash randomisation" in hashed.message
    completed = pc301(
        CLAUDE + "import asyncio\nasync def run(loaders):\n    tools = [await f for f in asyncio.as_completed(loaders)]\n"
        "    return client.messages.create(model='m', messages=[], tools=tools)\n"
    )
    assert "completion order" in completed.message and "hash" not in completed.message


# -- the fixed programs run --------------------------------------------------------------------------

SPECS_CLAUDE = ("SPECS = {n: {'name': n, 'description': n.upper(), 'input_schema': {'type': 'object'}} "
                "for n in ('search', 'fetch', 'book')}\n")
SPECS_CHAT = ("SPECS = {n: {'type': 'function', 'function': {'name': n, 'parameters': {'type': 'object'}}} "
              "for n in ('search', 'fetch', 'book')}\n")
TOOL_CLASS = (
    "from dataclasses import dataclass\n@dataclass(frozen=True)\nclass Tool:\n    name: str\n"
    "    def schema(self):\n        return {'name': self.name, 'input_schema': {'type': 'object'}}\n"
)


CREATE_CLAUDE = "client.messages.create(model='claude-x', max_tokens=8, messages=[{'role': 'user', 'content': 'hi'}], tools="
CREATE_CHAT = "client.chat.completions.create(model='gpt-x', messages=[{'role': 'user', 'content': 'hi'}], tools="


@pytest.mark.parametrize(
    ("code", "provider", "args"),
    [
        pytest.param("import anthropic\nclient = None\n" + SPECS_CLAUDE + "ENABLED = {'search', 'fetch', 'book'}\n"
                     f"def run():\n    return {CREATE_CLAUDE}[SPECS[n] for n in ENABLED])\n", "anthropic", (), id="names"),
        pytest.param("import anthropic\nclient = None\n" + SPECS_CLAUDE + "def run(extra):\n    tools = [SPECS[n] for n in set(extra)]\n"
                     f"    return {CREATE_CLAUDE}tools)\n", "anthropic", (["search", "fetch", "book"],), id="anthropic-dicts"),
        pytest.param("from openai import OpenAI\nclient = None\n" + SPECS_CHAT + "def run(extra):\n    tools = [SPECS[n] for n in set(extra)]\n"
                     f"    return {CREATE_CHAT}tools)\n", "openai", (["search", "fetch", "book"],), id="openai-chat-dicts"),
        pytest.param("import anthropic\nclient = None\n" + TOOL_CLASS + "TOOLSET = {Tool(name='search'), Tool(name='fetch'), Tool(name='book')}\n"
                     f"def run():\n    return {CREATE_CLAUDE}[t.schema() for t in TOOLSET])\n", "anthropic", (), id="objects"),
    ],
)
def test_the_fixed_program_sends_the_tools_sorted_by_name(code, provider, args):
    finding = pc301(code)
    fixed = apply(code, finding.fix.edits)
    assert fixed != code
    assert sent_tool_names(fixed, provider, *args) == ["book", "fetch", "search"]
    assert lint_text(fixed, [ToolsFromUnorderedCollection]) == []  # fixed: nothing left to report


def test_pc401_advice_is_what_its_fix_does():
    # Newcomer (stop 30): an f-string with replacement fields is dedented in its source, not wrapped in cleandoc;
    # the message says so. A plain literal is wrapped.
    code = ('import anthropic\nclient = anthropic.Anthropic()\ndef ask(name, q):\n    prompt = f"""You are helping {name}.\n'
            '    Be concise.\n    """\n    return client.messages.create(model="m", max_tokens=9, system=prompt, messages=[q])\n'
            'class Bot:\n    SYSTEM = """Be brief.\n    Cite sources."""\n')
    found = [f for f in lint_text(code) if f.code == "PC401"]
    assert [(f.line, f.message.rsplit("; ", 1)[1]) for f in found] == [
        (4, "remove it from the source lines"), (9, "wrap it in inspect.cleandoc()")]
    assert '    prompt = f"""You are helping {name}.\nBe concise.\n' in apply(code, found[0].fix.edits)
    assert "SYSTEM = inspect.cleandoc(" in apply(code, found[1].fix.edits)
