"""Fixtures of the lint tests: the case corpus listing, a CLI runner and a file-tree writer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from lint_support import REPO_ROOT

from promptcache.cli import main
from promptcache.lint.registry import discover


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


@pytest.fixture
def run_cli():
    """Invoke ``promptcache`` in-process: ``run_cli("lint", path, ...)`` gives (exit code, stdout, stderr)."""
    runner = CliRunner()

    def invoke(*args: str, stdin: str | None = None):
        result = runner.invoke(main, [str(a) for a in args], input=stdin, catch_exceptions=False)
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
