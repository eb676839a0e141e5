"""Configuration: discovery of the nearest file, strict validation, and the options' effect."""

from __future__ import annotations

import re
import tomllib
from dataclasses import fields

import pytest
from lint_support import REPO_ROOT, lint_text

from promptcache.lint import config as config_module
from promptcache.lint.config import ConfigError, LintConfig, from_table, load_config
from promptcache.lint.finding import Severity
from promptcache.lint.registry import discover


def test_nearest_config_wins_and_promptcache_toml_beats_pyproject(write_tree):
    root = write_tree(
        {
            "pyproject.toml": "[tool.promptcache.lint]\nfail-on = 'error'\n",
            "pkg/pyproject.toml": "[project]\nname = 'x'\n",  # no lint table: skipped
            "pkg/sub/promptcache.toml": "[lint]\nfail-on = 'info'\n",
            "pkg/sub/pyproject.toml": "[tool.promptcache.lint]\nfail-on = 'warning'\n",
        }
    )
    assert load_config(start=root / "pkg").fail_on is Severity.ERROR
    assert load_config(start=root / "pkg").source == root / "pyproject.toml"
    sub = load_config(start=root / "pkg" / "sub")
    assert sub.fail_on is Severity.INFO and sub.root == root / "pkg" / "sub"
    assert load_config(config_file=root / "pkg" / "sub" / "pyproject.toml").fail_on is Severity.WARNING


def test_defaults_without_config(tmp_path):
    config = load_config(start=tmp_path)
    assert config.source is None and config.select == ("ALL",) and config.fail_on is Severity.WARNING


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"selct": ["PC1"]}, "unknown key 'selct'"),
        ({"select": "PC101"}, "select: expected a list of strings"),
        ({"ignore": ["E501"]}, "unknown rule code 'E501'"),
        ({"fail-on": "fatal"}, "fail-on: expected"),
        ({"prompt-name-regex": "(unclosed"}, "prompt-name-regex: invalid regular expression"),
        # No rule reads it (PC603 is not implemented): rejected like any unknown key.
        ({"min-cacheable-chars": 4000}, "unknown key 'min-cacheable-chars'"),
        ({"respect-gitignore": "yes"}, "respect-gitignore: expected true or false"),
        ({"per-file-ignores": {"tests/*": "PC101"}}, "per-file-ignores.tests/*: expected a list of rule codes"),
    ],
)
def test_strict_validation(table, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("*", r"\*")):
        from_table(table)


def test_codes_must_exist():
    config = from_table({"extend-select": ["PC999"]})
    with pytest.raises(ConfigError, match="unknown rule code 'PC999'"):
        config.validate_codes(discover())
    from_table({"select": ["PC1", "PC203", "ALL"]}).validate_codes(discover())


def test_selection_by_prefix():
    config = from_table({"select": ["PC2"], "extend-select": ["PC401"], "ignore": ["PC203"]})
    assert config.selected(discover()) == {"PC201", "PC202", "PC204", "PC401"}


def test_prompt_name_regex_controls_prompt_constants():
    code = "import anthropic\nimport time\nGREETING = f'Hi at {time.time()}'\n"
    assert lint_text(code) == []
    config = from_table({"prompt-name-regex": "(?i)greeting"})
    assert [f.code for f in lint_text(code, config=config)] == ["PC101"]


def test_volatile_name_regex():
    code = "import anthropic\nc = anthropic.Anthropic()\ndef ask(tick, q):\n    return c.messages.create(model='m', system=f'Tick {tick}. Help.', messages=[])\n"
    assert [f.code for f in lint_text(code)] == ["PC102"]  # a templated parameter: per-request
    config = from_table({"volatile-name-regex": "^tick$"})
    assert [f.code for f in lint_text(code, config=config)] == ["PC101"]


def test_extra_sinks_and_extra_volatile_sources():
    code = "from myco import llm, clock\ndef ask(q):\n    return llm.complete(model='m', system=f'{clock.now()} Help.', messages=[q])\n"
    assert lint_text(code) == []
    config = from_table({"extra-sinks": ["myco.llm.complete"], "extra-volatile-sources": ["myco.clock.now"]})
    assert [f.code for f in lint_text(code, config=config)] == ["PC101"]
    suffix = from_table({"extra-sinks": ["*.llm.complete"], "extra-volatile-sources": ["myco.clock.now"]})
    assert [f.code for f in lint_text(code, config=suffix)] == ["PC101"]


