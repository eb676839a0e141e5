"""Issue 12: ``--fix`` / ``--unsafe-fixes`` / ``--diff`` / ``--show-fixes`` and the fixes of PC302, PC4xx and PC900.

Every fixable case of the shared corpus is fixed through the real CLI: the result parses, no longer reports the
code, and its diff touches only the flagged statement (plus one import line). Each fix has an exact-output test,
and a hypothesis property checks that fixing random sequences of fixable snippets parses and is idempotent.
"""

from __future__ import annotations

import ast
import difflib
import json
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lint_support import lint_text

from promptcache.lint.config import LintConfig
from promptcache.lint.finding import Edit
from promptcache.lint.fixer import apply_edits, fix_bytes
from promptcache.lint.registry import discover

RULES = [r for r in discover().values() if r.code != "PC901"]
_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"

# The corpus files whose expected code has a fix with edits (a new fixable case must be added here).
FIXABLE = {
    "pc301_set_comprehension_tools.py": "PC301", "pc301_set_union_tools.py": "PC301", "pc302_glob_tool_dir.py": "PC302",
    "pc304_glossary_in_system.py": "PC304", "pc304_tool_description_dumps.py": "PC304",
    "pc401_class_attr_template.py": "PC401", "pc401_method_fstring_prompt.py": "PC401",
    "pc402_trailing_spaces.py": "PC402", "pc404_crlf_literal.py": "PC404", "pc406_invisible_chars.py": "PC406",
}


def fix(code: str, unsafe: bool = True) -> tuple[str, dict]:
    out = fix_bytes(code.encode(), "case.py", RULES, LintConfig(), unsafe=unsafe)
    return out.data.decode(), dict(out.fixed)


def test_the_fixable_corpus_cases_are_the_listed_ones(lint_cases_dir):
    found = {}
    for path in sorted(lint_cases_dir.glob("pc*.py")):
        findings = lint_text(path.read_text(encoding="utf-8"))
        main = path.name[:5].upper()
        if any(f.code == main and f.fix is not None and f.fix.edits for f in findings):
            found[path.name] = main
    assert found == FIXABLE


@pytest.mark.parametrize("name", sorted(FIXABLE))
def test_fix_unsafe_fixes_on_a_corpus_case(name, lint_cases_dir, tmp_path, run_cli):
    code = FIXABLE[name]
    target = tmp_path / name
    shutil.copy(lint_cases_dir / name, target)
    before = target.read_text(encoding="utf-8")
    flagged = [f for f in lint_text(before) if f.code == code]
    status, out, _ = run_cli("lint", target, "--fix", "--unsafe-fixes", "--select", code, "--output-format", "json")
    after = target.read_text(encoding="utf-8")
    ast.parse(after)
    assert json.loads(out) == [] and status == 0
    lines = {n for f in flagged for n in range(f.line, f.end_line + 1)}
    added_imports = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before.splitlines(), after.splitlines()).get_opcodes():
        if tag == "equal":
            continue
        if tag == "insert" and all(line.startswith("import ") for line in after.splitlines()[j1:j2]):
            added_imports += j2 - j1
            continue
        assert set(range(i1 + 1, i2 + 1)) <= lines, f"the fix changed lines {i1 + 1}-{i2} outside {sorted(lines)}"
    assert added_imports <= 1


def test_diff_prints_writes_nothing_and_exits_1(lint_cases_dir, tmp_path, run_cli):
    target = tmp_path / "pc304.py"
    shutil.copy(lint_cases_dir / "pc304_tool_description_dumps.py", target)
    before = target.read_bytes()
    status, out, err = run_cli("lint", target, "--diff", "--unsafe-fixes")
    assert status == 1 and target.read_bytes() == before
    assert "+        \"description\": f\"Update fields on a CRM contact. Field types: {json.dumps(FIELD_TYPES, sort_keys=True)}\",  # <- PC304" in out
    assert out.startswith(f"--- {target.as_posix()}\n+++ {target.as_posix()}\n@@ ")
    assert "Would fix 1 finding in 1 file" in err
    # Without --unsafe-fixes the only fix is unsafe: nothing to apply, exit 0.
    status, out, err = run_cli("lint", target, "--diff")
    assert (status, out) == (0, "") and "No fixes to apply." in err
    assert "1 unsafe fix available: add --unsafe-fixes (they change prompt bytes once)." in err


