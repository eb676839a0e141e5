"""Blank the expected values of assertions before parsing: data a test compares against is never sent.

A test of LLM code compares what it got with what it expects, often a long literal
(``assert result.all_messages() == snapshot([ModelRequest(parts=[...]), ...])``).
In pydantic-ai's tests such values are a fifth of the source, and libcst spends
time in proportion to the source. :func:`blank_expected_values` replaces each
such value with ``(...)`` spread over the same lines, so every other node keeps its
line and column, and the analysis never sees the value.

A side of an ``assert``'s comparison is blanked only when it is plain data that no
analysis reads: constants, lists, tuples, sets, dicts, unary and binary operators,
and calls of imported names (``ModelRequest(...)``, ``IsStr()``, ``datetime(...)``)
with such arguments. Anything that could send, change or place a value keeps it
whole: a local name, a subscript, a comprehension, ``await``, ``:=``, a function or
class of the file, a prompt-named name not imported from an LLM SDK or the standard
library (an importer's use settles a prompt module's findings:
:mod:`promptcache.lint.cross_module`), a ``noqa`` or ``promptcache:`` comment.
Only asserts whose first line ends in an open bracket, and values of at least
:data:`MIN_LINES` lines, are looked at (the others are not worth the cost).
"""

from __future__ import annotations

import ast
import re
import warnings
from bisect import bisect
from functools import lru_cache
from itertools import accumulate

from promptcache.lint.imports import is_llm_module, is_standard_library
from promptcache.lint.sinks import RUNNABLE_CALLS

MIN_LINES = 3
_SHORT_STRING = rb"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*\""""
_LONG_STRING = rb"""'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\""""
# The tokens that decide where a statement ends: a string, a comment, a bracket, a line end, a `;`.
_TOKEN = re.compile(rb"(?P<s>" + _LONG_STRING + rb"|" + _SHORT_STRING + rb")|(?P<c>#[^\r\n]*)|(?P<o>[(\[{])"
                    rb"|(?P<x>[)\]}])|(?P<n>\n)|(?P<e>;)", re.DOTALL)
# What can hide a triple quote on its line (a one-line string, a comment), or the triple quote itself.
_LINE_TOKEN = re.compile(rb"""(?P<t>'''|\"\"\")|""" + _SHORT_STRING + rb"|#[^\r\n]*")
_TRIPLE = re.compile(rb"""'''|\"\"\"""")
# An assert whose first line ends in an open bracket or a backslash: it goes on below.
_ASSERT = re.compile(rb"\n([ \t]*)(assert)\b[^\r\n]*[(\[{\\][ \t]*(?=\r?\n)")
# A coding declaration (PEP 263) on line 1 or 2 that names an encoding other than UTF-8.
_CODING = re.compile(rb"(?:[^\n]*\n)?[ \t\f]*#[^\n]*coding[:=][ \t]*(?!utf[-_]?8\b)[-\w.]+", re.IGNORECASE)
_LINE_END = re.compile(rb"\r\n|\r|\n")
# Each starts with a line end (the file is searched with one put in front): a literal start is searched fast.
_DEFINED = re.compile(rb"\n[ \t]*(?:async[ \t]+)?(def|class)[ \t]+(\w+)")
_IMPORT_FROM = re.compile(rb"\n[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\r\n#;]*)")
_IMPORT = re.compile(rb"\n[ \t]*import[ \t]+([^\r\n#;]*)")
_NAME_AS = re.compile(r"([\w.]+)(?:\s+as\s+(\w+))?")
# What sends a request when called (:mod:`promptcache.lint.sinks`, the agent frameworks' runs).
_REQUESTS = RUNNABLE_CALLS | {"create", "parse", "generate_content", "generate_content_stream", "completion",
                              "acompletion", "run", "run_sync", "run_stream"}
_KEEP_COMMENT = re.compile(rb"noqa|promptcache:", re.IGNORECASE)
_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict)
_CONSTANT = re.compile(r"[A-Z][A-Z0-9_]*$")  # a module constant by its name
# The builtins whose call makes a value from its arguments and nothing else.
_BUILTINS = frozenset({"bool", "bytes", "complex", "dict", "float", "frozenset", "int", "list", "object", "range",
                       "set", "str", "tuple", "type", "abs", "len", "max", "min", "repr", "round", "sorted", "sum"})


