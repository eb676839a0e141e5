"""The expected values of assertions are blanked before parsing (promptcache.lint.expected_values): same lines and
columns for everything else, and nothing an analysis reads is blanked."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

from promptcache.lint.config import LintConfig, load_config
from promptcache.lint.expected_values import blank_expected_values
from promptcache.lint.filelint import lint_bytes
from promptcache.lint.runner import select_rules
from promptcache.lint.sources import DEFAULT_PROMPT_NAME_REGEX

PROMPT_NAME = re.compile(DEFAULT_PROMPT_NAME_REGEX)

HEAD = """\
from datetime import datetime, timezone

import openai
from dirty_equals import IsStr
from inline_snapshot import snapshot
from litellm import completion
from myapp.llm import ask
from myapp.prompts import SYSTEM_PROMPT
from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, SystemPromptPart, UserPromptPart


def _build(x):
    return x


"""


def blank(body: str, sink_names: frozenset[str] = frozenset()) -> str:
    return blank_expected_values((HEAD + textwrap.dedent(body)).encode(), PROMPT_NAME, sink_names).decode()[len(HEAD):]


def test_a_snapshot_of_messages_becomes_an_ellipsis_over_the_same_lines():
    body = """\
    def test_run(result):
        assert result.all_messages() == snapshot(
            [
                ModelRequest(parts=[UserPromptPart(content='hi', timestamp=IsStr())], instructions='Be brief.'),
                datetime(2024, 1, 1, tzinfo=timezone.utc),
            ]
        )  # the trailing comment stays
        assert result.output == 'done'
    """
    assert blank(body) == (
        "def test_run(result):\n"
        "    assert result.all_messages() == (...\n"
        "\n"
        "\n"
        "\n"
        "\n"
        "    )  # the trailing comment stays\n"
        "    assert result.output == 'done'\n"
    )


def test_either_side_and_every_plain_side_is_blanked():
    body = """\
    def test_sides(x):
        assert [
            1,
            2,
        ] == x == {
            'a': -1,
            'b': (IsStr(), None),
        }
    """
    assert blank(body) == (
        "def test_sides(x):\n"
        "    assert (...\n"
        "\n"
        "\n"
        "    ) == x == (...\n"
        "\n"
        "\n"
        "    )\n"
    )


@pytest.mark.parametrize("value", [
    "messages[0]",  # a subscript of a local
    "history",  # a local name
    "(y := 1)",  # binds a name
    "SYSTEM_PROMPT",  # a prompt-named import of the app: its use settles the prompt module's findings
    'openai.chat.completions.create(model="m", messages=[])',  # a request through an SDK module
    'completion(model="m", messages=[])',  # litellm's request function
    "ask('hi')",  # an extra-sinks name (given below)
    "_build(1)",  # a function of this file: a call its parameters' findings weigh
    "IsStr(**options)",  # a spread
    "[*items]",
    "[m for m in messages]",
    "await reply()",
    "agent.invoke('hi')",
    'f"{datetime.now()}"',
    "datetime.now()",  # a method: a clock, an id, a request
    "{1, 2}",  # a set: its order is a source
    "1 + 2",
    "IsStr() if history else None",
])
def test_what_an_analysis_may_read_stays_whole(value):
    body = f"""\
    async def test_it(messages, history, items, options, agent, reply):
        assert result == [
            {value},
            2,
        ]
    """
    assert blank(body, frozenset({"ask"})) == textwrap.dedent(body)


# Review helper-99: what a rule reads in the value, or what reading it changes.
REVIEW_CASES = {
    # text rules read a prompt literal wherever it is written (PC406, PC401)
    "zero_width": "from inline_snapshot import snapshot\nfrom pydantic_ai.messages import ModelRequest, SystemPromptPart\n"
                  "def test_run(result):\n    assert result.all_messages() == snapshot(\n        [\n"
                  "            ModelRequest(parts=[SystemPromptPart(content='Be brief.\u200b')]),\n        ]\n    )\n",
    "indented": "from langchain_core.messages import SystemMessage\ndef test_lc(result):\n    assert result == [\n"
                "        SystemMessage(content=\"\"\"\n            You are a helpful assistant.\n            Answer briefly.\n"
                "        \"\"\")]  # noqa: PC401\n",
    # a local named like a constant: reading it hands the object on (object_state)
    "caps_local": "from datetime import datetime\nfrom anthropic import Anthropic\nclient = Anthropic()\nclass Tutor:\n"
                  "    def __init__(self, topic):\n        self.system = f'Teach {topic}. Started {datetime.now()}'\n"
                  "    def ask(self, q):\n        return client.messages.create(model='m', max_tokens=9, system=self.system, "
                  "messages=[{'role': 'user', 'content': q}])\n"
                  "def test_tutor(topic, log):\n    T = Tutor(topic)\n    T.ask('q')\n    assert log == [\n        T,\n        1,\n    ]\n",
    # an extra-sinks call under an import alias (the config below names myapp.llm.complete)
    "alias": "from myapp.llm import complete as ask_llm\ndef test_ask():\n    assert ask_llm(\n        system='Be brief.',\n"
             "        messages=[],\n    ) == 'ok'\n",
    # an assert in a prompt's text, after a one-line string that goes on over a backslash-newline
    "continued_string": "import anthropic\nclient = anthropic.Anthropic()\nNOTE = 'it\\\n\"\"\"'\n"
                        "SYSTEM_PROMPT = \"\"\"You review pytest code. Example:\n    assert result == [\n        1,   \n        2,\n    ]\n\"\"\"\n"
                        "def review(code):\n    return client.messages.create(model='m', max_tokens=9, system=SYSTEM_PROMPT, "
                        "messages=[{'role': 'user', 'content': code}])\n",
    # a prompt imported under an alias: its use in the importer settles the prompt module's finding (review helper-101)
    "alias_prompt": "from inline_snapshot import snapshot\nfrom pydantic_ai.messages import ModelRequest, SystemPromptPart\n"
                    "from myapp.prompts import SYSTEM_PROMPT as SP\ndef test_messages(result):\n"
                    "    assert result.all_messages() == snapshot(\n        [\n"
                    "            ModelRequest(parts=[SystemPromptPart(content=SP)]),\n        ]\n    )\n",
    # blanked, with a non-ASCII last line: columns count characters (the same findings: the test below)
    "non_ascii": "from datetime import datetime\nfrom anthropic import Anthropic\nclient = Anthropic()\ndef test_send():\n"
                 "    assert [\n        1,\n        'éé'] == client.messages.create(model='m', max_tokens=9, "
                 "system=f'Time: {datetime.now()}', messages=[])\n",
}


@pytest.mark.parametrize("name", sorted(set(REVIEW_CASES) - {"non_ascii"}))
def test_a_value_a_rule_reads_stays_whole(name):
    data = REVIEW_CASES[name].encode()
    assert blank_expected_values(data, PROMPT_NAME, frozenset({"complete"})) is data


def test_text_that_is_no_prompt_is_blanked_with_escapes_and_any_characters():
    body = """\
    def test_run(result):
        assert result.all_messages() == snapshot([
            ModelRequest(parts=[UserPromptPart(content='Caf\u00e9\\n\tmenu', timestamp=IsStr())]),
            {'role': 'user', 'name': 'Zo\u00eb\\n'},
        ])
    """
    assert blank(body).splitlines()[1:5] == ["    assert result.all_messages() == (...", "", "", "     )"]
    for slot in ["ModelRequest(parts=[], instructions='Be\\nbrief.')", "{'role': 'user', 'content': 'a\\tb'}",
                 "SystemPromptPart(content='a\\nb')", "('system', 'a\\nb')", "Agent(tools=[{'description': 'x\\ny'}])"]:
        body = f"def test_run(result):\n    assert result == snapshot([\n        {slot},\n    ])\n"
        assert blank(body) == body, slot


def _findings(data: bytes, path: str, config: LintConfig, blank: bool) -> list[tuple]:
    rules = [r for r in select_rules(config) if r.code != "PC901"]
    result = lint_bytes(data, path, rules, config, blank_expected=blank)
    # and what the file tells the run about its imports (a prompt module's findings hang on its importers' uses)
    return [(f.code, f.line, f.column, f.end_line, f.end_column, f.message, f.fix) for f in result.findings] + [
        result.uses, result.sizes, result.fields, result.depends]


def test_the_findings_are_the_same_with_and_without_the_blanking(shared_dir, tmp_path):
    """Over this project's tests, the shared lint cases and the review's cases: every file the blanking changes
    gets the same findings, positions, messages and fixes as without it."""
    config = load_config(start=tmp_path, overrides=['extra-sinks = ["myapp.llm.complete"]'])
    files = [(p.read_bytes(), str(p)) for p in [*Path(__file__).resolve().parents[1].rglob("*.py"),
                                                *(shared_dir / "cases" / "lint").rglob("*.py")]]
    files += [(text.encode(), f"tests/test_{name}.py") for name, text in REVIEW_CASES.items()]
    compared = 0
    for data, path in files:
        if blank_expected_values(data, PROMPT_NAME, frozenset({"complete"})) is data:
            continue
        compared += 1
        assert _findings(data, path, config, True) == _findings(data, path, config, False), path
    assert compared > 10


@pytest.mark.parametrize("body", [
    # a `noqa` or promptcache comment inside the value
    "def test_it(result):\n    assert result == [\n        1,  # noqa: PC101\n        2,\n    ]\n",
    # fewer than three lines
    "def test_it(result):\n    assert result == [\n        1, 2]\n",
    # an assert that shares its line with another statement
    "def test_it(result):\n    x = 1; assert result == [\n        1,\n        2,\n    ]\n",
    "def test_it(result):\n    assert result == [\n        1,\n        2,\n    ]; x = 1\n",
    # text in a triple-quoted string
    'EXAMPLE = """\n    assert result == [\n        1,\n        2,\n    ]\n"""\n',
    "def test_it(result):\n    assert result == ['''\n        1,\n        2,\n    ''']\n",
])
def test_text_and_short_or_shared_statements_stay_whole(body):
    assert blank(body) == body


def test_a_file_in_another_encoding_stays_whole():
    data = b"# -*- coding: latin-1 -*-\nfrom inline_snapshot import snapshot\n\ndef test_it(r):\n    assert r == [\n        1,\n        2,\n    ]\n"
    assert blank_expected_values(data, PROMPT_NAME) is data
    utf8 = data.replace(b"latin-1", b"utf-8")
    assert blank_expected_values(utf8, PROMPT_NAME) != utf8


def test_windows_line_ends_are_kept():
    data = b"def test_it(r):\r\n    assert r == [\r\n        1,\r\n        2,\r\n    ]\r\nx = 1\r\n"
    assert blank_expected_values(data, PROMPT_NAME) == b"def test_it(r):\r\n    assert r == (...\r\n\r\n\r\n    )\r\nx = 1\r\n"


def test_an_assert_that_does_not_close_on_its_own_line_is_followed_to_its_end():
    body = """\
    def test_it(result):
        assert result == [
            1,
            2]  # closed at the end of a line
        x = (
        )
    """
    assert blank(body) == (
        "def test_it(result):\n"
        "    assert result == (...\n"
        "\n"
        "         )  # closed at the end of a line\n"
        "    x = (\n"
        "    )\n"
    )


def test_every_file_keeps_its_lines_and_parses(shared_dir):
    """Over this project's tests and the shared lint cases: the same number of lines, each changed line inside a
    blanked value, and the result still parses."""
    blanked_files = 0
    for path in sorted([*Path(__file__).resolve().parents[1].rglob("*.py"), *(shared_dir / "cases" / "lint").rglob("*.py")]):
        data = path.read_bytes()
        out = blank_expected_values(data, PROMPT_NAME)
        if out is data:
            continue
        blanked_files += 1
        assert out.count(b"\n") == data.count(b"\n"), path
        ast.parse(out)
        for before, after in zip(data.split(b"\n"), out.split(b"\n")):
            assert before == after or after.lstrip(b" ").startswith(b")") or after.endswith(b"(...") or not after.strip(), path
    assert blanked_files > 10


def test_findings_after_a_blanked_value_keep_their_positions():
    source = textwrap.dedent("""\
        from datetime import datetime

        from anthropic import Anthropic
        from inline_snapshot import snapshot


        def test_send():
            client = Anthropic()
            assert client.calls == snapshot(
                [
                    {'model': 'claude-sonnet-4-5', 'system': 'Be brief.'},
                ]
            ), 'sent'
            client.messages.create(model="claude-sonnet-4-5", max_tokens=10, system=f"Time: {datetime.now()}", messages=[])
    """)
    config = LintConfig(root=Path("."))
    rules = [r for r in select_rules(config) if r.code != "PC901"]
    found = [(f.code, f.line, f.column) for f in lint_bytes(source.encode(), "test_send.py", rules, config).findings]
    assert blank_expected_values(source.encode(), PROMPT_NAME) != source.encode()
    assert found == [("PC101", 14, 86)]  # as without the blanking
