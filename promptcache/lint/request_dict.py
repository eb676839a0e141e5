"""What a request dict holds where it is sent as ``**params`` (PC306, PC501-PC503, PC601-PC604).

Real apps build the request body as a dict and call ``client.messages.create(**params)``. :func:`read` gives,
for each key, every value the dict may hold at the call, as far as the code shows it, from these shapes:

- a dict literal (``{"model": m, **BASE}``), ``dict(model=m, ...)`` or a copy of one (``base.copy()``,
  ``copy.deepcopy(base)``), bound once to a local or module name;
- item assignments ``params["tools"] = tools`` and ``params.update({...})`` / ``params.update(k=v)`` /
  ``params.pop("k")`` / ``del params["k"]`` in the function holding the dict, before the call (or later in a loop
  that holds the call, when the dict is built outside that loop);
- a same-module function or method that returns the dict (``params = self._params(messages)``); a value that is
  one of its parameters reads as the caller's argument.

Sound, not guessing: a write under an ``if`` (a loop, a ``try``) that the call does not sit in gives a second
possible value beside the earlier one (:attr:`Value.guard` holds the ``if`` test); a write in the other branch of
an ``if`` than the call is not seen by it. Whatever the code does not show is :attr:`Value.unseen`: a dict that
escapes before the call (passed to a function not known to only read it, stored, aliased, a method that is not
a plain read), a name bound more than once, a merge of something unreadable (``**kwargs``), a key that is not a
string literal. Where the rest of the dict is unseen, every key not written after it is unseen too.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.expressions import argument, evaluated
from promptcache.lint.index import Scope
from promptcache.lint.walk import iter_children

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis

_DEPTH = 4
_READ_METHODS = frozenset({"get", "keys", "items", "values", "copy", "__contains__", "__getitem__", "__len__"})
_READERS = frozenset({"len", "str", "repr", "print", "bool", "dict", "list", "sorted", "isinstance", "id", "hash", "type",
                      "json.dumps", "copy.copy", "copy.deepcopy", "pprint.pprint", "pprint.pformat"})
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})
_GUARDS = (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.ExceptHandler, cst.Match, cst.BooleanOperation,
           cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


@dataclass(frozen=True, eq=False)
class Value:
    """One value a key may hold. ``expr`` None: the key is not set (``unseen`` False) or not known (``unseen``
    True). ``guard``: the ``if`` test (or the loop / ``try`` / ``return``) a conditional write sits under; None
    for a value the dict always holds once it is written."""

    expr: cst.BaseExpression | None
    scope: Scope
    guard: cst.CSTNode | None = None
    unseen: bool = False

    @property
    def absent(self) -> bool:
        return self.expr is None and not self.unseen


@dataclass(eq=False)
class Content:
    """The keys of a dict: ``entries[key]`` its possible values, ``rest`` those of any key not listed; ``nodes``
    the dict literals and writes that build it (the text written "in the request")."""

    scope: Scope
    entries: dict[str, list[Value]] = field(default_factory=dict)
    rest: list[Value] = field(default_factory=list)
    nodes: list[cst.CSTNode] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.rest:
            self.rest = [Value(None, self.scope)]

    def get(self, key: str) -> list[Value]:
        return self.entries.get(key, self.rest)

    def merge(self, other: Content, guard: cst.CSTNode | None = None) -> None:
        """Apply ``other`` on top (``{**self, **other}``); with ``guard``, only on some runs (both stay possible)."""
        def combined(mine: list[Value], theirs: list[Value]) -> list[Value]:
            new = [v for v in theirs if not v.absent]
            if guard is not None:
                new = [dataclasses.replace(v, guard=guard) for v in new]
            if guard is not None or any(v.absent for v in theirs):
                new = mine + [v for v in new if v not in mine and not (v.unseen and any(m.unseen for m in mine))]
            return new or mine
        for key in set(self.entries) | set(other.entries):
            self.entries[key] = combined(self.get(key), other.get(key))
        self.rest = combined(self.rest, other.rest)
        self.nodes += other.nodes

    def write(self, key: str, value: Value, guard: cst.CSTNode | None = None) -> None:
        """``d[key] = value`` (``value.absent``: ``del d[key]``)."""
        if value.absent:
            self.entries[key] = self.get(key) + [value] if guard is not None else [value]
            return
        self.merge(Content(self.scope, {key: [value]}), guard)

    def unseen(self, guard: cst.CSTNode | None = None, key: str | None = None) -> None:
        """Something the code does not show may have changed ``key`` (None: any key)."""
        if key is None:
            self.merge(unseen_content(self.scope), guard)
        else:
            self.write(key, Value(None, self.scope, unseen=True), guard)


def unseen_content(scope: Scope) -> Content:
    """A dict the code does not show: any key may be missing or hold anything (merged on top, it keeps what
    was there as one possibility)."""
    return Content(scope, rest=[Value(None, scope), Value(None, scope, unseen=True)])


def literal_key(node: cst.BaseExpression | None) -> str | None:
    """The text of a string-literal key, or None."""
    value = evaluated(node.value, None) if isinstance(node, cst.SimpleString) else None
    return value if isinstance(value, str) else None


def read(flow: FlowAnalysis, expr: cst.BaseExpression, scope: Scope, at: cst.CSTNode, depth: int = 0) -> Content:
    """What the dict ``expr`` (seen from ``scope``) holds when the code reaches ``at``."""
    if depth > _DEPTH:
        return unseen_content(scope)
    if isinstance(expr, cst.Dict):
        out = Content(scope, nodes=[expr])
        for el in expr.elements:
            if isinstance(el, cst.StarredDictElement):
                out.merge(read(flow, el.value, scope, at, depth + 1))
            elif (key := literal_key(el.key)) is not None:
                out.write(key, Value(el.value, scope))
            else:
                out.unseen()
        return out
    if isinstance(expr, cst.Call):
        if isinstance(expr.func, cst.Name) and expr.func.value == "dict" and flow.index.qualified(expr.func, scope) == "dict":
            return _dict_call(flow, expr, scope, at, depth)
        copied = _copy_of(flow, expr, scope)
        if copied is not None:  # a copy holds what the original holds where it is made
            return read(flow, copied, scope, expr, depth + 1)
        helper = flow.index.function_named(expr.func, scope)
        if helper is not None:
            return _returned(flow, expr, scope, helper, depth)
        return unseen_content(scope)
    if isinstance(expr, cst.Name):
        return _named(flow, expr, scope, at, depth)
    return unseen_content(scope)


def _copy_of(flow: FlowAnalysis, call: cst.Call, scope: Scope) -> cst.BaseExpression | None:
    """``X`` for ``X.copy()``, ``copy.copy(X)`` or ``copy.deepcopy(X)``."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "copy" and not call.args:
        return call.func.value
    if len(call.args) == 1 and not call.args[0].keyword and not call.args[0].star:
        if flow.index.qualified(call.func, scope) in ("copy.copy", "copy.deepcopy"):
            return call.args[0].value
    return None