WRAPPER = """from openai import OpenAI


class LLM:
    def chat(self, system, messages):
        return OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "system", "content": system}, *messages])
"""
APP = """from datetime import datetime
from typing import Optional

from .llm import LLM


class Bot:
    def __init__(self, llm: LLM):
        self.llm = llm

    def answer(self, question):
        return self.llm.chat(system=f"Now: {datetime.now()}", messages=[question])


def one_off(question):
    llm = LLM()
    return llm.chat(system=f"Now: {datetime.now()}", messages=[question])


def typed(question, llm: Optional["LLM"] = None):
    return llm.chat(system=f"Now: {datetime.now()}", messages=[question])


def other(question, bot):
    return bot.chat(system=f"Now: {datetime.now()}", messages=[question])
"""


@pytest.mark.parametrize("entry", ["myapp.llm.LLM.chat", "llm.LLM.chat", "LLM.chat", "*.LLM.chat"])
def test_an_extra_sink_method_matches_calls_on_objects_of_its_class(write_tree, run_cli, monkeypatch, entry):
    # newcomer helper-88: `extra-sinks = ["llm.LLM.chat"]` matched nothing, only "*.chat" did; the receiver's
    # class is read from a constructor call or an annotation in the calling module (bot.chat: unknown, not matched)
    root = write_tree({"promptcache.toml": f"[lint]\nextra-sinks = [{entry!r}]\n",
                       "myapp/__init__.py": "", "myapp/llm.py": WRAPPER, "myapp/app.py": APP})
    monkeypatch.chdir(root)
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--select", "PC101", "--output-format", "concise")
    assert [line.split(" ")[0] for line in out.splitlines() if "PC101" in line] == \
        ["myapp/app.py:12:45:", "myapp/app.py:17:36:", "myapp/app.py:21:36:"]
    assert code == 1 and "warning" not in err


FORMS = """from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Union

from .llm import LLM


def made() -> LLM:
    return LLM()


def annotated(q):
    llm: LLM = made()
    return llm.chat(system=f"{datetime.now()}", messages=[q])


@dataclass
class Bot:
    llm: LLM

    def ask(self, q):
        return self.llm.chat(system=f"{datetime.now()}", messages=[q])


def fallback(q, given=None):
    llm = given or LLM()
    return llm.chat(system=f"{datetime.now()}", messages=[q])


def union(q, llm: Union[LLM, None], other: Annotated[LLM, "meta"], odd: "LLM." = None):
    first = llm.chat(system=f"{datetime.now()}", messages=[q])
    return first, other.chat(system=f"{datetime.now()}", messages=[q])


def direct(q):
    with LLM() as llm:
        first = LLM().chat(system=f"{datetime.now()}", messages=[q])
        return first, llm.chat(system=f"{datetime.now()}", messages=[q])
"""


def test_the_forms_that_show_an_extra_sink_methods_class(write_tree, run_cli, monkeypatch):
    # review helper-89: an annotation beside a factory's value, a class-level field, `a or LLM()`, Union / Annotated,
    # a call on the constructed object and `with ... as`; an unparsable string annotation does not stop the file
    root = write_tree({"promptcache.toml": "[lint]\nextra-sinks = ['myapp.llm.LLM.chat']\n",
                       "myapp/__init__.py": "", "myapp/llm.py": WRAPPER, "myapp/forms.py": FORMS})
    monkeypatch.chdir(root)
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--select", "PC101,PC901", "--output-format", "concise")
    assert [int(line.split(":")[1]) for line in out.splitlines() if "PC101" in line] == [14, 22, 27, 31, 32, 37, 38]
    assert "PC901" not in out and err == ""


def test_every_extra_sink_entry_that_names_a_call_counts_and_imports_may_rename_it(write_tree, run_cli, monkeypatch):
    # review helper-89: of two entries naming one call the second was said to name none; a function imported under
    # another name was skipped by the pre-filter, and one imported relatively (`from .llm import`) never matched
    ask = ("from datetime import datetime\nfrom myapp.llm import complete as ask\nfrom .llm import complete\n"
           "def a(q):\n    return ask(system=f'{datetime.now()}', messages=[q])\n"
           "def b(q):\n    return complete(system=f'{datetime.now()}', messages=[q])\n")
    root = write_tree({"promptcache.toml": "[lint]\nextra-sinks = ['*.chat', 'myapp.llm.LLM.chat', 'myapp.llm.complete']\n",
                       "myapp/__init__.py": "", "myapp/llm.py": WRAPPER + "def complete(system, messages):\n    pass\n",
                       "myapp/app.py": APP, "myapp/ask.py": ask})
    monkeypatch.chdir(root)
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--select", "PC101", "--output-format", "concise")
    assert [line.split(" ")[0] for line in out.splitlines() if line.startswith("myapp/ask.py")] == \
        ["myapp/ask.py:5:26:", "myapp/ask.py:7:31:"]
    assert code == 1 and err == ""


