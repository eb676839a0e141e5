"""Output formats: json fields, SARIF 2.1.0 validity (the official OASIS schema), GitHub annotations, full snippets.

``sarif-schema-2.1.0.json`` beside this file is a vendored copy of the OASIS
SARIF 2.1.0 (errata 01) JSON schema, id
https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json
(no network at test time).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))

MIXED = '''\
import os
from datetime import datetime

import anthropic

client = anthropic.Anthropic()


class Bot:
    SYSTEM_PROMPT = """You answer questions.
    Cite the section."""


def prompt(text: str, web: bool) -> str:
    return text.strip() if web else text


def ask(question: str, text: str, web: bool) -> str:
    client.messages.create(model="m", system=f"Now: {datetime.now()}", messages=[{"role": "user", "content": question}])
    return client.messages.create(model="m", system=prompt(text, web), messages=[]).content[0].text
'''

SORTED_JSON = '''\
import json

import anthropic

client = anthropic.Anthropic()


def ask(rows):
    table = {k: v for k, v in rows}
    return client.messages.create(model="m", system=json.dumps(table), messages=[])
'''


@pytest.fixture
def mixed(write_tree):
    return write_tree({"app.py": MIXED})


def test_json_fields(mixed, run_cli):
    code, out, err = run_cli("lint", mixed, "--output-format", "json")
    findings = json.loads(out)
    assert code == 1
    assert [(f["code"], f["severity"], f["line"]) for f in findings] == [
        ("PC401", "warning", 10),
        ("PC405", "info", 15),
        ("PC101", "error", 19),
    ]
    first = findings[0]
    assert set(first) == {"code", "name", "severity", "path", "line", "column", "end_line", "end_column", "message", "fix"}
    assert first["name"] == "undedented-multiline-prompt"
    # Issue 12: PC401 now carries an unsafe edit (cleandoc, since the text starts on the quotes' line).
    edits = [e["content"] for e in first["fix"]["edits"]]
    assert first["fix"]["applicability"] == "unsafe" and edits[0] == "import inspect\n" and edits[1].startswith('inspect.cleandoc("""')
    pc101 = findings[2]
    source_line = MIXED.splitlines()[pc101["line"] - 1]
    assert source_line[pc101["column"] - 1 : pc101["end_column"] - 1] == "datetime.now()"
    assert "Found 3 findings" in err  # machine formats keep the summary on stderr


def test_sarif_validates_against_the_official_schema(mixed, run_cli):
    code, out, _ = run_cli("lint", mixed, "--output-format", "sarif")
    log = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules][:3] == ["PC101", "PC102", "PC103"] and len(rules) == 30  # 30: PC306, PC5xx, PC6xx (issue 11)
    pc101 = next(r for r in rules if r["id"] == "PC101")
    assert pc101["defaultConfiguration"]["level"] == "error" and pc101["helpUri"].endswith("/PC101.md")
    # one sentence, in Markdown, and the page without reST's double backticks (newcomer helper-97)
    assert pc101["shortDescription"]["text"] == "Finds a volatile value that reaches the system prompt."
    assert all(len(r["shortDescription"]["text"]) <= 220 and not re.search(
        r"(?<!`)``(?!`)", r["shortDescription"]["text"] + r["fullDescription"]["text"]) for r in rules)
    assert "```python" in pc101["fullDescription"]["text"]
    levels = [(r["ruleId"], r["level"]) for r in run["results"]]
    assert levels == [("PC401", "warning"), ("PC405", "note"), ("PC101", "error")]
    region = run["results"][2]["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 19 and region["startColumn"] >= 1
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in run["results"])
    assert all(r["partialFingerprints"] for r in run["results"])


def test_sarif_clean_run_has_empty_results(write_tree, run_cli):
    root = write_tree({"ok.py": "import anthropic\nSYSTEM_PROMPT = 'Be brief.'\n"})
    code, out, _ = run_cli("lint", root, "--output-format", "sarif")
    log = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert code == 0 and log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"]