def test_fix_applies_only_safe_fixes_without_unsafe_fixes(tmp_path, run_cli):
    target = tmp_path / "bot.py"
    target.write_text(_CLAUDE + "class Bot:\n    SYSTEM_PROMPT = '''Be brief.\n    Cite sources.'''  # noqa: PC101\n", encoding="utf-8")
    status, out, _ = run_cli("lint", target, "--fix", "--show-fixes")
    assert target.read_text().endswith("    Cite sources.'''\n")  # PC900 (safe) fixed, PC401 (unsafe) not
    assert "Fixed 1 finding in 1 file. Left: 1 finding (1 warning)" in out
    assert "1 × PC900 (unused-noqa)" in out and status == 1
    assert "[*] 1 fixable with --fix --unsafe-fixes" in out


# -- exact results of each fix ---------------------------------------------------------------------------------
def test_pc301_sorts_the_left_of_an_or_default():
    """`tools or OMIT`: sorting the whole expression would call sorted(OMIT) when there are no tools."""
    code = _CLAUDE + "def run(q, extra):\n    tools = [{'name': n} for n in {'a', 'b'} | set(extra)]\n    return client.messages.create(model='m', messages=[], tools=tools or anthropic.NOT_GIVEN)\n"
    fixed, counts = fix(code)
    assert counts == {"PC301": 1} and 'tools=sorted(tools, key=lambda t: t["name"]) or anthropic.NOT_GIVEN)' in fixed


def test_pc302_sorts_the_listing_with_the_key_its_items_need():
    code = _CLAUDE + "import os\ndef run(q):\n    names = [e.name for e in os.scandir('tools')]\n    return client.messages.create(model='m', tools=[{'name': n} for n in names], messages=[])\n"
    fixed, counts = fix(code)
    assert "names = [e.name for e in sorted(os.scandir('tools'), key=lambda e: e.name)]" in fixed and counts == {"PC302": 1}
    walk = _CLAUDE + "import os\ndef run(q):\n    tools = [{'name': f} for _, _, fs in os.walk('t') for f in fs]\n    return client.messages.create(model='m', tools=tools, messages=[])\n"
    finding = next(f for f in lint_text(walk) if f.code == "PC302")
    assert finding.fix is not None and not finding.fix.edits  # os.walk: described, not edited


def test_pc401_dedent_or_cleandoc_and_one_import_after_the_docstring():
    code = ('"""Bot."""\nfrom __future__ import annotations\n' + _CLAUDE
            + "class Bot:\n    A_PROMPT = '''\n        Be brief.\n        Cite.'''\n    B_PROMPT = '''Be kind.\n    Be exact.'''\n")
    fixed, counts = fix(code)
    assert counts == {"PC401": 2}
    assert fixed.count("import textwrap\n") == 1 and fixed.count("import inspect\n") == 1
    # in the first run of plain imports, in alphabetical order (where isort puts them)
    assert fixed.startswith('"""Bot."""\nfrom __future__ import annotations\nimport anthropic\nimport inspect\nimport textwrap\nclient =')
    assert "A_PROMPT = textwrap.dedent('''\n        Be brief.\n        Cite.''')" in fixed
    assert "B_PROMPT = inspect.cleandoc('''Be kind.\n    Be exact.''')" in fixed
    again, more = fix(fixed)
    assert again == fixed and more == {}


def test_pc401_keeps_an_existing_import_and_leaves_a_concatenation_alone():
    code = _CLAUDE + "import textwrap\nclass Bot:\n    SYSTEM_PROMPT = '''\n        Be brief.\n        Cite.'''\n"
    fixed, _ = fix(code)
    assert fixed.count("import textwrap") == 1 and "textwrap.dedent('''" in fixed
    concat = _CLAUDE + "class Bot:\n    SYSTEM_PROMPT = ('Intro. '\n        '''Be brief.\n        Cite.''')\n"
    finding = next(f for f in lint_text(concat) if f.code == "PC401")
    assert not finding.fix.edits and "implicit concatenation" in finding.fix.description


def test_pc402_strips_typed_whitespace_before_line_breaks_and_keeps_escapes_as_written():
    code = _CLAUDE + "SYSTEM_PROMPT = '''Caf\\u00e9 rules:\\t\\nBe kind.  \nEnd.\t\n'''\n"
    fixed, counts = fix(code)
    assert "SYSTEM_PROMPT = '''Caf\\u00e9 rules:\\t\\nBe kind.\nEnd.\n'''\n" in fixed and counts == {"PC402": 1}


