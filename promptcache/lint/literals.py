"""String literals as the model receives them.

The whitespace rules judge prompt text, so they need each literal piece's
source body (what the author typed, indentation included) and its value
(escapes decoded). An f-string's replacement fields are unknown at lint time
and stand as ``\\x00`` in the value: never whitespace, never invisible.
"""

from __future__ import annotations

import ast
import re
import unicodedata
import warnings
from dataclasses import dataclass

import libcst as cst

PLACEHOLDER = "\x00"
INVISIBLE = {
    "\ufeff": "a byte-order mark (U+FEFF)",
    "\u200b": "a zero-width space (U+200B)",
    "\u200c": "a zero-width non-joiner (U+200C)",
    "\u200d": "a zero-width joiner (U+200D)",
    "\u2060": "a word joiner (U+2060)",
    "\u00a0": "a no-break space (U+00A0)",
    "\u202f": "a narrow no-break space (U+202F)",
    "\u2007": "a figure space (U+2007)",
    "\u00ad": "a soft hyphen (U+00AD)",
    "\u180e": "a Mongolian vowel separator (U+180E)",
}
_TRAILING_WS = re.compile(r"[ \t]+\n")


@dataclass(frozen=True)
class Piece:
    """One literal piece: a SimpleString or FormattedString (parts of an implicit concatenation are pieces).

    ``body`` is the source text between the quotes; ``value`` the decoded text
    (replacement fields as ``\\x00``); ``triple`` tells triple-quoted strings.
    """

    node: cst.BaseString
    body: str
    value: str
    triple: bool


def split_prefix(text: str) -> tuple[str, str]:
    """A literal's prefix (``rb``, ``f``, ...) and its quote (one or three quote characters)."""
    i = 0
    while i < len(text) and text[i] not in "'\"":
        i += 1
    quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else text[i : i + 1]
    return text[:i], quote


def pieces(node: cst.BaseExpression) -> list[Piece]:
    """The literal pieces of a string expression, left to right; [] for non-strings and bytes."""
    if isinstance(node, cst.ConcatenatedString):
        return pieces(node.left) + pieces(node.right)
    if isinstance(node, cst.SimpleString):
        prefix, quote = split_prefix(node.value)
        if "b" in prefix.lower():
            return []
        body = node.value[len(prefix) + len(quote) : len(node.value) - len(quote)]
        try:
            if "\\" in body:
                with warnings.catch_warnings():  # an unknown escape (`\ `) is the author's code, not our warning
                    warnings.simplefilter("ignore")
                    value = node.evaluated_value
            else:
                value = node.evaluated_value
        except Exception:  # noqa: BLE001 - an unusual literal: judge its source text
            value = body
        return [Piece(node, body, value if isinstance(value, str) else body, len(quote) == 3)]
    if isinstance(node, cst.FormattedString):
        prefix = node.start.rstrip("'\"").lower().replace("f", "")
        quote = node.end
        body_parts, value_parts = [], []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                body_parts.append(part.value)
                value_parts.append(decode(part.value, prefix, quote))
            else:
                body_parts.append("{" + PLACEHOLDER + "}")
                value_parts.append(PLACEHOLDER)
        return [Piece(node, "".join(body_parts), "".join(value_parts), len(quote) == 3)]
    return []


def decode_text(part: cst.FormattedStringText, fstring: cst.FormattedString) -> str:
    """The decoded value of one static part of an f-string."""
    return decode(part.value, fstring.start.rstrip("'\"").lower().replace("f", ""), fstring.end)


def decode(text: str, prefix: str, quote: str) -> str:
    """The text a literal body (or an f-string text part) stands for, escapes decoded unless ``prefix`` is raw."""
    if "r" in prefix or ("\\" not in text and "\r" not in text):
        value = text
    else:
        try:
            with warnings.catch_warnings():  # an unknown escape (`\ `) is the author's code, not our warning
                warnings.simplefilter("ignore")
                value = ast.literal_eval(prefix + quote + text + quote)
        except (SyntaxError, ValueError):
            value = text
    return value.replace("{{", "{").replace("}}", "}")


def string_value(node: cst.BaseExpression) -> str | None:
    """The decoded value of a literal string expression, or None."""
    found = pieces(node)
    return "".join(p.value for p in found) if found else None


def undedented(piece: Piece, block_indent: int) -> int:
    """The source indentation carried by a triple-quoted piece's continuation lines (0 when none).

    ``block_indent`` is the indentation (in characters) of the block holding
    the statement; at module level (0) only a body that starts on the next
    line (``\"\"\"\\`` or ``\"\"\"`` + newline) and is indented throughout counts.
    """
    if not piece.triple or "\n" not in piece.body:
        return 0
    lines = piece.body.split("\n")
    rest = [line for line in lines[1:] if line.strip()]
    if not rest:
        return 0
    common = min(len(line) - len(line.lstrip(" \t")) for line in rest)
    if common == 0:
        return 0
    if block_indent > 0:
        return common if common >= block_indent else 0
    return common if lines[0].strip() in ("", "\\") else 0


def trailing_whitespace(value: str, at_end: bool) -> str | None:
    """Describe spaces/tabs before a newline (or at the end when ``at_end``), or None."""
    if _TRAILING_WS.search(value):
        return "spaces or tabs before a line break"
    if at_end and value and value[-1] in " \t":
        return "spaces or tabs at the very end of the prompt"
    return None


def invisible(value: str) -> str | None:
    """Describe the first invisible or confusable character, non-NFC text or mixed indentation, or None."""
    for ch in value:
        if ch in INVISIBLE:
            return INVISIBLE[ch]
    text = value.replace(PLACEHOLDER, "")
    if not unicodedata.is_normalized("NFC", text):
        return "text that is not in Unicode NFC form"
    leading = {ch for line in text.split("\n")[1:] for ch in line[: len(line) - len(line.lstrip(" \t"))]}
    if leading == {" ", "\t"}:
        return "indentation that mixes tabs and spaces"
    return None
