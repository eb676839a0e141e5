"""Engine behaviour: selection, suppression, exit codes, determinism, the pre-filter, discovery."""

from __future__ import annotations

import json
from pathlib import Path

from promptcache.lint.config import LintConfig
from promptcache.lint.runner import lint_paths

VOLATILE = (
    "import anthropic\nfrom datetime import datetime\nclient = anthropic.Anthropic()\n"
    "def ask(q):\n    return client.messages.create(model='m', system=f'Now: {datetime.now()}', messages=[])\n"
)
INFO_ONLY = (
    "import anthropic\nclient = anthropic.Anthropic()\n"
    "def ask(text, web):\n    return client.messages.create(model='m', system=text.strip() if web else text, messages=[])\n"
)
UNDEDENTED = (
    'import anthropic\n\n\nclass Bot:\n    SYSTEM_PROMPT = """Be brief.\n    Cite sources."""  # noqa: PC401\n'
    '    OTHER_PROMPT = """Be kind.\n    Be exact."""\n'
)


def codes(out: str) -> list[str]:
    return [f["code"] for f in json.loads(out)]


def test_select_ignore_extend_select(write_tree, run_cli):
    root = write_tree({"a.py": VOLATILE, "b.py": UNDEDENTED})
    assert codes(run_cli("lint", root, "--output-format", "json")[1]) == ["PC101", "PC401"]
    assert codes(run_cli("lint", root, "--output-format", "json", "--select", "PC4")[1]) == ["PC401"]
    assert codes(run_cli("lint", root, "--output-format", "json", "--ignore", "PC101")[1]) == ["PC401"]
    assert codes(run_cli("lint", root, "--output-format", "json", "--select", "PC4", "--extend-select", "PC101")[1]) == ["PC101", "PC401"]


def test_config_select_and_per_file_ignores(write_tree, run_cli):
    root = write_tree(
        {
            "pyproject.toml": '[tool.promptcache.lint]\nselect = ["PC1", "PC4"]\nper-file-ignores = { "legacy/*.py" = ["PC101"] }\n',
            "legacy/old.py": VOLATILE,
            "new.py": VOLATILE,
        }
    )
    _, out, _ = run_cli("lint", root, "--output-format", "json")
    assert [(Path(f["path"]).name, f["code"]) for f in json.loads(out)] == [("new.py", "PC101")]


def test_noqa_line_multiline_string_and_file_level(write_tree, run_cli):
    root = write_tree(
        {
            "bot.py": UNDEDENTED,
            "bare.py": VOLATILE.replace("messages=[])\n", "messages=[])  # noqa\n"),
            "other_code.py": VOLATILE.replace("messages=[])\n", "messages=[])  # noqa: PC401\n"),
            "whole.py": "# promptcache: noqa\n" + VOLATILE,
            "some.py": "# promptcache: noqa: PC401\n" + VOLATILE + UNDEDENTED.replace("import anthropic\n", ""),
        }
    )
    _, out, _ = run_cli("lint", root, "--output-format", "json")
    got = [(Path(f["path"]).name, f["code"], f["line"]) for f in json.loads(out)]
    # PC900 (issue 12): the `# noqa: PC401` of other_code.py silences nothing on its line, so it is reported.
    assert got == [("bot.py", "PC401", 7), ("other_code.py", "PC101", 5), ("other_code.py", "PC900", 5), ("some.py", "PC101", 6)]


def test_noqa_inside_a_string_does_not_count(write_tree, run_cli):
    root = write_tree({"a.py": VOLATILE.replace("f'Now: {datetime.now()}'", "f'Now: {datetime.now()} # noqa'")})
    assert codes(run_cli("lint", root, "--output-format", "json")[1]) == ["PC101"]


def test_exit_codes_and_fail_on(write_tree, run_cli):
    clean = write_tree({"clean/ok.py": "import anthropic\nSYSTEM_PROMPT = 'Be brief.'\n"}) / "clean"
    info = write_tree({"info/a.py": INFO_ONLY}) / "info"
    error = write_tree({"error/a.py": VOLATILE}) / "error"
    assert run_cli("lint", clean)[0] == 0
    assert run_cli("lint", info)[0] == 0  # only an info finding, below the default --fail-on warning
    assert run_cli("lint", info, "--fail-on", "info")[0] == 1
    assert run_cli("lint", error)[0] == 1
    assert run_cli("lint", error, "--fail-on", "error")[0] == 1
    assert run_cli("lint", error, "--exit-zero")[0] == 0
    assert run_cli("lint", error, "--output-format", "yaml")[0] == 2  # click usage error


def test_pool_and_serial_give_identical_sorted_output(lint_cases_dir):
    serial = lint_paths([lint_cases_dir], LintConfig(root=lint_cases_dir), jobs=1)
    pooled = lint_paths([lint_cases_dir], LintConfig(root=lint_cases_dir), jobs=2)
    assert [f.to_json() for f in serial.findings] == [f.to_json() for f in pooled.findings]
    assert [f.sort_key for f in pooled.findings] == sorted(f.sort_key for f in pooled.findings)