def test_pc404_lone_carriage_return_becomes_a_line_feed():
    fixed, counts = fix(_CLAUDE + "SYSTEM_PROMPT = 'One.\\r\\nTwo.\\rThree.'\n")
    assert "SYSTEM_PROMPT = 'One.\\nTwo.\\nThree.'\n" in fixed and counts == {"PC404": 1}


def test_pc406_removes_invisible_characters_and_plain_spaces_no_break_spaces():
    fixed, counts = fix(_CLAUDE + "SYSTEM_PROMPT = '\\ufeffQuote\\u00a0amounts\u200b exactly.'\n")
    assert "SYSTEM_PROMPT = 'Quote amounts exactly.'\n" in fixed and counts == {"PC406": 1}
    mixed = _CLAUDE + "SYSTEM_PROMPT = 'Rules:\\n\\t- one\\n    - two'\n"
    finding = next(f for f in lint_text(mixed) if f.code == "PC406")
    assert not finding.fix.edits


def test_two_fixes_of_one_literal_take_two_passes_and_never_corrupt_it():
    """PC402 and PC406 rewrite the same literal: their edits overlap, so one waits for the next pass."""
    code = _CLAUDE + "SYSTEM_PROMPT = '''Quote\u00a0amounts.  \nBe exact.\n'''\n"
    fixed, counts = fix(code)
    assert "SYSTEM_PROMPT = '''Quote amounts.\nBe exact.\n'''\n" in fixed and counts == {"PC402": 1, "PC406": 1}


def test_a_rewrite_that_would_not_parse_is_not_offered():
    code = _CLAUDE + 'SYSTEM_PROMPT = """Say "hi"\u200b"""\n'  # removing the U+200B would end the literal in four quotes
    finding = next(f for f in lint_text(code) if f.code == "PC406")
    assert not finding.fix.edits and "cannot be rewritten safely" in finding.fix.description


@pytest.mark.parametrize(("line", "expected"), [
    ("X = 1  # noqa: PC101, E501\n", "X = 1  # noqa: E501\n"),
    ("X = 1  # noqa: PC101\n", "X = 1\n"),
    ("X = 1  # noqa: PC101 - legacy\n", "X = 1  # - legacy\n"),
    ("X = 1  # type: ignore  # noqa: PC999\n", "X = 1  # type: ignore\n"),
])
def test_pc900_fix_removes_only_the_unused_codes(line, expected):
    code = "import anthropic\n" + line
    finding = next(f for f in lint_text(code) if f.code == "PC900")
    assert finding.fix.applicability.value == "safe"
    fixed, counts = fix(code, unsafe=False)
    assert fixed == "import anthropic\n" + expected and counts == {"PC900": 1}


def test_apply_edits_refuses_overlaps_and_positions_outside_the_text():
    with pytest.raises(ValueError, match="overlapping"):
        apply_edits("abcdef\n", [Edit(1, 1, 1, 4, "x"), Edit(1, 3, 1, 5, "y")])
    with pytest.raises(ValueError, match="outside"):
        apply_edits("abc\n", [Edit(5, 1, 5, 2, "x")])
    assert apply_edits("ab\r\ncd\n", [Edit(2, 1, 2, 2, "X"), Edit(1, 3, 1, 3, "!")]) == "ab!\r\nXd\n"


def test_a_file_that_does_not_parse_is_left_unchanged():
    data = b"import anthropic\nSYSTEM_PROMPT = 'x  \\n'\ndef broken(:\n"
    out = fix_bytes(data, "bad.py", RULES, LintConfig(), unsafe=True)
    assert out.data == data and not out.changed


