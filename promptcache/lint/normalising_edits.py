"""Stores that normalise a message field in place: the same bytes each time they run (PC204 does not report them).

A conversion run on every request before the send (graphiti's ``m.content = self._clean_input(m.content)``,
sweep's ``sanitize_anthropic_messages``) changed the message before it was first sent, and running it again
changes nothing: the next request repeats the bytes the last one sent. These count (issue 11, each from a false
positive in graphiti or sweep):

- ``x = x.strip()`` (also ``rstrip`` / ``lstrip`` / ``lower`` / ``upper`` / ``casefold``, with literal arguments);
- ``x = clean(x)``: one argument, the field itself, given to a function named to clean, sanitise, normalise
  or strip;
- ``x = "user"`` under ``if x == "system":``: a constant written under a test of the same field, false once done.

Not when the function adds messages to the edited list after the store (they go out as written, then are
normalised next turn), nor: a slice (``x[:budget // n]``: its bound moves with the turn), text added (``x + " (seen)"``), a call
with other arguments, a constant under a test of another field (``if m["role"] == "tool": m["content"] = "<omitted>"``).
"""

from __future__ import annotations

import re
from typing import Callable

import libcst as cst

from promptcache.lint.expressions import is_literal
from promptcache.lint.walk import descendants

_IDEMPOTENT_METHODS = frozenset({"strip", "rstrip", "lstrip", "lower", "upper", "casefold"})
_ADDS = frozenset({"append", "extend", "insert"})
_CLEANER = re.compile(r"(?i)clean|saniti[sz]e|normali[sz]e|strip")


def normalising_store(target: cst.BaseExpression, value: cst.BaseExpression | None, node: cst.CSTNode,
                      code: Callable[[cst.CSTNode], str], parent: Callable[[cst.CSTNode], cst.CSTNode | None],
                      order: dict[cst.CSTNode, int]) -> bool:
    """``target = value`` (the statement ``node``) normalises ``target`` in place (see the module), and its function
    adds no message to the list it edits after it (``for m in h: m["content"] = m["content"].strip()`` then
    ``h.append(new)``: the new message goes out as written, and is normalised next turn)."""
    if value is None or _added_after(target, node, code, parent, order):
        return False
    field = code(target)
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in _IDEMPOTENT_METHODS:
            return code(func.value) == field and all(is_literal(a.value) for a in value.args)
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        return bool(_CLEANER.search(name)) and len(value.args) == 1 and code(value.args[0].value) == field
    return is_literal(value) and _tested(node, field, code, parent)


def _added_after(target: cst.BaseExpression, node: cst.CSTNode, code, parent, order: dict) -> bool:
    """The function holding ``node`` appends, extends, inserts into or ``+=`` the edited list after it."""
    base = target.value if isinstance(target, (cst.Attribute, cst.Subscript)) else target
    at, func, listed = parent(node), None, None
    while at is not None and not isinstance(at, cst.Module):
        if listed is None and isinstance(at, cst.For) and isinstance(at.target, cst.Name) and code(at.target) == code(base):
            listed = code(at.iter)
        if isinstance(at, cst.FunctionDef):
            func = at
            break
        at = parent(at)
    if listed is None and isinstance(base, cst.Subscript):
        listed = code(base.value)  # `h[1]["content"] = ...`
    if listed is None or func is None:
        return False
    after = order.get(node, 0)
    for n in descendants(func, (cst.Call, cst.AugAssign)):
        if order.get(n, 0) <= after:
            continue
        if isinstance(n, cst.AugAssign) and code(n.target) == listed:
            return True
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in _ADDS \
                and code(n.func.value) == listed:
            return True
    return False


def _tested(node: cst.CSTNode, field: str, code, parent) -> bool:
    """``node`` runs under ``if <field> == ...:`` (or ``!=``, ``in``), inside the same function."""
    at = parent(node)
    while at is not None and not isinstance(at, (cst.FunctionDef, cst.Module)):
        if isinstance(at, cst.If) and isinstance(at.test, cst.Comparison) and code(at.test.left) == field:
            return True
        at = parent(at)
    return False


__all__ = ["normalising_store"]
