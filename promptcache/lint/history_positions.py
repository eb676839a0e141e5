"""Which messages a store or a rebuild changes, when it picks them by position (PC204).

A change applied to a list made for this request (a rebuilt list, a ``copy.deepcopy``, a serializer's output)
still changes what the next request repeats when the messages it changes are chosen by a position that moves
each turn: counted from the end (``for m in reversed(h)`` with a counter above a bound), below the list's
length minus a bound (``i < len(h) - KEEP``, ``keep = len(h) - 3`` then ``i < keep``,
``for i in range(len(h) - 3)``), every message but the newest (``m is not h[-1]``), or an index read from the
length (``h[len(h) - 3]``, ``h[-2]``). A message that went out whole on the last request goes out changed on
this one. Not: a position counted from the start (``i == 0``, ``h[0]``: the same message each request), a
change of the newest message only, or a change chosen by content (the same bytes each request).

Used by :mod:`promptcache.lint.history_masking` (rebuilt lists) and :mod:`promptcache.lint.history_edits`
(stores into a copy made for the request).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.expressions import int_value
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.index import Scope
    from promptcache.lint.turns import Turns


def loop_shape(loop: cst.For) -> tuple[str, str | None, cst.BaseExpression, bool] | None:
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


def chosen_by_position(turns: Turns, node: cst.CSTNode, scope: Scope, index: cst.BaseExpression | None = None) -> bool:
    """Whether the store at ``node`` (into ``h[index]``, or into a loop's message when ``index`` is None) changes
    messages picked by a position that moves each turn: ``index`` read from the length or counted from the end,
    or an enclosing ``for`` whose range, or an ``if`` between the store and the loop, picks the older messages."""
    if index is not None and _moving_index(turns, index, scope):
        return True
    for anc in turns.facts.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            return False
        if not isinstance(anc, cst.For):
            continue
        if _is_range(anc.iter) and any(_below_length(turns, a.value, scope) for a in anc.iter.args):
            return True
        shape = loop_shape(anc)
        if shape is not None and Positional(turns, anc, scope, shape[1], shape[3]).dominates(node, anc):
            return True
    return False


class Positional:
    """Tests that pick messages by their position counted from the end of the list."""

    def __init__(self, turns: Turns, loop: cst.For, scope: Scope, index: str | None, from_end: bool):
        self.turns, self.loop, self.scope, self.from_end = turns, loop, scope, from_end
        counters = {name for name, bindings in scope.bindings.items()
                    if any(b.kind == "aug" and turns.facts.within(b.node, loop.body) for b in bindings)}
        self.positions = counters | ({index} if index else set())
        if _is_range(loop.iter) and isinstance(loop.target, cst.Name):
            self.positions.add(loop.target.value)

    def test(self, test: cst.BaseExpression) -> bool:
        """A comparison that holds for the *older* messages: a count from the end above a bound (``i > keep``
        over ``reversed(h)``), an index below ``len(...)`` minus a bound (``i < len(h) - KEEP``, also through a
        local ``keep = len(h) - KEEP``), or a message compared with one counted from the end (``m is not h[-1]``).
        Not an equality with the newest message, nor a test for the newest messages (``i == len(h) - 1``,
        ``n < 2`` from the end: a marker on the last message moves, the text of the older ones stays)."""
        for cmp in descendants(test, cst.Comparison):
            if len(cmp.comparisons) != 1:
                continue
            op, right = cmp.comparisons[0].operator, cmp.comparisons[0].comparator
            if _against_end(cmp.left, right, op) or _against_end(right, cmp.left, op):
                return True
            for position, bound, above in ((cmp.left, right, _GREATER), (right, cmp.left, _LESS)):
                if not (isinstance(position, cst.Name) and position.value in self.positions):
                    continue
                if self.from_end and isinstance(op, above):
                    return True
                if not self.from_end and isinstance(op, _LESS if above is _GREATER else _GREATER) and \
                        _reads_len(self.turns, bound, self.scope):
                    return True
        return False

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


_GREATER = (cst.GreaterThan, cst.GreaterThanEqual)
_LESS = (cst.LessThan, cst.LessThanEqual)


def _against_end(item: cst.BaseExpression, other: cst.BaseExpression, op: cst.BaseCompOp) -> bool:
    """``m is not h[-1]`` / ``m != h[-1]`` (every message but the newest), ``m is h[-3]`` (one counted back)."""
    if not isinstance(item, cst.Name) or not isinstance(other, cst.Subscript) or len(other.slice) != 1 or \
            not isinstance(other.slice[0].slice, cst.Index):
        return False
    at = int_value(other.slice[0].slice.value)
    if at is None or at >= 0:
        return False
    return isinstance(op, (cst.IsNot, cst.NotEqual)) or (isinstance(op, (cst.Is, cst.Equal)) and at < -1)


def _moving_index(turns: Turns, index: cst.BaseExpression, scope: Scope) -> bool:
    """``h[len(h) - 3]``, ``h[-2]``, or a local bound to a length (``cut = len(h) - 3``)."""
    at = int_value(index)
    return (at is not None and at < -1) or _reads_len(turns, index, scope)


def _below_length(turns: Turns, bound: cst.BaseExpression, scope: Scope) -> bool:
    """A range bound read from the length that leaves some messages out: ``len(h) - 3``, not ``len(h)``."""
    return not (isinstance(bound, cst.Call) and isinstance(bound.func, cst.Name) and bound.func.value == "len") and \
        _reads_len(turns, bound, scope)


def _reads_len(turns: Turns, e: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
    """``e`` calls ``len``, or is a local name bound only by assignments that do (``keep = len(h) - 3``)."""
    if any(isinstance(c.func, cst.Name) and c.func.value == "len" for c in descendants(e, cst.Call)):
        return True
    if not isinstance(e, cst.Name) or depth > 3:
        return False
    found, bindings = turns.index.lookup(e.value, scope)
    return found is not None and found.kind == "function" and bool(bindings) and all(
        b.kind == "assign" and isinstance(b.value, cst.BaseExpression) and _reads_len(turns, b.value, b.scope, depth + 1)
        for b in bindings)


def _is_range(e: cst.BaseExpression) -> bool:
    return isinstance(e, cst.Call) and isinstance(e.func, cst.Name) and e.func.value == "range" and bool(e.args)


def _reverse_slice(sub: cst.Subscript) -> bool:
    """``h[::-1]``."""
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Slice):
        return False
    sl = sub.slice[0].slice
    step = sl.step
    return sl.lower is None and sl.upper is None and isinstance(step, cst.UnaryOperation) and isinstance(step.operator, cst.Minus)


def _is_call(e: cst.BaseExpression, name: str) -> bool:
    return isinstance(e, cst.Call) and isinstance(e.func, cst.Name) and e.func.value == name and len(e.args) == 1


__all__ = ["Positional", "chosen_by_position", "loop_shape"]
