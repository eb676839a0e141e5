"""Findings in prompt text no file of the run reads are dropped (promptcache.lint.unread_definitions).

sweep (2026-12, a blind review): ``plan_selection_prompt`` in ``sweepai/core/prompts.py`` and
``graph_example_prompt`` in ``sweepai/utils/openai_listwise_reranker.py`` had PC402 (trailing whitespace)
although no file reads them: the text is never sent. The importers of the module are in the run and read
other names; none reads these. Linted alone, or with none of its importers in the run, the module keeps
its findings (its importers may be elsewhere).
"""

from __future__ import annotations

import json

import pytest

PROMPTS = '''\
USED_PROMPT = """You plan code changes.{ws}
Be precise."""

DEAD_PROMPT = """Critique the pros and cons of each plan.{ws}
Be thorough."""
'''.replace("{ws}", "  ")  # trailing spaces: PC402 at lines 1 and 4

APP = '''\
import openai

from .prompts import USED_PROMPT{more}

client = openai.OpenAI()


def plan(issue):
    return client.chat.completions.create(model="m", messages=[{{"role": "system", "content": {system}}}, {{"role": "user", "content": issue}}])
'''


def _app(more: str = "", system: str = "USED_PROMPT") -> str:
    return APP.format(more=more, system=system)


def _lint(run_cli, *paths, extra=()):
    code, out, err = run_cli("lint", *paths, "--output-format", "json", "--no-cache", "--select", "PC402", *extra)
    return sorted((f["path"].rsplit("/", 1)[-1], f["line"]) for f in json.loads(out))


def _tree(write_tree, **files):
    return write_tree({"bot/__init__.py": "", "bot/prompts.py": PROMPTS, "bot/app.py": _app(), **files})


USED = [("prompts.py", 1)]
BOTH = [("prompts.py", 1), ("prompts.py", 4)]


@pytest.mark.parametrize("prefilter", [(), ("--no-prefilter",)])
def test_a_prompt_no_file_reads_is_not_reported(write_tree, run_cli, prefilter):
    root = _tree(write_tree)  # app.py reads USED_PROMPT only
    assert _lint(run_cli, root, extra=prefilter) == USED


def test_a_prompt_an_importer_sends_is_reported(write_tree, run_cli):
    root = _tree(write_tree, **{"bot/app.py": _app(", DEAD_PROMPT", "USED_PROMPT + DEAD_PROMPT")})
    assert _lint(run_cli, root) == BOTH


def test_a_prompt_module_linted_alone_keeps_its_findings(write_tree, run_cli):
    root = _tree(write_tree)
    assert _lint(run_cli, root / "bot" / "prompts.py") == BOTH  # pre-commit: its importers may be outside the run


def test_a_module_none_of_whose_importers_is_in_the_run_keeps_its_findings(write_tree, run_cli):
    root = write_tree({"bot/__init__.py": "", "bot/prompts.py": "import openai\n" + PROMPTS})  # LLM code itself
    assert _lint(run_cli, root) == [("prompts.py", 2), ("prompts.py", 5)]


@pytest.mark.parametrize("reader", [
    "PLANS = [DEAD_PROMPT]\n",                             # the module reads it itself
    "def critique():\n    return DEAD_PROMPT.strip()\n",   # in one of its functions
])
def test_a_prompt_the_module_reads_itself_is_reported(write_tree, run_cli, reader):
    root = _tree(write_tree, **{"bot/prompts.py": PROMPTS + "\n" + reader})
    assert _lint(run_cli, root) == BOTH


