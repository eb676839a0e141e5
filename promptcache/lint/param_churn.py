"""Request options that change between calls over one conversation (PC306, PC501-PC503).

Anthropic hashes the tools into the whole prefix and ``tool_choice`` and the
thinking settings into the message blocks (provider-cache-rules.md,
"Invalidation levels"); a cache entry is also per model. So two requests that
send the same history with a different ``model=`` / ``tools=`` /
``tool_choice=`` / ``thinking=`` share nothing past the point that option
invalidates, however equal their messages are.

Facts this module gives the rules (each rule decides what is its finding):

- :func:`shared_pairs`: pairs of sinks in one function that send the same
  history (lint-rules.md, "Shared history": their ``messages=`` / ``input=``
  resolve to the same binding) and can both run over it: one after the other,
  in a loop, or in two branches of an ``if`` on per-call data when the history
  outlives the call (a ``self`` attribute, or a parameter the function
  appends to). A call in an ``except`` handler (a fallback on error) and two
  calls of different APIs (another provider is another cache) are not paired.
- :func:`value_key`: a comparable key for an option's value when it is a
  literal or a name bound once to one (``None`` when not known: unknown
  values are never compared).
- :func:`varying`: the values one call site takes on different calls over one
  history (a conditional on per-call data, a name rebound to different
  literals in the loop that holds the call, a request dict entry written under
  an ``if`` on per-call data or later in the loop).

Requests are read through :mod:`promptcache.lint.request_view`, so a request
built as a dict and sent as ``**params`` counts as one written with keywords;
an option the code does not show is unknown, never "not passed".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.expressions import evaluated
from promptcache.lint.index import Scope
from promptcache.lint.request_view import Request, requests
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis

ABSENT = "<absent>"
_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float, cst.Dict, cst.List, cst.Tuple, cst.Name,
             cst.UnaryOperation)


@dataclass(frozen=True)
class Pair:
    """Two requests of one function that send the same ``history`` (source text); ``later`` comes second in the file."""

    earlier: Request
    later: Request
    history: str


def _refs(flow: FlowAnalysis, req: Request) -> set:
    out: set = set()
    for _, v in req.conversation():
        out |= flow.turns.list_refs(v.expr, v.scope)
    return out


def history_name(flow: FlowAnalysis, req: Request) -> str:
    conv = req.conversation()
    return flow.code(conv[0][1].expr) if conv else "the history"


def in_handler(flow: FlowAnalysis, node: cst.CSTNode) -> bool:
    """True inside an ``except`` handler of its function (a fallback path)."""
    for anc in flow.facts.ancestors(node):
        if isinstance(anc, cst.ExceptHandler):
            return True
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            return False
    return False


def persistent(flow: FlowAnalysis, req: Request) -> bool:
    """True when the history ``req`` sends outlives one call of its function: a ``self`` attribute,
    or a parameter of the function that the function appends to (the caller keeps the conversation)."""
    holder = flow.holder_of(req.scope)
    for _, v in req.conversation():
        for ref in flow.turns.list_refs(v.expr, v.scope):
            kind, owner, name = ref
            if kind == "a":
                return True
            if holder is not None and owner == id(holder) and name in holder.params:
                if any(b.kind == "mutate" for b in holder.bindings.get(name, [])):
                    return True
    return False


def _branching(flow: FlowAnalysis, a: cst.CSTNode, b: cst.CSTNode) -> cst.If | None:
    """The ``if`` whose two branches hold ``a`` and ``b`` (only one of them runs per call), or None."""
    chain_a = {id(x): child for child, x in _pairs(flow, a)}
    for child, anc in _pairs(flow, b):
        if id(anc) in chain_a and isinstance(anc, cst.If):
            other = chain_a[id(anc)]
            if anc.orelse is not None and {id(other), id(child)} == {id(anc.body), id(anc.orelse)}:
                return anc
            return None
    return None


def _pairs(flow: FlowAnalysis, node: cst.CSTNode):
    child = node
    for anc in flow.facts.ancestors(node):
        yield child, anc
        child = anc


def shared_pairs(flow: FlowAnalysis) -> list[Pair]:
    """Every pair of requests of one function that send the same history and can both run over it."""
    def summary_call(req: Request) -> bool:
        return flow.sinks.asks_to_summarise(req.call, req.scope)

    by_holder: dict[int, list[Request]] = {}
    for req in requests(flow):
        holder = flow.holder_of(req.scope)
        if holder is not None and not in_handler(flow, req.call):
            by_holder.setdefault(id(holder), []).append(req)
    out = []
    for sinks in by_holder.values():
        sinks.sort(key=lambda s: flow.facts.order.get(s.call, 0))
        refs = {id(s): _refs(flow, s) for s in sinks}
        for i, later in enumerate(sinks):
            for earlier in sinks[:i]:
                if earlier.api != later.api or not (refs[id(earlier)] & refs[id(later)]):
                    continue  # another provider is another cache anyway (a per-deployment choice)
                if summary_call(earlier) or summary_call(later):
                    continue  # a side-call asking to summarise has a prefix of its own (newcomer helper-97)
                branch = _branching(flow, earlier.call, later.call)
                if branch is not None and not (
                        (persistent(flow, later) or flow.facts.loop_of(later.call) or flow.facts.loop_of(earlier.call))
                        and _per_call_names(flow, branch.test, later.scope, None)):
                    continue  # one branch runs per conversation, or the choice is per process (self.x, a constant)
                out.append(Pair(earlier, later, history_name(flow, later)))
                break
    return out


def together(flow: FlowAnalysis, pair: Pair) -> bool:
    """True when the two calls of ``pair`` send different lists (``history + [title_request]`` and
    ``history``) and both run on every pass (no ``if`` or ``try`` holds one but not the other): each call then
    sees every turn's prefix, so each keeps its own cache warm (a consistent two-model pattern)."""
    texts = {flow.code(v.expr) for s in (pair.earlier, pair.later) for _, v in s.conversation()[:1]}
    if len(texts) < 2:
        return False
    guards = (cst.If, cst.IfExp, cst.Try, cst.ExceptHandler, cst.While, cst.For)

    def held(node: cst.CSTNode) -> set[int]:
        out = set()
        for anc in flow.facts.ancestors(node):
            if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
                break
            if isinstance(anc, guards):
                out.add(id(anc))
        return out
    return held(pair.earlier.call) == held(pair.later.call)