def test_an_extra_sink_that_names_no_call_is_a_warning(write_tree, run_cli):
    root = write_tree({"promptcache.toml": "[lint]\nextra-sinks = ['myapp.llm.LLM.chat', 'Other.chat', '*.ask']\n",
                       "myapp/__init__.py": "", "myapp/llm.py": WRAPPER, "myapp/app.py": APP})
    for _ in range(2):  # the second run reads the files' results from the cache: the same warning
        code, _, err = run_cli("lint", root / "myapp", "--select", "PC101")
        assert code == 1 and err.startswith("warning: extra-sinks 'Other.chat', '*.ask' named no call in the files "
                                            "linted.\n  A module function: 'myapp.llm.complete'; a method:")
    code, _, err = run_cli("lint", root / "myapp" / "llm.py", "--select", "PC101")  # one named file: says nothing
    assert code == 0 and err == ""
    # a file not analysed (a file-level noqa) that shows the call counts as calling it
    (root / "myapp" / "legacy.py").write_text("# promptcache: noqa\ndef go(bot):\n    return bot.ask(system='x')\n")
    code, _, err = run_cli("lint", root / "myapp", "--select", "PC101")
    assert code == 1 and err.startswith("warning: extra-sinks 'Other.chat' named no call in the files linted.\n")


def test_with_overrides_ignores_none():
    config = LintConfig().with_overrides(select=None, fail_on=Severity.INFO)
    assert config.select == ("ALL",) and config.fail_on is Severity.INFO


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("promptcache.toml", 'select = ["PC4"]\n', "unknown key 'select' at the top level; lint settings go in the [lint] table"),
        ("promptcache.toml", '[lnit]\nselect = ["PC4"]\n', "unknown key 'lnit' at the top level"),
        ("pyproject.toml", '[tool.promptcache]\nselect = ["PC4"]\n', "unknown key 'select' at [tool.promptcache]; lint settings go in the [tool.promptcache.lint] table"),
        ("pyproject.toml", '[tool.promptcache.lnit]\nselect = ["PC4"]\n', "unknown key 'lnit' at [tool.promptcache]"),
    ],
)
def test_unknown_top_level_keys_and_tables_are_errors(write_tree, run_cli, name, text, message):
    root = write_tree({name: text, "app.py": "import anthropic\n"})
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(start=root)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(config_file=root / name)
    code, _, err = run_cli("lint", root)
    assert code == 2 and message in err and name in err


def test_the_documented_configuration_is_exactly_the_accepted_one():
    """docs/lint.md's example table names every key the validator accepts, and no other; each key
    sets a LintConfig field (the code reads them: see the keys' list under the example)."""
    text = (REPO_ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(\[tool\.promptcache\.lint\]\n.*?)```", text, re.S).group(1)
    table = tomllib.loads(block)["tool"]["promptcache"]["lint"]
    assert sorted(table) == sorted(config_module._KEYS)
    config = from_table(table)
    config.validate_codes(discover())
    field_names = {f.name for f in fields(LintConfig)} - {"root", "source"}
    assert field_names == {key.replace("-", "_") for key in table}
    assert config.extra_sinks == ("myapp.llm.complete", "*.ask_model")


def test_a_misspelt_key_gets_a_suggestion(write_tree):
    root = write_tree({"pyproject.toml": "[tool.promptcache.lint]\ninclude_tests = true\n"})
    with pytest.raises(ConfigError, match=re.escape("unknown key 'include_tests' in the lint configuration; did you mean "
                                                    "'include-tests'? known keys: exclude,")):
        load_config(start=root)


@pytest.mark.parametrize(("name", "prompt"), [
    ("SYSTEM_PROMPT", True), ("build_prompt", True), ("PROMPT_KEY_POINTS", True), ("PROMPT_FILE_HEADER", True),
    ("prompt_name_template", True), ("promptNameTemplate", True), ("prompt_length_guidance", True),
    ("instructions", True), ("preamble", True),
    # a name ending in what names, counts or locates a prompt (skyvern, blind set 18)
    ("get_llm_handler_for_prompt_type", False), ("SYSTEM_PROMPT_NAME", False), ("system_prompt_tokens", False),
    ("SYSTEM_PROMPT_FILE", False), ("promptName", False), ("PROMPT_KEYS", False), ("prompt_ids", False),
    ("filesystem_test_session", False), ("subsystem", False),
])
def test_the_default_prompt_name_regex(name, prompt):
    assert bool(re.search(LintConfig().prompt_name_regex, name)) is prompt
