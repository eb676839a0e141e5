"""``extra-sinks``: an app's own LLM wrappers, by name or with a table that maps their arguments; the entries'
validation; ``--config "key = value"`` overrides (how a user without a config file names a wrapper)."""

from __future__ import annotations

import pytest
from lint_support import lint_text

from promptcache.lint.config import ConfigError, from_table


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
    # `bot.chat(...)` of an unannotated parameter: not matched, and said (a pattern matches it whatever its class)
    assert code == 1 and (err == "" if entry.startswith("*.") else err.startswith(
        f"warning: extra-sinks {entry!r}: some calls of .chat() (the first at\n  myapp/app.py:25) are on objects"))


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


def factory(q):
    llm = made()
    return llm.chat(system=f"{datetime.now()}", messages=[q])
"""


def test_the_forms_that_show_an_extra_sink_methods_class(write_tree, run_cli, monkeypatch):
    # review helper-89: an annotation beside a factory's value, a class-level field, `a or LLM()`, Union / Annotated,
    # a call on the constructed object and `with ... as`; (newcomer helper-90) a factory annotated `-> LLM`;
    # an unparsable string annotation does not stop the file
    root = write_tree({"promptcache.toml": "[lint]\nextra-sinks = ['myapp.llm.LLM.chat']\n",
                       "myapp/__init__.py": "", "myapp/llm.py": WRAPPER, "myapp/forms.py": FORMS})
    monkeypatch.chdir(root)
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--select", "PC101,PC901", "--output-format", "concise")
    assert [int(line.split(":")[1]) for line in out.splitlines() if "PC101" in line] == [14, 22, 27, 31, 32, 37, 38, 43]
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
    assert code == 1 and err.startswith("warning: extra-sinks 'myapp.llm.LLM.chat': some calls of .chat() (the first at\n"
                                        "  myapp/app.py:25) are on")


def test_an_extra_sink_that_names_no_call_is_a_warning(write_tree, run_cli):
    root = write_tree({"promptcache.toml": "[lint]\nextra-sinks = ['myapp.llm.LLM.chat', 'Other.reply', '*.ask']\n",
                       "myapp/__init__.py": "", "myapp/llm.py": WRAPPER, "myapp/app.py": APP})
    for _ in range(2):  # the second run reads the files' results from the cache: the same warning
        code, _, err = run_cli("lint", root / "myapp", "--select", "PC101")
        assert code == 1 and err.startswith("warning: extra-sinks 'Other.reply', '*.ask' named no call in the files "
                                            "linted.\n  A module function: 'myapp.llm.reply'; a method:")
    code, _, err = run_cli("lint", root / "myapp" / "llm.py", "--select", "PC101")  # one named file: says nothing
    assert code == 0 and err == ""
    # a file not analysed (a file-level noqa) that shows the call counts as calling it
    (root / "myapp" / "legacy.py").write_text("# promptcache: noqa\ndef go(bot):\n    return bot.ask(system='x')\n")
    code, _, err = run_cli("lint", root / "myapp", "--select", "PC101")
    assert code == 1 and err.startswith("warning: extra-sinks 'Other.reply' named no call in the files linted.\n")




OWN_NAMES = """from openai import OpenAI


class LLM:
    def ask(self, question, system_prompt="", history=(), functions=None):
        messages = [{"role": "system", "content": system_prompt}, *history, {"role": "user", "content": question}]
        return OpenAI().chat.completions.create(model="gpt-4o", messages=messages, tools=functions)
"""
OWN_CALLS = """from datetime import datetime

from .llm import LLM


class Bot:
    def __init__(self):
        self.llm = LLM()
        self.history = []

    def answer(self, question):
        return self.llm.ask(question, system_prompt=f"Now: {datetime.now()}", history=self.history)

    def positional(self, question):
        return self.llm.ask(question, f"Today is {datetime.now():%A %H:%M}", self.history)

    def tools(self, question, registry):
        return self.llm.ask(question, "Help.", self.history, list(set(registry)))

    def star(self, question, *rest):
        return self.llm.ask(question, *rest, f"{datetime.now()}")

    def elsewhere(self, question):
        return self.llm.ask(f"{datetime.now()} {question}", system="Help.")
