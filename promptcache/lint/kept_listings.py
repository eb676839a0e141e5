"""MCP tool listings kept between requests (PC305's "listed once and kept").

A ``list_tools()`` result stored in an attribute of the object is the same list,
in the same order, for every request that reads it back, unless the store runs
again on the request path. Two stores keep it:

- **an attribute filled off the request path**: ``self.tools = ...`` (or an
  append to it, an entry of it) in a method that no request runs: ``connect()``,
  ``__init__``, an initialiser only those call (PraisonAI's MCP clients);
- **a cache entry filled on a miss**: the listing is computed in the branch of
  ``if tools is None:`` (``not tools``, ``key not in self.cache``) after
  ``tools = self.cache.get(key)``, and that branch stores it back with
  ``self.cache[key] = tools`` (ChatDev's per-server ``_mcp_tool_cache``).

Either keeps the listing only while no request empties the attribute
(``self.cache.clear()``, ``.pop(...)``, ``del self.cache[k]``, ``self.cache = {}``).

The taint engine marks a listing with the nearest such store on its way to the
slot (:attr:`promptcache.lint.sources.Source.kept`, :func:`store_on_miss`);
:func:`kept` judges whether that store keeps it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.expressions import is_literal
from promptcache.lint.index import Binding, Scope
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.sources import Source

_EMPTYING = frozenset({"clear", "pop", "popitem"})


def store_on_miss(b: Binding, name: str, parents: dict) -> cst.Assign | None:
    """``self.cache[key] = name`` when binding ``b`` of local ``name`` is made in the branch of a cache miss that
    stores it back: ``tools = self.cache.get(key)``, then ``if tools is None: tools = list(); self.cache[key] = tools``."""
    branch = _branch(b.node, parents) if b.kind == "assign" else None
    if branch is None:
        return None
    for stmt in descendants(branch.body, cst.Assign):
        if isinstance(stmt.value, cst.Name) and stmt.value.value == name and _branch(stmt, parents) is branch \
                and fills_miss(stmt, b.scope, parents):
            return stmt
    return None


def fills_miss(store: cst.CSTNode, method: Scope, parents: dict) -> bool:
    """``store`` is ``self.cache[key] = value`` in the branch taken on a miss of ``self.cache``: under
    ``if key not in self.cache:``, ``if self.cache.get(key) is None:``, or ``if value is None:`` / ``if not value:``
    with ``value`` read from the cache (``value = self.cache.get(key)``)."""
    self_name = method.self_name if method.kind == "function" else None
    branch = _branch(store, parents) if isinstance(store, cst.Assign) and self_name is not None else None
    caches = [_self_attribute(t.target.value, self_name) for t in store.targets if isinstance(t.target, cst.Subscript)] \
        if branch is not None else []
    return any(cache is not None and _misses(branch.test, store.value, cache, self_name, method) for cache in caches)


def _branch(node: cst.CSTNode, parents: dict) -> cst.If | None:
    """The ``if`` whose body (not its ``else``) holds ``node`` most closely, within ``node``'s function."""
    child = node
    while (up := parents.get(child)) is not None and not isinstance(up, (cst.FunctionDef, cst.Lambda)):
        if isinstance(up, cst.If) and child is up.body:
            return up
        if isinstance(up, cst.If):
            return None  # in the `else` / `elif`: not the branch of the miss
        child = up
    return None


def _misses(test: cst.BaseExpression, value: cst.BaseExpression, cache: str, self_name: str, method: Scope) -> bool:
    """``test`` is true on a miss of ``self.<cache>`` (see :func:`fills_miss`)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        subject = test.expression
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        op, right = test.comparisons[0].operator, test.comparisons[0].comparator
        if isinstance(op, cst.NotIn):
            return _self_attribute(right, self_name) == cache
        if not (isinstance(op, (cst.Is, cst.Equal)) and isinstance(right, cst.Name) and right.value == "None"):
            return False
        subject = test.left
    else:
        return False
    if _reads(subject, cache, self_name):
        return True
    return isinstance(subject, cst.Name) and isinstance(value, cst.Name) and subject.value == value.value and any(
        other.kind == "assign" and _reads(other.value, cache, self_name) for other in method.bindings.get(value.value, ()))


def _reads(value: cst.CSTNode | None, cache: str, self_name: str) -> bool:
    """``value`` is ``self.<cache>.get(...)`` or ``self.<cache>[...]``."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "get":
        return _self_attribute(value.func.value, self_name) == cache
    return isinstance(value, cst.Subscript) and _self_attribute(value.value, self_name) == cache


def _self_attribute(expr: cst.BaseExpression, self_name: str) -> str | None:
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == self_name:
        return expr.attr.value
    return None


def kept(flow: FlowAnalysis, s: Source) -> bool:
    """The listing ``s`` reaches its slot through a store that keeps it between requests (see the module)."""
    store = s.kept
    scope = flow.scope_at(store) if store is not None else None
    method = flow.holder_of(scope) if scope is not None else None
    held = _held(store, method) if method is not None else None
    if held is None or _emptied(flow, *held):
        return False
    return fills_miss(store, method, flow.facts.parent) or not flow.turns.per_request(store)


def _held(store: cst.CSTNode, method) -> tuple | None:
    """``(class, attribute)`` that ``store`` writes (``self.x = v``, ``self.x[k] = v``, ``self.x.append(v)``)."""
    if method is None or method.cls is None or method.self_name is None:
        return None
    if isinstance(store, cst.Call) and isinstance(store.func, cst.Attribute):
        targets = [store.func.value]
    elif isinstance(store, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
        targets = [t.target for t in store.targets] if isinstance(store, cst.Assign) else [store.target]
    else:
        return None
    for target in targets:
        while isinstance(target, cst.Subscript):
            target = target.value
        attr = _self_attribute(target, method.self_name)
        if attr is not None:
            return method.cls, attr
    return None


def _emptied(flow: FlowAnalysis, cls, attr: str) -> bool:
    """A request empties ``self.<attr>``: rebinds it to a literal, clears it, pops from it or deletes an entry."""
    places = [b.node for b in cls.attrs.get(attr, ()) if b.kind == "assign" and is_literal(b.value)]
    places += [call for call, scope in flow.index.calls if isinstance(call.func, cst.Attribute) and call.func.attr.value in _EMPTYING
               and _on(call.func.value, cls, attr, flow, scope)]
    for node, scope in flow.index.deletes:
        targets = [el.value for el in node.target.elements] if isinstance(node.target, cst.Tuple) else [node.target]
        places += [node for t in targets if _on(t, cls, attr, flow, scope)]
    return any(flow.turns.per_request(p) for p in places)


def _on(expr: cst.BaseExpression, cls, attr: str, flow: FlowAnalysis, scope) -> bool:
    """``expr`` is ``self.<attr>`` of ``cls`` (or an entry of it)."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.attr.value == attr
            and flow.index.class_of_receiver(expr.value, scope) is cls)
