"""PC301's fix covers every read of the collection, and never sorts where a set re-orders it anyway.

A collection read by two ``tools=`` slots (or twice by one) is one finding,
at the collection; applying its fix must sort every read, or the finding
stays. Where a set (literal, comprehension, ``|``/``&``/``-``) re-orders the
collection's elements on their way to ``tools=``, ``sorted()`` of the
collection orders nothing: the set is wrapped instead. When one read cannot
be given a key, no read gets an edit (no half-fix). The edits are checked
exactly as ``--output-format json`` prints them, and the fixed programs are
run against the real Anthropic client.
"""

from __future__ import annotations

import json

from lint_support import apply, lint_text, sent_tools

from lint_rules.ordering import ToolsFromUnorderedCollection

CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
SPECS = ("SPECS = {n: {'name': n, 'input_schema': {'type': 'object'}} for n in ('search', 'fetch', 'book', 'pay')}\n"
         "MORE = SPECS\n")
NO_EDIT = "Sort the tools by name before they reach tools="


def edit(row: int, column: int, end_column: int, content: str) -> dict:
    """One edit of the JSON ``fix`` field, on one line."""
    return {"location": {"row": row, "column": column}, "end_location": {"row": row, "column": end_column}, "content": content}


def pc301_json(write_tree, run_cli, code: str) -> list[dict]:
    """The PC301 findings of ``code`` as ``promptcache lint --output-format json`` prints them."""
    root = write_tree({"app.py": code})
    _, out, _ = run_cli("lint", root / "app.py", "--select", "PC301", "--output-format", "json")
    return json.loads(out)


def test_a_constant_read_by_two_calls_is_sorted_at_both_reads(write_tree, run_cli):
    code = (CLAUDE + 'TOOLS = {"a": {"name": "a"}, "b": {"name": "b"}}\nENABLED = {"a", "b"}\n'
            'r1 = client.messages.create(model="m", max_tokens=1, messages=[], tools=[TOOLS[n] for n in ENABLED])\n'
            'r2 = client.messages.create(model="m", max_tokens=1, messages=[], tools=[TOOLS[n] for n in ENABLED])\n')
    (finding,) = pc301_json(write_tree, run_cli, code)
    assert (finding["line"], finding["column"]) == (4, 11)
    assert finding["fix"] == {
        "message": "Wrap `ENABLED` in sorted(...) where the tools are built (the collection keeps its type)",
        "applicability": "unsafe",
        "edits": [edit(5, 92, 99, "sorted(ENABLED)"), edit(6, 92, 99, "sorted(ENABLED)")],
    }
    assert lint_text(apply(code, finding["fix"]["edits"]), [ToolsFromUnorderedCollection]) == []


def test_both_calls_send_the_tools_sorted_after_the_fix(write_tree, run_cli):
    code = ("import anthropic\nclient = None\n" + SPECS + "ENABLED = {'search', 'fetch', 'book'}\ndef run():\n"
            "    client.messages.create(model='m', max_tokens=1, messages=[{'role': 'user', 'content': 'hi'}], tools=[SPECS[n] for n in ENABLED])\n"
            "    client.messages.create(model='m', max_tokens=1, messages=[{'role': 'user', 'content': 'hi'}], tools=[SPECS[n] for n in ENABLED])\n")
    (finding,) = pc301_json(write_tree, run_cli, code)
    assert len(finding["fix"]["edits"]) == 2
    assert sent_tools(apply(code, finding["fix"]["edits"]), "anthropic") == [["book", "fetch", "search"]] * 2


def test_a_constant_read_twice_by_one_slot_is_sorted_at_both_reads(write_tree, run_cli):
    code = (CLAUDE + "from .specs import SPECS\nENABLED = {'search', 'fetch'}\ndef run():\n"
            "    return client.messages.create(model='m', max_tokens=1, messages=[],\n"
            "        tools=[SPECS[n] for n in ENABLED] + [{'name': f'{n}_v2', 'input_schema': {}} for n in ENABLED])\n")
    (finding,) = pc301_json(write_tree, run_cli, code)
    assert finding["fix"]["edits"] == [edit(7, 34, 41, "sorted(ENABLED)"), edit(7, 95, 102, "sorted(ENABLED)")]


def test_a_set_comprehension_on_the_way_is_what_gets_sorted(write_tree, run_cli):
    code = ("import anthropic\nclient = None\n" + SPECS + "ENABLED = {'Search', 'Fetch', 'Book'}\ndef run():\n"
            "    return client.messages.create(model='m', max_tokens=1, messages=[{'role': 'user', 'content': 'hi'}], "
            "tools=[SPECS[n] for n in {k.lower() for k in ENABLED}])\n")
    constant, comprehension = pc301_json(write_tree, run_cli, code)
    wrap = edit(7, 131, 159, "sorted({k.lower() for k in ENABLED})")  # not sorted(ENABLED): the set re-hashes it
    assert (constant["line"], comprehension["line"]) == (5, 7)
    assert constant["fix"]["edits"] == comprehension["fix"]["edits"] == [wrap]
    assert constant["fix"]["message"] == (
        "Wrap `{k.lower() for k in ENABLED}` in sorted(...) where the tools are built: a set re-orders the elements "
        "of `ENABLED` by hash on their way to tools=, so sorting `ENABLED` itself would not fix the order"
    )
    fixed = apply(code, constant["fix"]["edits"])
    assert lint_text(fixed, [ToolsFromUnorderedCollection]) == []
    assert sent_tools(fixed, "anthropic") == [["book", "fetch", "search"]]