@pytest.mark.parametrize("importer", [
    "from .prompts import *\n",                                        # a star import reads anything
    "from .prompts import DEAD_PROMPT\n\nprint(DEAD_PROMPT)\n",        # not LLM code, but it reads it
    "from . import prompts\n\nTEXT = prompts.DEAD_PROMPT.format()\n",  # through the module
    "from . import prompts\n\nTEXT = getattr(prompts, 'DEAD' + '_PROMPT')\n",  # the module passed whole
    "from bot import prompts as p\n\nTEXT = vars(p)\n",
    "# promptcache: noqa\nfrom . import prompts\n",                     # its reads are not known
])
def test_another_importer_that_may_read_it_keeps_the_finding(write_tree, run_cli, importer):
    root = _tree(write_tree, **{"bot/cli.py": importer})
    assert _lint(run_cli, root) == BOTH
    assert _lint(run_cli, root, extra=("--no-prefilter",)) == BOTH


def test_a_re_export_counts_as_a_read(write_tree, run_cli):
    # bot/__init__.py re-exports it; whoever reads `bot.DEAD_PROMPT` reads this definition
    root = _tree(write_tree, **{"bot/__init__.py": "from .prompts import DEAD_PROMPT\n\n__all__ = ['DEAD_PROMPT']\n"})
    assert _lint(run_cli, root) == BOTH


def test_an_importer_reading_other_names_through_the_module_is_no_read(write_tree, run_cli):
    cli = "from . import prompts\n\nprint(prompts.USED_PROMPT)\n"
    root = _tree(write_tree, **{"bot/cli.py": cli})
    assert _lint(run_cli, root) == USED


CLASS_PROMPTS = PROMPTS + 'class Templates:\n    PLAN_PROMPT = """Plan the change.  \nBe brief."""\n'  # PC402 at line 7


@pytest.mark.parametrize(("cli", "expected"), [
    ("X = 1\n", USED),                                                           # no reader: both dead
    ("from .prompts import Templates\n\nprint(Templates)\n", [*USED, ("prompts.py", 7)]),  # the class is read
    ("from .prompts import Templates\n\nT = Templates.PLAN_PROMPT.strip()\n", [*USED, ("prompts.py", 7)]),
    ("from .prompts import Templates\n\nT = Templates.OTHER\n", USED),       # another attribute of it
])
def test_a_class_attribute_is_read_through_its_class(write_tree, run_cli, cli, expected):
    root = _tree(write_tree, **{"bot/prompts.py": CLASS_PROMPTS, "bot/cli.py": cli})
    assert _lint(run_cli, root) == expected


def test_the_cache_keeps_the_reads_and_the_run_the_verdict(write_tree, run_cli, monkeypatch):
    root = _tree(write_tree, **{"bot/cli.py": "from .prompts import DEAD_PROMPT\n\nprint(DEAD_PROMPT)\n",
                                "pyproject.toml": "[tool.promptcache.lint]\nselect = ['PC402']\n"})
    monkeypatch.chdir(root)

    def cached_run():
        code, out, err = run_cli("lint", ".", "--output-format", "json")
        return sorted((f["path"].rsplit("/", 1)[-1], f["line"]) for f in json.loads(out)), err

    assert cached_run()[0] == BOTH
    assert cached_run()[0] == BOTH  # everything read from the cache, cli.py's reads too
    (root / "bot" / "cli.py").write_text("from .prompts import USED_PROMPT\n\nprint(USED_PROMPT)\n", encoding="utf-8")
    found, err = cached_run()
    assert found == USED and "parsed 0, 2 read from the cache" in err  # prompts.py and app.py unchanged


def test_a_prompt_sent_only_as_the_newest_turn_is_settled_like_the_data_flow_findings(write_tree, run_cli):
    # text rules give their findings' definitions too (promptcache.lint.cross_module): after the prefix, dropped
    user_turn = _app(", DEAD_PROMPT").replace('"content": issue}', '"content": DEAD_PROMPT + issue}')
    root = _tree(write_tree, **{"bot/app.py": user_turn})
    assert _lint(run_cli, root) == USED
    root = _tree(write_tree, **{"bot/app.py": _app(", DEAD_PROMPT", "DEAD_PROMPT")})
    assert _lint(run_cli, root) == BOTH  # the system prompt: stands (USED_PROMPT: imported, never read, kept)