def test_sarif_fixes(write_tree, run_cli):
    root = write_tree({"glossary.py": SORTED_JSON})
    _, out, _ = run_cli("lint", root, "--output-format", "sarif")
    log = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    (result,) = log["runs"][0]["results"]
    replacement = result["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"]["text"] == "json.dumps(table, sort_keys=True)"
    assert replacement["deletedRegion"]["startLine"] == 10


def test_json_fix_field(write_tree, run_cli):
    root = write_tree({"glossary.py": SORTED_JSON})
    _, out, _ = run_cli("lint", root, "--output-format", "json")
    (finding,) = json.loads(out)
    assert finding["code"] == "PC304"
    assert finding["fix"]["applicability"] == "unsafe" and finding["fix"]["message"] == "Add sort_keys=True"


def test_github_annotations(mixed, run_cli):
    _, out, _ = run_cli("lint", mixed, "--output-format", "github")
    lines = out.strip().splitlines()
    pattern = re.compile(r"^::(error|warning|notice) file=[^,]+,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,title=PC\d{3} \([a-z-]+\)::.+$")
    assert all(pattern.match(line) for line in lines), lines
    assert [line.split(" ", 1)[0] for line in lines] == ["::warning", "::notice", "::error"]
    assert "title=PC101 (volatile-in-system-prompt)::" in lines[2]


def test_full_shows_the_source_snippet(mixed, run_cli):
    _, out, _ = run_cli("lint", mixed, "--output-format", "full")
    assert "app.py:19:" in out and "PC101 volatile-in-system-prompt [error]" in out
    assert '19 |     client.messages.create(model="m", system=f"Now: {datetime.now()}"' in out
    caret_line = next(line for line in out.splitlines() if "^" in line and "PC101" in line)
    assert caret_line.count("^") == len("datetime.now()")
    assert "Found 3 findings (1 error, 1 warning, 1 info) in 1 file." in out


def test_concise_lines_and_output_file(mixed, run_cli, tmp_path):
    target = tmp_path / "report.txt"
    code, out, err = run_cli("lint", mixed, "-o", target)
    assert code == 1 and out == ""
    lines = target.read_text().splitlines()
    assert lines[2].endswith("app.py:19:54: PC101 [error] `datetime.datetime.now()` reaches system=: the prompt prefix changes on every request, so provider caches (exact-prefix matching) never hit; move the value into the final user message")
    # The summary, then (issue 12) the line naming what --fix would fix: PC401's dedent fix is unsafe.
    assert lines[-2].startswith("Found 3 findings")
    # `--diff` alone would preview no unsafe fix: the hint names `--diff --unsafe-fixes` (newcomer, stop 31)
    assert lines[-1] == ("[*] 1 fixable with --fix --unsafe-fixes (they change prompt bytes once); "
                         "--diff --unsafe-fixes shows the changes.")


def test_output_file_in_a_missing_folder_is_a_usage_error(mixed, run_cli, tmp_path):
    target = tmp_path / "missing" / "dir" / "report.json"
    code, out, err = run_cli("lint", mixed, "-o", target, "--output-format", "json")
    assert code == 2 and out == ""
    assert f"cannot write {target}" in err and "does not exist" in err and "Traceback" not in err
    assert not target.parent.exists()


def test_sarif_uris_are_percent_encoded_relative_or_absolute_file_uris(write_tree, run_cli, monkeypatch):
    root = write_tree({"my app/café.py": MIXED})
    monkeypatch.chdir(root)
    log = json.loads(run_cli("lint", ".", "--output-format", "sarif")[1])
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    run = log["runs"][0]
    location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "my%20app/caf%C3%A9.py", "uriBaseId": "%SRCROOT%"}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == root.as_uri() + "/"
    (root / "elsewhere").mkdir()
    monkeypatch.chdir(root / "elsewhere")  # the file is outside the current folder: shown by its absolute path
    log = json.loads(run_cli("lint", root / "my app", "--output-format", "sarif")[1])
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": (root / "my app" / "café.py").as_uri()}


