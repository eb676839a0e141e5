"""Bad input never crashes a run: every unreadable or unparsable file is reported (PC901), the rest is linted."""

from __future__ import annotations

import json
import os

import pytest

POSITIVE = (
    "import anthropic\nfrom datetime import datetime\nclient = anthropic.Anthropic()\n\n"
    "def ask(q):\n    return client.messages.create(model='m', system=f'Now: {datetime.now()}', messages=[{'role': 'user', 'content': q}])\n"
)


@pytest.fixture
def bad_folder(write_tree):
    root = write_tree(
        {
            "nul.py": b"import anthropic\nx = 1\x00\n",
            "latin.py": b"import openai\nNAME = 'caf\xe9'\n",
            "syntax.py": "import anthropic\ndef broken(:\n    pass\n",
            "empty.py": "",
            "positive.py": POSITIVE,
            "x.py/inner.txt": "a directory named x.py",
        }
    )
    os.symlink("loop_b.py", root / "loop_a.py")
    os.symlink("loop_a.py", root / "loop_b.py")
    os.symlink("missing.py", root / "dangling.py")
    return root


def test_bad_files_are_reported_and_the_positive_is_still_found(bad_folder, run_cli):
    code, out, err = run_cli("lint", bad_folder, "--output-format", "json")
    assert code == 2
    findings = json.loads(out)
    by_file = {}
    for f in findings:
        by_file.setdefault(os.path.basename(f["path"]), []).append(f)
    for name in ("nul.py", "latin.py", "syntax.py", "loop_a.py", "loop_b.py", "dangling.py"):
        assert [f["code"] for f in by_file[name]] == ["PC901"], name
    assert "NUL byte" in by_file["nul.py"][0]["message"]
    assert "not valid UTF-8" in by_file["latin.py"][0]["message"]
    assert (by_file["latin.py"][0]["line"], by_file["latin.py"][0]["column"]) == (2, 12)  # the 0xe9 of 'caf\xe9'
    assert "syntax error" in by_file["syntax.py"][0]["message"] and by_file["syntax.py"][0]["line"] == 2
    assert "symbolic link loop" in by_file["loop_a.py"][0]["message"]
    assert "dangling symbolic link" in by_file["dangling.py"][0]["message"]
    assert [f["code"] for f in by_file["positive.py"]] == ["PC101"]
    assert "empty.py" not in by_file and "x.py" not in by_file
    assert "parsed 4" in err  # nul, latin, syntax, positive pass the pre-filter; empty.py is skipped
    # Every file a finding names was checked: 5 read (4 parsed, 1 skipped) + 3 links that cannot be read.
    assert "Found 7 findings (7 errors) in 7 files. Checked 8 files (" in err
    assert "parsed 4, skipped 1 by the pre-filter, 3 unreadable" in err


def test_exit_zero_still_reports_bad_files(bad_folder, run_cli, write_tree):
    # --exit-zero forgives findings, not files that cannot be linted: a mistyped path in CI must fail (newcomer, s30).
    code, out, _ = run_cli("lint", bad_folder, "--exit-zero")
    assert code == 2
    assert out.count("PC901") == 6
    missing = write_tree({"ok.py": "x = 1\n"}) / "srcc"
    assert run_cli("lint", missing, "--exit-zero")[0] == 2


def test_the_providers_table_beside_lint_settings_is_not_an_error(write_tree, run_cli):
    # docs/providers.md: `[tool.promptcache.providers]` overrides prices; lint must not reject it (newcomer, s30).
    toml = ('[[tool.promptcache.providers.anthropic.models]]\nid = "claude-sonnet-4-5"\ninput_usd_per_mtok = 2.4\n'
            '[tool.promptcache.lint]\nignore = ["PC402"]\n')
    root = write_tree({"pyproject.toml": toml, "app.py": "x = 1\n"})
    assert run_cli("lint", root)[0] == 0
    bad = write_tree({"pyproject.toml": "[tool.promptcache.lnit]\nselect = ['PC1']\n", "app.py": "x = 1\n"})
    code, out, err = run_cli("lint", bad)
    assert code == 2 and "'lnit'" in out + err


def test_unknown_config_key_exits_2_naming_it(write_tree, run_cli):
    root = write_tree({"pyproject.toml": "[tool.promptcache.lint]\nselectt = ['PC1']\n", "app.py": POSITIVE})
    code, out, err = run_cli("lint", root)
    assert code == 2
    assert "unknown key 'selectt'" in err and "pyproject.toml" in err


def test_unknown_rule_code_exits_2_naming_it(write_tree, run_cli):
    root = write_tree({"promptcache.toml": "[lint]\nignore = ['PC999']\n", "app.py": POSITIVE})
    code, _, err = run_cli("lint", root)
    assert code == 2
    assert "unknown rule code 'PC999'" in err


