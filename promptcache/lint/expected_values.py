"""Blank the expected values of assertions before parsing: data a test compares against is never sent.

A test of LLM code compares what it got with what it expects, often a long literal
(``assert result.all_messages() == snapshot([ModelRequest(parts=[...]), ...])``).
In pydantic-ai's tests such values are a fifth of the source, and libcst spends
time in proportion to the source. :func:`blank_expected_values` replaces each
such value with ``(...)`` spread over the same lines, so every other node keeps its
line and column, and the analysis never sees the value.

A side of an ``assert``'s comparison is blanked only when it is plain data that no
analysis reads (:meth:`_Names.plain`): constants, lists, tuples, dicts, and calls of
classes (``ModelRequest(...)``, ``IsStr()``), value builtins, ``datetime``'s classes,
``snapshot()`` and a mock's ``call()`` with such arguments. Anything that could send,
change or place a value keeps it whole: a name of the file, a function or method
call, a set, an operator, a subscript, ``await``, ``:=``, an ``extra-sinks`` name, a
prompt-named name (by its own or its alias's name) not imported from an LLM SDK or the
standard library (an importer's use settles a prompt module's findings:
:mod:`promptcache.lint.cross_module`), a ``noqa`` or ``promptcache:`` comment, and
prompt text that a text rule reads in a slot's place (:func:`_slot_literals`).
Only asserts whose first line ends in an open bracket, and values of at least
:data:`MIN_LINES` lines, are looked at (the others are not worth the cost).
"""

from __future__ import annotations

import ast
import re
import warnings
from bisect import bisect
from itertools import accumulate
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.imports import is_llm_module, is_standard_library

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope

MIN_LINES = 3
_SHORT_STRING = rb"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*\""""
_LONG_STRING = rb"""'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\""""
# The tokens that decide where a statement ends: a string, a comment, a bracket, a line end, a `;`.
_TOKEN = re.compile(rb"(?P<s>" + _LONG_STRING + rb"|" + _SHORT_STRING + rb")|(?P<c>#[^\r\n]*)|(?P<o>[(\[{])"
                    rb"|(?P<x>[)\]}])|(?P<n>\n)|(?P<e>;)", re.DOTALL)
# What can hide a triple quote on its line (a one-line string, a comment), or the triple quote itself.
_LINE_TOKEN = re.compile(rb"""(?P<t>'''|\"\"\")|""" + _SHORT_STRING + rb"|#[^\r\n]*", re.DOTALL)
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
_KEEP_COMMENT = re.compile(rb"noqa|promptcache:", re.IGNORECASE)  # a suppression keeps the value whole
# What a text rule reads in a prompt literal (PC401 / PC402: a triple-quoted string; PC404: a carriage return, not a
# CRLF line end; PC406: a character that is not ASCII, a tab, or an escape that may write one).
_TEXT = re.compile(rb"""'''|\"\"\"|[\\\t\x80-\xff]|\r(?!\n)""")
# Where a literal is prompt text in a slot (promptcache.lint.slots: the keywords of requests and agents, a role
# dict's or a system message's content, Gemini's configs, tools), by the keyword or dict key holding it.
_SLOT_KEYS = frozenset({"system", "instructions", "response_format", "system_prompt", "system_message",
                        "system_instruction", "contents", "tools"})
_MESSAGE_KEYS = frozenset({"content", "template", "text"})  # of a message with a role, or a system message
# The builtins whose call makes a value from its arguments alone (not `set`: its order is a source, PC301).
_BUILTINS = frozenset({"bool", "bytes", "complex", "dict", "float", "int", "list", "str", "tuple"})
# The standard library's value classes with lower-case names, by qualified name.
# The functions and lower-case classes that make test data, by qualified name: the standard library's value classes,
# inline-snapshot's `snapshot(...)`, a mock's expected `call(...)`.
_DATA_CALLS = frozenset({"datetime.datetime", "datetime.date", "datetime.time", "datetime.timedelta", "datetime.timezone",
                         "datetime.timezone.utc", "inline_snapshot.snapshot", "unittest.mock.call", "mock.call"})
# Classes whose instances are sources (:mod:`promptcache.lint.sources`: a context variable's identity, a generator).
_SOURCE_CLASSES = frozenset({"ContextVar", "Random", "SystemRandom", "RandomState", "Generator"})


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
        found_assert = _assert_at(data, start, indent)
        if found_assert is None:
            continue
        names = names or _Names(data, prompt_name, sink_names)
        for first, last in _data_sides(data, start, *found_assert, names):
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
        line = data.rfind(b"\n", 0, found.start()) + 1
        while line > 1 and data[line - 2] == 0x5C:  # the line above ends in a backslash: this one goes on from it
            line = data.rfind(b"\n", 0, line - 1) + 1
        for token in _LINE_TOKEN.finditer(data, max(line, spans[-1][1] if spans else 0)):
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


