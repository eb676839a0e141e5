"""A message of a list literal the function makes, changed before it can have been sent (PC204's exclusions).

``messages = [{"role": "system", "content": "Base."}, {"role": "user", "content": q}]`` is built for this
request: a constant added to one of its dicts gives the same bytes each time, and any text added before the
list is first handed anywhere was never sent without it (:func:`own_literal_dict`, from
:mod:`promptcache.lint.history_edits`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.expressions import is_literal
from promptcache.lint.index import Scope
from promptcache.lint.request_view import all_sinks
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.turns import Turns


def own_literal_dict(turns: Turns, sub: cst.Subscript, at: int | None, scope: Scope, value: cst.BaseExpression | None,
                     node: cst.CSTNode) -> bool:
    """``messages[0]["content"] += RULES`` (``sub`` is ``messages[0]``, ``at`` its constant index) where ``messages`` is bound only to list literals made in this function
    (``[{"role": "system", "content": "Base."}, *history, ...]``) whose element at that constant index, with no
    starred element before it, is a dict literal, and the value stored is a constant (that dict is built for this
    request and gets the same text each time; the ``**params`` spelling of the same code is not a sent list), or
    the store at ``node`` runs before the list is first sent (:func:`_before_first_send`: PraisonAI's
    ``messages[1]["content"] += f"Only search in {patterns}"`` ahead of its tool loop)."""
    lst = sub.value
    if at is None or at < 0 or not isinstance(lst, cst.Name) or not (
            constant_text(turns, value, scope) or _before_first_send(turns, lst.value, node, scope)):
        return False
    found, bindings = turns.index.lookup(lst.value, scope)
    if found is None or found.kind != "function" or not bindings:
        return False
    if any(isinstance(st.target, cst.Subscript) and isinstance(st.target.value, cst.Name) and st.target.value.value == lst.value
           and st.scope is found for st in turns.index.stores):
        return False  # `messages[i] = other`: an element may be another list's message
    for b in bindings:
        if b.kind == "mutate" and b.op in ("append", "extend", "setitem"):
            continue
        if b.kind != "assign" or not isinstance(b.value, cst.List) or len(b.value.elements) <= at:
            return False
        els = b.value.elements[:at + 1]
        if any(isinstance(el, cst.StarredElement) for el in els) or not isinstance(els[-1].value, cst.Dict):
            return False
    return True


def _before_first_send(turns: Turns, name: str, node: cst.CSTNode, scope: Scope) -> bool:
    """The store at ``node`` runs before list ``name`` of function ``scope`` is first handed anywhere: no loop of
    the function encloses it, every request of the function comes after it in the source, and no earlier call is
    given the list (a wrapper that may send it)."""
    facts = turns.facts
    for up in facts.ancestors(node):
        if up is scope.node:
            break
        if isinstance(up, (cst.For, cst.While)):
            return False
    at = facts.order.get(node, 0)
    if any(sink.scope is scope and facts.order.get(sink.call, 0) < at for sink in all_sinks(turns.flow)):
        return False
    for read in descendants(scope.node, cst.Name):
        arg = facts.parent.get(read)
        if read.value == name and isinstance(arg, cst.Arg) and arg.value is read and facts.order.get(read, 0) < at:
            return False
    return True


def constant_text(turns: Turns, value: cst.BaseExpression | None, scope: Scope) -> bool:
    """A literal, a module-level constant, or ``+`` of them."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
        return constant_text(turns, value.left, scope) and constant_text(turns, value.right, scope)
    if isinstance(value, cst.Name) and not is_literal(value):
        found, bindings = turns.index.lookup(value.value, scope)
        return found is not None and found.kind == "module" and bool(bindings) and all(b.kind == "assign" for b in bindings)
    return is_literal(value)


__all__ = ["constant_text", "own_literal_dict"]
