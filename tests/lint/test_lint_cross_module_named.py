"""A prompt module named on its own (pre-commit, changed-files CI, ``--stdin-filename``) gets the folder run's verdict.

Its importers in its package, found by the pre-filter (``prefilter.llm_importers``), are linted for their
``uses`` facts only: their findings are not reported and they are not counted in the summary
(issue 11, a newcomer's report: ``lint q8`` clean, ``lint q8/bot/prompts.py`` PC101).
"""

from __future__ import annotations

import json
import textwrap

import pytest

from promptcache.lint import lint_paths, load_config

from lint_support import AS_SYSTEM, AS_USER, PROMPTS

PROMPTS_LINES = 11

JSON_PROMPTS = '''\
import json


def build_extraction_prompt(messages):
    data = {m["role"]: m["content"] for m in messages}
    return f"Messages:\\n{json.dumps(data)}"
'''

# the importer's own PC101 (a timestamp in its system prompt): reported in the folder run only
OWN_FINDING = ('return client.chat.completions.create(model="m", messages=[{"role": "system", "content": '
               'STATIC_PROMPT + str(time.time())}, {"role": "user", "content": prompt}])')


def _app(placement: str, imports: str = "from .prompts import STATIC_PROMPT, build_extraction_prompt") -> str:
    return textwrap.dedent('''\
        import time

        import openai

        {imports}

        client = openai.OpenAI()


        def extract(messages):
            prompt = build_extraction_prompt(messages)
            {placement}
    ''').format(imports=imports, placement=placement)


def _tree(write_tree, placement: str | None, prompts: str = PROMPTS, **app):
    files = {"bot/__init__.py": "", "bot/prompts.py": prompts, "bot/util.py": "import json\n",
             "pyproject.toml": "[tool.promptcache.lint]\nselect = ['PC101']\n"}
    if placement is not None:
        files["bot/app.py"] = _app(placement, **app)
    return write_tree(files)


def _lint(run_cli, *args):
    code, out, err = run_cli("lint", *args, "--output-format", "json")
    return code, sorted((f["path"].rsplit("/", 1)[-1], f["line"]) for f in json.loads(out)), err


@pytest.mark.parametrize(("placement", "expected"), [
    (AS_USER, [("prompts.py", 11)]),                     # build_extraction_prompt() is the newest turn: dropped
    (AS_SYSTEM, [("prompts.py", 7), ("prompts.py", 11)]),  # it is the system prompt: stands
    (None, []),                                        # no importer: not a prompt module, skipped either way
])
def test_a_prompt_module_alone_gets_the_folder_verdict(write_tree, run_cli, monkeypatch, placement, expected):
    root = _tree(write_tree, placement)
    monkeypatch.chdir(root)
    code, folder, _ = _lint(run_cli, ".", "--no-cache")
    assert folder == expected
    code_alone, alone, err = _lint(run_cli, "bot/prompts.py", "--no-cache")
    assert alone == folder and code_alone == code
    # the importer is analysed, not checked: the summary counts the named file only
    code, out, err = run_cli("lint", "bot/prompts.py", "--no-cache")
    parsed = 0 if placement is None else 1
    assert f"Checked 1 file ({PROMPTS_LINES} lines): parsed {parsed}, skipped {1 - parsed} by the pre-filter" in out + err


def test_the_importers_own_findings_are_not_reported(write_tree, run_cli, monkeypatch):
    root = _tree(write_tree, OWN_FINDING)
    monkeypatch.chdir(root)
    assert _lint(run_cli, ".", "--no-cache")[1] == [("app.py", 12), ("prompts.py", 11)]
    assert _lint(run_cli, "bot/prompts.py", "--no-cache")[1] == [("prompts.py", 11)]


def test_an_importer_named_too_is_linted_once_and_reported(write_tree, run_cli, monkeypatch):
    root = _tree(write_tree, OWN_FINDING)
    monkeypatch.chdir(root)
    code, found, err = _lint(run_cli, "bot/prompts.py", "bot/app.py", "--no-cache")
    assert found == [("app.py", 12), ("prompts.py", 11)]
    code, out, err = run_cli("lint", "bot/prompts.py", "bot/app.py", "--no-cache")
    assert "Checked 2 files" in out + err and "parsed 2," in out + err


def test_the_importers_are_read_from_the_cache_and_an_edit_changes_the_verdict(write_tree, run_cli, monkeypatch):
    root = _tree(write_tree, AS_USER)
    monkeypatch.chdir(root)
    assert _lint(run_cli, "bot/prompts.py")[1] == [("prompts.py", 11)]
    code, out, err = run_cli("lint", "bot/prompts.py")
    assert "parsed 0, 1 read from the cache" in out + err
    (root / "bot" / "app.py").write_text(_app(AS_SYSTEM), encoding="utf-8")  # pre-commit on an unchanged prompts.py
    assert _lint(run_cli, "bot/prompts.py")[1] == [("prompts.py", 7), ("prompts.py", 11)]


@pytest.mark.parametrize(("placement", "expected"), [(AS_USER, [11]), (AS_SYSTEM, [7, 11])])
def test_stdin_filename_gets_the_folder_verdict(write_tree, placement, expected):
    root = _tree(write_tree, placement)
    named = root / "bot" / "prompts.py"
    result = lint_paths([named], load_config(start=root), stdin=PROMPTS.encode(), jobs=1)
    assert [f.line for f in result.findings] == expected
    assert (result.files, result.parsed) == (1, 1)


@pytest.mark.parametrize(("placement", "noqa_lines"), [(AS_USER, [11]), (AS_SYSTEM, [7, 11])])
def test_add_noqa_follows_the_settled_findings(write_tree, run_cli, monkeypatch, placement, noqa_lines):
    root = _tree(write_tree, placement)
    monkeypatch.chdir(root)
    code, out, err = run_cli("lint", "bot/prompts.py", "--no-cache", "--add-noqa")
    lines = (root / "bot" / "prompts.py").read_text().splitlines()
    assert [i for i, line in enumerate(lines, 1) if "# noqa" in line] == noqa_lines


@pytest.mark.parametrize(("placement", "fixed"), [(AS_USER, False), (AS_SYSTEM, True)])
def test_fix_and_diff_follow_the_settled_findings(write_tree, run_cli, monkeypatch, placement, fixed):
    # PC304's fix (sort_keys=True) is offered, and applied, only where the finding stands.
    root = _tree(write_tree, placement, prompts=JSON_PROMPTS,
                 imports="from .prompts import build_extraction_prompt\nSTATIC_PROMPT = 'Extract.'")
    monkeypatch.chdir(root)
    code, out, err = run_cli("lint", "bot/prompts.py", "--no-cache", "--select", "PC304", "--diff", "--unsafe-fixes")
    assert ("sort_keys=True" in out) is fixed
    code, out, err = run_cli("lint", "bot/prompts.py", "--no-cache", "--select", "PC304", "--fix", "--unsafe-fixes")
    assert ("sort_keys=True" in (root / "bot" / "prompts.py").read_text()) is fixed
    assert code == 0


def test_a_prompt_module_that_imports_an_sdk_itself_gets_the_folder_verdict(write_tree, run_cli, monkeypatch):
    # it passes the pre-filter on its own; the folder run still reads it as a prompt module of app.py
    root = _tree(write_tree, AS_USER, prompts="import openai\n" + PROMPTS)
    monkeypatch.chdir(root)
    assert _lint(run_cli, ".", "--no-cache")[1] == [("prompts.py", 12)]
    assert _lint(run_cli, "bot/prompts.py", "--no-cache")[1] == [("prompts.py", 12)]