def _dict_call(flow: FlowAnalysis, call: cst.Call, scope: Scope, at: cst.CSTNode, depth: int) -> Content:
    out = Content(scope, nodes=[call])
    positional = [a for a in call.args if a.keyword is None and a.star != "**"]
    if len(positional) > 1 or any(a.star == "*" for a in positional):
        return unseen_content(scope)
    for arg in call.args:  # a keyword also in a `**` mapping is a TypeError: keywords are what the dict holds
        if arg.keyword is None:
            out.merge(read(flow, arg.value, scope, at, depth + 1))
    for arg in call.args:
        if arg.keyword is not None:
            out.write(arg.keyword.value, Value(arg.value, scope))
    return out


def _returned(flow: FlowAnalysis, call: cst.Call, scope: Scope, helper: Scope, depth: int) -> Content:
    """The dict a same-module function returns; its parameters read as the arguments ``call`` passes."""
    returns = helper.returns
    if not returns or not isinstance(helper.node, cst.FunctionDef):
        return unseen_content(scope)
    out: Content | None = None
    for r in returns:
        got = read(flow, r, helper, r, depth + 1)
        if out is None:
            out = got
        else:  # another return: its keys are possible too
            stmt = flow.facts.parent.get(r, r)
            out.merge(got, guard=stmt)
            for key in set(out.entries) - set(got.entries):
                out.entries[key] = out.entries[key] + [Value(None, helper, guard=stmt)]
    offset = 1 if helper.self_name is not None and isinstance(call.func, cst.Attribute) else 0
    params = list(helper.params)

    def bound(v: Value) -> Value:
        if not isinstance(v.expr, cst.Name) or v.expr.value not in params:
            return v
        found, bindings = flow.index.lookup(v.expr.value, v.scope)
        if found is not helper or len(bindings) != 1 or bindings[0].kind != "param":
            return v
        arg = argument(call, params.index(v.expr.value) - offset, v.expr.value)
        return dataclasses.replace(v, expr=arg, scope=scope) if arg is not None else v
    out.entries = {k: [bound(v) for v in vals] for k, vals in out.entries.items()}
    return out


