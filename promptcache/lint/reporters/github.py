"""``--output-format github``: GitHub Actions workflow commands.

``::error file=app.py,line=20,col=17,endLine=20,endColumn=31,title=PC101 (volatile-in-system-prompt)::message``;
severities error / warning / info map to ``::error`` / ``::warning`` / ``::notice``
(GitHub's "Workflow commands for GitHub Actions", annotation syntax and escaping).
"""

from __future__ import annotations

from typing import TextIO

from promptcache.lint.finding import Severity
from promptcache.lint.runner import LintResult

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(result: LintResult, out: TextIO) -> None:
    """Write one ``::error|warning|notice file=...,line=...::message`` workflow command per finding (escaped)."""
    for f in result.findings:
        props = (
            f"file={_prop(f.path)},line={f.line},col={f.column},endLine={f.end_line},"
            f"endColumn={f.end_column},title={_prop(f'{f.code} ({f.name})')}"
        )
        out.write(f"::{_COMMAND[f.severity]} {props}::{_data(f.message)}\n")
