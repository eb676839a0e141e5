"""``--output-format concise``: one line per finding, ruff-style, then the summary."""

from __future__ import annotations

from typing import TextIO

from promptcache.lint.reporters.summary import summary
from promptcache.lint.runner import LintResult


def render(result: LintResult, out: TextIO) -> None:
    """Write one ``path:line:col: CODE [severity] message`` line per finding (1-based), then the summary line."""
    for f in result.findings:
        out.write(f"{f.path}:{f.line}:{f.column}: {f.code} [{f.severity.value}] {f.message}\n")
    out.write(summary(result) + "\n")
