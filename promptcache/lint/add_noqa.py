"""``--add-noqa``: silence every current finding in place, as ruff does when a code base adopts a linter.

Each finding gets its code in a ``# noqa: CODE`` at the end of the line it is
reported on; a finding inside a multi-line string gets it after the closing
quotes (of the last string, when several share lines), where a ``# noqa``
covers the whole string. Codes already in a
``# noqa: ...`` there are merged into it (a bare ``# noqa`` already silences
everything). A line that ends in a backslash continuation cannot carry a
comment: it is left alone and counted in ``skipped``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from promptcache.lint.finding import Finding
from promptcache.lint.positions import source_lines
from promptcache.lint.suppression import scan


@dataclass
class NoqaResult:
    """The new text, how many codes were added and how many findings had no line to carry them."""

    text: str
    added: int = 0
    skipped: int = 0


def add_noqa(text: str, findings: Iterable[Finding]) -> NoqaResult:
    """``text`` with a ``# noqa`` for each of ``findings`` (see the module docstring)."""
    lines = source_lines(text)
    comments, spans = scan(text)
    ends = {row: end for end, start in spans.items() for row in range(start, end)}  # row inside -> closing row
    existing = {c.line: c for c in comments}
    wanted: dict[int, list[str]] = {}
    result = NoqaResult(text)
    for finding in findings:
        row = ends.get(finding.line, finding.line)  # the closing quotes of the last string sharing its rows
        if row > len(lines):
            result.skipped += 1
            continue
        codes = wanted.setdefault(row, [])
        if finding.code not in codes:
            codes.append(finding.code)
    for row, codes in sorted(wanted.items()):
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        end = line[len(body):]
        comment = existing.get(row)
        if comment is not None and comment.codes is None:
            continue  # a bare noqa silences every code already
        if comment is not None:
            new = [c for c in codes if c not in comment.codes]
            if not new:
                continue
            merged = "# noqa: " + ", ".join([*comment.codes, *new])
            lines[row - 1] = body[: comment.start] + merged + body[comment.end :] + end
            result.added += len(new)
            continue
        if body.rstrip().endswith("\\"):
            result.skipped += len(codes)
            continue
        lines[row - 1] = body.rstrip() + "  # noqa: " + ", ".join(codes) + end
        result.added += len(codes)
    result.text = "".join(lines)
    return result


__all__ = ["NoqaResult", "add_noqa"]
