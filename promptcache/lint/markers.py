"""The cache breakpoints of one Anthropic request, as the code writes them (PC601-PC604).

Anthropic renders ``tools`` -> ``system`` -> ``messages`` (content blocks in
order) and writes a cache entry only at a block carrying ``cache_control``;
a top-level ``cache_control=`` turns on automatic caching (one breakpoint at
the last cacheable block); at most 4 breakpoints per request, more is an
HTTP 400; below the model's minimum cacheable length nothing is cached and no
error is returned (provider-cache-rules.md, "Anthropic").

:func:`layout` lists the blocks a call sends, in that order, as far as the code
shows them (a name bound once to a list literal is followed; a spliced
``*history`` is one block of unknown content); :func:`loop_markers` finds the
markers made in loops; :func:`leaked_markers` finds markers set on dicts
shared with a stored history; :func:`static_text` gives the literal text of a
block for sizing. Requests come from :mod:`promptcache.lint.request_view`: a request
built as a dict and sent as ``**params`` is read like one written with keywords,
and one whose tools / system / messages / ``extra_body`` the code does not show
(an unreadable ``**kwargs``, a key set to different values on different paths)
is :attr:`Layout.opaque`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.breakpoints import has_cache_control
from promptcache.lint.dict_view import is_block
from promptcache.lint.expressions import evaluated, key_text
from promptcache.lint.index import Scope
from promptcache.lint.request_view import Request, is_anthropic, requests
from promptcache.lint.dict_view import entry as dict_value
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis

CHARS_PER_TOKEN = 4  # the catalogue's estimate (lint-rules.md, PC604): about 4 characters a token
KEY = "cache_control"
_COPIES = ("list", "copy.copy", "tuple")


@dataclass(eq=False)
class Block:
    """One block of a request. ``node`` is None for blocks the code does not show (a spliced list);
    ``text`` is the block's literal text (JSON for a tool) or None; ``inline`` is True when that text is
    written inside the call itself."""

    part: str
    node: cst.BaseExpression | None
    scope: Scope
    marked: bool = False
    text: str | None = None
    inline: bool = False


@dataclass(eq=False)
class Layout:
    """The blocks of one call in render order, and what else can add breakpoints."""

    sink: Request
    blocks: list[Block] = field(default_factory=list)
    top_level: bool = False  # cache_control= on the request: automatic caching
    opaque: bool = False  # an unreadable **kwargs, extra_body, or a part set differently on different paths

    @property
    def marked(self) -> list[Block]:
        return [b for b in self.blocks if b.marked]


def static_text(flow: FlowAnalysis, expr: cst.BaseExpression | None, scope: Scope, call: Request) -> tuple[str | None, bool]:
    """``(text, inline)``: the literal string ``expr`` is (or a name bound once, at module level, to one),
    and whether it is written inside the request (the call, or the dict that builds it); ``(None, False)``
    when not known."""
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
        value = evaluated(flow.code(expr))
        return (value, call.written_in(flow, expr)) if isinstance(value, str) else (None, False)
    if isinstance(expr, cst.Name):
        found, bindings = flow.index.lookup(expr.value, scope)
        if found is not None and found.kind == "module" and len(bindings) == 1 and bindings[0].kind == "assign":
            text, _ = static_text(flow, bindings[0].value, found, call)
            return text, False
    return None, False


def _list(flow: FlowAnalysis, expr: cst.BaseExpression | None, scope: Scope):
    """The list literal ``expr`` is, or a local name is bound to once and never appended to; else None."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        return expr, scope
    if isinstance(expr, cst.Name):
        _, bindings = flow.index.lookup(expr.value, scope)
        if len(bindings) == 1 and bindings[0].kind == "assign" and isinstance(bindings[0].value, (cst.List, cst.Tuple)):
            return bindings[0].value, bindings[0].scope
    return None


def _block(flow: FlowAnalysis, part: str, node: cst.BaseExpression, scope: Scope, call: Request) -> Block:
    if is_block(node):  # a dict literal, or an SDK param call (`TextBlockParam(...)`)
        if part == "tools":
            value = evaluated(flow.code(node))
            text = repr(value) if isinstance(value, dict) else None
            return Block(part, node, scope, has_cache_control(node), text, text is not None and call.written_in(flow, node))
        text, inline = static_text(flow, dict_value(node, "text"), scope, call)
        return Block(part, node, scope, has_cache_control(node), text, inline)
    text, inline = static_text(flow, node, scope, call)
    return Block(part, node, scope, False, text, inline)


