"""Issue 12: the result cache, ``promptcache clean``, ``--diff-since``, ``--add-noqa``, ``--stdin-filename`` and
``--force-exclude``, through the real CLI (git runs for real in temporary repositories)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from promptcache.cli import main
from promptcache.lint import filelint

VOLATILE = (
    "import anthropic\nfrom datetime import datetime\nclient = anthropic.Anthropic()\n"
    "def ask(q):\n    return client.messages.create(model='m', system=f'Now: {datetime.now()}', messages=[])\n"
)
UNDEDENTED = "import anthropic\nclass Bot:\n    SYSTEM_PROMPT = '''Be brief.\n    Cite sources.'''\n"
git_missing = shutil.which("git") is None


def run(*args, input: bytes | None = None, cwd: Path | None = None):
    """``promptcache ARGS`` in-process (in ``cwd`` when given): (exit code, stdout, stderr)."""
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


# -- the result cache ---------------------------------------------------------------------------------------------
def test_a_second_run_over_unchanged_files_parses_nothing(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text(VOLATILE)
    (tmp_path / "b.py").write_text(UNDEDENTED)
    cache = tmp_path / "cache"
    parses = []
    real_parse = filelint.cst.parse_module
    monkeypatch.setattr(filelint.cst, "parse_module", lambda data: parses.append(1) or real_parse(data))
    first = run("lint", tmp_path, "--cache-dir", cache, "--output-format", "json", "-j", "1")
    assert len(parses) == 2 and (cache / ".gitignore").read_text().endswith("*\n")
    second = run("lint", tmp_path, "--cache-dir", cache, "--output-format", "json", "-j", "1")
    assert len(parses) == 2, "the second run parsed a file"
    assert json.loads(first[1]) == json.loads(second[1]) and first[0] == second[0] == 1
    assert "parsed 0, 2 read from the cache" in second[2]
    (tmp_path / "b.py").write_text(UNDEDENTED.replace("Cite", "Quote"))
    third = run("lint", tmp_path, "--cache-dir", cache, "--output-format", "json", "-j", "1")
    assert len(parses) == 3 and "parsed 1, 1 read from the cache" in third[2]


def test_the_cache_key_follows_the_config_and_a_broken_cache_is_ignored(tmp_path):
    (tmp_path / "a.py").write_text(VOLATILE)
    cache = tmp_path / "cache"
    run("lint", tmp_path, "--cache-dir", cache)
    _, out, _ = run("lint", tmp_path, "--cache-dir", cache, "--select", "PC4")
    assert "No findings." in out and "read from the cache" not in out  # another rule set: another key
    for f in cache.glob("lint-*.json"):
        f.write_text("{not json")
    code, out, _ = run("lint", tmp_path, "--cache-dir", cache)
    assert code == 1 and "PC101" in out and "read from the cache" not in out


def test_no_cache_writes_nothing_and_clean_removes_the_cache(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text(VOLATILE)
    monkeypatch.delenv("PROMPTCACHE_CACHE_DIR")
    (tmp_path / "pyproject.toml").write_text("[tool.promptcache.lint]\nignore = []\n")
    run("lint", tmp_path, "--no-cache")
    assert not (tmp_path / ".promptcache_cache").exists()
    run("lint", tmp_path)  # beside the config file
    assert (tmp_path / ".promptcache_cache" / ".gitignore").exists()
    code, out, _ = run("clean", tmp_path)
    assert code == 0 and "Removed" in out and not (tmp_path / ".promptcache_cache").exists()
    assert f"No .promptcache_cache folder under '{tmp_path}'." in run("clean", tmp_path)[1]


def test_clean_removes_only_its_own_files_from_a_named_cache_folder(tmp_path, monkeypatch):
    shared = tmp_path / "shared_cache"
    shared.mkdir()
    (shared / "other_tool.db").write_text("keep me")
    monkeypatch.setenv("PROMPTCACHE_CACHE_DIR", str(shared))
    (tmp_path / "a.py").write_text(VOLATILE)
    run("lint", tmp_path)
    assert list(shared.glob("lint-*.json"))
    code, out, _ = run("clean", tmp_path)
    assert code == 0 and sorted(p.name for p in shared.iterdir()) == ["other_tool.db"]


# -- --diff-since --------------------------------------------------------------------------------------------------
def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(repo), "PATH": "/usr/bin:/bin"})


@pytest.mark.skipif(git_missing, reason="git is not installed")
def test_diff_since_reports_only_findings_on_changed_lines(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "bot.py").write_text(UNDEDENTED)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    (repo / "bot.py").write_text(UNDEDENTED + "    OTHER_PROMPT = '''Be kind.\n    Be exact.'''\n")
    git(repo, "commit", "-qam", "two")
    (repo / "new.py").write_text(VOLATILE)  # untracked: every line counts as changed
    code, out, err = run("lint", ".", "--diff-since", "HEAD~1", "--output-format", "json", cwd=repo)
    got = sorted((f["path"], f["code"], f["line"]) for f in json.loads(out))
    assert got == [("bot.py", "PC401", 5), ("new.py", "PC101", 5)] and code == 1
    assert "1 finding on lines not changed since HEAD~1 not shown" in err
    code, out, _ = run("lint", "bot.py", "--diff-since", "HEAD", cwd=repo)
    assert code == 0 and "No findings." in out


@pytest.mark.skipif(git_missing, reason="git is not installed")
def test_diff_since_outside_a_repository_or_with_an_unknown_ref_is_a_usage_error(tmp_path):
    (tmp_path / "a.py").write_text(VOLATILE)
    code, _, err = run("lint", ".", "--diff-since", "HEAD", cwd=tmp_path)
    assert code == 2 and "--diff-since needs a git repository" in err and "Traceback" not in err
    git(tmp_path, "init", "-q")
    code, _, err = run("lint", ".", "--diff-since", "no-such-ref", cwd=tmp_path)
    assert code == 2 and "git does not know the ref 'no-such-ref'" in err


@pytest.mark.skipif(git_missing, reason="git is not installed")
def test_diff_since_diffs_each_path_in_its_own_repository(tmp_path):
    """A path outside the current folder's repository is diffed in its own (newcomer, stop 35: its findings were
    all hidden); a path in no repository is a usage error wherever the command runs."""
    here, there = tmp_path / "here", tmp_path / "there"
    for repo in (here, there):
        repo.mkdir()
        git(repo, "init", "-q")
        (repo / "old.py").write_text("x = 1\n")
        git(repo, "add", ".")
        git(repo, "commit", "-qm", "one")
    (there / "bot.py").write_text(VOLATILE)  # untracked in `there`
    code, out, err = run("lint", there, "--diff-since", "HEAD", "--output-format", "json", cwd=here)
    assert [(Path(f["path"]).name, f["code"]) for f in json.loads(out)] == [("bot.py", "PC101")] and code == 1
    assert "not shown" not in err
    outside = tmp_path / "loose"
    outside.mkdir()
    (outside / "a.py").write_text(VOLATILE)
    code, _, err = run("lint", outside, "--diff-since", "HEAD", cwd=here)
    assert code == 2 and f"--diff-since needs a git repository, and {outside} is not in one" in err
    # a path that does not exist is a PC901 finding, shown whatever the diff (second review: it was hidden)
    code, out, err = run("lint", here / "nope.py", "--diff-since", "HEAD", cwd=here)
    assert code == 2 and "PC901" in out and "not shown" not in err
    # stdin named for a file not saved yet is new: its findings are shown
    code, out, err = run("lint", "--stdin-filename", here / "newdir" / "new.py", "--diff-since", "HEAD",
                         input=VOLATILE.encode(), cwd=here)
    assert code == 1 and "PC101" in out and "not shown" not in err


# -- --add-noqa ----------------------------------------------------------------------------------------------------
def test_add_noqa_silences_every_finding_in_place_once(tmp_path):
    target = tmp_path / "bot.py"
    target.write_text(VOLATILE.replace("messages=[])\n", "messages=[])  # noqa: E501\n") + UNDEDENTED.replace("import anthropic\n", ""))
    code, _, err = run("lint", target, "--add-noqa")
    assert code == 0 and "Added 2 noqa directives." in err
    text = target.read_text()
    assert "messages=[])  # noqa: E501, PC101\n" in text
    assert "    Cite sources.'''  # noqa: PC401\n" in text  # after the closing quotes: it covers the whole string
    assert run("lint", target)[0] == 0
    code, _, err = run("lint", target, "--add-noqa")
    assert "Added 0 noqa directives." in err and target.read_text() == text


# -- --stdin-filename and --force-exclude ------------------------------------------------------------------------
def test_stdin_filename_lints_the_source_as_that_file_and_fix_prints_the_fixed_source(tmp_path):
    code, out, _ = run("lint", "--stdin-filename", tmp_path / "bot.py", input=VOLATILE.encode())
    assert code == 1 and f"{(tmp_path / 'bot.py').as_posix()}:5:61: PC101 [error]" in out
    assert not (tmp_path / "bot.py").exists()
    code, out, _ = run("lint", "--stdin-filename", tmp_path / "bot.py", input=VOLATILE.replace("messages=[])", "messages=[])  # NOQA: PC101").encode())
    assert code == 0 and "No findings." in out  # `# NOQA` in capitals counts too
    (tmp_path / "bot.py").write_text("ON_DISK = 1\n")  # the saved file: an editor pipes its unsaved buffer
    code, out, err = run("lint", "--stdin-filename", tmp_path / "bot.py", "--fix", "--unsafe-fixes", input=UNDEDENTED.encode())
    assert (tmp_path / "bot.py").read_text() == "ON_DISK = 1\n"
    assert out == "import anthropic\nimport inspect\nclass Bot:\n    SYSTEM_PROMPT = inspect.cleandoc('''Be brief.\n    Cite sources.''')\n"
    assert "Fixed 1 finding" in err and code == 0
    code, _, err = run("lint", "a.py", "--stdin-filename", "b.py", input=b"")
    assert code == 2 and "give no PATHS" in err
    code, out, _ = run("lint", "--stdin-filename", tmp_path / "bot.py", "-", input=VOLATILE.encode())  # ruff's form
    assert code == 1 and f"{(tmp_path / 'bot.py').as_posix()}:5:61: PC101 [error]" in out
    code, _, err = run("lint", "-", input=VOLATILE.encode())
    assert code == 2 and "`-` is not a file: to lint source from stdin, pass --stdin-filename PATH" in err


def test_force_exclude_applies_the_exclusions_to_named_files(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.promptcache.lint]\nextend-exclude = ["legacy/"]\n')
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "old.py").write_text(VOLATILE)
    assert run("lint", tmp_path / "legacy" / "old.py")[0] == 1  # a named file is linted...
    code, out, _ = run("lint", tmp_path / "legacy" / "old.py", "--force-exclude")
    assert code == 0 and "Checked 0 files" in out  # ...unless the exclusions are forced (pre-commit)


def _edited(tmp_path: Path, before: str, after: str) -> Path:
    """A repository whose ``bot.py`` was committed as ``before`` and is now ``after`` (not committed)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "bot.py").write_text(before)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    (repo / "bot.py").write_text(after)
    return repo


