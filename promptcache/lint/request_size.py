"""How much literal text a request shows, in characters: PC102 weighs it (issue 11, open_deep_research).

:func:`measure` counts the characters of the string literals an expression is built from, through names,
``+``, ``%``, f-strings, ``.format``, ``join``, comprehensions, ``dedent`` and same-module functions. Per-request
data counts 0 (a parameter, a field of one, a call's result filled into a template); text the code does not show
makes the size unknown (a file read, a prompt registry, a parameter named as the prompt). A name imported from
another module is kept as a symbol, settled with that module's :func:`module_sizes`
(:mod:`promptcache.lint.cross_module`). Which requests are weighed, and against which minimum, is
:mod:`promptcache.lint.one_shot`.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.literals import string_value
from promptcache.lint.sources import FILE_OPENS, REQUEST_CONTEXTS
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.index import ModuleIndex as Index, Scope

OPTIONAL = "?"  # marks a symbol filled into a template (`f"{settings.NAME}"`): unknown, it counts 0
_DEPTH = 24
_BUDGET = 4000  # steps of one measure (each expression met once per path)
_TEXT_METHODS = frozenset({"strip", "lstrip", "rstrip", "replace", "lower", "upper", "title", "capitalize",
                           "removeprefix", "removesuffix", "expandtabs", "encode", "decode"})
_TRANSFORMS = frozenset({"textwrap.dedent", "inspect.cleandoc", "str", "textwrap.indent", "string.Template"})
_READ_METHODS = frozenset({"read", "read_text", "read_bytes", "readlines", "load", "loads"})
_TEXT_NAME = re.compile(r"prompt|instruction|template|system|rules|persona|guideline|policy|preamble|example|shot|"
                        r"backstory|knowledge|handbook|manual", re.IGNORECASE)
_BUILTINS = frozenset(dir(builtins))
_SHORT_MODULES = frozenset({"datetime", "time", "uuid", "random", "secrets", "os", "platform", "zoneinfo", "pytz"})
_SHORT_CALLS = frozenset({"len", "int", "float", "round", "bool", "min", "max", "sum", "abs", "hex", "id",
                          "strftime", "isoformat", "date", "today", "now", "utcnow", "timestamp", "hexdigest"})
_SCHEMA_BASES = frozenset({"BaseModel", "RootModel", "TypedDict"})
_CONSTRUCTORS = ("Message", "MessageParam", "Content", "Part", "Block", "BlockParam")


@dataclass(frozen=True)
class Size:
    """``chars`` of literal text; ``symbols``: names imported from other modules (qualified as imported) whose
    text adds to it."""

    chars: int = 0
    symbols: frozenset[str] = frozenset()  # a leading OPTIONAL: a value filled in, 0 when its module is not in the run

    def __add__(self, other: Size) -> Size:
        return Size(self.chars + other.chars, self.symbols | other.symbols)


@dataclass(frozen=True)
class Weight:
    """A one-shot request's literal text (``size``) and the ``minimum`` cacheable length (tokens) that
    applies, from ``model`` (a model id, or where the number comes from)."""

    size: Size
    minimum: int
    model: str


def _largest(sizes: list[Size | None]) -> Size | None:
    """The largest of alternative values (branches, several bindings); None if any is unknown."""
    if any(s is None for s in sizes):
        return None
    if not sizes:
        return Size()
    symbols = frozenset().union(*(s.symbols for s in sizes))
    return Size(max(s.chars for s in sizes), symbols)


def _total(sizes) -> Size | None:
    out = Size()
    for s in sizes:
        if s is None:
            return None
        out = out + s
    return out


def measure(index: Index, expr: cst.BaseExpression | None, scope: Scope, filled: bool = False) -> Size | None:
    """The literal text ``expr`` is built from (see the module docstring), or None when the code does not show it:
    a file read, a prompt from a call the module does not define (``get_prompt("x")``), a star import, ``*``
    repetition, a parameter or field named as prompt text (``system_prompt``, ``self.instructions``,
    ``config["rules"]``), more than 24 levels or 4,000 steps. Per-request data counts 0: a parameter or a field of
    one (``user.full_name``, ``state["topic"]``), and, ``filled`` into a template, a short call's result
    (``{len(docs)}``, ``{datetime.now()}``)."""
    return _measure(index, expr, scope, filled, frozenset(), [_BUDGET])


def _measure(index: Index, expr: cst.BaseExpression | None, scope: Scope, filled: bool, _seen: frozenset,
             budget: list) -> Size | None:
    budget[0] -= 1
    if budget[0] < 0:
        return None  # `x = x + "..."` rebound many times: the alternatives multiply
    if expr is None:
        return Size()
    if (id(expr), id(scope)) in _seen:
        return Size()  # `x = str(x)`: counted where it was first met
    if len(_seen) > _DEPTH:
        return None
    seen = _seen | {(id(expr), id(scope))}
    m = lambda e, sc=scope, f=filled: _measure(index, e, sc, f, seen, budget)  # noqa: E731
    if isinstance(expr, cst.SimpleString):
        value = string_value(expr)
        return Size(text_chars(value) if value is not None else 0)
    if isinstance(expr, cst.ConcatenatedString):
        return _total([m(expr.left), m(expr.right)])
    if isinstance(expr, cst.FormattedString):
        return _total([Size(text_chars(p.value)) if isinstance(p, cst.FormattedStringText) else m(p.expression, f=True)
                       for p in expr.parts])
    if isinstance(expr, cst.Name):
        return _name(index, expr, scope, m, filled)
    if isinstance(expr, (cst.Attribute, cst.Subscript)):
        return _field(index, expr, scope, m, filled)
    if isinstance(expr, cst.Call):
        return _call(index, expr, scope, m, filled)
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, (cst.Add, cst.Modulo)):
            return _total([m(expr.left), m(expr.right, f=filled or isinstance(expr.operator, cst.Modulo))])
        return None if isinstance(expr.operator, cst.Multiply) else Size()
    if isinstance(expr, cst.IfExp):
        return _largest([m(expr.body), m(expr.orelse)])
    if isinstance(expr, cst.BooleanOperation):
        return _largest([m(expr.left), m(expr.right)])
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        return _total([m(el.value) for el in expr.elements])
    if isinstance(expr, cst.Dict):
        return _total([m(el.value) for el in expr.elements
                       if not (isinstance(el, cst.DictElement) and string_value(el.key) == "role")])
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        # `"\n".join(f"- {r}" for r in RULES)`: about the iterable's text plus the element's own literals
        loops, inner = [], expr.for_in
        while inner is not None:
            loops.append(m(inner.iter))
            inner = inner.inner_for_in
        literals = sum(text_chars(string_value(n) or "") if isinstance(n, cst.SimpleString) else text_chars(n.value)
                       for n in descendants(expr.elt, (cst.SimpleString, cst.FormattedStringText)))
        return _total([*loops, Size(literals)])
    if isinstance(expr, cst.Await):
        return m(expr.expression)
    if isinstance(expr, cst.NamedExpr):
        return m(expr.value)
    return Size()  # numbers, lambdas: no text


def text_chars(text: str) -> int:
    """Characters counted for the 4-characters-a-token estimate: a non-ASCII character (CJK, emoji) counts 4,
    since such text takes about a token a character, where English takes a quarter (assumed, no tokenizer)."""
    return len(text) + 3 * sum(1 for c in text if ord(c) > 127)


def _text_named(name: str) -> bool:
    """``system_prompt``, ``instructions``, ``RULES``: a name that says it holds prompt text (measured, not 0)."""
    return name.isupper() or _TEXT_NAME.search(name) is not None


def _name(index: Index, expr: cst.Name, scope: Scope, m, filled: bool) -> Size | None:
    found, bindings = index.lookup(expr.value, scope)
    if found is None:
        return Size() if expr.value in _BUILTINS else None  # a star import, a global set elsewhere
    if any(b.kind == "import" for b in bindings):
        qualified = index.qualified(expr, scope)
        return Size(0, frozenset({_symbol(qualified, filled)})) if qualified else None
    if any(b.kind == "aug" and b.op.strip() == "*=" for b in bindings):
        return None
    sizes = []
    for b in bindings:
        if b.kind == "param":
            if _text_named(expr.value):
                return None  # `def ask(q, system_prompt)`: the prompt, of a length only the callers know
            sizes.append(m(b.value, b.scope) if b.value is not None else Size())
        elif b.kind in ("assign", "walrus", "with", "for"):
            sizes.append(m(b.value, b.scope))  # a `for` target: at most its iterable's text
    grown = _total([m(b.value, b.scope) for b in bindings if b.kind in ("aug", "mutate")])
    base = _largest(sizes)
    return None if grown is None or base is None else base + grown


def _field(index: Index, expr: cst.Attribute | cst.Subscript, scope: Scope, m, filled: bool) -> Size | None:
    """``self.rules``, ``user.full_name``, ``state["topic"]``, ``PROMPTS["planner"]``, ``prompts.BASE``."""
    if isinstance(expr, cst.Attribute):
        qualified = index.qualified(expr, scope)
        root = expr
        while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
            root = root.func if isinstance(root, cst.Call) else root.value
        if qualified and isinstance(root, cst.Name) and any(b.kind == "import" for b in index.lookup(root.value, scope)[1]):
            return Size(0, frozenset({_symbol(qualified, filled)}))
        if isinstance(expr.value, cst.Name) and (cls := index.class_of_receiver(expr.value, scope)) is not None:
            values = [(_element(b), b.scope) for b in cls.attrs.get(expr.attr.value, ()) if b.kind == "assign"]
            if not values or any(v is None or _per_request(index, v, sc) for v, sc in values):
                return None  # `self.backstory = backstory`: what the object's maker passes, not shown here
            return _largest([m(v, sc) for v, sc in values])
        name = expr.attr.value
    else:
        key = expr.slice[0].slice if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index) else None
        name = string_value(key.value) if key is not None else None
        if name is None or not _text_named(name):
            base = m(expr.value)  # `PROMPTS["planner"]`: the mapping's text; `state["topic"]`: 0
            if base is not None or not isinstance(expr.value, cst.Name):
                return base
        name = name or ""
    return None if _text_named(name) else Size()  # a field of per-request data, unless named as prompt text


def _element(b) -> cst.BaseExpression | None:
    """The value a binding gives its name: its element in a flat unpacking (``self.a, self.b = a, b``)."""
    if b.element == -1:
        return b.value
    if b.element >= 0 and isinstance(b.value, (cst.Tuple, cst.List)) and b.element < len(b.value.elements):
        return b.value.elements[b.element].value
    return None


def _per_request(index: Index, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``expr`` is a parameter without a default, or a field of one, through no prompt-named step."""
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        if isinstance(expr, cst.Attribute) and _text_named(expr.attr.value):
            return False
        expr = expr.value
    if not isinstance(expr, cst.Name) or _text_named(expr.value):
        return False
    bindings = index.lookup(expr.value, scope)[1]
    return bool(bindings) and all(b.kind == "param" and b.value is None for b in bindings)


