"""The CI integrations: the pre-commit hooks (``.pre-commit-hooks.yaml``) and the GitHub Action (``action.yml``).

**pre-commit.** The hooks run through the real ``pre-commit`` package, as a
user's ``.pre-commit-config.yaml`` would run them: pre-commit clones the
repository, builds a virtualenv, pip-installs promptcache into it (its base
dependencies come from PyPI) and runs the hook's entry on the named files.

``pre-commit try-repo`` cannot serve here as it is, for two reasons:

- It clones the repository's HEAD plus its *tracked* changes only (``git add
  -u``), so an untracked file is missing in its clone: a checkout where
  ``.pre-commit-hooks.yaml`` (or any new module) is not committed yet fails
  with "InvalidManifestError: .pre-commit-hooks.yaml is not a file".
- It installs into a store in a fresh temporary folder each time (it ignores
  ``PRE_COMMIT_HOME``), so every call is a new install.

So the module fixture does what try-repo does, once: it commits a snapshot of
the working tree (tracked files as they are on disk, and untracked files git
does not ignore) to a temporary repository, writes the configuration try-repo
would write (that repository, its commit, the hook ids), and installs the
hook environment into a ``PRE_COMMIT_HOME`` shared by every test of the
module. Each test then runs ``pre-commit run --config ... HOOK --files ...``
in a temporary git repository holding copies of the shared lint cases.

**The action.** ``action.yml`` is parsed with PyYAML and its lint steps are
run with bash as the runner would run them (``bash --noprofile --norc -eo
pipefail``), after substituting the ``${{ ... }}`` expressions, with this
virtualenv's ``bin`` on ``PATH`` in place of setup-python and the pip install.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
HOOK_IDS = ("promptcache-lint", "promptcache-lint-fix")
POSITIVE = "pc101_datetime_system.py"
CLEAN = "clean_dedent_prompt.py"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed: pre-commit needs it")
needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed: the action's steps are bash")


# -- git and pre-commit ----------------------------------------------------------------------------------

def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without git's per-repository variables (set when pytest runs inside a git hook) and
    without a result-cache override, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "PROMPTCACHE_CACHE_DIR"}
    env.update(extra)
    return env


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=promptcache tests", "-c", "user.email=tests@promptcache.invalid",
         "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", "-c", "core.autocrlf=false", *args],
        cwd=cwd, capture_output=True, text=True, env=_clean_env(), timeout=120,
    )
    assert done.returncode == 0, f"git {' '.join(args)} failed in {cwd}:\n{done.stderr}"
    return done.stdout


def _commit_all(folder: Path) -> str:
    """``git init`` ``folder``, commit everything in it, and return the commit."""
    _git(folder, "init", "-q")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "--no-verify", "-m", "snapshot")
    return _git(folder, "rev-parse", "HEAD").strip()


_NOT_SOURCES = {".git", ".venv", "venv", "build", "dist", "site", "__pycache__", ".promptcache_cache", ".pytest_cache",
                ".hypothesis"}


def _working_tree_files(root: Path) -> list[str]:
    """The files of the checkout as pre-commit should see them: tracked and untracked, less what git ignores
    (a plain walk without the usual build and cache folders when ``root`` is not a git checkout)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, env=_clean_env(), timeout=120)
    if listed.returncode == 0:
        return sorted({name for name in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if name})
    names = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _NOT_SOURCES and not d.endswith(".egg-info")]
        names.extend(str((Path(dirpath) / f).relative_to(root)) for f in filenames)
    return sorted(names)


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple[Path, str]:
    """A committed snapshot of the working tree (uncommitted and untracked files included): (folder, commit)."""
    snapshot = tmp_path_factory.mktemp("hook-repo")
    for name in _working_tree_files(REPO_ROOT):
        source = REPO_ROOT / name
        if source.is_file() or source.is_symlink():  # a tracked file deleted on disk, or a submodule, is skipped
            target = snapshot / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
    assert (snapshot / ".pre-commit-hooks.yaml").is_file()
    return snapshot, _commit_all(snapshot)


