"""The one-line run summary printed after ``concise`` and ``full`` output (and on stderr otherwise)."""

from __future__ import annotations

from promptcache.lint.finding import Severity
from promptcache.lint.runner import LintResult


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 or word == "info" else "s")


def summary(result: LintResult) -> str:
    """One line: what was found (and fixed), and how many files were checked: parsed (or read from the result
    cache), skipped by the pre-filter, unreadable; then a line counting the test files left out, and one naming
    what ``--fix`` would fix, when any.

    Every file a finding names is among the files checked (``files = parsed + skipped + unreadable``); test files
    left out are counted apart.
    """
    counts = {s: sum(1 for f in result.findings if f.severity is s) for s in Severity}
    files = len({f.path for f in result.findings})
    if result.findings:
        parts = ", ".join(_plural(counts[s], s.value) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO) if counts[s])
        head = f"Found {_plural(len(result.findings), 'finding')} ({parts}) in {_plural(files, 'file')}."
    else:
        head = "No findings."
    if result.fixes:
        head = f"Fixed {_plural(result.fixed, 'finding')} in {_plural(len(result.fixes), 'file')}. " + (
            head.replace("Found", "Left:", 1) if result.findings else "No findings left.")
    unreadable = f", {result.unreadable} unreadable" if result.unreadable else ""
    parsed = f"parsed {result.parsed - result.cached}, {result.cached} read from the cache" if result.cached else f"parsed {result.parsed}"
    line = (
        f"{head} Checked {_plural(result.files, 'file')} ({_plural(result.lines, 'line')}): {parsed}, "
        f"skipped {result.skipped} by the pre-filter{unreadable}, in {result.seconds:.2f} s."
    )
    if result.tests:
        line += f"\nLeft out {_plural(result.tests, 'test file')} (--include-tests lints them)."
    return line + _hint(result)


def _hint(result: LintResult) -> str:
    """A second line naming the findings that a fix option would fix ('' when none)."""
    if not (result.fixable or result.unsafe_fixable):
        return ""
    parts = []
    if result.fixable:
        parts.append(f"{result.fixable} fixable with --fix")
    if result.unsafe_fixable:
        parts.append(f"{result.unsafe_fixable} {'more ' if result.fixable else 'fixable '}with --fix --unsafe-fixes "
                     "(they change prompt bytes once)")
    # `--diff` alone previews the safe fixes only (as ruff's does): name the flag the unsafe ones need
    if not result.unsafe_fixable:
        preview = "--diff shows the changes"
    elif not result.fixable:
        preview = "--diff --unsafe-fixes shows the changes"
    else:
        preview = "--diff shows the safe changes, --diff --unsafe-fixes all of them"
    return "\n[*] " + "; ".join(parts) + f"; {preview}."