def test_an_empty_selection_or_a_rule_name_exits_2_saying_what_to_give(write_tree, run_cli):
    """`--select ""` selected every rule, silently; a rule's name was "an unknown code" (newcomer, stop 35)."""
    root = write_tree({"app.py": POSITIVE})
    code, _, err = run_cli("lint", root, "--select", "")
    assert code == 2 and "--select needs rule codes or prefixes" in err
    code, _, err = run_cli("lint", root, "--ignore", " , ")
    assert code == 2 and "--ignore needs rule codes or prefixes" in err
    code, _, err = run_cli("lint", root, "--select", "volatile-in-system-prompt")
    assert code == 2 and "'volatile-in-system-prompt' is the name of PC101; rules are selected by code" in err


def test_unknown_code_on_the_command_line_exits_2(write_tree, run_cli):
    root = write_tree({"app.py": POSITIVE})
    code, _, err = run_cli("lint", root, "--select", "PC7")
    assert code == 2
    assert "'PC7'" in err


def test_missing_path_is_reported(tmp_path, run_cli):
    code, out, _ = run_cli("lint", tmp_path / "nope.py")
    assert code == 2
    assert "does not exist" in out


def test_fifo_named_py_is_reported_not_read(tmp_path, run_cli):
    (tmp_path / "app.py").write_text(POSITIVE)
    os.mkfifo(tmp_path / "pipe.py")
    code, out, _ = run_cli("lint", tmp_path)
    assert code == 2
    assert "pipe.py:1:1: PC901" in out and "not a regular file" in out
    assert "PC101" in out


def test_deeply_nested_expression_is_analysed_not_reported(write_tree, run_cli):
    terms = " + ".join(f'"part {i}. "' for i in range(1500))  # deeper than Python's default recursion limit
    root = write_tree({"deep.py": f"import anthropic\nSYSTEM_PROMPT = {terms} + 'end.'\n"})
    code, out, _ = run_cli("lint", root)
    assert code == 0, out


def test_narrow_select_still_reports_unparsable_files(bad_folder, run_cli):
    # ruff reports syntax errors whatever --select says; PC901 likewise, unless ignored explicitly.
    code, out, _ = run_cli("lint", bad_folder, "--select", "PC4", "--output-format", "json")
    assert code == 2
    assert sorted(os.path.basename(f["path"]) for f in json.loads(out)) == [
        "dangling.py", "latin.py", "loop_a.py", "loop_b.py", "nul.py", "syntax.py"
    ]
    code, out, _ = run_cli("lint", bad_folder, "--select", "PC4", "--ignore", "PC901", "--output-format", "json")
    assert (code, json.loads(out)) == (0, [])
    code, out, _ = run_cli("lint", bad_folder, "--ignore", "PC9", "--output-format", "json")
    assert [f["code"] for f in json.loads(out)] == ["PC101"] and code == 1


def test_valid_python_libcst_cannot_parse_is_reported_at_its_line(write_tree, run_cli):
    # libcst 1.9 rejects a parenthesised annotation target, as in CPython's test_grammar.py.
    # The line is the one libcst states in its message ("error at 3:9"); its raw_line says 4 here.
    source = "import anthropic\ndef f():\n    (x): int\n    print(x)\n"
    compile(source, "ann.py", "exec")  # valid Python 3
    root = write_tree({"ann.py": source})
    code, out, _ = run_cli("lint", root, "--output-format", "json")
    (finding,) = json.loads(out)
    assert code == 2 and finding["code"] == "PC901" and (finding["line"], finding["column"]) == (3, 10)
    assert "libcst cannot parse this file although Python can" in finding["message"]


def test_valid_python_libcst_validation_rejects_is_linted_and_validation_is_restored(write_tree, run_cli):
    # libcst issue #1061: its node validation raises TypeError on `() if 0 else(lambda:())` although its parser
    # accepted it. The engine parses without that validation (promptcache.lint.filelint._parse_module): the
    # file is linted like the same code with a space, at the same positions; libcst validates again afterwards.
    import libcst as cst

    odd = "import anthropic\nfrom datetime import datetime\nclient = anthropic.Anthropic()\nx = () if 0 else(lambda:())\n"
    call = "client.messages.create(model='m', system=f'Now: {datetime.now()}', messages=[])\n"
    compile(odd, "odd.py", "exec")  # valid Python 3
    with pytest.raises(TypeError):
        cst.parse_module(odd)
    root = write_tree({"odd.py": odd + call, "spaced.py": odd.replace("else(", "else (") + call})
    code, out, _ = run_cli("lint", root, "--output-format", "json")
    found = {os.path.basename(f["path"]): (f["code"], f["line"], f["column"], f["end_line"], f["end_column"]) for f in json.loads(out)}
    assert code == 1 and found == {"odd.py": ("PC101", 5, 50, 5, 64), "spaced.py": ("PC101", 5, 50, 5, 64)}
    with pytest.raises(TypeError):
        cst.parse_module(odd)


def test_a_symbolic_link_loop_named_first_is_pc901_not_a_crash(bad_folder, run_cli):
    # the configuration search starts from the first path: resolving a loop raised RuntimeError (newcomer, stop 33)
    code, out, _ = run_cli("lint", bad_folder / "loop_a.py")
    assert code == 2 and "loop_a.py:1:1: PC901 [error] is a symbolic link loop" in out
    code, out, _ = run_cli("lint", "--stdin-filename", bad_folder / "loop_a.py", stdin="x = 1\n")
    assert code == 0 and "No findings. Checked 1 file" in out
