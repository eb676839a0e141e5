"""Where ``tools=`` reads an unordered collection, and what ``sorted(...)`` must wrap to fix the order.

PC301 reports an unordered collection where it enters a tool slot; its fix
wraps something in ``sorted(...)``. What, is decided by retracing the way the
data-flow analysis (:meth:`~promptcache.lint.dataflow.FlowAnalysis.sites`)
went from the slot's expression to the reported collection: into container
literals, comprehension iterables, operands, conditional branches and names
bound to container literals.

Every such way is one **read**. The expression to wrap for a read is

- the reported collection itself when the slot holds it (``{"a", "b"}`` in
  ``[T[n] for n in {"a", "b"}]``);
- the name the slot reads it through when it is defined elsewhere
  (``ENABLED`` for ``ENABLED = {"a", "b"}``), so the constant keeps its type;
- but the outermost **set** on the way, when the collection's elements go
  through one: a set literal (``{*ENABLED}``), a set comprehension
  (``{k.lower() for k in ENABLED}``) or a set operation (``ENABLED | EXTRA``)
  orders its elements by hash, whatever order they came in, so
  ``sorted(ENABLED)`` there would not fix anything (and ``sorted(ENABLED) |
  EXTRA`` would raise). A set counts only while the collection's own elements
  flow into it: once the collection is just one element of a container (a
  value in a dict), sets further out order that container, not it.

A collection read by several slots, or several times by one, has one read
for each: a fix must wrap them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope

_SET_OPERATORS = (cst.BitOr, cst.BitAnd, cst.BitXor, cst.Subtract)
_DEPTH = 12  # as deep as FlowAnalysis.sites looks

# How a step goes from an expression to a part of it: the part's elements become the expression's
# elements (SAME: an operand, a starred element, a branch, the value a name is bound to), the
# expression iterates over the part (ITER: a comprehension), or the part is one element (ELEMENT).
SAME, ITER, ELEMENT = "same", "iter", "element"


@dataclass(frozen=True)
class Read:
    """One way from a slot's expression to the reported collection.

    ``read`` is where that way reads it (the collection itself, or the name
    bound to it); ``wrap`` is what ``sorted(...)`` must wrap: ``read``, or the
    outermost set its elements go through (then ``wrap`` is not ``read``).
    """

    read: cst.CSTNode
    wrap: cst.CSTNode

    @property
    def through_a_set(self) -> bool:
        """True when a set re-orders the collection's elements before the slot, so ``wrap`` is that set."""
        return self.wrap is not self.read


@dataclass(frozen=True)
class _Step:
    expr: cst.CSTNode  # the expression the step leaves
    here: cst.CSTNode  # where the program reads that expression (a name bound to it, or itself)
    how: str


def reads(flow: FlowAnalysis, node: cst.CSTNode, expr: cst.BaseExpression, scope: Scope) -> list[Read]:
    """Every read of ``node`` on the ways from the slot expression ``expr`` (evaluated in ``scope``), in source
    order of discovery, without repeats. Empty when no way leads there (the caller offers no edit)."""
    found: list[Read] = []
    _walk(flow, node, expr, scope, expr, [], found, 0)
    unique: dict[tuple[int, int], Read] = {}
    for r in found:
        unique.setdefault((id(r.read), id(r.wrap)), r)
    return list(unique.values())


def _walk(flow: FlowAnalysis, node, e, scope, here, steps: list[_Step], found: list[Read], depth: int) -> None:
    if e is node:
        found.append(Read(here, _wrap(here, steps)))
        return
    if depth > _DEPTH:
        return

    def go(part, how: str, part_scope=scope, part_here=None) -> None:
        steps.append(_Step(e, here, how))
        _walk(flow, node, part, part_scope, part_here if part_here is not None else part, steps, found, depth + 1)
        steps.pop()

    if isinstance(e, (cst.List, cst.Tuple, cst.Set)):
        for el in e.elements:
            go(el.value, SAME if isinstance(el, cst.StarredElement) else ELEMENT)
    elif isinstance(e, cst.Dict):
        for el in e.elements:
            if isinstance(el, cst.DictElement):
                go(el.key, ELEMENT)
                go(el.value, ELEMENT)
            else:
                go(el.value, SAME)
    elif isinstance(e, cst.FormattedString):
        for p in e.parts:
            if isinstance(p, cst.FormattedStringExpression):
                go(p.expression, ELEMENT)
    elif isinstance(e, (cst.ConcatenatedString, cst.BinaryOperation)):
        how = ELEMENT if isinstance(e, cst.ConcatenatedString) else SAME
        go(e.left, how)
        go(e.right, how)
    elif isinstance(e, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
        comp = e.for_in  # the element expressions carry no order (sites drops order sources there)
        while comp is not None:
            go(comp.iter, ITER)
            comp = comp.inner_for_in
    elif isinstance(e, cst.Await):
        go(e.expression, SAME)
    elif isinstance(e, cst.NamedExpr):
        go(e.value, SAME)
    elif isinstance(e, cst.IfExp):
        go(e.body, SAME)
        go(e.orelse, SAME)
    elif isinstance(e, (cst.Name, cst.Attribute)):
        for value, value_scope, mutated in flow.follow(e, scope) or ():
            if not mutated:  # an appended value's order is the appends', not the container's
                go(value, SAME, value_scope, e)


def _wrap(read: cst.CSTNode, steps: list[_Step]) -> cst.CSTNode:
    """The outermost set the collection's elements flow into on the way ``steps`` (read from the slot
    down), as the program reads it; ``read`` when there is none."""
    wrap = read
    for step in reversed(steps):
        if step.how == ELEMENT:
            break
        if _orders_by_hash(step):
            wrap = step.here
    return wrap


def _orders_by_hash(step: _Step) -> bool:
    e = step.expr
    if isinstance(e, cst.Set):
        return step.how == SAME  # {*collection, ...}
    if isinstance(e, cst.SetComp):
        return step.how == ITER
    return isinstance(e, cst.BinaryOperation) and isinstance(e.operator, _SET_OPERATORS)


__all__ = ["Read", "reads"]