def blank_expected_values(data: bytes, prompt_name: re.Pattern, sink_names: frozenset[str] = frozenset()) -> bytes:
    """``data`` (a file's bytes) with the plain-data sides of its assertions' comparisons replaced by ``(...)``
    over the same lines, padded so the code after each keeps its column. ``prompt_name`` is the configured
    prompt-name regex, ``sink_names`` the last names of the ``extra-sinks`` entries (``ask`` for
    ``myapp.llm.ask``). Returns ``data`` itself when nothing is blanked; never raises for bad input (an assert
    that does not compile on its own is left whole)."""
    if b"assert" not in data or _CODING.match(data):
        return data  # a file in another encoding: ast's columns would not count its bytes
    found = [(m.start(2), m.group(1)) for m in _ASSERT.finditer(data)]
    if not found:
        return data
    hidden = _long_strings(data)
    names: _Names | None = None
    out, at = [], 0
    for start, indent in found:
        string = bisect(hidden, (start,)) - 1
        if start < at or string >= 0 and start < hidden[string][1]:
            continue
        end = _statement_end(data, start, indent)
        if end is None:
            continue
        names = names or _Names(data, prompt_name, sink_names)
        for first, last in _data_sides(data, start, end, names):
            out += [data[at:first], _placeholder(data[first:last])]
            at = last
    if not out:
        return data
    out.append(data[at:])
    return b"".join(out)


def _long_strings(data: bytes) -> list[tuple[int, int]]:
    """``(start, end)`` of each triple-quoted string: a line in one that starts with ``assert`` is text."""
    spans: list[tuple[int, int]] = []
    at = 0
    while (found := _TRIPLE.search(data, at)) is not None:
        opener = None
        at = found.end()
        for token in _LINE_TOKEN.finditer(data, max(data.rfind(b"\n", 0, found.start()) + 1, spans[-1][1] if spans else 0)):
            if token.end() > found.start():  # the token that holds this triple quote
                opener = token if token.lastgroup == "t" and token.start() == found.start() else None
                at = max(at, token.end())
                break
        if opener is None:
            continue  # inside a one-line string or a comment
        quote, close = opener.group(), opener.end()
        while (close := data.find(quote, close)) != -1:
            escapes = 0
            while data[close - escapes - 1] == 0x5C:  # a backslash
                escapes += 1
            if escapes % 2 == 0:
                break
            close += 1
        at = len(data) if close == -1 else close + 3
        spans.append((opener.start(), at))
    return spans


def _statement_end(data: bytes, start: int, indent: bytes) -> int | None:
    """Where the statement at ``start`` (indented by ``indent``) ends; None when it spans fewer than
    :data:`MIN_LINES` lines, shares its line with another (``;``), or runs to the end of the file.

    Formatted code closes it on a line of its own at its indentation (``)``): that line's end is taken when the
    statement compiles there (:func:`_data_sides` checks it). Otherwise its tokens are followed to its end."""
    closing = re.compile(rb"\n" + re.escape(indent) + rb"[)\]}][^\r\n\\]*(?=\r?\n)").search(data, start)
    if closing is not None and _complete(data[start:closing.end()]):
        return closing.end()
    depth, lines, comment = 0, 1, -1
    for token in _TOKEN.finditer(data, start):
        kind = token.lastgroup
        if kind == "n":
            at = token.start()
            if depth or data[at - 1:at] == b"\\" or data[at - 2:at] == b"\\\r":
                lines, comment = lines + 1, -1
                continue
            if lines < MIN_LINES:
                return None
            return start + len(data[start:comment if comment >= 0 else at].rstrip())
        if kind == "o":
            depth += 1
        elif kind == "x":
            depth -= 1
            if depth < 0:
                return None
        elif kind == "c":
            comment = token.start()
        elif kind == "s":
            lines += token.group().count(b"\n")
        elif depth == 0:
            return None  # `assert x; y = 1`
    return None


@lru_cache(maxsize=1)
def _complete(region: bytes) -> ast.Assert | None:
    """``region`` parsed alone, when it is one whole assert statement."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in the test's strings: not ours to report
            tree = ast.parse(region)
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return None
    return tree.body[0] if len(tree.body) == 1 and isinstance(tree.body[0], ast.Assert) else None


def _data_sides(data: bytes, start: int, end: int, names: _Names) -> list[tuple[int, int]]:
    """The byte spans, in order, of the comparison sides in ``data[start:end]`` (one assert) to blank."""
    region = data[start:end]
    statement = _complete(region)
    if statement is None or not isinstance(statement.test, ast.Compare):
        return []
    test = statement.test
    sides = [side for side in (test.left, *test.comparators)
             if side.end_lineno - side.lineno + 1 >= MIN_LINES and names.plain(side)]
    if not sides:
        return []
    offsets = [0, *accumulate(len(line) for line in region.splitlines(keepends=True))]
    spans = []
    for side in sides:
        first = start + offsets[side.lineno - 1] + side.col_offset
        last = start + offsets[side.end_lineno - 1] + side.end_col_offset
        if not _KEEP_COMMENT.search(data, first, last):
            spans.append((first, last))
    return spans


def _placeholder(value: bytes) -> bytes:
    """``(...)`` with ``value``'s line ends inside, the ``)`` where ``value`` ends (its last line keeps its width)."""
    width = len(value) - max(value.rfind(b"\n"), value.rfind(b"\r")) - 1
    breaks = b"\n" * value.count(b"\n") if b"\r" not in value else b"".join(_LINE_END.findall(value))
    return b"(..." + breaks + b" " * (width - 1) + b")"


