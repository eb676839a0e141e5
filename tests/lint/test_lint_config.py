"""Configuration: discovery of the nearest file, strict validation, and the options' effect."""

from __future__ import annotations

import re
import tomllib
from dataclasses import fields

import pytest
from lint_support import REPO_ROOT, lint_text

from promptcache.lint import config as config_module
from promptcache.lint.config import ConfigError, LintConfig, from_table, load_config
from promptcache.lint.finding import Severity
from promptcache.lint.registry import discover


def test_nearest_config_wins_and_promptcache_toml_beats_pyproject(write_tree):
    root = write_tree(
        {
            "pyproject.toml": "[tool.promptcache.lint]\nfail-on = 'error'\n",
            "pkg/pyproject.toml": "[project]\nname = 'x'\n",  # no lint table: skipped
            "pkg/sub/promptcache.toml": "[lint]\nfail-on = 'info'\n",
            "pkg/sub/pyproject.toml": "[tool.promptcache.lint]\nfail-on = 'warning'\n",
        }
    )
    assert load_config(start=root / "pkg").fail_on is Severity.ERROR
    assert load_config(start=root / "pkg").source == root / "pyproject.toml"
    sub = load_config(start=root / "pkg" / "sub")
    assert sub.fail_on is Severity.INFO and sub.root == root / "pkg" / "sub"
    assert load_config(config_file=root / "pkg" / "sub" / "pyproject.toml").fail_on is Severity.WARNING


def test_defaults_without_config(tmp_path):
    config = load_config(start=tmp_path)
    assert config.source is None and config.select == ("ALL",) and config.fail_on is Severity.WARNING


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"selct": ["PC1"]}, "unknown key 'selct'"),
        ({"select": "PC101"}, "select: expected a list of strings"),
        ({"ignore": ["E501"]}, "unknown rule code 'E501'"),
        ({"fail-on": "fatal"}, "fail-on: expected"),
        ({"prompt-name-regex": "(unclosed"}, "prompt-name-regex: invalid regular expression"),
        # No rule reads it (PC603 is not implemented): rejected like any unknown key.
        ({"min-cacheable-chars": 4000}, "unknown key 'min-cacheable-chars'"),
        ({"respect-gitignore": "yes"}, "respect-gitignore: expected true or false"),
        ({"per-file-ignores": {"tests/*": "PC101"}}, "per-file-ignores.tests/*: expected a list of rule codes"),
    ],
)
def test_strict_validation(table, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("*", r"\*")):
        from_table(table)


def test_codes_must_exist():
    config = from_table({"extend-select": ["PC999"]})
    with pytest.raises(ConfigError, match="unknown rule code 'PC999'"):
        config.validate_codes(discover())
    from_table({"select": ["PC1", "PC203", "ALL"]}).validate_codes(discover())


def test_selection_by_prefix():
    config = from_table({"select": ["PC2"], "extend-select": ["PC401"], "ignore": ["PC203"]})
    assert config.selected(discover()) == {"PC201", "PC202", "PC204", "PC401"}


def test_prompt_name_regex_controls_prompt_constants():
    code = "import anthropic\nimport time\nGREETING = f'Hi at {time.time()}'\n"
    assert lint_text(code) == []
    config = from_table({"prompt-name-regex": "(?i)greeting"})
    assert [f.code for f in lint_text(code, config=config)] == ["PC101"]


def test_volatile_name_regex():
    code = "import anthropic\nc = anthropic.Anthropic()\ndef ask(tick, q):\n    return c.messages.create(model='m', system=f'Tick {tick}. Help.', messages=[])\n"
    assert [f.code for f in lint_text(code)] == ["PC102"]  # a templated parameter: per-request
    config = from_table({"volatile-name-regex": "^tick$"})
    assert [f.code for f in lint_text(code, config=config)] == ["PC101"]


def test_with_overrides_ignores_none():
    config = LintConfig().with_overrides(select=None, fail_on=Severity.INFO)
    assert config.select == ("ALL",) and config.fail_on is Severity.INFO


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("promptcache.toml", 'select = ["PC4"]\n', "unknown key 'select' at the top level; lint settings go in the [lint] table"),
        ("promptcache.toml", '[lnit]\nselect = ["PC4"]\n', "unknown key 'lnit' at the top level"),
        ("pyproject.toml", '[tool.promptcache]\nselect = ["PC4"]\n', "unknown key 'select' at [tool.promptcache]; lint settings go in the [tool.promptcache.lint] table"),
        ("pyproject.toml", '[tool.promptcache.lnit]\nselect = ["PC4"]\n', "unknown key 'lnit' at [tool.promptcache]"),
    ],
)
def test_unknown_top_level_keys_and_tables_are_errors(write_tree, run_cli, name, text, message):
    root = write_tree({name: text, "app.py": "import anthropic\n"})
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(start=root)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(config_file=root / name)
    code, _, err = run_cli("lint", root)
    assert code == 2 and message in err and name in err


def test_the_documented_configuration_is_exactly_the_accepted_one():
    """docs/lint.md's example table names every key the validator accepts, and no other; each key
    sets a LintConfig field (the code reads them: see the keys' list under the example)."""
    text = (REPO_ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(\[tool\.promptcache\.lint\]\n.*?)```", text, re.S).group(1)
    table = tomllib.loads(block)["tool"]["promptcache"]["lint"]
    assert sorted(table) == sorted(config_module._KEYS)
    config = from_table(table)
    config.validate_codes(discover())
    field_names = {f.name for f in fields(LintConfig)} - {"root", "source"}
    assert field_names == {key.replace("-", "_") for key in table}
    assert config.extra_sink_names == ("myapp.llm.complete", "*.ask_model")


def test_a_misspelt_key_gets_a_suggestion(write_tree):
    root = write_tree({"pyproject.toml": "[tool.promptcache.lint]\ninclude_tests = true\n"})
    with pytest.raises(ConfigError, match=re.escape("unknown key 'include_tests' in the lint configuration; did you mean "
                                                    "'include-tests'? known keys: exclude,")):
        load_config(start=root)


@pytest.mark.parametrize(("name", "prompt"), [
    ("SYSTEM_PROMPT", True), ("build_prompt", True), ("PROMPT_KEY_POINTS", True), ("PROMPT_FILE_HEADER", True),
    ("prompt_name_template", True), ("promptNameTemplate", True), ("prompt_length_guidance", True),
    ("instructions", True), ("preamble", True),
    # a name ending in what names, counts or locates a prompt (skyvern, blind set 18)
    ("get_llm_handler_for_prompt_type", False), ("SYSTEM_PROMPT_NAME", False), ("system_prompt_tokens", False),
    ("SYSTEM_PROMPT_FILE", False), ("promptName", False), ("PROMPT_KEYS", False), ("prompt_ids", False),
    ("filesystem_test_session", False), ("subsystem", False),
])
def test_the_default_prompt_name_regex(name, prompt):
    assert bool(re.search(LintConfig().prompt_name_regex, name)) is prompt
