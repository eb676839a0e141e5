"""Stores that normalise a message field in place: the same bytes each time they run (PC204 does not report them).

A conversion run over the whole conversation before every send (graphiti's ``for m in messages: m.content =
self._clean_input(m.content)``, sweep's ``sanitize_anthropic_messages``) changed each message before it was first
sent, and running it again changes nothing: the next request repeats the bytes the last one sent. All of these
must hold (issue 11, from false positives in graphiti and sweep; the boundaries from the review):

- the store is in a ``for`` loop over the whole list (``h``, ``self.messages``, ``enumerate(h)``, ``list(h)``):
  not a slice or a filter (``h[:-4]``: the window moves, so a message goes out raw, then changed);
- the function adds no message to that list after the store and before the next call given the list (the send)
  (``h.append(q)``, ``h += [...]``, ``insert``, ``extend``): a message added then goes out as written and is
  normalised next turn; a reply appended after the send is normalised before it first goes out;
- the value is idempotent on the field: ``x.strip()`` (``rstrip`` / ``lstrip`` / ``lower`` / ``upper`` /
  ``casefold``, literal arguments only); ``clean(x)`` with the field as its one argument, by a function named to
  clean, sanitise, normalise or strip and not to summarise (``clean_up_with_llm_summary(x)`` rewrites); or a
  literal under ``if x == <another literal>:`` (``if m["role"] == "system": m["role"] = "user"``: false once done).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.expressions import is_literal
from promptcache.lint.walk import descendants

Code = Callable[[cst.CSTNode], str]  # a node's source text
Parent = Callable[[cst.CSTNode], cst.CSTNode | None]  # a node's parent, None at the module

_IDEMPOTENT_METHODS = frozenset({"strip", "rstrip", "lstrip", "lower", "upper", "casefold"})
_ADDS = frozenset({"append", "extend", "insert"})
_SEND_KEYWORDS = frozenset({"messages", "input", "contents"})
_INVOKE = frozenset({"invoke", "ainvoke", "stream", "astream"})
_WHOLE = frozenset({"enumerate", "list", "reversed", "tuple"})  # a loop over these still visits every message
_CLEANER = re.compile(r"(?i)clean|saniti[sz]e|normali[sz]e|strip")


def normalising_store(target: cst.BaseExpression, value: cst.BaseExpression | None, node: cst.CSTNode,
                      code: Code, parent: Parent, order: dict[cst.CSTNode, int]) -> bool:
    """``target = value`` (the statement ``node``) normalises a field of every message of a list in place, and its
    function adds no message to that list afterwards (see the module). ``order``: the nodes' source order."""
    base = target.value if isinstance(target, (cst.Attribute, cst.Subscript)) else None
    listed, func = _whole_list_loop(base, node, code, parent) if base is not None else (None, None)
    if value is None or listed is None or func is None or _added_after(listed, node, func, code, order):
        return False
    field = code(target)
    if isinstance(value, cst.Call):
        callee = value.func
        if isinstance(callee, cst.Attribute) and callee.attr.value in _IDEMPOTENT_METHODS:
            return code(callee.value) == field and all(is_literal(a.value) for a in value.args)
        name = callee.attr.value if isinstance(callee, cst.Attribute) else callee.value if isinstance(callee, cst.Name) else ""
        return bool(_CLEANER.search(name)) and not S.summarise_callee(name) and len(value.args) == 1 \
            and code(value.args[0].value) == field
    return is_literal(value) and _tested_other(node, field, value, code, parent)


def _whole_list_loop(base: cst.BaseExpression, node: cst.CSTNode, code: Code, parent: Parent):
    """``(code of the list, function)`` when ``node`` is in a ``for`` loop that binds ``base`` to each message of
    a whole list, else ``(None, function or None)``."""
    at, listed = parent(node), None
    while at is not None and not isinstance(at, cst.Module):
        if listed is None and isinstance(at, cst.For) and code(base) in _bound_names(at.target, code):
            listed = _whole(at.iter, code)
            if listed is None:
                return None, None
        if isinstance(at, cst.FunctionDef):
            return listed, at
        at = parent(at)
    return None, None


def _bound_names(target: cst.BaseExpression, code: Code) -> set[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return {code(el.value) for el in target.elements}
    return {code(target)}


def _whole(iterable: cst.BaseExpression, code: Code) -> str | None:
    """The list a loop visits whole: ``h``, ``self.h``, ``enumerate(h)``, ``list(h)``; None for anything else."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in _WHOLE \
            and len(iterable.args) == 1:
        iterable = iterable.args[0].value
    return code(iterable) if isinstance(iterable, (cst.Name, cst.Attribute)) else None


def _added_after(listed: str, node: cst.CSTNode, func: cst.FunctionDef, code: Code, order: dict) -> bool:
    """``func`` appends, extends, inserts into or ``+=`` the list ``listed`` after ``node`` and before the first call
    given the list after it (the send: a reply appended after ``messages=history`` is normalised before it is
    first sent)."""
    after = order.get(node, 0)
    calls = list(descendants(func, cst.Call))
    sends = [order.get(c, 0) for c in calls if order.get(c, 0) > after and _sends(c, listed, code)]
    until = min(sends, default=None)
    for n in descendants(func, (cst.Call, cst.AugAssign)):
        if order.get(n, 0) <= after or until is not None and order.get(n, 0) > until:
            continue
        if isinstance(n, cst.AugAssign) and code(n.target) == listed:
            return True
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in _ADDS \
                and code(n.func.value) == listed:
            return True
    return False


def _sends(call: cst.Call, listed: str, code: Code) -> bool:
    """``call`` sends the list: ``messages=`` / ``input=`` / ``contents=`` of a request, or LangChain's
    ``model.invoke(h)`` (not ``print(h)`` or ``len(h)``)."""
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
    return any(code(a.value) == listed and (a.keyword is not None and a.keyword.value in _SEND_KEYWORDS
                                            or a.keyword is None and method in _INVOKE) for a in call.args)


def _tested_other(node: cst.CSTNode, field: str, value: cst.BaseExpression, code: Code, parent: Parent) -> bool:
    """``node`` runs under ``if <field> == <literal>:`` with a literal other than ``value``: once written, the test
    is false."""
    at = parent(node)
    while at is not None and not isinstance(at, (cst.FunctionDef, cst.Module)):
        test = at.test if isinstance(at, cst.If) else None
        if isinstance(test, cst.Comparison) and code(test.left) == field and len(test.comparisons) == 1:
            cmp = test.comparisons[0]
            if isinstance(cmp.operator, cst.Equal) and is_literal(cmp.comparator) and code(cmp.comparator) != code(value):
                return True
        at = parent(at)
    return False


__all__ = ["normalising_store"]
