"""Fixes of the PC4xx rules: rewrite a prompt literal's text in the form its author wrote it.

A literal's body is read as *units*: one source character, or one escape
sequence (``\\n``, ``\\u00a0``, ``\\N{...}``, a ``\\`` line continuation) or,
in an f-string, ``{{`` / ``}}``; each unit knows the text it stands for. A fix
drops or replaces units, so everything it does not touch keeps its spelling
(an author's ``\\u00e9`` stays ``\\u00e9``). Every rewrite is checked: the new
literal must parse and stand for the intended text, else no edit is offered.
All of these fixes change the prompt bytes, so they are unsafe (one cold cache
write per prefix that held the old bytes).
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from promptcache.lint import literals as L

# One escape sequence of a non-raw literal, or one character.
_ESCAPE = re.compile(r"\\(?:\n|N\{[^}]*\}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)|\{\{|\}\}|.", re.DOTALL)
_RAW = re.compile(r"\\.|\{\{|\}\}|.", re.DOTALL)
_SPACES = {"\u00a0", "\u202f", "\u2007"}  # look-alike spaces: become a plain space


@dataclass(frozen=True)
class Unit:
    """One piece of a literal body: its source spelling and the text it stands for."""

    src: str
    value: str


def units(body: str, raw: bool, fstring: bool) -> list[Unit]:
    """The units of one literal body (the text between the quotes, or one text part of an f-string)."""
    out = []
    for match in (_RAW if raw else _ESCAPE).finditer(body):
        src = match.group()
        if src == "\r":  # a typed carriage return: Python reads source with universal newlines
            out.append(Unit(src, "" if body[match.end() : match.end() + 1] == "\n" else "\n"))
        elif src in ("{{", "}}") and not fstring:
            out += [Unit(src[0], src[0]), Unit(src[1], src[1])]
        elif src in ("{{", "}}"):
            out.append(Unit(src, src[0]))
        elif raw or not src.startswith("\\"):
            out.append(Unit(src, src))
        else:
            with warnings.catch_warnings():  # an unknown escape (`\\q`) stands for itself, with a warning
                warnings.simplefilter("ignore")
                out.append(Unit(src, L.decode(src, "", '"') if src != "\\\n" else ""))
    return out


Transform = Callable[[list[Unit], bool], list[Unit] | None]


def rewrite(node: cst.SimpleString | cst.FormattedString, transform: Transform, last: bool = False) -> str | None:
    """The source of ``node`` with ``transform`` applied to the units of each text part, or None when a part
    cannot be rewritten or the result does not parse to the intended text.

    ``transform(units, last)`` gets ``last=True`` for the part that ends the literal (when ``last``).
    """
    if isinstance(node, cst.SimpleString):
        prefix, quote = L.split_prefix(node.value)
        if "b" in prefix.lower():
            return None
        body = node.value[len(prefix) + len(quote) : len(node.value) - len(quote)]
        new = transform(units(body, "r" in prefix.lower(), False), last)
        if new is None:
            return None
        source, expected = prefix + quote + "".join(u.src for u in new) + quote, "".join(u.value for u in new)
    elif isinstance(node, cst.FormattedString):
        raw = "r" in node.start.lower()
        source, expected = node.start, ""
        for i, part in enumerate(node.parts):
            if isinstance(part, cst.FormattedStringText):
                new = transform(units(part.value, raw, True), last and i == len(node.parts) - 1)
                if new is None:
                    return None
                source += "".join(u.src for u in new)
                expected += "".join(u.value for u in new)
            else:
                source += _code(part)
                expected += L.PLACEHOLDER
        source += node.end
    else:
        return None
    return source if _stands_for(source, expected) else None


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _stands_for(source: str, expected: str) -> bool:
    try:
        parsed = cst.parse_expression(source)
    except Exception:  # noqa: BLE001 - any parser failure means the rewrite is not offered
        return False
    found = L.pieces(parsed)
    return len(found) == 1 and found[0].value == expected


# -- the transforms ----------------------------------------------------------
_TYPED_TRAILING = re.compile(r"[ \t]+\r?\n")


def typed_trailing_whitespace(body: str) -> bool:
    """True when a literal's source body has spaces or tabs typed before a source line break (LF or CRLF)."""
    return _TYPED_TRAILING.search(body) is not None


def strip_trailing_whitespace(items: list[Unit], last: bool) -> list[Unit] | None:
    """Drop the spaces and tabs typed before each line break typed in the source (escapes stay); None when an
    escape ends in typed whitespace there (``\\ `` before a line break: stripping it would make a continuation)."""
    out: list[Unit] = []
    for unit in items:
        if unit.src == "\n":
            cr = out.pop() if out and out[-1].src == "\r" else None
            while out and out[-1].src in (" ", "\t"):
                out.pop()
            if out and out[-1].src.startswith("\\") and out[-1].src[-1:] in (" ", "\t"):
                return None
            if cr is not None:
                out.append(cr)
        out.append(unit)
    return out