@pytest.fixture(scope="module")
def pre_commit(hook_repo, tmp_path_factory):
    """Run ``pre-commit run`` with both hooks of the snapshot configured (the environment is installed
    once, here, into a ``PRE_COMMIT_HOME`` all tests of the module share): ``pre_commit(project, hook_id,
    *files)`` gives the CompletedProcess."""
    repo, commit = hook_repo
    base = tmp_path_factory.mktemp("pre-commit")
    home = base / "home"
    config = base / "pre-commit-config.yaml"
    # The configuration `pre-commit try-repo SNAPSHOT` writes (and then passes to `run`).
    config.write_text(yaml.safe_dump({"repos": [{"repo": str(repo), "rev": commit,
                                                  "hooks": [{"id": hook} for hook in HOOK_IDS]}]}), encoding="utf-8")
    env = _clean_env(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")

    def run(project: Path, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pre_commit", *args, "--config", str(config)], cwd=project,
                              capture_output=True, text=True, env=env, timeout=900)

    empty = base / "empty"
    empty.mkdir()
    _git(empty, "init", "-q")
    installed = run(empty, "install-hooks")
    _skip_without_an_index(installed)
    assert installed.returncode == 0, f"pre-commit could not install the hooks:\n{installed.stdout}\n{installed.stderr}"

    def run_hook(project: Path, hook_id: str, *files: str) -> subprocess.CompletedProcess:
        return run(project, "run", hook_id, "--files", *files)

    yield run_hook
    shutil.rmtree(home, ignore_errors=True)  # the hook environment: some 70 MB per test run


@pytest.fixture
def project(tmp_path, lint_cases_dir):
    """A git repository holding ``{name: case file or text}``, committed (pre-commit tells a hook's edits
    by the diff of the tracked files)."""

    def make(files: dict[str, str]) -> Path:
        for name, content in files.items():
            target = tmp_path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            case = lint_cases_dir / content
            if content.endswith(".py") and case.is_file():
                shutil.copyfile(case, target)  # the shared cases are read-only: copy the bytes, not the mode
            else:
                target.write_text(content, encoding="utf-8")
        _commit_all(tmp_path)
        return tmp_path

    return make


def _output(done: subprocess.CompletedProcess) -> str:
    return done.stdout + done.stderr


_NO_INDEX = re.compile(r"No matching distribution found|NewConnectionError|Network is unreachable|"
                       r"Temporary failure in name resolution|Failed to establish a new connection")


def _skip_without_an_index(done: subprocess.CompletedProcess) -> None:
    """pre-commit pip-installs promptcache's dependencies into the hook environment: without a reachable
    package index (an offline machine) these tests cannot run, and say so instead of failing."""
    if done.returncode != 0 and _NO_INDEX.search(_output(done)):
        pytest.skip("pre-commit could not install the hook environment: no package index is reachable")


def test_hooks_file_is_a_valid_pre_commit_manifest():
    from pre_commit.clientlib import load_manifest

    hooks = {hook["id"]: hook for hook in load_manifest(str(REPO_ROOT / ".pre-commit-hooks.yaml"))}
    assert tuple(hooks) == HOOK_IDS
    assert hooks["promptcache-lint"]["entry"] == "promptcache lint --force-exclude"
    assert hooks["promptcache-lint-fix"]["entry"] == "promptcache lint --fix --force-exclude"
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types_or"] == ["python", "pyi"]
        assert hook["require_serial"] is True
        assert hook["pass_filenames"] is True
        assert len(hook["description"]) > 40 and "promptcache lint" in hook["description"]


@needs_git
def test_lint_hook_fails_on_the_positive_case(pre_commit, project):
    folder = project({"app/scheduler.py": POSITIVE})
    done = pre_commit(folder, "promptcache-lint", "app/scheduler.py")
    assert done.returncode == 1, _output(done)
    assert "Failed" in done.stdout and "- hook id: promptcache-lint" in done.stdout
    assert "app/scheduler.py:20:52: PC101 [error]" in done.stdout


@needs_git
def test_lint_hook_passes_on_a_clean_case(pre_commit, project):
    folder = project({"app/summarize.py": CLEAN, "README.md": "not python: the hook is not given it\n"})
    done = pre_commit(folder, "promptcache-lint", "app/summarize.py", "README.md")
    assert done.returncode == 0, _output(done)
    assert re.search(r"promptcache lint\.+Passed", done.stdout), done.stdout


@needs_git
def test_lint_hook_applies_the_configured_exclusions_to_named_files(pre_commit, project):
    """--force-exclude in the entry: pre-commit names every staged file, and an excluded one is left alone."""
    folder = project({"generated/client.py": POSITIVE, "app/summarize.py": CLEAN,
                      "pyproject.toml": '[tool.promptcache.lint]\nextend-exclude = ["generated/"]\n'})
    done = pre_commit(folder, "promptcache-lint", "generated/client.py", "app/summarize.py")
    assert done.returncode == 0, _output(done)
    assert "PC101" not in done.stdout


@needs_git
def test_fix_hook_applies_safe_fixes_and_fails_until_they_are_staged(pre_commit, project, lint_cases_dir):
    unused = (lint_cases_dir / CLEAN).read_text(encoding="utf-8") + "RETRIES = 3  # noqa: PC101\n"
    folder = project({"app/summarize.py": unused})
    done = pre_commit(folder, "promptcache-lint-fix", "app/summarize.py")
    assert done.returncode == 1, _output(done)
    assert "files were modified by this hook" in done.stdout
    assert (folder / "app/summarize.py").read_text(encoding="utf-8").endswith("RETRIES = 3\n")
    _git(folder, "add", "-A")
    again = pre_commit(folder, "promptcache-lint-fix", "app/summarize.py")
    assert again.returncode == 0, _output(again)


# -- the GitHub Action -----------------------------------------------------------------------------------

ACTION = REPO_ROOT / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _action() -> dict:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


def _substitute(text: str, inputs: dict[str, str]) -> str:
    """``text`` with each ``${{ inputs.NAME }}`` and ``${{ github.action_path }}`` replaced, as the runner does."""

    def value(match: re.Match) -> str:
        expression = match.group(1)
        if expression == "github.action_path":
            return str(REPO_ROOT)
        if expression.startswith("inputs.") and expression[len("inputs."):] in inputs:
            return inputs[expression[len("inputs."):]]
        raise AssertionError(f"the test does not know the expression {match.group(0)!r}")

    return EXPRESSION.sub(value, text)


def _condition(step: dict, inputs: dict[str, str], failed: bool) -> bool:
    """Whether the runner runs ``step``: its ``if`` (a conjunction of the terms action.yml uses) and, without a
    status function in it, the implicit ``success()``."""
    condition = str(step.get("if", "success()")).strip()
    match = EXPRESSION.fullmatch(condition)
    terms = [t.strip() for t in (match.group(1) if match else condition).split("&&")]
    status = None
    results = []
    for term in terms:
        if term in ("always()", "!cancelled()", "success()", "failure()"):
            status = {"always()": True, "!cancelled()": True, "success()": not failed, "failure()": failed}[term]
        elif found := re.fullmatch(r"inputs\.([\w-]+)\s*(==|!=)\s*''", term):
            empty = inputs[found.group(1)] == ""
            results.append(empty if found.group(2) == "==" else not empty)
        elif term == "steps.install.outcome == 'success'":
            results.append(True)  # the environment this test provides stands in for the install step
        else:
            raise AssertionError(f"the test does not know the condition term {term!r} of step {step.get('name')!r}")
    return (not failed if status is None else status) and all(results)


def _is_install(step: dict) -> bool:
    return "pip install" in step.get("run", "")


def run_action(workspace: Path, path_dirs: list[Path], **given: str) -> list[dict]:
    """Run the ``run:`` steps of action.yml but the pip install, in order, in ``workspace``, with ``inputs``
    (defaults, updated by ``given``) and ``path_dirs`` first on PATH; one record per step: name, ran, rc,
    stdout, stderr."""
    action = _action()
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    assert set(given) <= set(inputs), f"unknown inputs {set(given) - set(inputs)}"
    inputs.update(given)
    records, failed = [], False
    for step in action["runs"]["steps"]:
        if "run" not in step or _is_install(step):
            continue
        record = {"name": step.get("name", ""), "ran": _condition(step, inputs, failed), "rc": None, "stdout": "", "stderr": ""}
        records.append(record)
        if not record["ran"]:
            continue
        env = _clean_env(**{k: _substitute(str(v), inputs) for k, v in step.get("env", {}).items()})
        env["PATH"] = os.pathsep.join([*map(str, path_dirs), env.get("PATH", "")])
        script = workspace.parent / f"{workspace.name}-step.sh"
        script.write_text(_substitute(step["run"], inputs), encoding="utf-8")
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workspace,
                              capture_output=True, text=True, env=env, timeout=300)
        record.update(rc=done.returncode, stdout=done.stdout, stderr=done.stderr)
        failed = failed or done.returncode != 0
    return records