def _symbol(qualified: str, filled: bool) -> str:
    """An imported name as a :class:`Size` symbol, measured in its module of the run (:func:`module_sizes`);
    :data:`OPTIONAL` (0 when not found) only for a web framework's request object filled in (``{g.user.name}``)."""
    return OPTIONAL + qualified if filled and qualified.split(".", 1)[0] in REQUEST_CONTEXTS else qualified


def _call(index: Index, call: cst.Call, scope: Scope, m, filled: bool) -> Size | None:
    func = call.func
    qualified = index.qualified(func, scope) or ""
    method = func.attr.value if isinstance(func, cst.Attribute) else None
    args = [a.value for a in call.args]
    if qualified in FILE_OPENS or method in _READ_METHODS:
        return None
    if method in ("format", "format_map", "substitute", "safe_substitute"):  # str.format, string.Template
        return _total([m(func.value), *(m(a, f=True) for a in args)])
    if method == "join" or method in _TEXT_METHODS:
        return _total([m(func.value), *(m(a) for a in args)])
    if qualified in _TRANSFORMS:
        return m(args[0]) if args else Size()
    if method == "get" and args:  # `state.get("feedback", [])`: a field read, as `state["feedback"]`
        key = string_value(args[0]) if isinstance(args[0], cst.SimpleString) else None
        return None if key is None or _text_named(key) else _largest([m(func.value), *(m(a) for a in args[1:])])
    callee = index.function_named(func, scope)
    if callee is not None:
        return _largest([m(r, callee) for r in callee.returns])
    name = (qualified or (method or "")).rsplit(".", 1)[-1]
    if name.endswith(_CONSTRUCTORS) or name in ("dict", "list", "tuple"):
        return _total([m(a) for a in args])  # a message or its parts: their arguments
    if not filled:
        return None  # `get_prompt("expenses")`, `load_rules()`: the prompt, from code not shown
    if qualified.split(".", 1)[0] in _SHORT_MODULES or name in _SHORT_CALLS:
        return Size()  # `{datetime.now():%H:%M}`, `{len(docs)}`, `{uuid4()}`: a short value filled in
    if isinstance(func, cst.Name) and any(b.kind == "import" for b in index.lookup(func.value, scope)[1]) \
            and not any(isinstance(a, (cst.SimpleString, cst.ConcatenatedString)) for a in args):
        return Size(0, frozenset({qualified + "()"}))  # `{get_today_str()}`: what it returns, in its module of the run
    if isinstance(func, cst.Attribute) and _per_request(index, func.value, scope) and not _text_named(name):
        return Size()  # `{user.display_name()}`: a method of per-request data
    return None  # `{tmpl.render()}`, `{read_file(PATH)}`: text the code does not show


