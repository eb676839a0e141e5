"""The one-line run summary printed after ``concise`` and ``full`` output (and on stderr otherwise)."""

from __future__ import annotations

from promptcache.lint.finding import Severity
from promptcache.lint.runner import LintResult


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 or word == "info" else "s")


def summary(result: LintResult) -> str:
    """One line: what was found, and how many files were checked: parsed, skipped by the pre-filter, unreadable.

    Every file a finding names is among the files checked (``files = parsed + skipped + unreadable``).
    """
    counts = {s: sum(1 for f in result.findings if f.severity is s) for s in Severity}
    files = len({f.path for f in result.findings})
    if result.findings:
        parts = ", ".join(_plural(counts[s], s.value) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO) if counts[s])
        head = f"Found {_plural(len(result.findings), 'finding')} ({parts}) in {_plural(files, 'file')}."
    else:
        head = "No findings."
    unreadable = f", {result.unreadable} unreadable" if result.unreadable else ""
    return (
        f"{head} Checked {_plural(result.files, 'file')} ({result.lines} lines): parsed {result.parsed}, "
        f"skipped {result.skipped} by the pre-filter{unreadable}, in {result.seconds:.2f} s."
    )
