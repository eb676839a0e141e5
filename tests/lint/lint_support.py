"""Helpers shared by the lint tests (a uniquely named module, so it cannot clash with other test folders)."""

from __future__ import annotations

from pathlib import Path

from promptcache.lint.config import LintConfig
from promptcache.lint.filelint import lint_bytes
from promptcache.lint.registry import discover

REPO_ROOT = Path(__file__).resolve().parents[2]


def lint_text(code: str, rules=None, *, prompt_module: bool = False, config: LintConfig | None = None, path: str = "case.py"):
    """Lint one source text with ``rules`` (default: all) and return the findings."""
    chosen = [r for r in (rules or discover().values()) if r.code != "PC901"]
    return lint_bytes(code.encode("utf-8"), path, chosen, config or LintConfig(), prompt_module).findings
