"""Anthropic cache breakpoints as written in a request literal.

Anthropic caches the prefix up to each block carrying ``cache_control``, in
the order tools -> system -> messages ("Prompt caching", Anthropic docs:
"the cache prefix is created in the order tools, system, messages").
A value that changes per call or per user in a block at or before the last
breakpoint makes that breakpoint's prefix unique to the call or the user.

This module reads the literal lists of one call and lists the message blocks
that sit at or before the last ``cache_control`` marker. Blocks it cannot see
(a history spliced in with ``*history``) count as positions without markers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.dict_view import entry
from promptcache.lint.request_view import Request, request_of
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope
    from promptcache.lint.sinks import Sink


def has_cache_control(node: cst.CSTNode | None) -> bool:
    """True for a dict literal with a ``"cache_control"`` key, or an SDK param call with a ``cache_control=``
    keyword (``TextBlockParam(..., cache_control=...)``: :mod:`promptcache.lint.dict_view`)."""
    return entry(node, "cache_control") is not None


def _literal_list(flow: FlowAnalysis, expr: cst.BaseExpression | None, scope: Scope):
    """The list literal ``expr`` is, or is bound to once; None when unknown."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        return expr, scope
    if isinstance(expr, cst.Name):
        _, bindings = flow.index.lookup(expr.value, scope)
        assigns = [b for b in bindings if b.kind == "assign"]
        if len(assigns) == 1 and isinstance(assigns[0].value, (cst.List, cst.Tuple)):
            return assigns[0].value, assigns[0].scope
    return None


def message_blocks_before_last_breakpoint(flow: FlowAnalysis, sink: Sink) -> list[tuple[cst.CSTNode, Scope]]:
    """Message blocks (or whole message contents) at or before the last ``cache_control`` of ``sink``.

    Returns ``[(block expression, scope)]`` in request order; empty when the
    call has no visible marker or no visible message blocks before it. The
    ``tools`` / ``system`` / ``messages`` are keywords or entries of the
    ``**params`` dict the call sends (:mod:`promptcache.lint.request_view`),
    read when they have one value on every run.
    """
    req = request_of(flow, sink.call)
    if req is None:
        return []

    def sent(part: str):
        value = req.value(part)
        return _literal_list(flow, value.expr, value.scope) if value is not None and value.expr is not None else None
    positions: list[tuple[str, cst.CSTNode | None, Scope, bool]] = []
    for part in ("tools", "system"):
        found = sent(part)
        if found is None:
            continue
        lst, scope = found
        for el in lst.elements:
            value = el.value
            positions.append((part, value, scope, has_cache_control(value)))
    found = sent("messages")
    if found is not None:
        lst, scope = found
        for el in lst.elements:
            message = el.value
            if isinstance(el, cst.StarredElement):
                positions.append(("messages", None, scope, False))
                continue
            content = entry(message, "content")
            blocks = _literal_list(flow, content, scope)
            if blocks is not None:
                for block in blocks[0].elements:
                    positions.append(("messages", block.value, blocks[1], has_cache_control(block.value)))
            elif content is not None:
                positions.append(("messages", content, scope, has_cache_control(message)))
    last = max((i for i, p in enumerate(positions) if p[3]), default=-1)
    return [(node, scope) for part, node, scope, _ in positions[: last + 1] if part == "messages" and node is not None]


def system_blocks_after_last_breakpoint(flow: FlowAnalysis, sink: Sink) -> set[int]:
    """``id`` of the ``system=`` blocks after the last ``cache_control`` of ``sink``'s request.

    Anthropic caches nothing past the last breakpoint, so what changes there costs no cache entry. Only
    when nothing can mark a later place, and when unsure the answer is "none": not with a top-level
    ``cache_control=`` (automatic caching puts a breakpoint after the messages); not when any
    ``"cache_control"`` string of the module is outside this call's ``tools=`` / ``system=`` list literals (a
    marker added to a message at run time would put the system blocks before it); not when the messages are
    built by a call the module cannot see into (``history = mark_last(history)``: an imported helper may mark
    them; issue 11 review).
    """
    req = request_of(flow, sink.call)
    if req is None:
        return set()
    system, tools, messages = (_one(req, name) for name in ("system", "tools", "messages"))
    if system is None or tools is None or messages is None or _one(req, "cache_control") != ():
        return set()  # an option the code does not show (an escaping `**params` dict), or top-level caching
    found = _literal_list(flow, *system) if system else None
    if found is None or _opaque_messages(flow, *(messages or (None, sink.scope))):
        return set()
    blocks = [el.value for el in found[0].elements]
    marked = [i for i, b in enumerate(blocks) if has_cache_control(b)]
    if not marked:
        return set()
    lists = [found[0]] + [x[0] for x in [_literal_list(flow, *tools) if tools else None] if x is not None]
    inside = {id(n) for lst in lists for n in _strings(lst)}
    if any(id(n) not in inside for n in _strings(flow.module)):
        return set()
    return {id(b) for b in blocks[marked[-1] + 1:]}


_COPIES = frozenset({"list", "tuple", "copy.copy", "copy.deepcopy"})


def _one(req: Request, name: str) -> tuple | None:
    """``(expression, scope)`` of the one value option ``name`` has (keyword or ``**params`` entry); ``()`` when
    it is not sent; None when the code does not show it or it may take several values."""
    value = req.value(name)
    if value is None:
        return None
    return () if value.expr is None else (value.expr, value.scope)


def _opaque_messages(flow: FlowAnalysis, messages: cst.BaseExpression | None, scope: Scope) -> bool:
    """True when ``messages`` (or a local name it reads, through its bindings) is built by a call other than
    a copy: a helper this module does not define may add a ``cache_control`` marker."""
    pending = [(messages, scope)]
    seen: set[int] = set()
    while pending:
        expr, scope = pending.pop()
        if expr is None or id(expr) in seen or len(seen) > 50:
            continue
        seen.add(id(expr))
        for call in descendants(expr, cst.Call):
            name = flow.index.qualified(call.func, scope) or ""
            if name not in _COPIES and not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "copy"):
                return True
        for n in descendants(expr, cst.Name):
            found, bindings = flow.index.lookup(n.value, scope)
            if found is not None and found.kind == "function":
                pending += [(b.value, b.scope) for b in bindings if b.kind in ("assign", "walrus", "aug", "mutate")]
    return False


def _strings(node: cst.CSTNode) -> list[cst.SimpleString]:
    """The ``"cache_control"`` string literals under ``node``."""
    return [n for n in descendants(node, cst.SimpleString) if n.value[1:-1] == "cache_control"]