VENV_BIN = Path(sys.executable).parent  # not resolved: a virtualenv's python is a link into the base install


def test_action_is_a_composite_action_with_a_shell_on_every_run_step():
    action = _action()
    assert action["name"] and action["description"]
    assert action["runs"]["using"] == "composite"
    defaults = {name: spec.get("default") for name, spec in action["inputs"].items()}
    assert defaults == {"args": "", "paths": ".", "version": "", "sarif-file": "", "python-version": "3.11"}
    assert all(spec.get("description") for spec in action["inputs"].values())
    steps = action["runs"]["steps"]
    assert steps[0]["uses"] == "actions/setup-python@v5"
    assert steps[0]["with"]["python-version"] == "${{ inputs.python-version }}"
    runs = [s for s in steps if "run" in s]
    assert runs and all(s.get("shell") == "bash" for s in runs), [s.get("name") for s in runs if s.get("shell") != "bash"]
    assert all("run" in s or "uses" in s for s in steps)
    (install,) = [s for s in steps if _is_install(s)]
    assert "github.action_path" in json.dumps(install) and "inputs.version" in json.dumps(install)
    names = [s.get("name") for s in steps]
    lint = next(s for s in steps if "--output-format github" in s.get("run", ""))
    sarif = next(s for s in steps if "--output-format sarif" in s.get("run", ""))
    assert names.index(sarif.get("name")) > names.index(lint.get("name")), "the SARIF step runs after the lint step"
    assert "--exit-zero" in sarif["run"] and re.search(r"always\(\)|!cancelled\(\)", sarif["if"])


