"""Older messages masked in a list rebuilt for each request (PC204).

MetaGPT's ``RoleZero.parse_editor_result`` rebuilds the memory it sends, keeping the newest five editor results
and replacing every older one with a short stub::

    for msg in reversed(memory):
        if pattern.findall(msg.content):
            i += 1
            if i > keep_latest_count:
                msg = UserMessage(content=msg.content[:cut])
        new_memory.append(msg)

Each new editor result pushes one more earlier message past the count: a message that went out whole on the
last request goes out as a stub on this one, so the cached prefix ends there. The same for "replace tool
outputs older than the last N with '<omitted>'" written as a rebuild rather than a store (the store form is
:mod:`promptcache.lint.history_edits`).

A site is an append, inside a ``for`` over a list that is not built for this request, to a list a sink sends,
where the message appended is the loop's own message or a replacement of it (the loop variable rebound, a
conditional expression, another append in the loop) and the choice depends on the position **counted from the
end**: a counter or an ``enumerate`` index over ``reversed(h)`` / ``h[::-1]``, or a test that also reads
``len(...)``. Not: a conversion applied to every message alike, or by content only (the same bytes each
request), or a position counted from the start (``i == 0``: the same message each request).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.history_edits import fresh_list
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.index import Scope
    from promptcache.lint.turns import Turns


def masks(turns: Turns) -> list[tuple[cst.CSTNode, str]]:
    """PC204 sites: ``(node, detail)`` where an older message of a rebuilt, sent list is replaced by position."""
    out: list[tuple[cst.CSTNode, str]] = []
    for b in _appends_to_sent(turns):
        loop = turns.facts.loop_of(b.node)
        if not isinstance(loop, cst.For):
            continue
        shape = _loop_shape(loop)
        if shape is None:
            continue
        item, index, source, from_end = shape
        if fresh_list(turns, source, b.scope, elements=True):
            continue
        positional = _Positional(turns, loop, b.scope, index, from_end)
        value = b.value
        if isinstance(value, cst.Name) and value.value == item:
            for rebind in turns.index.lookup(item, b.scope)[1]:
                if rebind.kind == "assign" and turns.facts.within(rebind.node, loop.body) and positional.dominates(rebind.node, loop):
                    out.append((rebind.node, _detail(turns, rebind.node)))
        elif isinstance(value, cst.IfExp) and _item(value.body, item) != _item(value.orelse, item) and positional.test(value.test):
            out.append((b.node, turns.flow.code(b.node)))
    return list({id(node): (node, detail) for node, detail in out}.values())


def _appends_to_sent(turns: Turns):
    index = turns.index
    for scope in index.scopes:
        for name, bindings in scope.bindings.items():
            if ("n", id(scope), name) in turns.history_refs:
                yield from (b for b in bindings if b.kind == "mutate" and b.op == "append" and b.value is not None)


def _loop_shape(loop: cst.For) -> tuple[str, str | None, cst.BaseExpression, bool] | None:
    """``(item, index, list, from_end)`` for ``for m in h``, ``for i, m in enumerate(h)``, with ``h`` also as
    ``reversed(h)`` or ``h[::-1]`` (``from_end``); None for other shapes."""
    target, it, index = loop.target, loop.iter, None
    if isinstance(target, cst.Tuple) and len(target.elements) == 2 and _is_call(it, "enumerate"):
        first, second = (el.value for el in target.elements)
        if not (isinstance(first, cst.Name) and isinstance(second, cst.Name)):
            return None
        index, target, it = first.value, second, it.args[0].value
    if not isinstance(target, cst.Name):
        return None
    from_end = False
    if _is_call(it, "reversed"):
        it, from_end = it.args[0].value, True
    elif isinstance(it, cst.Subscript) and _reverse_slice(it):
        it, from_end = it.value, True
    return target.value, index, it, from_end


def _reverse_slice(sub: cst.Subscript) -> bool:
    """``h[::-1]``."""
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Slice):
        return False
    sl = sub.slice[0].slice
    step = sl.step
    return sl.lower is None and sl.upper is None and isinstance(step, cst.UnaryOperation) and isinstance(step.operator, cst.Minus)


def _is_call(e: cst.BaseExpression, name: str) -> bool:
    return isinstance(e, cst.Call) and isinstance(e.func, cst.Name) and e.func.value == name and len(e.args) == 1


def _item(e: cst.BaseExpression, item: str) -> bool:
    return isinstance(e, cst.Name) and e.value == item


class _Positional:
    """Tests that pick messages by their position counted from the end of the list."""

    def __init__(self, turns: Turns, loop: cst.For, scope: Scope, index: str | None, from_end: bool):
        self.turns, self.loop, self.from_end = turns, loop, from_end
        counters = {name for name, bindings in scope.bindings.items()
                    if any(b.kind == "aug" and turns.facts.within(b.node, loop.body) for b in bindings)}
        self.positions = counters | ({index} if index else set())

    def test(self, test: cst.BaseExpression) -> bool:
        names = {n.value for n in descendants(test, cst.Name)}
        if not names & self.positions:
            return False
        return self.from_end or any(isinstance(c.func, cst.Name) and c.func.value == "len" for c in descendants(test, cst.Call))

    def dominates(self, node: cst.CSTNode, loop: cst.For) -> bool:
        """An ``if`` between ``node`` and the loop, with ``node`` in its body, tests a position."""
        child = node
        for anc in self.turns.facts.ancestors(node):
            if anc is loop:
                return False
            if isinstance(anc, cst.If) and child is anc.body and self.test(anc.test):
                return True
            child = anc
        return False


def _detail(turns: Turns, node: cst.CSTNode) -> str:
    code = turns.flow.code(node)
    return code if len(code) <= 60 else code[:57] + "..."


__all__ = ["masks"]