def anthropic_requests(flow: FlowAnalysis) -> list[Request]:
    """The Anthropic Messages calls of the file (none when it is not an LLM file): where markers matter."""
    return [req for req in requests(flow) if is_anthropic(req)] if flow.is_llm_file else []


def layout(flow: FlowAnalysis, sink: Request) -> Layout:
    """The blocks ``sink`` sends (tools, system, messages), in render order."""
    call = sink
    parts = {p: sink.value(p) for p in ("tools", "system", "messages", KEY, "extra_body")}
    out = Layout(sink, top_level=any(v.expr is not None for v in sink.values(KEY)),
                 opaque=sink.opaque or any(v is None or p == "extra_body" and v.expr is not None for p, v in parts.items()))
    for part in ("tools", "system"):
        v = parts[part]
        if v is None or v.expr is None:
            continue
        expr, scope = v.expr, v.scope
        found = _list(flow, expr, scope)
        if found is None:
            text, inline = static_text(flow, expr, scope, call)
            out.blocks.append(Block(part, expr if text is not None else None, scope, False, text, inline))
            continue
        lst, scope = found
        for el in lst.elements:
            if isinstance(el, cst.StarredElement):
                out.blocks.append(Block(part, None, scope))
            else:
                out.blocks.append(_block(flow, part, el.value, scope, call))
    messages = parts["messages"]
    found = _list(flow, messages.expr, messages.scope) if messages is not None else None
    if found is None:
        if messages is None or messages.expr is not None:
            out.blocks.append(Block("messages", None, sink.scope))
        return out
    lst, scope = found
    for el in lst.elements:
        message = el.value
        if isinstance(el, cst.StarredElement) or not is_block(message):
            out.blocks.append(Block("messages", None, scope))
            continue
        content = dict_value(message, "content")
        blocks = _list(flow, content, scope)
        if blocks is not None:
            for item in blocks[0].elements:
                if isinstance(item, cst.StarredElement):
                    out.blocks.append(Block("messages", None, blocks[1]))
                else:
                    out.blocks.append(_block(flow, "messages", item.value, blocks[1], call))
        elif content is not None:
            text, inline = static_text(flow, content, scope, call)
            out.blocks.append(Block("messages", content, scope, False, text, inline))
    return out


def _feeding(flow: FlowAnalysis, sink: Request) -> list[tuple[cst.CSTNode, Scope]]:
    """The expressions that build what ``sink`` sends: its tools/system/messages values and, for names
    among them, every value bound or appended to the name."""
    out: list[tuple[cst.CSTNode, Scope]] = []
    for part in ("tools", "system", "messages"):
        for v in sink.values(part):
            if v.expr is not None:
                out += _fed(flow, v.expr, v.scope)
    return out


def _fed(flow: FlowAnalysis, expr: cst.BaseExpression, scope: Scope) -> list[tuple[cst.CSTNode, Scope]]:
    """``expr`` and every value bound or appended to a local name in it."""
    out: list[tuple[cst.CSTNode, Scope]] = [(expr, scope)]
    for name in descendants(expr, cst.Name):
        found, bindings = flow.index.lookup(name.value, scope)
        if found is not None and found.kind == "function":
            out += [(b.value, b.scope) for b in bindings if b.kind in ("assign", "mutate") and b.value is not None]
    return out


def bound(flow: FlowAnalysis, iterable: cst.BaseExpression) -> int | None:
    """How many times a loop over ``iterable`` runs when the code fixes it (a literal list, ``x[-2:]``,
    ``range(3)``); None when it depends on the data (a history)."""
    if isinstance(iterable, (cst.List, cst.Tuple)) and not any(isinstance(e, cst.StarredElement) for e in iterable.elements):
        return len(iterable.elements)
    if isinstance(iterable, cst.Subscript) and len(iterable.slice) == 1 and isinstance(iterable.slice[0].slice, cst.Slice):
        s = iterable.slice[0].slice
        lower = evaluated(flow.code(s.lower)) if s.lower is not None else None
        if s.upper is None and s.step is None and isinstance(lower, int) and lower < 0:
            return -lower
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in ("range", "enumerate", "reversed"):
        if iterable.args and iterable.func.value == "range" and len(iterable.args) == 1:
            value = evaluated(flow.code(iterable.args[0].value))
            return value if isinstance(value, int) else None
        if iterable.args and iterable.func.value != "range":
            return bound(flow, iterable.args[0].value)
    return None