@needs_bash
def test_action_lint_steps_on_the_positive_case(tmp_path, lint_cases_dir):
    workspace = tmp_path / "workspace"
    (workspace / "src").mkdir(parents=True)
    shutil.copyfile(lint_cases_dir / POSITIVE, workspace / "src" / "scheduler.py")
    shutil.copyfile(lint_cases_dir / CLEAN, workspace / "src" / "summarize.py")
    lint, sarif = run_action(workspace, [VENV_BIN], args="--fail-on warning", paths="src",
                             **{"sarif-file": "reports/promptcache.sarif"})
    assert lint["ran"] and lint["rc"] == 1, lint
    annotations = [line for line in lint["stdout"].splitlines() if line.startswith(("::error ", "::warning "))]
    assert annotations and annotations == lint["stdout"].splitlines(), lint["stdout"]
    assert annotations[0].startswith("::error file=src/scheduler.py,line=20,col=52,") and "title=PC101" in annotations[0]
    assert sarif["ran"] and sarif["rc"] == 0, sarif  # after a failed lint step, as `!cancelled()` / `always()` say
    assert "from the cache" in sarif["stderr"], sarif["stderr"]  # the lint step's results, not a second parse
    report = json.loads((workspace / "reports" / "promptcache.sarif").read_text(encoding="utf-8"))
    assert report["version"] == "2.1.0"
    assert [r["ruleId"] for r in report["runs"][0]["results"]] == ["PC101"]


@needs_bash
def test_action_lint_step_passes_on_a_clean_case_without_sarif(tmp_path, lint_cases_dir):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    shutil.copyfile(lint_cases_dir / CLEAN, workspace / "summarize.py")
    lint, sarif = run_action(workspace, [VENV_BIN])  # every input at its default
    assert lint["ran"] and lint["rc"] == 0, lint
    assert "::" not in lint["stdout"]
    assert not sarif["ran"]  # sarif-file is empty
    assert not list(workspace.rglob("*.sarif"))