"""
MAP = ('{call = "myapp.llm.LLM.ask", system = ["system_prompt", 1], messages = ["history", 2], '
       'tools = ["functions", 3]}')


def test_a_table_entry_maps_a_wrappers_own_parameter_names_and_positions(write_tree, run_cli, monkeypatch):
    # newcomer helper-90: a wrapper with its own parameter names or positional arguments gave nothing
    root = write_tree({"myapp/__init__.py": "", "myapp/llm.py": OWN_NAMES, "myapp/bot.py": OWN_CALLS})
    monkeypatch.chdir(root)
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--config", "extra-sinks = ['myapp.llm.LLM.ask']")
    # named without a table, the wrapper's calls are read as any agent call is (its `system_prompt=`, not positions:
    # naming it no longer hides that; newcomer helper-92), and the run says a table is needed
    assert code == 1 and [line.split(" [")[0] for line in out.splitlines() if "PC" in line] == ["myapp/bot.py:12:61: PC101"]
    assert err == ("warning: extra-sinks 'myapp.llm.LLM.ask': some of its calls (the first at\n"
                   "  myapp/bot.py:12) pass none of system=, messages=, tools=, model=,\n"
                   "  instructions=, input=, contents=, so what they send is not checked. Map the\n"
                   "  wrapper's own parameters with a table (a keyword by its name, a position as a\n"
                   "  number from 0), e.g.\n"
                   '    {call = "myapp.llm.LLM.ask", system = ["system_prompt", 1], messages = ["history", 2]}\n'
                   "  See docs/lint.md, Configuration.\n")
    # a table of keywords only, with calls that pass by position: still said, with the table it has
    names_only = '{call = "myapp.llm.LLM.ask", system = "system_prompt", messages = "history"}'
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--config", f"extra-sinks = [{names_only}]")
    assert err.startswith("warning: extra-sinks 'myapp.llm.LLM.ask': some of its calls (the first at\n"
                          "  myapp/bot.py:15) pass none of the arguments its table maps (messages =\n"
                          '  "history", system = "system_prompt")'), err
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--config", f"extra-sinks = [{MAP}]")
    assert [line.split(" [")[0] for line in out.splitlines() if line.startswith("myapp/")] == [
        "myapp/bot.py:12:61: PC101", "myapp/bot.py:15:51: PC101", "myapp/bot.py:18:62: PC301"]
    assert "reaches system_prompt=: " in out and "reaches system (position 1) to the minute" in out
    # after a `*rest` no position is known, and `system=` is not the wrapper's system prompt once the map names it
    assert code == 1 and err == ""


@pytest.mark.parametrize(("entry", "message"), [
    ('""', "extra-sinks: an empty name: write a function's qualified name, like 'myapp.llm.complete'"),
    ('"*"', "extra-sinks: '*' names no call: '*.' must be followed by the call's last names, like '*.chat'"),
    ('"LLM.chat()"', "extra-sinks: 'LLM.chat()' is not a dotted name: write 'LLM.chat'"),
    ('"myapp.llm:LLM.chat"', "extra-sinks: 'myapp.llm:LLM.chat' is not a dotted name: write 'myapp.llm.LLM.chat'"),
    ('"my app.chat"', "extra-sinks: 'my app.chat' is not a dotted name: write one like 'myapp.llm.complete' or '*.chat'"),
    ('{system = "s"}', 'extra-sinks: {system = "s"}: a table needs `call`, the name of the wrapper (a string)'),
    ('{call = "LLM.ask", sytem = "s"}', "extra-sinks: 'LLM.ask': unknown option 'sytem'; did you mean 'system'? a table "
                                         "maps the request options contents, input, instructions, messages, model, "
                                         "system, tools"),
    # newcomer helper-92: a position in quotes, one argument mapped to two options, one table instead of a list
    ('{call = "LLM.ask", system = "1"}', "extra-sinks: 'LLM.ask': system = \"1\": expected a keyword name"),
    ('{call = "LLM.ask", system = ["history"], messages = "history"}',
     "extra-sinks: 'LLM.ask': \"history\" is mapped to both messages and system; one argument carries one request option"),
    ('{call = "LLM.ask", system = -1}', "extra-sinks: 'LLM.ask': system = -1: expected a keyword name"),
    ('{call = "LLM.ask", system = []}', "extra-sinks: 'LLM.ask': system = []: expected a keyword name"),
    ("3", "extra-sinks: expected a name or a table like"),
    # review helper-93: a TOML date crashed the message's rendering
    ('{call = "a.b", system = 1979-05-27}', 'extra-sinks: \'a.b\': system = "1979-05-27": expected a keyword name'),
])
def test_an_extra_sink_entry_that_can_name_no_call_is_a_configuration_error(write_tree, run_cli, entry, message):
    root = write_tree({"promptcache.toml": f"[lint]\nextra-sinks = [{entry}]\n", "app.py": "import openai\n"})
    with pytest.raises(ConfigError) as info:
        from_table({"extra-sinks": __import__("tomllib").loads(f"x = [{entry}]")["x"]})
    assert message in str(info.value)
    code, _, err = run_cli("lint", root)
    assert code == 2 and message in err and "promptcache.toml" in err


@pytest.mark.parametrize(("names", "message"), [
    ('["*.now"]', "'*.now': a pattern is not accepted here; write the call's qualified name"),
    ('["myco.clock.now()"]', "'myco.clock.now()' is not a dotted name: write 'myco.clock.now'"),
    ('"myco.clock.now"', "expected a list of names, got 'myco.clock.now'"),
])
def test_extra_volatile_sources_are_checked_too(names, message):
    with pytest.raises(ConfigError, match=__import__("re").escape(f"extra-volatile-sources: {message}")):
        from_table({"extra-volatile-sources": __import__("tomllib").loads(f"x = {names}")["x"]})


def test_config_overrides_on_the_command_line(write_tree, run_cli, monkeypatch):
    # ruff's `--config "key = value"`: how a user without a config file names a wrapper; it wins over the file
    root = write_tree({"promptcache.toml": "[lint]\nselect = ['PC3']\n", "myapp/__init__.py": "",
                       "myapp/llm.py": OWN_NAMES, "myapp/bot.py": OWN_CALLS})
    monkeypatch.chdir(root)
    code, out, _ = run_cli("lint", "myapp", "--no-cache", "--config", f"extra-sinks = [{MAP}]")
    assert code == 1 and [line.split(" [")[0] for line in out.splitlines() if "PC" in line] == ["myapp/bot.py:18:62: PC301"]
    code, out, _ = run_cli("lint", "myapp", "--no-cache", "--config", f"extra-sinks = [{MAP}]",
                           "--config", "lint.select = ['pc101']")
    assert code == 1 and [line.split(" [")[0] for line in out.splitlines() if "PC" in line] == \
        ["myapp/bot.py:12:61: PC101", "myapp/bot.py:15:51: PC101"]
    code, _, err = run_cli("lint", "myapp", "--config", "extra-sinks = ['LLM.ask()']")
    assert code == 2 and err == "error: --config: extra-sinks: 'LLM.ask()' is not a dotted name: write 'LLM.ask'\n"
    code, _, err = run_cli("lint", "myapp", "--config", "promptcache.toml", "--config", "promptcache.toml")
    assert code == 2 and "--config names more than one file" in err


def test_rule_codes_in_the_config_are_read_as_on_the_command_line():
    # newcomer helper-90: `select = ["pc101"]` was refused while `--select pc1` was accepted
    config = from_table({"select": ["pc101"], "per-file-ignores": {"a.py": ["pc1"]}})
    assert config.select == ("PC101",) and config.per_file_ignores == (("a.py", ("PC1",)),)


def test_an_unmatched_entry_is_explained_in_its_own_names(write_tree, run_cli):
    root = write_tree({"promptcache.toml": "[lint]\nextra-sinks = ['Assistant.reply']\n", "myapp/__init__.py": "",
                       "myapp/llm.py": OWN_NAMES, "myapp/bot.py": OWN_CALLS})
    code, _, err = run_cli("lint", root / "myapp")
    assert code == 0 and err == (
        "warning: extra-sinks 'Assistant.reply' named no call in the files linted.\n"
        "  A module function: 'myapp.llm.reply'; a method: 'myapp.llm.Assistant.reply'\n"
        "  (its object built as Assistant(...) or annotated ': Assistant' in the calling\n"
        "  module); any call ending in .reply: '*.reply'. See docs/lint.md,\n"
        "  Configuration.\n")


def test_calls_on_objects_of_a_class_not_shown_are_said_to_be_unchecked(write_tree, run_cli, monkeypatch):
    # newcomer helper-92: `llm = get_llm()` of another module matched nothing, and nothing said so
    factory = OWN_NAMES + "\n\ndef get_llm() -> LLM:\n    return LLM()\n"
    calls = ("from datetime import datetime\nfrom .llm import get_llm\n\n\ndef run(q, history):\n    llm = get_llm()\n"
             "    return llm.ask(q, system_prompt=f'Now: {datetime.now()}', history=history)\n")
    root = write_tree({"myapp/__init__.py": "", "myapp/llm.py": factory, "myapp/agent.py": calls})
    monkeypatch.chdir(root)
    entry = '{call = "myapp.llm.LLM.ask", system = "system_prompt", messages = "history"}'
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--config", f"extra-sinks = [{entry}]")
    assert code == 0 and out.startswith("No findings.")
    assert err.startswith("warning: extra-sinks 'myapp.llm.LLM.ask': some calls of .ask() (the first at\n"
                          "  myapp/agent.py:7) are on objects whose class the calling module does not show") and "named no call" not in err
    assert "Annotate the object (llm: LLM), or add '*.ask'" in err.replace("\n  ", " ")
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--config",
                             'extra-sinks = [{call = "*.ask", system = "system_prompt", messages = "history"}]')
    assert code == 1 and [line.split(" [")[0] for line in out.splitlines() if "PC" in line] == ["myapp/agent.py:7:45: PC101"]
    assert err == ""


@pytest.mark.parametrize(("args", "message"), [
    # newcomer helper-92: each error names what the user wrote, where
    (["--config", "extra-sinks = [myapp.llm.LLM.ask]"],
     "error: --config 'extra-sinks = [myapp.llm.LLM.ask]': not a file, nor a valid `key = value` TOML line"),
    (["--config", "myapp"], "error: myapp: is a folder; give the pyproject.toml or promptcache.toml file in it\n"),
    (["--config", "select = ['PC999']"], "error: --config: select: unknown rule code 'PC999'; known codes are PC101"),
    (["--select", "PC999"], "error: --select: unknown rule code 'PC999'; known codes are PC101"),
])
def test_command_line_settings_are_blamed_on_the_option_not_the_config_file(write_tree, run_cli, args, message):
    root = write_tree({"pyproject.toml": "[tool.promptcache.lint]\nselect = ['PC1']\n", "myapp/app.py": "import openai\n"})
    code, _, err = run_cli("lint", root / "myapp", *(a.replace("myapp", str(root / "myapp")) if a == "myapp" else a
                                                      for a in args))
    assert code == 2 and err.replace(str(root) + "/", "").startswith(message)


def test_one_table_in_place_of_a_list_of_them_says_how_to_write_it():
    with pytest.raises(ConfigError, match=r"in pyproject.toml, one \[\[tool.promptcache.lint.extra-sinks\]\] per table"):
        from_table({"extra-sinks": {"call": "myapp.llm.LLM.ask", "system": 1}})


def test_the_map_of_the_entry_first_in_the_config_wins_and_dicts_are_read_by_it(write_tree, run_cli, monkeypatch):
    # review helper-91: two entries on one call took the map of whichever came first in a frozenset (it changed
    # between runs with PYTHONHASHSEED); a `**params` dict was read by the SDK's names, not the map's
    calls = ("from datetime import datetime\nfrom .llm import LLM\nllm = LLM()\n"
             "def a(q):\n    return llm.ask(q, system_prompt=f'Now: {datetime.now()}')\n"
             "def b(q):\n    params = {'system_prompt': f'Now: {datetime.now()}'}\n    return llm.ask(q, **params)\n"
             "def c(q):\n    params = {'system': f'Now: {datetime.now()}'}\n    return llm.ask(q, **params)\n")
    root = write_tree({"myapp/__init__.py": "", "myapp/llm.py": OWN_NAMES, "myapp/bot.py": calls})
    monkeypatch.chdir(root)
    both = '{call = "myapp.llm.LLM.ask", system = "system_prompt"}, {call = "*.ask", system = 1}'
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--config", f"extra-sinks = [{both}]")
    assert [line.split(" [")[0] for line in out.splitlines() if "PC" in line] == \
        ["myapp/bot.py:5:45: PC101", "myapp/bot.py:7:40: PC101"]
    code, _, err = run_cli("lint", "myapp", "--config", "extra-sinks = ['*.ask', {call = '*.ask', system = 1}]")
    assert code == 2 and err == "error: --config: extra-sinks: '*.ask' is named twice; give one entry per call (a " \
                                "table maps all its options)\n"


def test_a_file_whose_only_llm_call_is_a_named_wrapper_is_linted(write_tree, run_cli, monkeypatch):
    # newcomer helper-97: docs/lint.md says a named wrapper's `system_prompt=` is read as an agent's; a file whose
    # only LLM call passed nothing by the SDKs' names was no LLM file, so nothing in it was checked
    app = ("from datetime import datetime\n\nfrom myapp.llm import LLM\n\nllm = LLM()\n\n\n"
           "def handle(q, user_name):\n    return llm.ask(q, system_prompt=f'User: {user_name}')\n\n\n"
           "def handle2(q):\n    return llm.ask(q, system_prompt=f'Now: {datetime.now()}')\n")
    root = write_tree({"myapp/__init__.py": "", "myapp/llm.py": OWN_NAMES, "myapp/app.py": app})
    monkeypatch.chdir(root)
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--config", "extra-sinks = ['myapp.llm.LLM.ask']")
    assert [line.split(" [")[0] for line in out.splitlines() if "PC" in line] == [
        "myapp/app.py:9:46: PC102", "myapp/app.py:13:45: PC101"]


def test_a_warning_names_the_line_of_its_first_call_when_an_entry_has_both_gaps(write_tree, run_cli, monkeypatch):
    # review helper-98: an entry with an unread call and an unresolved one printed line 0
    app = ("from myapp.llm import LLM\n\n\n"
           "def run(q, bot):\n    llm = LLM()\n    llm.ask(q)\n"
           "    return bot.ask(q, system_prompt='Help.', history=[])\n")
    root = write_tree({"myapp/__init__.py": "", "myapp/llm.py": OWN_NAMES, "myapp/app.py": app})
    monkeypatch.chdir(root)
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--config", "extra-sinks = ['myapp.llm.LLM.ask']")
    assert "(the first at\n  myapp/app.py:6) pass none of" in err and "app.py:0" not in err


def test_of_two_entries_on_one_call_only_the_first_table_maps(write_tree, run_cli, monkeypatch):
    # review helper-96: the maps of two entries were merged option by option; docs/lint.md says the first entry's
    # table gives the map: the second's `messages = "history"` is not read
    calls = ("from datetime import datetime\nfrom .llm import LLM\nllm = LLM()\n"
             "def a(q, past):\n    return llm.ask(q, system_prompt=f'Now: {datetime.now()}', history=past[-10:])\n")
    root = write_tree({"myapp/__init__.py": "", "myapp/llm.py": OWN_NAMES, "myapp/bot.py": calls})
    monkeypatch.chdir(root)
    both = '{call = "myapp.llm.LLM.ask", system = "system_prompt"}, {call = "*.ask", messages = "history"}'
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--config", f"extra-sinks = [{both}]")
    assert [line.split(" [")[0] for line in out.splitlines() if "PC" in line] == ["myapp/bot.py:5:45: PC101"]
    swapped = '{call = "*.ask", messages = "history"}, {call = "myapp.llm.LLM.ask", system = "system_prompt"}'
    code, out, err = run_cli("lint", "myapp", "--no-cache", "--config", f"extra-sinks = [{swapped}]")
    assert [line.split(" [")[0] for line in out.splitlines() if "PC" in line] == ["myapp/bot.py:5:71: PC203"]
