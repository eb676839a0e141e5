"""Suppression comments: ``# noqa``, ``# noqa: PC101, PC203`` and file-level ``# promptcache: noqa``.

A ``# noqa`` comment applies to the line it is on (the line a finding is
reported on, which is where the flagged expression starts). After the closing
quotes of a multi-line string it applies to every line of that string, so a
finding on a triple-quoted prompt can be silenced at its end, as in ruff.

A data-flow finding (PC101-PC105) is reported where the value enters the
prompt slot, but its sources may start on other lines of the file. A
``# noqa: PC101`` naming the code on a source's line silences that source
(:func:`is_suppressed_explicitly`), and the finding when every source it
names is silenced. A bare ``# noqa`` there does not: it may be meant for
another linter's finding on that line.

``# promptcache: noqa`` on a line of its own silences the whole file;
``# promptcache: noqa: PC401`` only those codes. Comments are found with
:mod:`tokenize`, so ``# noqa`` inside a string does not count.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(
    rb"^[ \t]*#[ \t]*promptcache:[ \t]*noqa(?::[ \t]*(?P<codes>[A-Z]+[0-9]+(?:[ \t,]+[A-Z]+[0-9]+)*))?[ \t]*\r?$",
    re.IGNORECASE | re.MULTILINE,
)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)

ALL = None  # a bare noqa: every code


def file_noqa(data: bytes) -> set[str] | None | bool:
    """``False`` when the file has no file-level suppression, ``None`` for all codes, else the codes."""
    match = _FILE_NOQA.search(data)
    if match is None:
        return False
    codes = match.group("codes")
    if not codes:
        return ALL
    return {c.upper() for c in _CODE.findall(codes.decode("ascii", "replace"))}


@dataclass(frozen=True)
class NoqaComment:
    """One ``# noqa`` comment: where its directive sits and the lines it covers.

    ``line`` is 1-based; ``start`` / ``end`` are 0-based code-point columns of
    the directive (``noqa: PC101, E501``, from the ``#``) in that line;
    ``codes`` is None for a bare ``# noqa``, else the codes as written, in
    order; ``rows`` are the lines it silences (its own line, or every line of
    the multi-line string it follows); ``comment_start`` / ``comment_end``
    span the whole comment.
    """

    line: int
    start: int
    end: int
    codes: tuple[str, ...] | None
    rows: tuple[int, ...]
    comment_start: int = 0
    comment_end: int = 0


def noqa_comments(text: str) -> list[NoqaComment]:
    """Every ``# noqa`` comment of ``text`` (a comment inside a string does not count), in source order."""
    return scan(text)[0]


def scan(text: str) -> tuple[list[NoqaComment], dict[int, int]]:
    """One tokenizer pass: the ``# noqa`` comments, and ``{end row: start row}`` of the multi-line strings
    (strings that share a row are one span); no spans when the text does not tokenize."""
    found: list[NoqaComment] = []
    string_spans: dict[int, int] = {}  # end row -> start row of multi-line strings
    fstring_starts: list[int] = []

    def span(start: int, end: int) -> None:
        # A string that starts on the row where another one ends (`"""a\n b""" + """c\n d"""`) extends it: a
        # `# noqa` after the last closing quotes covers them all.
        string_spans[end] = min(string_spans.get(start, start), string_spans.get(end, start))

    def add(row: int, column: int, comment: str) -> None:
        match = _NOQA.search(comment)
        if match is None:
            return
        codes = match.group("codes")
        parsed = None if not codes else tuple(c.upper() for c in _CODE.findall(codes))
        rows = tuple(range(string_spans.get(row, row), row + 1))
        found.append(NoqaComment(row, column + match.start(), column + match.end(), parsed, rows, column, column + len(comment)))

    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            kind = tok.type
            if kind == tokenize.STRING and tok.start[0] != tok.end[0]:
                span(tok.start[0], tok.end[0])
            elif kind == getattr(tokenize, "FSTRING_START", -1):
                fstring_starts.append(tok.start[0])
            elif kind == getattr(tokenize, "FSTRING_END", -1) and fstring_starts:
                start = fstring_starts.pop()
                if start != tok.end[0]:
                    span(start, tok.end[0])
            elif kind == tokenize.COMMENT:
                add(tok.start[0], tok.start[1], tok.string)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        found = []
        string_spans.clear()
        for row, line in enumerate(text.splitlines(), start=1):
            if "#" in line:
                add(row, line.index("#"), line[line.index("#") :])
    return found, string_spans


def noqa_lines(text: str, comments: list[NoqaComment] | None = None) -> dict[int, set[str] | None]:
    """Map each 1-based line to the codes suppressed on it (``None``: all codes)."""
    out: dict[int, set[str] | None] = {}
    for comment in noqa_comments(text) if comments is None else comments:
        for row in comment.rows:
            if comment.codes is None or (row in out and out[row] is None):
                out[row] = None
            else:
                out[row] = (out.get(row) or set()) | set(comment.codes)
    return out


def is_suppressed(code: str, line: int, lines: dict[int, set[str] | None]) -> bool:
    """True when ``code`` is silenced on ``line``."""
    if line not in lines:
        return False
    codes = lines[line]
    return codes is None or code in codes


def is_suppressed_explicitly(code: str, line: int | None, lines: dict[int, set[str] | None]) -> bool:
    """True when a ``# noqa`` on ``line`` names ``code`` (a bare ``# noqa`` does not count)."""
    codes = lines.get(line) if line is not None else None
    return codes is not None and code in codes