def strip_indent(width: int) -> Transform:
    """A transform that drops up to ``width`` typed spaces or tabs after each line break typed in the source
    (the start of a text part that follows a replacement field is mid-line, not a line start)."""
    def transform(items: list[Unit], last: bool) -> list[Unit]:
        out: list[Unit] = []
        dropping = 0
        for unit in items:
            if dropping and unit.src in (" ", "\t"):
                dropping -= 1
                continue
            dropping = width if unit.src in ("\n", "\\\n") else 0  # a typed line break, or a `\` continuation
            out.append(unit)
        return out
    return transform


def unix_line_ends(items: list[Unit], last: bool) -> list[Unit] | None:
    """``\\r\\n`` becomes ``\\n`` (the ``\\r`` is dropped) and a lone ``\\r`` becomes ``\\n``; with ``last``, a ``\\r``
    that ends the part is the first half of a CRLF whose ``\\n`` starts the next piece, and is dropped."""
    out: list[Unit] = []
    for i, unit in enumerate(items):
        if unit.value != "\r":
            out.append(unit)
        elif (i + 1 < len(items) and items[i + 1].value == "\n") or (last and i == len(items) - 1):
            continue
        elif unit.src.startswith("\\"):
            out.append(Unit("\\n", "\n"))
        else:
            return None  # a raw carriage return in the source: leave it to the author
    return out


def visible_text(items: list[Unit], last: bool) -> list[Unit] | None:
    """Zero-width characters, BOMs and soft hyphens removed, look-alike spaces made plain spaces, NFC applied
    to the characters typed as they are; None when what is left is still not NFC (an escape is involved)."""
    out: list[Unit] = []
    for unit in items:
        if unit.value in _SPACES:
            out.append(Unit(" ", " "))
        elif unit.value not in L.INVISIBLE:
            out.append(unit)
    typed = "".join(u.src for u in out)
    if unicodedata.is_normalized("NFC", "".join(u.value for u in out)):
        return out
    normalised = unicodedata.normalize("NFC", typed)
    again = units(normalised, True, False) if "\\" not in typed else None
    if again is None or not unicodedata.is_normalized("NFC", "".join(u.value for u in again)):
        return None
    return again


# -- PC401: dedent -------------------------------------------------------------
def dedent_call(piece: L.Piece) -> str:
    """``textwrap.dedent`` when the text starts on the line after the quotes (dedent removes the common
    indentation then); ``inspect.cleandoc`` when it starts on the quotes' line, whose missing indentation
    would leave dedent with nothing to remove."""
    first = piece.body.split("\n", 1)[0]
    return "textwrap.dedent" if first.strip() in ("", "\\") else "inspect.cleandoc"


def import_insertion(module: cst.Module, name: str) -> tuple[cst.CSTNode, str, bool] | None:
    """``(node, text, after)`` that adds ``import NAME`` (see :class:`~promptcache.lint.rule.NodeFix`), or None
    when ``import NAME`` is already there at module level. The line goes into the first run of plain
    ``import X`` lines after the docstring and the ``from __future__`` imports, in alphabetical order among
    them (right after the last one when it sorts last), else before the first statement after them (before
    its decorators). The module's own line ending is used."""
    body = list(module.body)
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import) and any(
                        a.asname is None and _dotted(a.name) == name for a in small.names):
                    return None
    newline = module.default_newline
    i = 0
    while i < len(body) and (_is_docstring(body[i], i) or _is_future(body[i])):
        i += 1
    first = i
    while i < len(body) and (plain := _plain_import(body[i])) is not None and plain < name:
        i += 1
    last = body[i - 1] if i > first else None
    if last is not None and (i == len(body) or _plain_import(body[i]) is None) and last.trailing_whitespace.comment is None:
        return (last, f"{newline}import {name}", True)  # after the last import of the run (a comment stays on its line)
    if i == len(body):
        return None
    at = body[i]
    decorators = getattr(at, "decorators", ())
    return (decorators[0] if decorators else at, f"import {name}{newline}", False)


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _small(statement: cst.CSTNode) -> cst.BaseSmallStatement | None:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        return statement.body[0]
    return None


def _is_docstring(statement: cst.CSTNode, index: int) -> bool:
    small = _small(statement)
    return index == 0 and isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))


def _is_future(statement: cst.CSTNode) -> bool:
    small = _small(statement)
    return isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and small.module.value == "__future__"


def _plain_import(statement: cst.CSTNode) -> str | None:
    """The module of a one-name ``import X`` line, else None."""
    small = _small(statement)
    if isinstance(small, cst.Import) and len(small.names) == 1 and small.names[0].asname is None:
        return _dotted(small.names[0].name)
    return None


__all__ = ["Unit", "dedent_call", "import_insertion", "rewrite", "strip_indent", "strip_trailing_whitespace",
           "typed_trailing_whitespace", "units", "unix_line_ends", "visible_text"]