def module_sizes(index: Index) -> dict[str, int]:
    """``{name: chars}`` of the module-level names bound once to text this module shows whole (no import in it),
    and of its pydantic / TypedDict classes (as :func:`schema_size` counts them), for the importers' :class:`Weight`
    (:mod:`promptcache.lint.cross_module`)."""
    module = next(sc for sc in index.scopes if sc.kind == "module")
    out: dict[str, int] = {}
    for name, bindings in module.bindings.items():
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].element == -1 \
                and _has_text(bindings[0].value):
            size = measure(index, bindings[0].value, module)
            if size is not None and not size.symbols and size.chars:
                out[name] = size.chars
        elif len(bindings) == 1 and bindings[0].kind == "class" and _schema_class(bindings[0].node):
            out[name] = _class_chars(index, bindings[0].node, module, set())  # an importer's schema_size
        elif len(bindings) == 1 and bindings[0].kind == "def":  # `get_today_str()`: the longest text it returns
            func = next((sc for sc in index.scopes if sc.node is bindings[0].node), None)
            size = _largest([measure(index, r, func, True) for r in func.returns]) if func is not None else None
            if size is not None and not size.symbols:
                out[name + "()"] = size.chars
    return out


def _schema_class(node: cst.ClassDef) -> bool:
    """A class that can be a structured-output schema by its bases (``BaseModel``, ``TypedDict``): only those are
    measured for importers, since generating every class's source is a third of a file's parse time."""
    return any(isinstance(b.value, (cst.Name, cst.Attribute)) and
               (b.value.value if isinstance(b.value, cst.Name) else b.value.attr.value) in _SCHEMA_BASES
               for b in node.bases)