def loop_markers(flow: FlowAnalysis, sink: Request, seen: set[int]) -> tuple[int, list[cst.BaseExpression]]:
    """Markers made outside the visible blocks of ``sink`` (``seen``: ids of those): ``(count, unbounded)``.
    ``count`` adds the markers made once or in loops of fixed length; ``unbounded`` lists the marker dicts made
    unconditionally in a loop over data (once per history message). A marker under an ``if`` is not counted."""
    count = 0
    unbounded: list[cst.BaseExpression] = []
    done: set[int] = set(seen)
    for expr, _scope in _feeding(flow, sink):
        for d in descendants(expr, (cst.Dict, cst.Call)):  # dict literals and SDK param calls
            if id(d) in done or not has_cache_control(d):
                continue
            done.add(id(d))
            times = _times(flow, d)
            if times is None:
                unbounded.append(d)
            elif times > 0:
                count += times
    return count, unbounded


def _times(flow: FlowAnalysis, node: cst.CSTNode) -> int | None:
    """How many times ``node`` is built per call: 0 under a condition, None in a loop over data."""
    times = 1
    child = node
    for anc in flow.facts.ancestors(node):
        if isinstance(anc, (cst.If, cst.IfExp)) and child is not anc.test:
            return 0
        if isinstance(anc, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            comp = anc.for_in
            if comp.ifs:
                return 0
            n = bound(flow, comp.iter)
            if n is None:
                return None
            times *= n
        if isinstance(anc, cst.For):
            n = bound(flow, anc.iter)
            if n is None:
                return None
            times *= n
        if isinstance(anc, cst.While):
            return None
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            break
        child = anc
    return times


def count(flow: FlowAnalysis, sink: Request) -> tuple[int, list[cst.BaseExpression], Layout]:
    """``(fixed markers, markers made per history message, layout)`` of one call."""
    lay = layout(flow, sink)
    seen = {id(b.node) for b in lay.blocks if b.node is not None}
    extra, unbounded = loop_markers(flow, sink, seen)
    return len(lay.marked) + extra + (1 if lay.top_level else 0), unbounded, lay


def _root(flow: FlowAnalysis, target: cst.BaseExpression, scope: Scope, depth: int = 0):
    """The name or ``self.attr`` whose element ``target`` writes into (through subscripts and ``for`` targets)."""
    while isinstance(target, cst.Subscript):
        target = target.value
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and flow.index.class_of_receiver(target.value, scope):
        return target
    if isinstance(target, cst.Name) and depth < 4:
        found, bindings = flow.index.lookup(target.value, scope)
        loops = [b for b in bindings if b.kind != "mutate"]
        if found is not None and found.kind == "function" and len(loops) == 1 and loops[0].kind == "for":
            return _root(flow, loops[0].value, loops[0].scope, depth + 1)
        return target
    return None


def _shallow_copy_of(flow: FlowAnalysis, value: cst.BaseExpression, scope: Scope) -> cst.BaseExpression | None:
    """``X`` when ``value`` is ``list(X)``, ``X.copy()``, ``X[:]``, ``[*X]`` or ``copy.copy(X)``."""
    if isinstance(value, cst.Call):
        name = flow.index.qualified(value.func, scope) or ""
        if name in _COPIES and len(value.args) == 1:
            return value.args[0].value
        if isinstance(value.func, cst.Attribute) and value.func.attr.value == "copy" and not value.args:
            return value.func.value
    if isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Slice):
        s = value.slice[0].slice
        if s.lower is None and s.upper is None:
            return value.value
    if isinstance(value, cst.List) and len(value.elements) == 1 and isinstance(value.elements[0], cst.StarredElement):
        return value.elements[0].value
    return None


def _field_written(target: cst.BaseExpression) -> str | None:
    """The message key a marker write passes through: ``"content"`` in ``msgs[-1]["content"][-1]``."""
    chain = []
    while isinstance(target, cst.Subscript):
        chain.append(target)
        target = target.value
    if len(chain) < 2 or not isinstance(chain[-2].slice[0].slice, cst.Index):
        return None
    return key_text(chain[-2].slice[0].slice.value)


