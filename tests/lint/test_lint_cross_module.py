"""A prompt module's findings, settled by where its importers put the prompt (promptcache.lint.cross_module).

mem0 (2026-12): ``configs/prompts.py`` builds ``generate_additive_extraction_prompt()`` with the current
date in it; ``memory/main.py`` sends it as the *user* message, after a static system prompt. Per-request
content in the newest turn is right, so no finding; the same builder sent as the system prompt is one.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from promptcache.lint.config import LintConfig
from promptcache.lint.filelint import lint_bytes
from promptcache.lint.registry import discover

from lint_support import AS_SYSTEM, AS_USER, PROMPTS


def _app(placement: str, *, imports: str = "from .prompts import STATIC_PROMPT, build_extraction_prompt") -> str:
    return textwrap.dedent('''\
        import openai

        {imports}

        client = openai.OpenAI()


        def extract(messages):
            prompt = build_extraction_prompt(messages)
            {placement}
    ''').format(imports=imports, placement=placement)


def _lint(run_cli, *paths, extra=()):
    code, out, err = run_cli("lint", *paths, "--output-format", "json", "--no-cache", *extra)
    return sorted((f["path"].rsplit("/", 1)[-1], f["code"], f["line"]) for f in json.loads(out))


def test_builder_sent_as_the_user_message_elsewhere_is_not_reported(write_tree, run_cli):
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": PROMPTS, "bot/app.py": _app(AS_USER)})
    assert _lint(run_cli, root, extra=("--select", "PC101")) == [("prompts.py", "PC101", 11)]  # Templates.DATED_PROMPT: no known use
    assert _lint(run_cli, root, extra=("--select", "PC101", "--no-prefilter")) == [("prompts.py", "PC101", 11)]


def test_builder_sent_as_the_system_prompt_elsewhere_is_reported(write_tree, run_cli):
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": PROMPTS, "bot/app.py": _app(AS_SYSTEM)})
    assert _lint(run_cli, root, extra=("--select", "PC101")) == [("prompts.py", "PC101", 7), ("prompts.py", "PC101", 11)]


def test_prompt_module_linted_alone_is_settled_by_its_importers(write_tree, run_cli):
    # pre-commit passes only the edited file: its importers in the package are analysed for their uses
    # (more in test_lint_cross_module_named.py).
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": PROMPTS, "bot/app.py": _app(AS_USER)})
    assert _lint(run_cli, root / "bot" / "prompts.py", extra=("--select", "PC101")) == [("prompts.py", "PC101", 11)]


def test_one_prefix_use_among_several_keeps_the_finding(write_tree, run_cli):
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": PROMPTS, "bot/app.py": _app(AS_USER),
                       "bot/planner.py": _app(AS_SYSTEM)})
    assert ("prompts.py", "PC101", 7) in _lint(run_cli, root, extra=("--select", "PC101"))


def test_a_use_that_is_not_followed_keeps_the_finding(write_tree, run_cli):
    # The prompt goes into a function of another module: where it lands there is not known.
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": PROMPTS,
                       "bot/app.py": _app("return send(prompt)", imports="from .prompts import build_extraction_prompt\nfrom .transport import send")})
    assert ("prompts.py", "PC101", 7) in _lint(run_cli, root, extra=("--select", "PC101"))


def test_class_constant_and_module_import_are_followed(write_tree, run_cli):
    app = textwrap.dedent('''\
        import openai

        from . import prompts

        client = openai.OpenAI()


        def extract(messages):
            text = prompts.Templates.DATED_PROMPT + prompts.build_extraction_prompt(messages)
            return client.chat.completions.create(model="m", messages=[{"role": "system", "content": prompts.STATIC_PROMPT}, {"role": "user", "content": text}])
    ''')
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": PROMPTS, "bot/app.py": app})
    assert _lint(run_cli, root, extra=("--select", "PC101")) == []


def test_the_cache_keeps_facts_not_verdicts(write_tree, run_cli, tmp_path, monkeypatch):
    """An edited importer changes the verdict on an unchanged prompt module read from the cache."""
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": PROMPTS, "bot/app.py": _app(AS_USER),
                       "pyproject.toml": "[tool.promptcache.lint]\nselect = ['PC101']\n"})
    monkeypatch.chdir(root)

    def cached_run():
        code, out, err = run_cli("lint", ".", "--output-format", "json")
        return sorted((f["path"].rsplit("/", 1)[-1], f["line"]) for f in json.loads(out)), err

    assert cached_run()[0] == [("prompts.py", 11)]
    (root / "bot" / "app.py").write_text(_app(AS_SYSTEM), encoding="utf-8")
    found, err = cached_run()
    assert found == [("prompts.py", 7), ("prompts.py", 11)]
    assert "parsed 1, 1 read from the cache" in err  # prompts.py is unchanged: read from the cache
    (root / "bot" / "app.py").write_text(_app(AS_USER), encoding="utf-8")
    assert cached_run()[0] == [("prompts.py", 11)]


JSON_PROMPTS = '''\
import json


def build_extraction_prompt(messages):
    data = {m["role"]: m["content"] for m in messages}
    return f"Messages:\\n{json.dumps(data)}"
'''


@pytest.mark.parametrize(("placement", "fixed"), [(AS_USER, False), (AS_SYSTEM, True)])
def test_fixes_follow_the_settled_findings(write_tree, run_cli, placement, fixed):
    # PC304's fix (sort_keys=True) is offered, and applied, only where the finding stands.
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": JSON_PROMPTS,
                       "bot/app.py": _app(placement, imports="from .prompts import build_extraction_prompt\nSTATIC_PROMPT = 'Extract.'")})
    code, out, err = run_cli("lint", root, "--no-cache", "--fix", "--unsafe-fixes")
    assert ("sort_keys=True" in (root / "bot" / "prompts.py").read_text()) is fixed
    assert code == 0


def _uses(code: str) -> dict[str, tuple[str, ...]]:
    rules = [r for r in discover().values() if r.code != "PC901"]
    return lint_bytes(textwrap.dedent(code).encode(), "app.py", rules, LintConfig()).uses


@pytest.mark.parametrize(("body", "landing"), [
    # the newest turn: the last message of the list, or appended to the history
    ('client.chat.completions.create(model="m", messages=[{"role": "system", "content": "S"}, {"role": "user", "content": P(q)}])', "after"),
    ('history.append({"role": "user", "content": f"{P(q)}\\n{q}"})\n    client.chat.completions.create(model="m", messages=history)', "after"),
    ('client.messages.create(model="m", max_tokens=9, messages=history + [{"role": "user", "content": [{"type": "text", "text": P(q)}]}])', "after"),
    ('msg = {"role": "user", "content": P(q)}\n    client.chat.completions.create(model="m", messages=[*history, msg])', "after"),
    ('ChatPromptTemplate.from_messages([("system", "S"), ("human", P(q))])', "after"),
    # the prefix: system slots, a message before others, a request dict's system entry
    ('client.messages.create(model="m", max_tokens=9, system=P(q), messages=history)', "prefix"),
    ('client.chat.completions.create(model="m", messages=[{"role": "user", "content": P(q)}, *history])', "prefix"),
    ('client.chat.completions.create(model="m", messages=[{"role": "user", "content": P(q)}] + history)', "prefix"),
    ('params = {"model": "m", "system": P(q)}\n    client.messages.create(**params, messages=history)', "prefix"),
    ('text = P(q)\n    client.chat.completions.create(model="m", messages=[{"role": "developer", "content": text}, {"role": "user", "content": q}])', "prefix"),
    ('client.chat.completions.create(model="m", messages=[Message(role="system", content=P(q)), *history])', "prefix"),
    ('ChatPromptTemplate.from_messages([("system", P(q)), ("human", "{question}")])', "prefix"),
    # last in a list literal, but the list is then extended, concatenated or spliced ahead of the history
    ('messages = [{"role": "system", "content": "S"}, {"role": "user", "content": P(q)}]\n    messages.extend(history)\n'
     '    client.chat.completions.create(model="m", messages=messages)', ("after", "unknown")),  # the send and the extend
    ('messages = [{"role": "user", "content": P(q)}]\n    messages += history\n    client.chat.completions.create(model="m", messages=messages)',
     ("after", "unknown")),
    ('msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": P(q)}]\n    client.chat.completions.create(model="m", messages=msgs + history)', "prefix"),
    ('ctx = [{"role": "user", "content": P(q)}]\n    client.chat.completions.create(model="m", messages=[*ctx, *history])', "prefix"),
    ('ctx = [{"role": "user", "content": P(q)}]\n    client.chat.completions.create(model="m", messages=[*history, *ctx])', "after"),
    ('msgs = list([{"role": "user", "content": P(q)}])\n    client.chat.completions.create(model="m", messages=msgs)', "unknown"),
    ('self.messages = [{"role": "user", "content": P(q)}]', "unknown"),
    ('history.extend([{"role": "user", "content": P(q)}])', "unknown"),
    # handed to a call as written (mem0's `self.llm.generate_response(messages=[system, user])`)
    ('other.generate_response(messages=[{"role": "system", "content": "S"}, {"role": "user", "content": P(q)}])', "after"),
    ('client.chat.completions.create(model="m", messages=build([{"role": "user", "content": P(q)}], history))', "prefix"),
    # passed to a function of this module: followed through its parameter
    ('send(P(q), q)', "prefix"),
    # passed somewhere not followed
    ('other.send(P(q))', "unknown"),
])
def test_where_an_imported_prompt_lands(body, landing):
    code = (
        "import openai\n"
        "from .prompts import build_prompt as P\n\n"
        "client = openai.OpenAI()\n\n\n"
        "def send(system_text, q):\n"
        '    return client.chat.completions.create(model="m", messages=[{"role": "system", "content": system_text}, {"role": "user", "content": q}])\n\n\n'
        "def build(context, history):\n"
        "    return [*context, *history]\n\n\n"
        "def run(q, history, other):\n"
        f"    {body}\n"
    )
    assert _uses(code) == {".prompts.build_prompt": (landing,) if isinstance(landing, str) else landing}


def test_an_expected_value_in_a_test_is_not_a_use():
    code = (
        "import openai\n"
        "from .prompts import build_prompt\n\n"
        "def test_render():\n"
        '    assert render("q") == [{"role": "user", "content": build_prompt("q")}]\n'
    )
    assert _uses(code) == {".prompts.build_prompt": ()}


def test_a_logged_prompt_is_not_a_use():
    code = '''\
        import logging
        import openai
        from .prompts import build_prompt

        log = logging.getLogger(__name__)
        client = openai.OpenAI()


        def run(q):
            text = build_prompt(q)
            log.debug("prompt: %s", text)
            return client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
    '''
    assert _uses(code) == {".prompts.build_prompt": ("after",)}


# Review 11b item 1 (x1): a context message last in its literal, then the history added to the list.
EXTENDED = AS_USER.replace('return client.chat.completions.create(model="m", messages=[', "messages = [").replace("}])", "}]") + (
    '\n    messages.extend(history)\n    return client.chat.completions.create(model="m", messages=messages)')


def test_a_message_followed_by_the_history_keeps_the_finding(write_tree, run_cli):
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": PROMPTS,
                       "bot/app.py": _app(EXTENDED).replace("def extract(messages)", "def extract(messages, history)")})
    assert ("prompts.py", "PC101", 7) in _lint(run_cli, root, extra=("--select", "PC101"))


# Review 11b item 7: an importer whose uses are not seen makes what it imports "unknown" (the finding stands).
PREFIX_USE = 'return client.chat.completions.create(model="m", messages=[{"role": "system", "content": build_extraction_prompt(messages)}])'


@pytest.mark.parametrize("chat", [
    _app(PREFIX_USE, imports="from .prompts import *"),                                  # star import
    "# promptcache: noqa\n" + _app(PREFIX_USE, imports="from .prompts import build_extraction_prompt"),  # file-level noqa
    _app(PREFIX_USE, imports="from .prompts import build_extraction_prompt") + "\ndef broken(:\n",     # does not parse
    _app(PREFIX_USE, imports="from . import prompts").replace("build_extraction_prompt(", "prompts.build_extraction_prompt(")
    .replace("import openai\n", "# promptcache: noqa\nimport openai\n"),              # a module import, not linted
])
def test_an_importer_whose_uses_are_not_seen_keeps_the_finding(write_tree, run_cli, chat):
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": PROMPTS, "bot/app.py": _app(AS_USER), "bot/chat.py": chat})
    assert ("prompts.py", "PC101", 7) in _lint(run_cli, root, extra=("--select", "PC101"))
    # the same importer beside one that only sends the prompt as the user turn: still dropped without it
    (root / "bot" / "chat.py").unlink()
    assert ("prompts.py", "PC101", 7) not in _lint(run_cli, root, extra=("--select", "PC101"))


def test_an_unseen_importer_read_from_the_cache_keeps_the_finding(write_tree, run_cli, monkeypatch):
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": PROMPTS, "bot/app.py": _app(AS_USER),
                       "bot/chat.py": "# promptcache: noqa\n" + _app(PREFIX_USE, imports="from .prompts import build_extraction_prompt"),
                       "pyproject.toml": "[tool.promptcache.lint]\nselect = ['PC101']\n"})
    monkeypatch.chdir(root)
    for _ in range(2):  # linted, then every file read from the cache
        code, out, err = run_cli("lint", ".", "--output-format", "json")
        assert ("prompts.py", 7) in [(f["path"].rsplit("/", 1)[-1], f["line"]) for f in json.loads(out)]
    assert "0 parsed" in err or "parsed 0" in err


def test_a_star_import_is_an_unknown_use_of_the_whole_module():
    assert _uses("import openai\nfrom .prompts import *\nfrom json import *\n") == {".prompts.*": ("unknown",)}


def test_an_imported_prompt_named_class_used_as_a_base_class_is_no_use(write_tree, run_cli):
    # onyx (2026-12, a blind run): `class AnthropicPromptCacheProvider(PromptCacheProvider)` crashed the use
    # tracer (a class base is an Arg whose parent is the ClassDef, not a Call): PC901 on a valid file.
    base = "class PromptCacheProvider:\n    pass\n"
    app = ("import anthropic\nfrom .base import PromptCacheProvider\n\n\n"
           "class AnthropicPromptCacheProvider(PromptCacheProvider, metaclass=type):\n    pass\n")
    root = write_tree({"bot/__init__.py": "", "bot/base.py": base, "bot/app.py": app})
    assert _lint(run_cli, root) == []


_BUILDER = ("from datetime import datetime\n\n\ndef build_system_prompt(persona: str) -> str:\n"
            "    return f\"You are {persona}. Now: {datetime.now()}\"\n")


def _persona_app(argument: str) -> str:
    return ("import anthropic\n\nfrom .prompts import build_system_prompt\n\nclient = anthropic.Anthropic()\n\n\n"
            "def ask(q):\n    return client.messages.create(model='m', max_tokens=9, "
            f"system=build_system_prompt({argument}), messages=[{{'role': 'user', 'content': q}}])\n")


@pytest.mark.parametrize(("argument", "expected"), [
    ('"a pirate"', [("prompts.py", "PC101", 5)]),  # a fixed persona: the clock is what changes the prefix
    ("q", []),  # the request's own text comes first: the prefix differs from there anyway (gpt-researcher)
    # an argument holding a comprehension is not judged fixed, and is no crash (PC901 on pydantic-ai's models/__init__.py)
    ('sorted([p for p in ("a", "b")])', []),
])
def test_a_clock_after_a_builder_input_is_settled_by_the_importers_calls(write_tree, run_cli, argument, expected):
    # Newcomer (stop 31): a prompt builder in bot/prompts.py with a clock after its parameter, called from
    # bot/main.py. No call in prompts.py fills the parameter, so the importers' calls decide.
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": _BUILDER, "bot/main.py": _persona_app(argument)})
    assert _lint(run_cli, root) == expected
    assert _lint(run_cli, root / "bot" / "prompts.py") == expected  # named alone: its importers are looked up


def test_a_builder_the_module_reads_itself_keeps_the_template_reading(write_tree, run_cli):
    # gpt-researcher (blind set 11, re-checked at stop 31): `PromptFamily`'s builders put the date after the task;
    # prompts.py returns the class itself (`get_prompt_family`), a use that is not followed, so the importers'
    # calls cannot settle the finding and the template reading stands: the task comes first, no PC101.
    family = ("from datetime import date\n\n\nclass PromptFamily:\n    @staticmethod\n"
              "    def generate_search_queries_prompt(task):\n        return f\"Research: {task}. Today is {date.today()}.\"\n\n\n"
              "def get_prompt_family():\n    return PromptFamily\n")
    app = ("import anthropic\n\nfrom .prompts import PromptFamily\n\nclient = anthropic.Anthropic()\n\n\n"
           "def ask(q):\n    return client.messages.create(model='m', max_tokens=9, "
           "system=PromptFamily.generate_search_queries_prompt('climate'), messages=[{'role': 'user', 'content': q}])\n")
    root = write_tree({"pkg/__init__.py": "", "pkg/prompts.py": family, "pkg/main.py": app})
    assert _lint(run_cli, root) == []


def test_a_fixed_call_sent_after_the_prefix_does_not_settle_the_template_clock(write_tree, run_cli):
    # Review (stop 31): the fixed call is the user turn and the system call passes the request's text: no finding.
    app = _persona_app("q").replace("messages=[{'role': 'user', 'content': q}]",
                                    "messages=[{'role': 'user', 'content': build_system_prompt('a pirate')}]")
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": _BUILDER, "bot/main.py": app})
    assert _lint(run_cli, root) == []


def test_a_builder_called_in_its_module_and_imported_keeps_its_report(write_tree, run_cli):
    # review helper-98: prompts.py's own call names the id it passes, but main.py's call is not seen from there
    prompts = ("import anthropic\nclient = anthropic.Anthropic()\n\n\n"
               "def build_system_prompt(user_id):\n    return f'You help user {user_id}.'\n\n\n"
               "def ask(user_id, q):\n    system = build_system_prompt(user_id)\n"
               "    return client.messages.create(model='m', max_tokens=9, system=system, messages=[q])\n")
    main = ("import anthropic\n\nfrom .prompts import build_system_prompt\n\nclient = anthropic.Anthropic()\n\n\n"
            "def run(request, q):\n    uid = lookup(request)\n"
            "    return client.messages.create(model='m', max_tokens=9, system=build_system_prompt(uid), messages=[q])\n")
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": prompts, "bot/main.py": main})
    assert _lint(run_cli, root, extra=("--select", "PC102")) == [("prompts.py", "PC102", 6), ("prompts.py", "PC102", 10)]
