"""Text added to the system message of a conversation by a store (lint-rules.md, "Prefix slot").

``if messages[0]["role"] == "system": messages[0]["content"] += "\\n\\n" + knowledge`` (Qwen-Agent's
``_prepend_knowledge_prompt``, crewAI's ``LiteAgent`` memory block): under a test that the first message of a
conversation is the system message, what a store writes into its content is system-message text, a system slot
like the ``content`` of a ``{"role": "system", ...}`` literal. The forms read:

- targets ``h[0]["content"]`` and ``h[0].content``, written by ``=`` or ``+=``;
- tests ``h[0]["role"] == "system"``, ``h[0].get("role") == "system"``, ``h[0].role == "system"`` (``"developer"``
  too; the key and the role also as upper-case constants ``ROLE`` / ``SYSTEM``), the store in the ``if`` branch.

Only conversations a sink sends (:meth:`promptcache.lint.turns.Turns.is_history`); the index-0 message of an
Anthropic ``messages=`` list is a user message and never passes the role test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.history_edits import constant_index, field_name
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope

_SYSTEM_ROLES = ("system", "developer")


def system_content_stores(flow: FlowAnalysis) -> list[tuple[cst.BaseExpression, Scope]]:
    """``(value, scope)`` for each store into the content of a sent conversation's system message (``+=``: the
    text added; ``=``: the whole new content)."""
    out = []
    for store in flow.index.stores:
        target = store.target
        if store.value is None or field_name(target) != "content":
            continue
        first = target.value
        if not (isinstance(first, cst.Subscript) and constant_index(first) == 0):
            continue
        if flow.turns.is_history(first.value, store.scope) and _under_system_test(flow, store.node, flow.code(first)):
            out.append((store.value, store.scope))
    return out


def _under_system_test(flow: FlowAnalysis, node: cst.CSTNode, first: str) -> bool:
    """``node`` sits in the body of an ``if`` whose test says that ``first`` (``h[0]``) has the system role."""
    child = node
    for anc in flow.facts.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(anc, cst.If) and child is anc.body and _system_role_test(flow, anc.test, first):
            return True
        child = anc
    return False


def _system_role_test(flow: FlowAnalysis, test: cst.BaseExpression, first: str) -> bool:
    for cmp in descendants(test, cst.Comparison):
        if len(cmp.comparisons) != 1 or not isinstance(cmp.comparisons[0].operator, cst.Equal):
            continue
        sides = (cmp.left, cmp.comparisons[0].comparator)
        for role, other in (sides, sides[::-1]):
            if _is_text(other, _SYSTEM_ROLES) and _role_of(flow, role) == first:
                return True
    return False


def _role_of(flow: FlowAnalysis, e: cst.BaseExpression) -> str | None:
    """The code of ``h[0]`` for ``h[0]["role"]``, ``h[0][ROLE]``, ``h[0].get("role")`` or ``h[0].role``."""
    if isinstance(e, cst.Subscript) and len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Index):
        if _is_text(e.slice[0].slice.value, ("role",)):
            return flow.code(e.value)
    if isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute) and e.func.attr.value == "get" and e.args:
        if _is_text(e.args[0].value, ("role",)):
            return flow.code(e.func.value)
    if isinstance(e, cst.Attribute) and e.attr.value == "role":
        return flow.code(e.value)
    return None


def _is_text(e: cst.BaseExpression, words: tuple[str, ...]) -> bool:
    """A string literal among ``words``, or an upper-case constant of that name (``SYSTEM``, ``ROLE``)."""
    if isinstance(e, cst.SimpleString):
        return e.value[1:-1] in words
    return isinstance(e, cst.Name) and e.value.isupper() and e.value.lower() in words


__all__ = ["system_content_stores"]