@needs_bash
@pytest.mark.parametrize(("version", "installs"), [
    ("", str(REPO_ROOT)), ("0.1.0", "promptcache==0.1.0"), (">=0.1,<0.3", "promptcache>=0.1,<0.3"),
])
def test_action_install_step_installs_the_checkout_or_the_version(tmp_path, version, installs):
    """The install step with stand-ins for ``python`` and ``promptcache`` that log their arguments."""
    fake = tmp_path / "bin"
    fake.mkdir()
    log = tmp_path / "calls.log"
    for name in ("python", "promptcache"):
        (fake / name).write_text(f'#!/bin/sh\nprintf "%s\\n" "{name} $*" >> "{log}"\n', encoding="utf-8")
        (fake / name).chmod(0o755)
    (install,) = [s for s in _action()["runs"]["steps"] if _is_install(s)]
    inputs = {name: str(spec.get("default", "")) for name, spec in _action()["inputs"].items()} | {"version": version}
    env = _clean_env(**{k: _substitute(str(v), inputs) for k, v in install.get("env", {}).items()})
    env["PATH"] = os.pathsep.join([str(fake), env.get("PATH", "")])
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _substitute(install["run"], inputs)],
                          cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert log.read_text(encoding="utf-8").splitlines() == [
        f"python -m pip install --disable-pip-version-check {installs}", "promptcache --version"]


# -- docs/ci.md ------------------------------------------------------------------------------------------

CI_DOC = REPO_ROOT / "docs" / "ci.md"


def _yaml_blocks() -> list:
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", CI_DOC.read_text(encoding="utf-8"), re.S)]


def test_ci_doc_pre_commit_config_is_valid_and_names_the_hooks(tmp_path):
    from pre_commit.clientlib import load_config

    (config,) = [b for b in _yaml_blocks() if isinstance(b, dict) and "repos" in b]
    path = tmp_path / ".pre-commit-config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    (repo,) = load_config(str(path))["repos"]
    assert repo["repo"] == "https://github.com/promptcache/promptcache"
    assert {hook["id"] for hook in repo["hooks"]} <= set(HOOK_IDS)
    assert all(f"`{hook}`" in CI_DOC.read_text(encoding="utf-8") for hook in HOOK_IDS)


def test_ci_doc_inputs_table_matches_the_action():
    rows = re.findall(r"^\| `([\w-]+)` \| `(\"[^\"]*\")` \|", CI_DOC.read_text(encoding="utf-8"), re.M)
    documented = {name: json.loads(default) for name, default in rows}
    assert documented == {name: spec.get("default") for name, spec in _action()["inputs"].items()}
    for block in _yaml_blocks():  # every workflow snippet that uses the action passes only inputs it has
        steps = block if isinstance(block, list) else [s for job in (block or {}).get("jobs", {}).values()
                                                       for s in job.get("steps", [])] + (block or {}).get("steps", [])
        for step in steps:
            if str(step.get("uses", "")).startswith("promptcache/promptcache@"):
                assert set(step.get("with", {})) <= set(documented), step


@needs_git
def test_pre_commit_try_repo_fails_on_a_positive_case_and_passes_on_a_clean_one(hook_repo, project, tmp_path_factory):
    """The command a user tries first, as it is: `pre-commit try-repo REPO promptcache-lint --files FILE` (each call
    installs the hook environment anew, in a temporary store: two installs). REPO is the committed snapshot of this
    checkout, since try-repo sees only committed and tracked files."""
    repo, _ = hook_repo
    folder = project({"app/scheduler.py": POSITIVE, "app/summarize.py": CLEAN})
    env = _clean_env(PRE_COMMIT_COLOR="never", PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("try-repo-home")))

    def try_repo(*files: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(repo), "promptcache-lint", "--files", *files],
                              cwd=folder, capture_output=True, text=True, env=env, timeout=900)

    failed = try_repo("app/scheduler.py")
    _skip_without_an_index(failed)
    assert failed.returncode == 1 and "app/scheduler.py:20:52: PC101 [error]" in failed.stdout, _output(failed)
    passed = try_repo("app/summarize.py")
    assert passed.returncode == 0 and re.search(r"promptcache lint\.+Passed", passed.stdout), _output(passed)


def test_no_action_script_pastes_an_input_into_its_code():
    """Inputs reach the `run:` scripts through `env:` only: `${{ inputs.X }}` pasted into a script is a script
    injection (GitHub's security hardening guide) and splits a path with spaces."""
    for step in _action()["runs"]["steps"]:
        assert "${{ inputs." not in step.get("run", ""), step.get("name")