def test_a_set_of_tool_dicts_gets_no_edit(write_tree, run_cli):
    # The reviewer's case: sorted(ENABLED) inside the set comprehension would order nothing, and a set
    # cannot hold tool dicts (unhashable), so no sorted() key is right for the set either.
    code = (CLAUDE + 'TOOLS = {"a": {"name": "a"}, "b": {"name": "b"}}\nENABLED = {"a", "b"}\n'
            'r = client.messages.create(model="m", max_tokens=1, messages=[], tools=[*{TOOLS[k] for k in ENABLED}])\n')
    constant, comprehension = pc301_json(write_tree, run_cli, code)
    assert (constant["line"], comprehension["line"]) == (4, 5)
    for finding in (constant, comprehension):
        assert finding["fix"]["edits"] == []
        assert finding["fix"]["message"].startswith(NO_EDIT)


def test_a_set_operation_of_two_constants_is_sorted_whole(write_tree, run_cli):
    code = ("import anthropic\nclient = None\n" + SPECS + "CORE = {'search', 'fetch'}\nEXTRA = {'book'}\ndef run():\n"
            "    return client.messages.create(model='m', max_tokens=1, messages=[{'role': 'user', 'content': 'hi'}], "
            "tools=[SPECS[n] for n in CORE | EXTRA])\n")
    core, extra = pc301_json(write_tree, run_cli, code)
    assert (core["line"], extra["line"]) == (5, 6)
    # sorted(CORE) | EXTRA would raise TypeError (list | set)
    assert core["fix"]["edits"] == extra["fix"]["edits"] == [edit(8, 131, 143, "sorted(CORE | EXTRA)")]
    assert sent_tools(apply(code, core["fix"]["edits"]), "anthropic") == [["book", "fetch", "search"]]


def test_no_read_gets_an_edit_when_one_read_has_no_safe_key(write_tree, run_cli):
    code = (CLAUDE + "from .tools import make_tool\nTOOLSET = {make_tool('search'), make_tool('fetch')}\n"
            "def described():\n    return client.messages.create(model='m', max_tokens=1, messages=[], "
            "tools=[{'name': t.name, 'input_schema': {}} for t in TOOLSET])\n"
            "def raw():\n    return client.messages.create(model='m', max_tokens=1, messages=[], tools=[*TOOLSET])\n")
    (finding,) = pc301_json(write_tree, run_cli, code)
    assert finding["line"] == 4
    assert finding["fix"]["edits"] == []  # sorted(TOOLSET, key=lambda t: t.name) in described() alone is a half-fix
    assert finding["fix"]["message"].startswith(NO_EDIT)


def test_two_collections_on_one_line_are_one_finding_with_both_edits(write_tree, run_cli):
    code = (CLAUDE + "from .specs import SPECS, MORE\ndef run():\n"
            "    return client.messages.create(model='m', max_tokens=1, messages=[], "
            "tools=[*(SPECS[n] for n in {'search', 'fetch'}), *(MORE[n] for n in {'book', 'pay'})])\n")
    (finding,) = pc301_json(write_tree, run_cli, code)
    assert finding["fix"] == {
        "message": "Wrap `{'search', 'fetch'}` in sorted(...); Wrap `{'book', 'pay'}` in sorted(...)",
        "applicability": "unsafe",
        "edits": [edit(5, 100, 119, "sorted({'search', 'fetch'})"), edit(5, 141, 156, "sorted({'book', 'pay'})")],
    }


def test_a_set_attribute_sent_by_two_methods_through_one_helper_is_one_finding(write_tree, run_cli):
    # langroid (blind set 15): `self.usable = set()` filled at run time, iterated in a helper whose tuple both the sync
    # and the async request methods unpack and send through the app's own LLM wrapper. The specs come from a function
    # not seen here and the wrapper's tool shape is not known, so no sorted() key is safe and neither sink has an
    # edit: one problem, one finding (it was two, one per sink).
    code = (CLAUDE + "from .specs import make_spec\nclass Agent:\n    def __init__(self, llm):\n        self.llm = llm\n"
            "        self.usable = set()\n"
            "    def enable(self, name):\n        self.usable.add(name)\n"
            "    def _args(self):\n        tools = [make_spec(n) for n in self.usable]\n        return 'auto', tools\n"
            "    def ask(self, m):\n        choice, tools = self._args()\n        return self.llm.chat(m, tools=tools)\n"
            "    async def ask_async(self, m):\n        choice, tools = self._args()\n        return self.llm.chat(m, tools=tools)\n")
    (finding,) = pc301_json(write_tree, run_cli, code)
    assert finding["line"] == 15 and finding["fix"]["edits"] == []
    assert finding["fix"]["message"].startswith(NO_EDIT)
    assert lint_text(code.replace("in self.usable]", "in sorted(self.usable)]"), [ToolsFromUnorderedCollection]) == []
    # sent with the Anthropic client, each sink gets its own edit (the SDK's tool shape gives the key): two findings
    claude = code.replace("return self.llm.chat(m, tools=tools)",
                                   "return client.messages.create(model='m', max_tokens=1, messages=m, tools=tools)")
    assert [f["line"] for f in pc301_json(write_tree, run_cli, claude)] == [15, 18]