def _has_text(expr: cst.BaseExpression) -> bool:
    return next(descendants(expr, (cst.SimpleString, cst.FormattedString)), None) is not None


def schema_size(index: Index, expr: cst.BaseExpression, scope: Scope) -> Size | None:
    """About the size of a structured-output schema (``with_structured_output(Plan)``, ``response_format=Plan``): the
    source of a pydantic or TypedDict class of this module and of the classes its fields name (its JSON schema is
    about as long), a dict literal's source, an imported class's through its module (:func:`module_sizes`); else
    None."""
    if isinstance(expr, cst.Dict):
        return Size(len(_code(expr)))
    if not isinstance(expr, cst.Name):
        return None
    bindings = index.lookup(expr.value, scope)[1]
    if any(b.kind == "import" for b in bindings):
        qualified = index.qualified(expr, scope)
        return Size(0, frozenset({qualified})) if qualified else None
    classes = [b for b in bindings if b.kind == "class"]
    if len(classes) != 1 or not _schema_class(classes[0].node):
        return None
    return Size(_class_chars(index, classes[0].node, scope, set()))


def _class_chars(index: Index, node: cst.ClassDef, scope: Scope, seen: set) -> int:
    seen.add(id(node))
    chars = len(_code(node))
    for ann in descendants(node, cst.Annotation):
        for name in descendants(ann, cst.Name):
            for b in index.lookup(name.value, scope)[1]:
                if b.kind == "class" and id(b.node) not in seen and len(seen) < _DEPTH:
                    chars += _class_chars(index, b.node, scope, seen)  # `sections: list[Section]`
    return chars


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


__all__ = ["OPTIONAL", "Size", "Weight", "measure", "module_sizes", "schema_size"]