class _Names:
    """What the file's bytes say about names: those imported (``{bound name: module}``, and which are modules) and
    the functions it defines."""

    def __init__(self, data: bytes, prompt_name: re.Pattern, sink_names: frozenset[str]):
        self.prompt_name = prompt_name
        self.sink_names = sink_names
        self._callees: dict[tuple[str, ...], bool] = {}
        data = b"\n" + data
        defined = [(kind, name.decode("ascii", "replace")) for kind, name in _DEFINED.findall(data)]
        self.functions = {name for kind, name in defined if kind == b"def"}
        self.classes = {name for kind, name in defined if kind == b"class"} - self.functions
        self.imported: dict[str, str] = {}
        self.modules: set[str] = set()  # names bound by `import x` / `import x.y as z`
        for module, names in _IMPORT_FROM.findall(data):
            text = re.sub(r"#[^\n]*", "", names.decode("ascii", "replace"))
            for item in text.strip("() \t\\").replace("\\", " ").split(","):
                if m := _NAME_AS.match(item.strip()):
                    self.imported[m.group(2) or m.group(1)] = module.decode("ascii", "replace")
        for names in _IMPORT.findall(data):
            for item in names.decode("ascii", "replace").replace("\\", " ").split(","):
                if m := _NAME_AS.match(item.strip()):
                    bound = m.group(2) or m.group(1).split(".")[0]
                    self.imported[bound] = m.group(1) if m.group(2) else bound
                    self.modules.add(bound)

    def plain(self, node: ast.AST) -> bool:
        """``node`` is plain data: see the module docstring."""
        todo = [node]
        while todo:
            node = todo.pop()
            kind = type(node)
            if kind is ast.Constant:
                continue
            if kind is ast.Call:
                if not self._callee(node.func) or any(k.arg is None for k in node.keywords):
                    return False  # `**options`
                todo += node.args
                todo += [k.value for k in node.keywords]
            elif kind in _CONTAINERS:
                if kind is ast.Dict:
                    if None in node.keys:
                        return False  # `{**other}`
                    todo += node.keys
                    todo += node.values
                else:
                    todo += node.elts
            elif kind is ast.Name:
                if not (self._imported(node.id, ()) or _CONSTANT.match(node.id) and not self.prompt_name.search(node.id)):
                    return False  # a local variable (a module constant, `MODEL_NAME`, is not one)
            elif kind is ast.Attribute:
                chain = _chain(node)
                if chain is None or not self._imported(chain[0], chain[1:]):
                    return False
            elif kind is ast.UnaryOp:
                todo.append(node.operand)
            elif kind is ast.BinOp:
                todo += (node.left, node.right)
            else:
                return False  # a subscript, a starred value, a comprehension, await, `:=`, ...
        return True

    def _callee(self, func: ast.expr) -> bool:
        """A call of ``func`` makes data: a class, or a function of a module that is not an LLM SDK; not a function
        of this file, an ``extra-sinks`` name, a request method (``.create``, ``.invoke``) or anything reached
        through an LLM SDK module (``openai.chat...``)."""
        chain = _chain(func)
        if chain is None:
            return False
        if chain not in self._callees:
            self._callees[chain] = self._makes_data(chain)
        return self._callees[chain]

    def _makes_data(self, chain: tuple[str, ...]) -> bool:
        if chain[-1] in _REQUESTS or any(name in self.sink_names for name in chain):
            return False
        root, last = chain[0], chain[-1]
        if len(chain) == 1 and root not in self.imported and root not in self.functions:
            return root in _BUILTINS or root in self.classes  # `BasicSpan(...)`: a dataclass of the test
        if not self._imported(root, chain[1:]):
            return False
        if is_llm_module(self.imported[root]):
            return root not in self.modules and last[:1].isupper()  # `ModelRequest(...)`, `types.Part(...)`
        return True

    def _imported(self, root: str, attributes: tuple[str, ...]) -> bool:
        """``root`` is imported, not redefined here, and no analysis follows it or ``root.attributes``: a
        prompt-named name is followed when it comes from a module that is neither an LLM SDK nor the standard
        library (as :mod:`promptcache.lint.prompt_uses` does)."""
        module = self.imported.get(root)
        if module is None or root in self.functions:
            return False
        if is_llm_module(module) or is_standard_library(module):
            return True
        return not any(self.prompt_name.search(name) for name in (root, *attributes))


def _chain(node: ast.expr) -> tuple[str, ...] | None:
    """``("a", "b", "c")`` for ``a.b.c``; None when it does not start at a name."""
    names = []
    while type(node) is ast.Attribute:
        names.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    names.append(node.id)
    return tuple(reversed(names))
