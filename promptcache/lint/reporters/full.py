"""``--output-format full``: each finding with its source snippet (rich), then the summary.

The snippet shows the reported line with one line of context on each side, a
gutter of line numbers, and carets under the reported columns (as ruff's
``full`` format does).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.text import Text

from promptcache.lint.finding import Finding, Severity
from promptcache.lint.reporters.summary import summary
from promptcache.lint.runner import LintResult

UNBOUNDED = 10_000
"""The console width when ``out`` is not a terminal: no line is wrapped."""

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFO: "bold cyan"}


def _lines(path: str, cache: dict[str, list[str] | None]) -> list[str] | None:
    if path not in cache:
        try:
            cache[path] = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            cache[path] = None
    return cache[path]


def _snippet(f: Finding, lines: list[str]) -> Text:
    text = Text()
    first, last = max(1, f.line - 1), min(len(lines), f.line + 1)
    width = len(str(last))
    for number in range(first, last + 1):
        source = lines[number - 1].expandtabs(4) if number - 1 < len(lines) else ""
        text.append(f"{number:>{width}} |" + (" " if source else ""), style="blue")
        text.append(source + "\n")
        if number == f.line:
            end = f.end_column if f.end_line == f.line else len(lines[number - 1]) + 1
            carets = max(1, end - f.column)
            text.append(" " * width + " | ", style="blue")
            text.append(" " * (f.column - 1) + "^" * carets, style=_STYLE[f.severity])
            text.append(f" {f.code}\n", style=_STYLE[f.severity])
    return text


def render(result: LintResult, out: TextIO, color: bool = False) -> None:
    """Write each finding with its message, source snippet and carets (rich; ANSI colours when ``color``), then the summary.

    ``color`` means ``out`` is a terminal: the header, message and fix lines are wrapped at spaces to its width
    (``COLUMNS`` when set), the message indented; elsewhere every line is whole. Source lines are never wrapped
    (the carets must stay under their columns; the terminal folds a long one)."""
    wrap = color or bool(os.environ.get("COLUMNS"))
    console = Console(file=out, force_terminal=color, no_color=not color, highlight=False,
                      width=None if wrap else UNBOUNDED)
    cache: dict[str, list[str] | None] = {}
    for f in result.findings:
        header = Text()
        header.append(f"{f.path}:{f.line}:{f.column}: ", style="bold")
        header.append(f"{f.code} ", style=_STYLE[f.severity])
        header.append(f"{f.name} [{f.severity.value}]")
        _indented(console, header, indent=0)
        _indented(console, Text(f.message))
        lines = _lines(f.path, cache)
        if lines:
            console.print(_snippet(f, lines), end="", soft_wrap=True)
        if f.fix is not None:
            _indented(console, Text(f"fix ({f.fix.applicability.value}): {f.fix.description}", style="green"))
        console.print()
    _indented(console, Text(summary(result), style="bold"), indent=0)


def _indented(console: Console, text: Text, indent: int = 2) -> None:
    """``text`` wrapped at spaces to the console's width, each line indented by ``indent`` spaces and printed
    without the trailing padding a :class:`rich.padding.Padding` or a wrapped :class:`~rich.text.Text` leaves."""
    for line in text.wrap(console, max(console.width - indent, 20)):
        line.rstrip()
        console.print(Text(" " * indent) + line, soft_wrap=True)