# -- the property: random sequences of fixable snippets --------------------------------------------------------
SNIPPETS = [
    "class C{i}:\n    P{i}_PROMPT = '''Be brief.\n    Cite sources.'''\n",
    "P{i}_PROMPT = '''\n    Line one.\n    Line two.\n'''\n",
    "P{i}_PROMPT = '''Rules:  \nBe kind.\t\n'''\n",
    "P{i}_PROMPT = 'One.\\r\\nTwo.'\n",
    "P{i}_PROMPT = 'Quote\\u00a0exactly.\\u200b'\n",
    "def run{i}(q):\n    return client.messages.create(model='m', messages=[], tools=[{{'name': n}} for n in {{'a', 'b', q}}])\n",
    "F{i} = {{f['name']: f['type'] for f in crm.describe()}}\n"
    "def run{i}(q):\n    return client.messages.create(model='m', messages=[], tools=[{{'name': 'u', 'description': json.dumps(F{i})}}])\n",
    "def run{i}(q):\n    return client.messages.create(model='m', messages=[], tools=[{{'name': p.stem}} for p in Path('t').glob('*.json')])\n",
    "X{i} = 1  # noqa: PC101, E501\n",
    "class D{i}:\n    P{i}_PROMPT = f'''Hi {{NAME}}.  \n    Be\\u00a0brief.'''\n",
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(range(len(SNIPPETS))), min_size=1, max_size=6))
def test_fixing_random_fixable_snippets_parses_and_is_idempotent(picks):
    code = _CLAUDE + "import json\nfrom pathlib import Path\nfrom crm import crm\nNAME = 'Ada'\n" + "".join(
        SNIPPETS[k].format(i=i) for i, k in enumerate(picks))
    fixed, counts = fix(code)
    ast.parse(fixed)
    assert sum(counts.values()) >= 1
    again, more = fix(fixed)
    assert again == fixed and more == {}


# -- regressions found in review (issue 12) ------------------------------------------------------------------------
def test_crlf_files_get_pc402_and_its_fix_and_their_own_line_ending_for_an_import():
    code = "import anthropic\r\n\r\nclient = 1\r\nclass B:\r\n    P_PROMPT = \"\"\"Hello.  \r\n    Be brief.\"\"\"\r\n"
    assert {f.code for f in lint_text(code)} == {"PC401", "PC402"}
    fixed, counts = fix(code)
    assert counts == {"PC401": 1, "PC402": 1}
    assert fixed == ("import anthropic\r\nimport inspect\r\n\r\nclient = 1\r\nclass B:\r\n"
                     "    P_PROMPT = inspect.cleandoc(\"\"\"Hello.\r\n    Be brief.\"\"\")\r\n")


def test_pc404_keeps_one_line_break_across_an_implicit_concatenation():
    fixed, counts = fix("import anthropic\nP_PROMPT = 'A\\r' '\\nB'\n")
    assert fixed == "import anthropic\nP_PROMPT = 'A' '\\nB'\n" and counts == {"PC404": 1}


def test_a_fix_that_would_change_nothing_is_not_offered():
    code = "import anthropic\nP_PROMPT = '''Line two.\\ \nnext'''\n"  # the space is part of the escape `\ `
    finding = next(f for f in lint_text(code) if f.code == "PC402")
    assert not finding.fix.edits
    fixed, counts = fix(code)
    assert fixed == code and counts == {}


def test_the_import_goes_before_a_decorator_and_right_after_the_last_import():
    fixed, _ = fix("import anthropic\nfrom dataclasses import dataclass\n@dataclass\nclass A:\n    P_PROMPT = '''Be.\n    Cite.'''\n")
    assert fixed.startswith("import anthropic\nimport inspect\nfrom dataclasses import dataclass\n@dataclass\n")
    fixed, _ = fix("import anthropic\n\nclient = anthropic.Anthropic()\nclass A:\n    P_PROMPT = '''Be.\n    Cite.'''\n")
    assert fixed.startswith("import anthropic\nimport inspect\n\nclient = anthropic.Anthropic()\n")


def test_an_f_string_with_fields_loses_its_source_indentation_instead_of_a_dedent_call():
    """dedent()/cleandoc() of the formatted text would depend on the values (one with a line of its own keeps
    every indent); removing the typed indentation is exact whatever the values."""
    code = (_CLAUDE + "RULES = 'x'\ndef m():\n    system = f'''Rules:\n    - be brief\n    {RULES}\n    End.'''\n"
            "    return client.messages.create(model='m', system=system, messages=[])\n")
    fixed, counts = fix(code)
    assert "    system = f'''Rules:\n- be brief\n{RULES}\nEnd.'''\n" in fixed and counts == {"PC401": 1}
    assert "import" not in fixed.replace("import anthropic", "")


def test_an_f_string_after_a_backslash_continuation_loses_the_first_lines_indentation_too():
    code = (_CLAUDE + "def ask(repo, rules):\n    system = f'''\\\n    Review {repo}.\n    {rules}\n    Flag bugs first.'''\n"
            "    return client.messages.create(model='m', system=system, messages=[])\n")
    fixed, counts = fix(code)
    assert "    system = f'''\\\nReview {repo}.\n{rules}\nFlag bugs first.'''\n" in fixed and counts == {"PC401": 1}