def _assert_at(data: bytes, start: int, indent: bytes) -> tuple[int, ast.Assert] | None:
    """``(end, statement)``: where the assert at ``start`` (indented by ``indent``) ends, and it parsed alone;
    None when it does not parse as one assert there (see :func:`_statement_end`).

    Formatted code closes it on a line of its own at its indentation (``)``): that line's end is taken when the
    statement parses there. Otherwise its tokens are followed to its end."""
    closing = re.compile(rb"\n" + re.escape(indent) + rb"[)\]}][^\r\n\\]*(?=\r?\n)").search(data, start)
    if closing is not None and (statement := _parsed(data[start:closing.end()])) is not None:
        return closing.end(), statement
    end = _statement_end(data, start)
    statement = _parsed(data[start:end]) if end is not None else None
    return (end, statement) if statement is not None else None


def _statement_end(data: bytes, start: int) -> int | None:
    """Where the statement at ``start`` ends, by its tokens; None when it spans fewer than :data:`MIN_LINES`
    lines, shares its line with another (``;``), or runs to the end of the file."""
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


def _parsed(region: bytes) -> ast.Assert | None:
    """``region`` parsed alone, when it is one whole assert statement."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in the test's strings: not ours to report
            tree = ast.parse(region)
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return None
    return tree.body[0] if len(tree.body) == 1 and isinstance(tree.body[0], ast.Assert) else None


def _data_sides(data: bytes, start: int, end: int, statement: ast.Assert, names: _Names) -> list[tuple[int, int]]:
    """The byte spans, in order, of the comparison sides of ``statement`` (``data[start:end]`` parsed) to blank."""
    region = data[start:end]
    if not isinstance(statement.test, ast.Compare):
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
        if _KEEP_COMMENT.search(data, first, last) or _TEXT.search(data, first, last) and any(
                _TEXT.search(data, start + offsets[c.lineno - 1] + c.col_offset, start + offsets[c.end_lineno - 1]
                             + c.end_col_offset) for c in _slot_literals(side)):
            continue
        spans.append((first, last))
    return spans


def _slot_literals(side: ast.expr) -> list[ast.Constant]:
    """The string literals of ``side`` (plain data) in a prompt slot's place: under a slot keyword or key
    (:data:`_SLOT_KEYS`, at any depth), the content of a message with a role or of a ``*System*`` class, the text of
    a role tuple (``("system", "...")``). A text rule reads those wherever they are written."""
    out, todo = [], [(side, False)]
    while todo:
        node, slot = todo.pop()
        kind = type(node)
        if kind is ast.Constant:
            if slot and isinstance(node.value, (str, bytes)):
                out.append(node)
        elif kind is ast.Call:
            chain = _chain(node.func) or ("",)
            message = "System" in chain[-1] or any(k.arg == "role" for k in node.keywords)
            todo += [(a, slot or message) for a in node.args]
            todo += [(k.value, slot or k.arg in _SLOT_KEYS or message and k.arg in _MESSAGE_KEYS) for k in node.keywords]
        elif kind is ast.Dict:
            keys = [k.value if type(k) is ast.Constant else None for k in node.keys]
            message = "role" in keys
            todo += [(v, slot or k in _SLOT_KEYS or message and k in _MESSAGE_KEYS) for k, v in zip(keys, node.values)]
        elif kind is ast.List or kind is ast.Tuple:
            role = kind is ast.Tuple and node.elts and type(node.elts[0]) is ast.Constant and isinstance(node.elts[0].value, str)
            todo += [(e, slot or role and i > 0) for i, e in enumerate(node.elts)]
    return out


def _placeholder(value: bytes) -> bytes:
    """``(...)`` with ``value``'s line ends inside, the ``)`` where ``value`` ends (its last line keeps its width in
    characters, as columns count them)."""
    width = len(value[max(value.rfind(b"\n"), value.rfind(b"\r")) + 1:].decode("utf-8", "replace"))
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
        self.original: dict[str, str] = {}
        self.modules: set[str] = set()  # names bound by `import x` / `import x.y as z`
        for module, names in _IMPORT_FROM.findall(data):
            text = re.sub(r"#[^\n]*", "", names.decode("ascii", "replace"))
            for item in text.strip("() \t\\").replace("\\", " ").split(","):
                if m := _NAME_AS.match(item.strip()):
                    self.imported[m.group(2) or m.group(1)] = module.decode("ascii", "replace")
                    self.original[m.group(2) or m.group(1)] = m.group(1)  # `complete as ask`: `complete`
        for names in _IMPORT.findall(data):
            for item in names.decode("ascii", "replace").replace("\\", " ").split(","):
                if m := _NAME_AS.match(item.strip()):
                    bound = m.group(2) or m.group(1).split(".")[0]
                    self.imported[bound] = m.group(1) if m.group(2) else bound
                    self.modules.add(bound)

    def plain(self, node: ast.AST) -> bool:
        """``node`` is plain data: constants, lists, tuples and dicts of plain data, and calls of classes with plain
        arguments (:meth:`_callee`); no name or attribute but a class (:meth:`_value`). No value an analysis
        could take for a source (a clock, an id, a set, the environment) or follow (a local, a prompt) is in it."""
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
            elif kind is ast.List or kind is ast.Tuple:
                todo += node.elts
            elif kind is ast.Dict:
                if None in node.keys:
                    return False  # `{**other}`
                todo += node.keys
                todo += node.values
            elif kind is ast.Name or kind is ast.Attribute:
                if not self._value(node):
                    return False
            elif kind is ast.UnaryOp and type(node.operand) is ast.Constant:
                continue  # `-1`
            else:
                return False  # a set, an operator, a subscript, a starred value, a comprehension, await, `:=`, ...
        return True

    def _callee(self, func: ast.expr) -> bool:
        """A call of ``func`` makes data: a class by its name (``ModelRequest``, ``types.Part``, a dataclass of the
        file), a value builtin (``dict``, ``int``) or a value class of the standard library (``datetime``); not a
        function or method (a clock, an id, a request), nor an ``extra-sinks`` name (an import alias's own name too)."""
        chain = _chain(func)
        if chain is None:
            return False
        if chain not in self._callees:
            self._callees[chain] = self._class(chain) and not any(
                name in self.sink_names for name in (*chain, self.original.get(chain[0], "")))
        return self._callees[chain]

    def _value(self, node: ast.expr) -> bool:
        """A name or attribute read in plain data: a class or a constant of an import by its name (``IsStr``,
        ``ANY``, ``Role.USER``), or ``datetime.timezone.utc``."""
        chain = _chain(node)
        return chain is not None and self._class(chain, calls=False)

    def _class(self, chain: tuple[str, ...], calls: bool = True) -> bool:
        """``chain`` (``("types", "Part")``) names a class, or a constant when not ``calls``, by its names."""
        root = chain[0]
        if len(chain) == 1 and root not in self.imported:  # a name of the file
            return calls and (root in _BUILTINS or root in self.classes and root not in self.functions and _class_name(root))
        if not self._imported(root, chain[1:]):
            return False
        module = self.imported[root]
        qualified = ".".join((module, self.original.get(root, root), *chain[1:]) if root not in self.modules else (module, *chain[1:]))
        if qualified in _DATA_CALLS or calls and chain == (root,) and self.original.get(root) == "snapshot" \
                and not is_llm_module(module):
            return True  # inline-snapshot's `snapshot`, also re-exported by the project (pydantic-ai's tests)
        last = chain[-1]
        return (_class_name(last) or not calls and last.isupper()) and last not in _SOURCE_CLASSES \
            and all(_class_name(name) or name.isupper() for name in chain[1:-1])

    def _imported(self, root: str, attributes: tuple[str, ...]) -> bool:
        """``root`` is imported, not redefined here, and no analysis follows it or ``root.attributes``: a
        prompt-named name is followed when it comes from a module that is neither an LLM SDK nor the standard
        library (as :mod:`promptcache.lint.prompt_uses` does)."""
        module = self.imported.get(root)
        if module is None or root in self.functions or root in self.classes:
            return False
        if is_llm_module(module) or is_standard_library(module):
            return True
        return not any(self.prompt_name.search(name) for name in (root, self.original.get(root, root), *attributes))


def _class_name(name: str) -> bool:
    """``ModelRequest``, ``IsStr``: CapWords, not an ALL-CAPS constant."""
    return name[:1].isupper() and not name.isupper()


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


def compared_only(flow: FlowAnalysis, node: cst.CSTNode, scope: Scope) -> bool:
    """``node`` (a slot's value) is in a side of an ``assert``'s comparison, reached only through literals and
    calls of classes (``SystemMessage(...)``, ``Agent(...)``): a test's expected value (``assert messages ==
    [{"role": "system", "content": f"Today is {date.today()}"}]``), compared, never sent. Not when a request, a
    function or method call (a helper, ``.run_sync``, ``.invoke``) or ``:=`` is on the way: that value is sent."""
    for anc in flow.facts.ancestors(node):
        if isinstance(anc, cst.Call):
            name = anc.func.attr.value if isinstance(anc.func, cst.Attribute) else anc.func.value if isinstance(anc.func, cst.Name) else ""
            if not _class_name(name) or flow.sinks.sink_at(anc, scope) is not None:
                return False
        elif isinstance(anc, (cst.NamedExpr, cst.Lambda, cst.BinaryOperation)):
            return False
        elif isinstance(anc, cst.Assert):
            return True
        elif isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return False
    return False