def _shared_field_copy(value: cst.BaseExpression, key: str | None) -> cst.BaseExpression | None:
    """``X`` when ``value`` rebuilds each message of ``X`` with ``key`` taken over from the original
    (``[{"role": m["role"], "content": m["content"]} for m in X]``): the new dicts share that list, so a marker
    written into it lands in ``X`` too (issue 11 review, snips3/w_mark_last_copy.py)."""
    if not (key and isinstance(value, cst.ListComp) and isinstance(value.elt, cst.Dict)
            and isinstance(value.for_in.target, cst.Name) and value.for_in.inner_for_in is None):
        return None
    item = value.for_in.target.value
    for el in value.elt.elements:
        if isinstance(el, cst.DictElement) and key_text(el.key) == key:
            v = el.value
            if (isinstance(v, cst.Subscript) and isinstance(v.value, cst.Name) and v.value.value == item
                    and isinstance(v.slice[0].slice, cst.Index) and key_text(v.slice[0].slice.value) == key):
                return value.for_in.iter
    return None


def _kept(flow: FlowAnalysis, expr: cst.BaseExpression, scope: Scope, appended: bool = False) -> bool:
    """A list that outlives the call: a ``self`` attribute or a parameter of the function (with ``appended``,
    one the function appends to: the caller keeps the conversation)."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        return flow.index.class_of_receiver(expr.value, scope) is not None
    if isinstance(expr, cst.Name):
        found, bindings = flow.index.lookup(expr.value, scope)
        return (found is not None and found.kind == "function" and any(b.kind == "param" for b in bindings)
                and (not appended or any(b.kind == "mutate" and b.op in ("append", "extend") for b in bindings)))
    return False


def _is_key(node: cst.CSTNode | None) -> bool:
    return isinstance(node, cst.SimpleString) and node.value[1:-1] == KEY


def removes_markers(flow: FlowAnalysis) -> bool:
    """True when the module takes markers off again (``.pop("cache_control")``, ``del x["cache_control"]``)
    or deep-copies (``copy.deepcopy``): a marker set on a stored message does not stay there."""
    for call, scope in flow.index.calls:
        name = flow.index.qualified(call.func, scope) or ""
        if name.endswith("deepcopy"):
            return True
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "pop" and call.args and _is_key(call.args[0].value):
            return True
    for node, _ in flow.index.deletes:
        for sub in descendants(node, cst.Subscript):
            if any(_is_key(el.slice.value) for el in sub.slice if isinstance(el.slice, cst.Index)):
                return True
    return False


def leaked_markers(flow: FlowAnalysis) -> list[tuple[cst.CSTNode, str, str, str]]:
    """``(statement, written list, kept list, what the copy shares)`` for each ``x[...]["cache_control"] = ...``
    whose dict belongs to a kept history (a ``self`` attribute or a parameter), directly or through a shallow copy
    that nothing is appended to (or messages rebuilt around the original content lists): the marker stays in the
    stored history and the next turn adds another."""
    if removes_markers(flow):
        return []
    out = []
    for store in flow.index.stores:
        t = store.target
        if not (isinstance(t, cst.Subscript) and len(t.slice) == 1 and isinstance(t.slice[0].slice, cst.Index)
                and _is_key(t.slice[0].slice.value)):
            continue
        root = _root(flow, t.value, store.scope)
        if root is None:
            continue
        if _kept(flow, root, store.scope, appended=True):
            out.append((store.node, flow.code(root), flow.code(root), ""))
            continue
        if isinstance(root, cst.Name):
            found, bindings = flow.index.lookup(root.value, store.scope)
            assigns = [b for b in bindings if b.kind != "mutate" or b.op not in ("setitem", "update")]
            if found is None or found.kind != "function" or len(assigns) != 1 or assigns[0].kind != "assign":
                continue  # rebound, or a new message appended to the copy (the marker may go on it)
            source, shared = _shallow_copy_of(flow, assigns[0].value, assigns[0].scope), "the dicts are shared"
            if source is None:
                field = _field_written(t.value)
                source, shared = _shared_field_copy(assigns[0].value, field), f"each message's `{field}` is shared"
            if source is not None and _kept(flow, source, assigns[0].scope):
                out.append((store.node, flow.code(root), flow.code(source), shared))
    return out


__all__ = ["CHARS_PER_TOKEN", "Block", "Layout", "bound", "count", "layout", "leaked_markers", "static_text"]