def test_prefilter_changes_speed_not_results(lint_cases_dir, write_tree):
    root = write_tree({"util/strings.py": "def shout(s):\n    return s.upper() + '  \\n'\n", "util/clock.py": "import time\nNOW = time.time()\n"})
    config = LintConfig(root=root)
    with_prefilter = lint_paths([lint_cases_dir, root], config, jobs=1)
    without = lint_paths([lint_cases_dir, root], config, jobs=1, prefilter_files=False)
    assert [f.to_json() for f in with_prefilter.findings] == [f.to_json() for f in without.findings]
    assert with_prefilter.skipped == 2 and with_prefilter.parsed == with_prefilter.files - 2
    assert without.skipped == 0 and without.parsed == without.files


def test_prefilter_passes_a_message_list_of_an_apps_own_classes(write_tree):
    # blind set 31 (browser-use judge.py): no SDK import, the request's messages built with its own classes
    judge = ("from datetime import datetime\nfrom app.llm.messages import SystemMessage, UserMessage\n"
             "def judge(task):\n    system = f'Judge. Now: {datetime.now():%H:%M}'\n"
             "    return [\n        SystemMessage(content=system),\n        UserMessage(content=task),\n    ]\n")
    stored = "from app.llm.messages import SystemMessage\ndef note(t, x):\n    t.add([SystemMessage(content=x)])\n"
    root = write_tree({"app/judge.py": judge, "app/thread.py": stored, "app/other.py": "def f():\n    return 1\n"})
    result = lint_paths([root], LintConfig(root=root), jobs=1)
    assert [(Path(f.path).name, f.line, f.code) for f in result.findings] == [("judge.py", 6, "PC101")]
    assert (result.parsed, result.skipped) == (2, 1)


SDK_IMPORT_FORMS = {
    "comma.py": b"import json, openai\n",
    "semicolon.py": b"import json; import anthropic\n",
    "bom.py": b"\xef\xbb\xbfimport openai\n",
    "compound.py": b"try: import anthropic\nexcept ImportError: anthropic = None\n",
    "continued.py": b"import os, \\\n    openai\n",
    "from_package.py": b"from google import genai\n",
}


def test_prefilter_finds_sdk_imports_anywhere_an_import_can_stand(write_tree):
    body = b"from datetime import datetime\nSYSTEM_PROMPT = f'Now {datetime.now()}'\n"
    root = write_tree({name: head + body for name, head in SDK_IMPORT_FORMS.items()})
    config = LintConfig(root=root)
    with_prefilter = lint_paths([root], config, jobs=1)
    without = lint_paths([root], config, jobs=1, prefilter_files=False)
    assert [(Path(f.path).name, f.code) for f in with_prefilter.findings] == [(n, "PC101") for n in sorted(SDK_IMPORT_FORMS)]
    assert [f.to_json() for f in with_prefilter.findings] == [f.to_json() for f in without.findings]
    assert with_prefilter.skipped == 0


def test_summary_and_verbose_report_parsed_and_skipped(write_tree, run_cli):
    root = write_tree({"a.py": VOLATILE, "b.py": "print('hi')\n"})
    _, out, err = run_cli("lint", root, "-v")
    assert "Checked 2 files" in out and "parsed 1, skipped 1 by the pre-filter" in out
    assert "parsed: " in err and err.strip().endswith("1 parsed, 1 skipped by the pre-filter, 30 rules")  # 30: PC306, PC5xx, PC6xx (issue 11)


def test_gitignore_and_exclude_are_honoured(write_tree, run_cli):
    root = write_tree(
        {
            ".gitignore": "generated/\n*_pb2.py\n",
            "generated/a.py": VOLATILE,
            "api_pb2.py": VOLATILE,
            "vendor/b.py": VOLATILE,
            ".venv/lib/c.py": VOLATILE,
            "app.py": VOLATILE,
            "pyproject.toml": '[tool.promptcache.lint]\nextend-exclude = ["vendor/"]\n',
        }
    )
    (root / ".git").mkdir()
    _, out, _ = run_cli("lint", root, "--output-format", "json")
    assert [Path(f["path"]).name for f in json.loads(out)] == ["app.py"]
    _, out, _ = run_cli("lint", root, "--output-format", "json", "--no-respect-gitignore")
    assert sorted(Path(f["path"]).name for f in json.loads(out)) == ["a.py", "api_pb2.py", "app.py"]
    _, out, _ = run_cli("lint", root / "generated" / "a.py", "--output-format", "json")
    assert codes(out) == ["PC101"]  # a file named on the command line is always linted


