"""Fixtures of the lint tests: the case corpus listing, a CLI runner and a file-tree writer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from promptcache.cli import main
from promptcache.lint.config import LintConfig
from promptcache.lint.filelint import lint_bytes
from promptcache.lint.registry import discover

REPO_ROOT = Path(__file__).resolve().parents[2]


def _corpus_files() -> list[Path]:
    """The lint case files, listed at collection time (same lookup as the ``shared_dir`` fixture)."""
    env = os.environ.get("PROMPTCACHE_SHARED")
    shared = Path(env) if env else REPO_ROOT.parent / "shared"
    return sorted((shared / "cases" / "lint").glob("*.py"))


def pytest_generate_tests(metafunc):
    if "case_file" in metafunc.fixturenames:
        files = _corpus_files()
        metafunc.parametrize("case_file", files, ids=[f.name for f in files])


@pytest.fixture(scope="session")
def all_rules():
    """Every registered rule class by code."""
    return discover()


def lint_text(code: str, rules=None, *, prompt_module: bool = False, config: LintConfig | None = None, path: str = "case.py"):
    """Lint one source text with ``rules`` (default: all) and return the findings."""
    chosen = [r for r in (rules or discover().values()) if r.code != "PC901"]
    return lint_bytes(code.encode("utf-8"), path, chosen, config or LintConfig(), prompt_module).findings


@pytest.fixture
def run_cli():
    """Invoke ``promptcache`` in-process: ``run_cli("lint", path, ...)`` gives (exit code, stdout, stderr)."""
    runner = CliRunner()

    def invoke(*args: str):
        result = runner.invoke(main, [str(a) for a in args], catch_exceptions=False)
        return result.exit_code, result.stdout, result.stderr

    return invoke


@pytest.fixture
def write_tree(tmp_path):
    """Write ``{relative path: text or bytes}`` under tmp_path and return tmp_path."""

    def write(files: dict[str, str | bytes]) -> Path:
        for rel, content in files.items():
            target = tmp_path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        return tmp_path

    return write
