"""LangChain prompt-template variables filled at run time into a system message (newcomer, stop 33).

``ChatPromptTemplate.from_messages([("system", "... {user_name} ..."), ...])`` (or
``SystemMessagePromptTemplate.from_template(...)``) is filled when the template, or a chain that starts with it
(``prompt | llm``), is invoked: ``chain.invoke({"user_name": user.name, "question": q})``, or bound early with
``prompt.partial(now=...)``. The value given for a variable that the *system* template names is system-prompt
text, so it is a prefix slot here (:func:`template_fills`), and the data flow judges it like any other
(PC101, PC102). The template and its invoke are bound to names of one module, the mapping is a dict literal; the
template text is a literal, a constant of the module, or a constant imported from a module of the run: then
every key of the mapping is a candidate, kept by the run only when that constant names the variable
(:func:`template_fields`, :mod:`promptcache.lint.cross_module`).
"""

from __future__ import annotations

import re
from string import Formatter
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.literals import string_value
from promptcache.lint.sinks import RUNNABLE_CALLS

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope

_INVOKES = RUNNABLE_CALLS | {"format_messages", "format_prompt"}  # a template run or formatted
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def template_fills(flow: FlowAnalysis) -> list[tuple[cst.BaseExpression, Scope, str, tuple[str, str] | None]]:
    """``(value, scope, label, requires)`` for each value a module fills into a LangChain system template's
    variable; ``requires`` is ``(imported template, variable)`` when the template's text is in another module."""
    index = flow.index
    templates: dict[int, tuple[cst.Call, frozenset[str], str | None]] = {}  # id(call) -> (call, variables, import)
    for call, scope in index.calls:
        name = index.qualified(call.func, scope) or ""
        if name.endswith("ChatPromptTemplate.from_messages") and call.args:
            texts = _system_texts(call.args[0].value)
        elif name.endswith("SystemMessagePromptTemplate.from_template") and call.args:
            texts = [call.args[0].value]
        else:
            continue
        found: set[str] = set()
        for text in texts:
            found |= _variables(flow, text, scope)
        imported = [q for t in texts if (q := _imported(flow, t, scope))]
        if found or len(imported) == 1:
            templates[id(call)] = (call, frozenset(found), imported[0] if len(imported) == 1 else None)
    if not templates:
        return []
    out = []
    for call, scope in index.calls:
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in (*_INVOKES, "partial"):
            continue
        template = _template_of(flow, func.value, scope, templates)
        if template is None:
            continue
        _, names, imported = templates[template]
        if func.attr.value == "partial":
            pairs = [(a.keyword.value, a.value) for a in call.args if a.keyword is not None]
        else:
            mapping = call.args[0].value if call.args else None
            pairs = [(key, el.value) for el in getattr(mapping, "elements", ())
                     if isinstance(el, cst.DictElement) and (key := string_value(el.key)) is not None] \
                if isinstance(mapping, cst.Dict) else []
        for key, value in pairs:
            if key in names:
                out.append((value, scope, f"the LangChain system template's {{{key}}}", None))
            elif imported is not None:
                out.append((value, scope, f"the LangChain system template's {{{key}}}", (imported, key)))
    return out


def template_fields(index) -> dict[str, tuple[str, ...]]:
    """``{name: variables}`` of the module-level names bound once to template text with ``{variables}``."""
    module = next(sc for sc in index.scopes if sc.kind == "module")
    out: dict[str, tuple[str, ...]] = {}
    for name, bindings in module.bindings.items():
        if len(bindings) == 1 and bindings[0].kind == "assign" and \
                isinstance(bindings[0].value, (cst.SimpleString, cst.ConcatenatedString)):
            found = _fields(string_value(bindings[0].value) or "")
            if found:
                out[name] = tuple(sorted(found))
    return out


def _system_texts(messages: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The texts of the ``("system", text)`` entries of a ``from_messages`` list literal."""
    return [entry.elements[1].value for el in (messages.elements if isinstance(messages, (cst.List, cst.Tuple)) else ())
            if isinstance(entry := el.value, cst.Tuple) and len(entry.elements) == 2
            and string_value(entry.elements[0].value) in ("system", "developer")]


def _imported(flow: FlowAnalysis, text: cst.BaseExpression, scope: Scope) -> str | None:
    """The qualified name of an imported template constant (``from .prompts import SYSTEM_PROMPT``), else None."""
    if isinstance(text, (cst.Name, cst.Attribute)):
        root = text
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name) and flow.index.imported(root.value, scope):
            return flow.index.qualified(text, scope)
    return None


def _variables(flow: FlowAnalysis, text: cst.BaseExpression, scope: Scope) -> set[str]:
    """The ``{name}`` fields of template text: a literal, or a name bound once to one in the module."""
    if isinstance(text, cst.Name):
        bindings = flow.index.lookup(text.value, scope)[1]
        if len(bindings) != 1 or bindings[0].kind != "assign":
            return set()
        text, scope = bindings[0].value, bindings[0].scope
    value = string_value(text) if isinstance(text, (cst.SimpleString, cst.ConcatenatedString)) else None
    return _fields(value) if value is not None else set()


def _fields(value: str) -> set[str]:
    try:
        return {f for _, f, _, _ in Formatter().parse(value) if f and _FIELD.match(f)}
    except ValueError:
        return set()


def _template_of(flow: FlowAnalysis, receiver: cst.BaseExpression, scope: Scope, templates: dict) -> int | None:
    """The template call ``receiver`` is, or starts (``prompt | llm | parser``, ``prompt.partial(...)``), through
    names bound once."""
    for _ in range(8):
        if isinstance(receiver, cst.Call) and id(receiver) in templates:
            return id(receiver)
        if isinstance(receiver, cst.BinaryOperation) and isinstance(receiver.operator, cst.BitOr):
            receiver = receiver.left
        elif isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and \
                receiver.func.attr.value == "partial":
            receiver = receiver.func.value
        elif isinstance(receiver, cst.Name):
            bindings = flow.index.lookup(receiver.value, scope)[1]
            if len(bindings) != 1 or bindings[0].kind != "assign":
                return None
            receiver, scope = bindings[0].value, bindings[0].scope
        else:
            return None
    return None


__all__ = ["template_fields", "template_fills"]