def _guards(flow: FlowAnalysis, node: cst.CSTNode, at: cst.CSTNode, stop: cst.CSTNode) -> tuple[bool, cst.CSTNode | None]:
    """``(seen, guard)`` for a write at ``node`` as seen from ``at``: ``seen`` False when they sit in the two
    branches of one ``if`` (only one runs); ``guard`` the innermost ``if`` test (else loop, ``try``) that holds
    ``node`` but not ``at``, None when ``node`` runs whenever ``at`` does. ``stop``: the function or module."""
    guard: cst.CSTNode | None = None
    child = node
    for anc in flow.facts.ancestors(node):
        if anc is stop:
            break
        if isinstance(anc, (cst.If, cst.IfExp)) and child is not anc.test:
            if not flow.facts.within(at, child):
                if flow.facts.within(at, anc) and not flow.facts.within(at, anc.test):
                    return False, None  # `at` in the other branch
                guard = guard or anc.test
        elif isinstance(anc, _GUARDS) and not flow.facts.within(at, anc):
            guard = guard or anc
        child = anc
    return True, guard


def _named(flow: FlowAnalysis, name: cst.Name, scope: Scope, at: cst.CSTNode, depth: int) -> Content:
    """A dict bound once to a local (or module) name, with the writes to it that reach ``at``."""
    found, bindings = flow.index.lookup(name.value, scope)
    if found is None or found.kind == "class":
        return unseen_content(scope)
    binds = [b for b in bindings if b.kind != "mutate"]
    if len(binds) != 1 or binds[0].kind != "assign" or binds[0].element != -1:
        return unseen_content(scope)
    bind = binds[0]
    stmt = bind.node
    if isinstance(stmt, cst.Assign) and (len(stmt.targets) != 1 or not isinstance(stmt.targets[0].target, cst.Name)):
        return unseen_content(scope)
    order = flow.facts.order
    if found.kind == "function" and (flow.holder_of(scope) is not found or order.get(stmt, 0) > order.get(at, 0)):
        return unseen_content(scope)
    body = found.node
    for anc in flow.facts.ancestors(at) if found.kind == "function" else ():
        if anc is body:
            break
        if isinstance(anc, (cst.Lambda, cst.FunctionDef)):
            return unseen_content(scope)  # the call runs later, after writes the order here does not show
    out = read(flow, bind.value, found, stmt, depth + 1)
    if found.kind == "module":  # a module constant: read as bound, unless anything anywhere changes it
        for use in _uses(body, name.value):
            if not _target_of(flow, use, stmt) and _effect(flow, use, found) != "read":
                return unseen_content(scope)
        return out
    loop = flow.facts.loop_of(at)
    carried = loop if loop is not None and not flow.facts.within(stmt, loop) else None
    later: list[tuple[cst.Name, cst.CSTNode]] = []
    for use in sorted(_uses(body, name.value), key=lambda n: order.get(n, 0)):
        if flow.facts.within(use, stmt) and _target_of(flow, use, stmt):
            continue
        if flow.scope_at(use) is not found or _in_lambda(flow, use, body):
            if _effect(flow, use, found) != "read":
                out.unseen()  # a nested function may change it at any time
            continue
        if order.get(use, 0) < order.get(at, 0):
            seen, guard = _guards(flow, use, at, body)
            if seen:
                _apply(flow, out, use, found, guard, depth)
        elif carried is not None and flow.facts.within(use, carried):
            later.append((use, carried))
    for use, lp in later:  # written after the call, in the loop holding it: seen from the next pass on
        _apply(flow, out, use, found, lp, depth)
    return out