@pytest.mark.skipif(git_missing, reason="git is not installed")
def test_diff_since_reports_a_finding_whose_source_line_changed(tmp_path):
    before = ("import anthropic\nimport uuid\nclient = anthropic.Anthropic()\nSTAMP = 'v1'\n"
              "def ask(q):\n    return client.messages.create(model='m', system=f'Build {STAMP}', messages=[])\n")
    repo = _edited(tmp_path, before, before.replace("STAMP = 'v1'", "STAMP = str(uuid.uuid4())"))
    code, out, _ = run("lint", ".", "--diff-since", "HEAD", "--output-format", "json", cwd=repo)
    assert code == 1 and [(f["code"], f["line"]) for f in json.loads(out)] == [("PC101", 6)]


@pytest.mark.skipif(git_missing, reason="git is not installed")
def test_diff_since_reports_a_finding_whose_fix_rewrites_a_changed_line(tmp_path):
    # newcomer helper-100: PC301 is reported at the set; a PR that drops `sorted()` on the `tools=` line passed
    before = ("import anthropic\nclient = anthropic.Anthropic()\nENABLED = {'search', 'refund'}\nSPECS = {}\n"
              "def ask(q):\n    return client.messages.create(model='m', max_tokens=9, messages=[],\n"
              "                                  tools=[SPECS[n] for n in sorted(ENABLED)])\n")
    repo = _edited(tmp_path, before, before.replace("sorted(ENABLED)", "ENABLED"))
    code, out, _ = run("lint", ".", "--diff-since", "HEAD", "--output-format", "json", cwd=repo)
    assert code == 1 and [(f["code"], f["line"]) for f in json.loads(out)] == [("PC301", 3)]


def test_add_noqa_after_strings_that_share_a_line_covers_them_all(tmp_path):
    target = tmp_path / "bot.py"
    target.write_text('import anthropic\nclass Bot:\n    P_PROMPT = """a\n    Cite.""" + """More.\n    Stuff."""\n')
    run("lint", target, "--add-noqa")
    assert target.read_text().endswith('    Stuff."""  # noqa: PC401\n')
    assert run("lint", target)[0] == 0