def test_sarif_uris_come_from_the_project_urls_in_pyproject(mixed, run_cli):
    import tomllib

    from lint_support import REPO_ROOT

    urls = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    driver = json.loads(run_cli("lint", mixed, "--output-format", "sarif")[1])["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == urls["Documentation"] == "https://github.com/promptcache/promptcache"
    assert {r["helpUri"] for r in driver["rules"]} == {f"{urls['Documentation']}/blob/main/docs/rules/{r['id']}.md" for r in driver["rules"]}
    import inspect

    from promptcache.lint.reporters import sarif

    assert "github.com" not in inspect.getsource(sarif)  # one source: the metadata pyproject.toml declares


DAILY_AND_NOW = """\
import anthropic
from datetime import date, datetime
client = anthropic.Anthropic()

def ask(q):
    return client.messages.create(model="m", max_tokens=9, system=f"Today is {date.today()}.", messages=[q])

def ask_now(q):
    return client.messages.create(model="m", max_tokens=9, system=f"Now: {datetime.now()}", messages=[q])
"""


def test_a_daily_clock_is_a_warning_in_every_format(write_tree, run_cli):
    """PC101 on a date (once a day) is a warning, on a per-request clock an error (issue 11): per finding, in
    the JSON, SARIF and GitHub outputs, and the exit code follows the most severe one."""
    root = write_tree({"daily.py": DAILY_AND_NOW})
    code, out, _ = run_cli("lint", root, "--output-format", "json")
    assert [(f["code"], f["line"], f["severity"]) for f in json.loads(out)] == [("PC101", 6, "warning"), ("PC101", 9, "error")]
    assert code == 1
    _, out, _ = run_cli("lint", root, "--output-format", "sarif")
    log = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert [(r["ruleId"], r["level"]) for r in log["runs"][0]["results"]] == [("PC101", "warning"), ("PC101", "error")]
    _, out, _ = run_cli("lint", root, "--output-format", "github")
    assert [line.split(" ", 1)[0] for line in out.strip().splitlines()] == ["::warning", "::error"]
    code, _, _ = run_cli("lint", root, "--fail-on", "error", "--output-format", "json")
    assert code == 1
    only_daily = write_tree({"daily/only.py": DAILY_AND_NOW.split("\ndef ask_now")[0]}) / "daily"
    code, out, _ = run_cli("lint", only_daily, "--fail-on", "error", "--output-format", "json")
    assert code == 0 and [f["severity"] for f in json.loads(out)] == ["warning"]


def test_the_fix_hint_names_the_preview_that_shows_the_fixes(write_tree, run_cli):
    # `--diff` alone previews safe fixes only: the hint says which preview shows what (newcomer, stop 31).
    safe = "import anthropic\nclient = anthropic.Anthropic()\nSYSTEM = 'Be brief.'  # noqa: PC101\n"
    both = safe + "TOOLS = [{'name': n} for n in {'a', 'b'}]\n" \
        "def ask(q):\n    return client.messages.create(model='m', max_tokens=9, system=SYSTEM, tools=TOOLS, messages=q)\n"
    _, out, _ = run_cli("lint", write_tree({"app.py": safe}) / "app.py")
    assert out.splitlines()[-1] == "[*] 1 fixable with --fix; --diff shows the changes."
    _, out, _ = run_cli("lint", write_tree({"app.py": both}) / "app.py")
    assert out.splitlines()[-1] == ("[*] 1 fixable with --fix; 1 more with --fix --unsafe-fixes (they change prompt "
                                    "bytes once); --diff shows the safe changes, --diff --unsafe-fixes all of them.")