def _uses(body: cst.CSTNode, name: str) -> list[cst.Name]:
    """Every ``Name`` node spelled ``name`` under ``body``, lambdas included."""
    out, stack = [], [body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value == name:
            out.append(node)
        stack.extend(iter_children(node))
    return out


def _in_lambda(flow: FlowAnalysis, node: cst.CSTNode, body: cst.CSTNode) -> bool:
    for anc in flow.facts.ancestors(node):
        if anc is body:
            return False
        if isinstance(anc, cst.Lambda):
            return True
    return False


def _target_of(flow: FlowAnalysis, use: cst.Name, stmt: cst.CSTNode) -> bool:
    """True for the name being bound by ``stmt`` itself."""
    parent = flow.facts.parent.get(use)
    return isinstance(parent, (cst.AssignTarget, cst.AnnAssign)) and getattr(parent, "target", None) is use


def _effect(flow: FlowAnalysis, use: cst.Name, scope: Scope) -> str:
    """``read`` when ``use`` only reads the dict, else ``change``."""
    parent = flow.facts.parent.get(use)
    if isinstance(parent, cst.Subscript) and parent.value is use:
        return "read" if _plain_read(flow, parent, scope) else "change"
    if isinstance(parent, cst.Attribute) and parent.value is use:
        call = flow.facts.parent.get(parent)
        return "read" if isinstance(call, cst.Call) and call.func is parent and parent.attr.value in _READ_METHODS else "change"
    if isinstance(parent, cst.Arg):
        return "read" if _read_only_arg(flow, parent, scope) else "change"
    if isinstance(parent, (cst.FormattedStringExpression, cst.Comparison, cst.ComparisonTarget, cst.If, cst.While,
                           cst.BooleanOperation, cst.UnaryOperation, cst.IfExp, cst.Assert, cst.Index,
                           cst.StarredDictElement)):
        return "read"
    return "change"


def _plain_read(flow: FlowAnalysis, sub: cst.Subscript, scope: Scope) -> bool:
    """``d[k]`` only read: not stored into or deleted (also deeper, ``d[k][i] = v``), not the receiver of a method
    that is not a plain read, not passed to a function not known to only read it."""
    node: cst.CSTNode = sub
    parent = flow.facts.parent.get(node)
    while isinstance(parent, (cst.Subscript, cst.Attribute)) and parent.value is node:
        node, parent = parent, flow.facts.parent.get(parent)
    if isinstance(parent, cst.Call) and parent.func is node:
        return isinstance(node, cst.Attribute) and node.attr.value in _READ_METHODS
    while isinstance(parent, (cst.Element, cst.Tuple, cst.List)):
        parent = flow.facts.parent.get(parent)
    if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.Del)) or isinstance(parent, cst.AnnAssign) and parent.target is node:
        return False
    if isinstance(parent, cst.Arg):
        return _read_only_arg(flow, parent, scope)
    return True


def _read_only_arg(flow: FlowAnalysis, arg: cst.Arg, scope: Scope) -> bool:
    """``**``-unpacked, or passed to a call known to only read it (``len``, ``json.dumps``, a logging method)."""
    call = flow.facts.parent.get(arg)
    if arg.star == "**" or not isinstance(call, cst.Call):
        return arg.star == "**"
    attr = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
    return (flow.index.qualified(call.func, scope) or "") in _READERS or attr in _LOG_METHODS


def _apply(flow: FlowAnalysis, out: Content, use: cst.Name, scope: Scope, guard: cst.CSTNode | None, depth: int) -> None:
    """Apply what ``use`` does to the dict ``out`` (a write, a merge, or an unseen change)."""
    parent = flow.facts.parent.get(use)
    if isinstance(parent, cst.Subscript) and parent.value is use:
        key = _subscript_key(parent)
        outer = flow.facts.parent.get(parent)
        if isinstance(outer, cst.AssignTarget) and outer.target is parent:
            stmt = flow.facts.parent.get(outer)
            if key is not None and isinstance(stmt, cst.Assign):
                out.write(key, Value(stmt.value, scope), guard)
                out.nodes.append(stmt)
            else:
                out.unseen(guard, key)
            return
        if isinstance(outer, cst.Del) or isinstance(flow.facts.parent.get(outer), cst.Del):
            if key is not None:
                out.write(key, Value(None, scope), guard)
            else:
                out.unseen(guard)
            return
        if not _plain_read(flow, parent, scope):
            out.unseen(guard, key)
        return
    if isinstance(parent, cst.Attribute) and parent.value is use:
        call = flow.facts.parent.get(parent)
        method = parent.attr.value
        if isinstance(call, cst.Call) and call.func is parent:
            if method in _READ_METHODS:
                return
            if method == "update":
                for arg in call.args:
                    if arg.keyword is not None:
                        out.write(arg.keyword.value, Value(arg.value, scope), guard)
                    elif arg.star == "*":
                        out.unseen(guard)
                    else:
                        out.merge(read(flow, arg.value, scope, call, depth + 1), guard)
                out.nodes.append(call)
                return
            if method in ("pop", "setdefault") and call.args and (key := literal_key(call.args[0].value)) is not None:
                if method == "pop":
                    out.write(key, Value(None, scope), guard)
                elif len(call.args) == 2:
                    out.write(key, Value(call.args[1].value, scope), guard or call)
                else:
                    out.unseen(guard, key)
                return
        out.unseen(guard)
        return
    if _effect(flow, use, scope) != "read":
        out.unseen(guard)


def _subscript_key(sub: cst.Subscript) -> str | None:
    if len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index):
        return literal_key(sub.slice[0].slice.value)
    return None


__all__ = ["Content", "Value", "literal_key", "read", "unseen_content"]
