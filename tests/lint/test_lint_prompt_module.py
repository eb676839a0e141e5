"""Prompts in their own module: a prompts.py with no SDK import, imported by the file that calls the SDK."""

from __future__ import annotations

import json

PROMPTS = '''\
from datetime import datetime

SYSTEM_PROMPT = f"You are the support assistant for Acme. Today is {datetime.now():%Y-%m-%d %H:%M}."


class Templates:
    ESCALATION_PROMPT = """Escalate to a human when the customer is angry.
    Always include the ticket number.
    Never promise a refund."""
'''

APP = '''\
import anthropic

from .prompts import SYSTEM_PROMPT, Templates

client = anthropic.Anthropic()


def answer(question: str) -> str:
    response = client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=500,
        system=SYSTEM_PROMPT + "\\n\\n" + Templates.ESCALATION_PROMPT,
        messages=[{"role": "user", "content": question}],
    )
    return response.content[0].text
'''

UNRELATED = '''\
from datetime import datetime

GREETING_PROMPT = f"Hello at {datetime.now()}"
'''


def test_prompt_module_findings(write_tree, run_cli):
    root = write_tree({"support/__init__.py": "", "support/prompts.py": PROMPTS, "support/app.py": APP, "tools/clock.py": UNRELATED})
    code, out, err = run_cli("lint", root, "--output-format", "json")
    findings = json.loads(out)
    got = sorted((f["path"].rsplit("/", 1)[-1], f["code"], f["line"]) for f in findings)
    assert got == [("prompts.py", "PC101", 3), ("prompts.py", "PC401", 7)]
    assert code == 1
    # prompts.py is parsed as a prompt module; clock.py (imported by nobody) is skipped.
    assert "parsed 2, skipped 2" in err


def test_prompt_module_found_through_plain_import(write_tree, run_cli):
    app = APP.replace("from .prompts import SYSTEM_PROMPT, Templates", "import prompts").replace(
        'SYSTEM_PROMPT + "\\n\\n" + Templates.ESCALATION_PROMPT', "prompts.SYSTEM_PROMPT"
    )
    root = write_tree({"prompts.py": PROMPTS, "app.py": app})
    code, out, _ = run_cli("lint", root, "--output-format", "json", "--select", "PC101")
    assert [(f["path"].rsplit("/", 1)[-1], f["code"]) for f in json.loads(out)] == [("prompts.py", "PC101")]


def test_module_without_llm_importer_is_not_a_prompt_module(write_tree, run_cli):
    root = write_tree({"prompts.py": PROMPTS, "main.py": "from prompts import SYSTEM_PROMPT\nprint(SYSTEM_PROMPT)\n"})
    code, out, _ = run_cli("lint", root, "--no-prefilter")
    assert code == 0, out


def test_prompt_module_named_on_its_own_is_read_as_one(write_tree, run_cli):
    # pre-commit and changed-files CI pass only the edited file: its importer is not in the run.
    root = write_tree({"support/__init__.py": "", "support/prompts.py": PROMPTS, "support/app.py": APP, "tools/clock.py": UNRELATED})
    code, out, err = run_cli("lint", root / "support" / "prompts.py", "--output-format", "json")
    assert sorted((f["code"], f["line"]) for f in json.loads(out)) == [("PC101", 3), ("PC401", 7)]
    assert code == 1 and "parsed 1, skipped 0" in err
    # Not in a package: the importer sits in the same folder (`import prompts`).
    flat = write_tree({"flat/prompts.py": PROMPTS, "flat/app.py": "import anthropic\nimport prompts\n"}) / "flat"
    assert [f["code"] for f in json.loads(run_cli("lint", flat / "prompts.py", "--output-format", "json")[1])] == ["PC101", "PC401"]
    # Imported by nobody that uses an LLM SDK: skipped, as in a whole-folder run.
    code, out, err = run_cli("lint", root / "tools" / "clock.py", "--output-format", "json")
    assert (code, json.loads(out)) == (0, []) and "skipped 1" in err