def test_test_code_is_left_out_and_counted_unless_asked_for(write_tree, run_cli):
    root = write_tree({
        "app.py": VOLATILE, "tests/test_app.py": VOLATILE, "tests/helpers.py": VOLATILE,
        "backend/test/unit/a.py": VOLATILE, "backend/test_b.py": VOLATILE, "backend/c_test.py": VOLATILE,
        "backend/conftest.py": VOLATILE, "backend/testing.py": VOLATILE, "backend/latest/d.py": VOLATILE,
    })
    code, out, _ = run_cli("lint", root)
    assert "Checked 3 files" in out and "Left out 6 test files (--include-tests lints them)." in out
    _, out, _ = run_cli("lint", root, "--output-format", "json")
    assert sorted(Path(f["path"]).name for f in json.loads(out)) == ["app.py", "d.py", "testing.py"]
    _, out, _ = run_cli("lint", root, "--output-format", "json", "--include-tests")
    assert len(json.loads(out)) == 9
    # a test folder or file named on the command line is linted, test files inside it included
    _, out, _ = run_cli("lint", root / "tests", "--output-format", "json")
    assert sorted(Path(f["path"]).name for f in json.loads(out)) == ["helpers.py", "test_app.py"]
    _, out, _ = run_cli("lint", root / "backend" / "test" / "unit", "--output-format", "json")
    assert codes(out) == ["PC101"]
    _, out, _ = run_cli("lint", root / "backend" / "test_b.py", "--output-format", "json")
    assert codes(out) == ["PC101"]
    _, out, err = run_cli("lint", root / "backend" / "test_b.py", "--force-exclude")  # pre-commit names every file
    assert "No findings. Checked 0 files" in out and "Left out 1 test file " in out and "warning" not in err
    _, out, _ = run_cli("lint", root / "tests", "--force-exclude")  # so does a folder, with ruff's --force-exclude
    assert "No findings. Checked 0 files" in out and "Left out 2 test files " in out
    _, out, _ = run_cli("lint", "--force-exclude", "--stdin-filename", root / "tests" / "test_x.py", stdin=VOLATILE)
    assert "No findings. Checked 0 files" in out and "Left out 1 test file " in out
    config = write_tree({"x/promptcache.toml": '[lint]\nextend-exclude = ["d.py"]\n'}) / "x" / "promptcache.toml"
    _, out, err = run_cli("lint", root / "backend" / "latest" / "d.py", "--force-exclude", "--config", config)
    assert "Checked 0 files" in out and "warning: no Python files to lint" in err
    (root / "pyproject.toml").write_text("[tool.promptcache.lint]\ninclude-tests = true\n", encoding="utf-8")
    _, out, _ = run_cli("lint", root)
    assert "Checked 9 files" in out and "Left out" not in out


def test_pre_commit_leaves_out_test_code_by_its_folders_and_a_project_named_test_is_not_test_code(
        write_tree, run_cli, monkeypatch):
    root = write_tree({"proj/app.py": VOLATILE, "proj/tests/helpers.py": VOLATILE, "proj/backend/tests/f.py": VOLATILE,
                       "proj/bot/prompts.py": 'SYSTEM_PROMPT = """Be brief. \nBe kind."""\n',
                       "proj/bot/test_bot.py": "import anthropic\nfrom .prompts import SYSTEM_PROMPT\n",
                       "test/app.py": VOLATILE, "test/tests/test_app.py": VOLATILE})
    monkeypatch.chdir(root / "proj")  # no promptcache configuration: pre-commit names paths from the project root
    _, out, _ = run_cli("lint", "--force-exclude", "app.py", "tests/helpers.py", "backend/tests/f.py")
    assert "Checked 1 file " in out and "Left out 2 test files" in out
    # bot/prompts.py's only importer is a test: linted alone it is judged as in a run over the folder (not parsed)
    _, out, _ = run_cli("lint", "--force-exclude", "bot/prompts.py", "--output-format", "json")
    assert json.loads(out) == [] and codes(run_cli("lint", "bot", "--output-format", "json")[1]) == []
    assert codes(run_cli("lint", "bot/prompts.py", "--include-tests", "--output-format", "json")[1]) == ["PC402"]
    monkeypatch.chdir(root / "test")  # a project that lives in a folder named `test`
    _, out, _ = run_cli("lint", ".")
    assert "Checked 1 file " in out and "Left out 1 test file " in out
    _, out, err = run_cli("lint", ".", "-v", "--no-cache")
    assert err.strip().endswith("1 parsed, 0 skipped by the pre-filter, 1 test file left out, 30 rules")
    _, out, err = run_cli("lint", ".", "-v")
    _, out, err = run_cli("lint", ".", "-v")
    assert "cached: app.py" in err and "0 parsed, 1 read from the cache, 0 skipped" in err


def test_folder_named_on_command_line_is_linted_even_if_an_outer_gitignore_lists_it(write_tree, run_cli):
    root = write_tree({".gitignore": "versions/\n", "versions/3.11/app.py": VOLATILE})
    (root / ".git").mkdir()
    assert codes(run_cli("lint", root / "versions" / "3.11", "--output-format", "json")[1]) == ["PC101"]
    assert codes(run_cli("lint", root, "--output-format", "json")[1]) == []
