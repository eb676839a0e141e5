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
where the message appended is the loop's own message or a replacement of it (the loop variable rebound, or a
conditional expression) and the replacement is chosen for the **older** messages by position: a counter or an
``enumerate`` index over ``reversed(h)`` / ``h[::-1]`` above a bound, or an index below ``len(...)`` minus one
(the position tests: :mod:`promptcache.lint.history_positions`). Not: a conversion applied to every message alike, or by content only (the same bytes each request), a
position counted from the start (``i == 0``: the same message each request), a change of the newest messages
only, or a ``cache_control`` marker (it moves; the text it marks does not change).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.expressions import argument
from promptcache.lint.history_edits import fresh_list
from promptcache.lint.history_positions import Positional, loop_shape

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
        shape = loop_shape(loop)
        if shape is None:
            continue
        item, index, source, from_end = shape
        if fresh_list(turns, source, b.scope, elements=True) or not _stored(turns, source, b.scope):
            continue
        positional = Positional(turns, loop, b.scope, index, from_end)
        value = b.value
        if isinstance(value, cst.Name) and value.value == item:
            for rebind in turns.index.lookup(item, b.scope)[1]:
                if rebind.kind == "assign" and turns.facts.within(rebind.node, loop.body) and not _marker(turns, rebind.value) \
                        and positional.dominates(rebind.node, loop):
                    out.append((rebind.node, _detail(turns, rebind.node)))
        elif isinstance(value, cst.IfExp) and _item(value.body, item) != _item(value.orelse, item) and positional.test(value.test) \
                and not _marker(turns, value):
            out.append((b.node, turns.flow.code(b.node)))
    return list({id(node): (node, detail) for node, detail in out}.values())


def _appends_to_sent(turns: Turns):
    index = turns.index
    for scope in index.scopes:
        for name, bindings in scope.bindings.items():
            if ("n", id(scope), name) in turns.history_refs:
                yield from (b for b in bindings if b.kind == "mutate" and b.op == "append" and b.value is not None)


def _stored(turns: Turns, source: cst.BaseExpression, scope: Scope) -> bool:
    """The list iterated is kept across requests: ``self.attr``, a module-level list, or a parameter that the
    module's calls bind to such a list (``self.parse_editor_result(self.storage[-200:])``; no call in the module:
    the caller's list). Not a local list made for this request (search results, a list of chunks)."""
    ref = turns.ref_of(source, scope)
    if ref is None or not isinstance(source, (cst.Name, cst.Attribute)):
        return False
    if ref[0] == "a":
        return True
    found, bindings = turns.index.lookup(source.value, scope)
    if found is not None and found.kind == "module":
        return True
    params = [b for b in bindings if b.kind == "param"]
    if not params or any(b.kind in ("assign", "walrus", "aug") for b in bindings):
        return False
    func, position = params[0].scope, params[0].index
    args = []
    for call, call_scope in turns.index.calls:
        if turns.callee(call, call_scope) is func:
            offset = 1 if func.self_name is not None and isinstance(call.func, cst.Attribute) else 0
            arg = argument(call, position - offset, source.value)
            if arg is not None:
                args.append((arg, call_scope))
    return not args or any(_kept(turns, ref) for arg, s in args for ref in turns.list_refs(arg, s))


def _kept(turns: Turns, ref) -> bool:
    """A ``self.attr`` list, a module-level name, or a parameter the caller only passes on (not a local list)."""
    if ref[0].startswith("a"):
        return True
    scope = next((s for s in turns.index.scopes if id(s) == ref[1]), None)
    if scope is None or "[]" in ref[0]:
        return False
    bindings = scope.bindings.get(ref[2], [])
    return scope.kind == "module" or (scope.kind == "function" and bool(bindings) and all(b.kind in ("param", "mutate") for b in bindings))


def _marker(turns: Turns, value: cst.CSTNode | None) -> bool:
    """The replacement sets a ``cache_control`` breakpoint (a marker, not message text)."""
    return value is not None and "cache_control" in turns.flow.code(value)


def _item(e: cst.BaseExpression, item: str) -> bool:
    return isinstance(e, cst.Name) and e.value == item


def _detail(turns: Turns, node: cst.CSTNode) -> str:
    code = turns.flow.code(node)
    return code if len(code) <= 60 else code[:57] + "..."


__all__ = ["masks"]
