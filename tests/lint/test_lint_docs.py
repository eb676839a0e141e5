"""Rule documentation: required sections, generated pages up to date, ``promptcache rules`` / ``rule``."""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys

import pytest

from lint_support import REPO_ROOT
from promptcache.lint.registry import discover

SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## When it does not fire")


def _generator():
    spec = importlib.util.spec_from_file_location("gen_rule_pages", REPO_ROOT / "docs" / "gen_rule_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("code", list(discover()))
def test_rule_documentation_shape(code):
    rule = discover()[code]
    doc = rule.documentation()
    positions = [doc.index(s) for s in SECTIONS]
    assert positions == sorted(positions), f"{code}: sections out of order"
    assert ("## Fix safety" in doc) == (rule.fixable is not None), f"{code}: Fix safety section iff a fix exists"
    assert rule.name and rule.message and rule.summary()


@pytest.mark.parametrize("code", list(discover()))
def test_a_rule_page_reads_in_an_80_column_terminal(code):
    # newcomer helper-88: pages had lines of 100+ columns and reST ``code`` in Markdown
    from promptcache.lint.rule_docs import rule_page

    page, fenced = rule_page(discover()[code]), False
    for line in page.splitlines():
        fenced ^= line.startswith("```")
        if not fenced and not line.startswith(("```", "|")):
            assert len(line) <= 80 and "``" not in line, line


def test_rule_pages_are_up_to_date(tmp_path):
    generator = _generator()
    assert generator.stale() == [], "run `python docs/gen_rule_pages.py`"
    generator.write(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*(f"{c}.md" for c in discover()), "index.md"])
    assert generator.stale(tmp_path) == []
    (tmp_path / "PC101.md").write_text("old text")
    assert generator.stale(tmp_path) == ["PC101.md"]


def test_rules_command_lists_every_rule(run_cli):
    code, out, _ = run_cli("rules")
    assert code == 0
    for c, rule in discover().items():
        assert c in out and rule.name in out
    code, out, _ = run_cli("rules", "--output-format", "json")
    rows = json.loads(out)
    assert {r["code"] for r in rows} == set(discover())
    assert next(r for r in rows if r["code"] == "PC301")["fix"] == "unsafe"


def test_rule_command_prints_the_page(run_cli):
    code, out, _ = run_cli("rule", "pc101")
    assert code == 0
    assert out.startswith("# PC101: volatile-in-system-prompt")
    assert all(section in out for section in SECTIONS)
    code, _, err = run_cli("rule", "PC999")
    assert code == 2 and "unknown rule 'PC999'" in err
    # by name too, as `promptcache rules` lists them (newcomer, stop 30)
    code, by_name, _ = run_cli("rule", "volatile-in-system-prompt")
    assert code == 0 and by_name == out
    # the page's Markdown as it is, as `ruff rule` prints it (newcomer helper-90: rich wrapped code blocks mid-string)
    assert out == (REPO_ROOT / "docs" / "rules" / "PC101.md").read_text(encoding="utf-8")


def test_an_unknown_rule_gets_the_codes_it_may_mean(run_cli):
    # newcomer helper-97: `promptcache rule PC1` said only "unknown rule"
    code, _, err = run_cli("rule", "PC1")
    assert code == 2 and err == "error: unknown rule 'PC1'; it is a prefix of PC101, PC102, PC103, PC104, PC105: name one of them\n"
    code, _, err = run_cli("rule", "volatile-in-system-promt")
    assert code == 2 and err.startswith("error: unknown rule 'volatile-in-system-promt'; did you mean volatile-in-system-prompt")
    code, _, err = run_cli("rule", "xyz")
    assert code == 2 and err == "error: unknown rule 'xyz'; run `promptcache rules` to list the codes and names\n"


def test_generator_command_line(tmp_path, capsys):
    """--help and a bad argument write nothing; --check exits 1 on missing or stale pages and 0 when current."""
    generator = _generator()
    pages = tmp_path / "rules"
    with pytest.raises(SystemExit) as exc:
        generator.main(["--help", "--dir", str(pages)])
    assert exc.value.code == 0 and "--check" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        generator.main(["--dir", str(pages), "--bogus"])
    assert exc.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err
    assert not pages.exists()
    assert generator.main(["--check", "--dir", str(pages)]) == 1
    assert "stale rule pages" in capsys.readouterr().out and not pages.exists()
    assert generator.main(["--dir", str(pages)]) == 0
    assert generator.main(["--check", "--dir", str(pages)]) == 0
    (pages / "PC203.md").write_text("old text", encoding="utf-8")
    assert generator.main(["--check", "--dir", str(pages)]) == 1
    assert capsys.readouterr().out.endswith("stale rule pages (run `python docs/gen_rule_pages.py`): PC203.md\n")


def test_generator_check_passes_on_the_repository():
    """The documented command, as CI would run it: the committed pages are current."""
    done = subprocess.run([sys.executable, str(REPO_ROOT / "docs" / "gen_rule_pages.py"), "--check"],
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert (done.returncode, done.stdout) == (0, "rule pages are up to date\n"), done.stderr


@pytest.mark.parametrize("name", ["concise", "full", "json_format", "sarif", "github", "summary"])
def test_public_reporter_functions_have_docstrings(name):
    module = importlib.import_module(f"promptcache.lint.reporters.{name}")
    public = [f for n, f in vars(module).items() if callable(f) and not n.startswith("_") and getattr(f, "__module__", "") == module.__name__]
    assert public and all((f.__doc__ or "").strip() for f in public), [f.__name__ for f in public if not f.__doc__]
