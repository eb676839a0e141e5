"""Whether the size guard over a front trim of the history makes the trim rare (PC203 hysteresis).

A window trimmed under ``if len(h) > T:`` to ``K`` messages runs once every ``T - K`` turns: with ``K`` well
below ``T`` (at most ``T / 2``) most turns append and hit the cache; with ``K`` equal or close to ``T``
(``h = h[-T:]``), or dropping one message (``h.pop(0)``, ``del h[0]``, ``h[1:]``, any ``while len(h) > T:``
loop that pops), the list sits at the threshold once full and every turn drops its oldest message.

:func:`rare` reads the nearest size guard of the trim as ``measure > T`` (``>=``; ``<`` / ``<=`` for an early
exit ``if len(h) <= T: return``), where ``measure`` mentions the trimmed list (``len(h)``, ``tokens(h)``).
A guard it cannot read that way (``if too_long(h):``, ``len(h) > 0 and ...``, a different list) keeps the
trim silent, as before (precision first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.expressions import int_value
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.index import Scope
    from promptcache.lint.turns import Turns

_OVER = (cst.GreaterThan, cst.GreaterThanEqual)
_UNDER = (cst.LessThan, cst.LessThanEqual)
_FLIP = {cst.GreaterThan: cst.LessThan, cst.GreaterThanEqual: cst.LessThanEqual, cst.LessThan: cst.GreaterThan,
         cst.LessThanEqual: cst.GreaterThanEqual}
_SMALL = 2  # a threshold of at most 2 is an emptiness test (`len(h) > 1 and h[0][...]`), not a window size


@dataclass(frozen=True)
class Trim:
    """One front trim: the list trimmed, and what it keeps (``K`` of ``h[-K:]``, ``del h[:-K]``) or drops (``k`` of
    ``h[k:]``, ``del h[:k]``); ``single`` when it drops one message (``pop(0)``, ``popleft()``, ``del h[0]``)."""

    target: cst.BaseExpression
    kept: cst.BaseExpression | None = None
    dropped: cst.BaseExpression | None = None
    single: bool = False


def of_slice(sub: cst.Subscript) -> Trim:
    """The trim of ``h[-K:]`` (keeps K), ``h[k:]`` (drops k), ``del h[:-K]`` / ``del h[:k]``."""
    sl = sub.slice[0].slice if len(sub.slice) == 1 else None
    if not isinstance(sl, cst.Slice):
        return Trim(sub.value, single=True)  # `del h[0]`
    bound = sl.lower if sl.lower is not None else sl.upper
    if isinstance(bound, cst.UnaryOperation) and isinstance(bound.operator, cst.Minus):
        return Trim(sub.value, kept=bound.expression)
    if int_value(bound) == 1:
        return Trim(sub.value, single=True)
    return Trim(sub.value, dropped=bound)


def rare(turns: Turns, node: cst.CSTNode, trim: Trim, scope: Scope | None) -> bool:
    """True when a size guard dominates ``node`` and the trim keeps clearly fewer messages than its threshold
    (or the guard cannot be read, as :meth:`Turns.guarded` decides). False when unguarded or a per-turn trim."""
    guard = _nearest_guard(turns, node)
    if guard is None:
        return False
    test, kind = guard
    threshold = _threshold(turns, test, trim.target, kind)
    if threshold is None:
        return True  # a guard of another shape: silent, as before
    if trim.single:
        return False  # drops one message whenever over the threshold: once full, every turn
    limit = _number(turns, threshold, scope)
    if trim.kept is not None:
        if _same(turns, trim.kept, threshold) or _near(turns, trim.kept, threshold):
            return False
        if _halved(turns, trim.kept, threshold):
            return True
        kept = _number(turns, trim.kept, scope)
        return kept is None or limit is None or kept <= limit / 2
    if trim.dropped is not None:
        dropped = _number(turns, trim.dropped, scope)
        return dropped is None or limit is None or dropped >= limit / 2
    return True


def _nearest_guard(turns: Turns, node: cst.CSTNode) -> tuple[cst.BaseExpression, str] | None:
    """The nearest size test dominating ``node``: ``(test, kind)``, kind ``if`` / ``while`` / ``else`` / ``exit``."""
    child = node
    for anc in turns.facts.ancestors(node):
        if isinstance(anc, (cst.If, cst.While, cst.IfExp)) and child is not anc.test and turns.is_size_guard(anc.test):
            in_else = child is getattr(anc, "orelse", None)
            return anc.test, ("else" if in_else else "while" if isinstance(anc, cst.While) else "if")
        if isinstance(anc, (cst.IndentedBlock, cst.Module)):
            for stmt in reversed(anc.body[: next((i for i, s in enumerate(anc.body) if s is child), 0)]):
                if isinstance(stmt, cst.If) and turns.is_size_guard(stmt.test) and ends_in_exit(stmt.body):
                    return stmt.test, "exit"
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            break
        child = anc
    return None


_EXITS = (cst.Return, cst.Continue, cst.Break, cst.Raise)


def ends_in_exit(body: cst.BaseSuite) -> bool:
    """The block ends in ``return`` / ``continue`` / ``break`` / ``raise`` (an early exit under a guard)."""
    if isinstance(body, cst.IndentedBlock) and body.body:
        last = body.body[-1]
        if isinstance(last, cst.SimpleStatementLine):
            return any(isinstance(s, _EXITS) for s in last.body)
    if isinstance(body, cst.SimpleStatementSuite):
        return any(isinstance(s, _EXITS) for s in body.body)
    return False


def _threshold(turns: Turns, test: cst.BaseExpression, target: cst.BaseExpression, kind: str) -> cst.BaseExpression | None:
    """``T`` of ``measure > T`` (``T < measure``; reversed for an early exit or an else branch) where ``measure``
    mentions ``target``; None for any other test, or a threshold of at most 2 (an emptiness test)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    op, right, left = type(test.comparisons[0].operator), test.comparisons[0].comparator, test.left
    if _mentions(turns, right, target) and not _mentions(turns, left, target):
        left, right, op = right, left, _FLIP.get(op)
    if not _mentions(turns, left, target) or _mentions(turns, right, target) or op is None:
        return None
    over = op in _OVER if kind in ("if", "while") else op in _UNDER
    value = int_value(right)
    if not over or (value is not None and value <= _SMALL):
        return None
    return right