def resolve(flow: FlowAnalysis, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> tuple[cst.BaseExpression, Scope] | None:
    """The literal ``expr`` is, or that the name or ``self.attr`` it reads is bound to once; None when not known."""
    if depth > 4:
        return None
    if isinstance(expr, cst.Name) and expr.value not in ("None", "True", "False"):
        bindings = flow.index.lookup(expr.value, scope)[1]
    elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        cls = flow.index.class_of_receiver(expr.value, scope)
        bindings = cls.attrs.get(expr.attr.value, []) if cls is not None else []
        if not bindings:
            return None
    else:
        return (expr, scope) if isinstance(expr, _LITERALS) and evaluated(flow.code(expr), ABSENT) is not ABSENT else None
    if len(bindings) != 1 or bindings[0].kind != "assign":
        return None
    return resolve(flow, bindings[0].value, bindings[0].scope, depth + 1)


def value_key(flow: FlowAnalysis, expr: cst.BaseExpression | None, scope: Scope) -> str | None:
    """A comparable key for an option value: :data:`ABSENT` when not passed, the canonical JSON of its
    literal value (through names bound once), or None when the value is not known statically."""
    if expr is None:
        return ABSENT
    found = resolve(flow, expr, scope)
    if found is None:
        return None
    return json.dumps(evaluated(flow.code(found[0]), ABSENT), sort_keys=True, default=repr)


def _per_call_names(flow: FlowAnalysis, test: cst.CSTNode, scope: Scope, loop: cst.CSTNode | None,
                    ignore: frozenset[str] = frozenset()) -> bool:
    """True when ``test`` reads a name that can differ between calls over one history: inside a loop, a name
    bound in the loop; otherwise a parameter or local of the function (not a module or class constant).
    Names in ``ignore`` do not count (:func:`_model_names`)."""
    holder = flow.holder_of(scope)
    for n in descendants(test, cst.Name):
        found, bindings = flow.index.lookup(n.value, scope)
        if found is None or found.kind != "function" or found is not holder or n.value == holder.self_name or n.value in ignore:
            continue  # `self.fast`: set once per object, not per call
        if loop is None or any(flow.facts.within(b.node, loop) for b in bindings):
            return True
    return False


def varying(flow: FlowAnalysis, req: Request, name: str, key=None) -> list[str]:
    """The distinct known values one request sends as option ``name`` over one history on different calls (empty:
    one value, or not known). Needs a history that outlives the call (the call in a loop, or :func:`persistent`),
    and a value that is a conditional on per-call data, a local rebound to different literals (in the loop), or a
    request dict entry written under an ``if`` on per-call data (or after the call in the loop). Only values
    written in the function holding the call are judged. ``key(expr, scope)`` gives the comparable value
    (default :func:`value_key`)."""
    values = req.values(name)
    holder = flow.holder_of(req.scope)
    if not values or any(v.unseen or v.expr is not None and flow.holder_of(v.scope) is not holder for v in values):
        return []
    loop = flow.facts.loop_of(req.call)
    if loop is None and not persistent(flow, req):
        return []
    ignore = _model_names(req) if name != "model" else frozenset()
    candidates: list[tuple[cst.BaseExpression | None, Scope]] = []
    if len(values) > 1:
        if not all(v.guard is None or _varies(flow, req, v, loop, ignore) for v in values) or all(v.guard is None for v in values):
            return []
        candidates = [(v.expr, v.scope) for v in values]
    expr, scope = values[0].expr, values[0].scope
    if expr is None and not candidates:
        return []
    if isinstance(expr, cst.Name) and not candidates:
        found, bindings = flow.index.lookup(expr.value, scope)
        if found is None or found is not flow.holder_of(scope) or any(b.kind != "assign" for b in bindings):
            return []
        if len(bindings) == 1:
            expr, scope = bindings[0].value, bindings[0].scope
        else:
            if loop is not None and not any(flow.facts.within(b.node, loop) for b in bindings):
                return []
            candidates = [(b.value, b.scope) for b in bindings]
    if isinstance(expr, cst.IfExp) and not candidates:
        if not _per_call_names(flow, expr.test, scope, loop, ignore):
            return []
        candidates = [(expr.body, scope), (expr.orelse, scope)]
    elif isinstance(expr, cst.Dict) and not candidates:
        candidates = _nested_branches(flow, expr, scope, loop, ignore)
    key = key or (lambda e, s: value_key(flow, e, s))
    keys = [key(e, s) for e, s in candidates]
    if not keys or any(k is None for k in keys):
        return []
    distinct = list(dict.fromkeys(keys))
    return distinct if len(distinct) > 1 else []


def _varies(flow: FlowAnalysis, req: Request, v, loop, ignore: frozenset[str]) -> bool:
    """True when the guard of a conditional dict write picks per call: an ``if`` on per-call data, or the loop
    holding the call (a write after the call, seen from the next pass on)."""
    if isinstance(v.guard, (cst.For, cst.While)):
        return loop is not None and flow.facts.within(req.call, v.guard)
    return isinstance(v.guard, cst.BaseExpression) and _per_call_names(flow, v.guard, v.scope, loop, ignore) \
        and not _caller_option(flow, v)


def _caller_option(flow: FlowAnalysis, v) -> bool:
    """``if "tools" in kwargs: params["tools"] = kwargs["tools"]``: the guard reads only parameters of the function
    and the value is read from one of them: the caller's option passed on (a wrapper: TaskWeaver's
    ``chat_completion(messages, **kwargs)``). Whether it changes over a conversation is the caller's to show."""
    guard_names = [n for n in descendants(v.guard, cst.Name) if flow.index.lookup(n.value, v.scope)[0] is not None]
    if not guard_names or v.expr is None:
        return False
    params = set()
    for n in guard_names:
        bindings = flow.index.lookup(n.value, v.scope)[1]
        if not bindings or any(b.kind != "param" for b in bindings):
            return False
        params.add(n.value)
    return any(n.value in params for n in descendants(v.expr, cst.Name))


def _model_names(req: Request) -> frozenset[str]:
    """The names the request's ``model=`` reads: a setting chosen by a test on them (``thinking`` only for
    models that support it) changes only when the model does, which is PC501's finding, not a churn of its own."""
    return frozenset(n.value for v in req.values("model") if v.expr is not None for n in descendants(v.expr, cst.Name))


def _nested_branches(flow: FlowAnalysis, expr: cst.Dict, scope: Scope, loop,
                     ignore: frozenset[str] = frozenset()) -> list[tuple[cst.BaseExpression, Scope]]:
    """The two versions of a dict whose one conditional value reads per-call data
    (``reasoning={"effort": "high" if hard else "low"}``; issue 11 review, snips3/v_effort.py): the dict with the
    conditional replaced by each branch. Empty for none or several such conditionals (not enumerated)."""
    tests = [e for el in expr.elements if isinstance(el, cst.DictElement)
             for e in descendants(el.value, cst.IfExp) if _per_call_names(flow, e.test, scope, loop, ignore)]
    if len(tests) != 1:
        return []
    cond = tests[0]
    return [(expr.deep_replace(cond, cond.body), scope), (expr.deep_replace(cond, cond.orelse), scope)]


def keyword_node(flow: FlowAnalysis, req: Request, name: str) -> cst.CSTNode:
    """Where to report option ``name`` of ``req``: its (last) value when written in the function holding the
    call, else the call."""
    holder = flow.holder_of(req.scope)
    for v in reversed(req.values(name)):
        if v.expr is not None and flow.holder_of(v.scope) is holder:
            return v.expr
    return req.call


__all__ = ["ABSENT", "Pair", "history_name", "keyword_node", "persistent", "shared_pairs", "together", "value_key", "varying"]