def _mentions(turns: Turns, expr: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """``expr`` reads ``target`` (``len(self.messages)``, ``tokens(history)``), compared as source text."""
    name = _text(turns, target)
    return any(_text(turns, n) == name for n in descendants(expr, (cst.Name, cst.Attribute, cst.Subscript)))


def _number(turns: Turns, expr: cst.BaseExpression, scope: Scope | None) -> int | None:
    """An integer literal, or a name bound once to one (a module constant ``MAX_HISTORY = 10``)."""
    value = int_value(expr)
    if value is None and isinstance(expr, cst.Name) and scope is not None:
        bindings = turns.index.lookup(expr.value, scope)[1]
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            value = int_value(bindings[0].value)
    return value


def _text(turns: Turns, expr: cst.CSTNode) -> str:
    text = "".join(turns.flow.code(expr).split())
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    return text


def _same(turns: Turns, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    return _text(turns, a) == _text(turns, b)


def _near(turns: Turns, kept: cst.BaseExpression, threshold: cst.BaseExpression) -> bool:
    """``T - 1``, ``T + 2``: the kept size within a few messages of the threshold."""
    if isinstance(kept, cst.BinaryOperation) and isinstance(kept.operator, (cst.Add, cst.Subtract)):
        small = int_value(kept.right)
        return small is not None and abs(small) <= _SMALL and _same(turns, kept.left, threshold)
    return False


def _halved(turns: Turns, kept: cst.BaseExpression, threshold: cst.BaseExpression) -> bool:
    """``T // 2``, ``T / 3``: a fixed fraction of at most half the threshold."""
    if isinstance(kept, cst.BinaryOperation) and isinstance(kept.operator, (cst.FloorDivide, cst.Divide)):
        divisor = int_value(kept.right)
        return divisor is not None and divisor >= 2 and _same(turns, kept.left, threshold)
    return False
