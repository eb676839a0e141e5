"""Where a message holding an imported prompt goes: its place in the list that is sent.

The half of :mod:`promptcache.lint.prompt_uses`' tracer that follows a
message (a dict with a ``role``, a ``("human", ...)`` tuple, a message
class): a system or developer message is ``prefix``; another message is
``after`` when it is appended, or last in a list that is handed to a call as
written (the request, or a wrapper that sends it: mem0's
``self.llm.generate_response(messages=[system, user])``); ``prefix`` when
other elements follow it (in the literal, or when its list is spread or
concatenated ahead of others); ``unknown`` when its list is also extended,
``+=``-ed, copied, stored in an attribute or goes anywhere else. Later edits
of a list a message was appended to are not checked.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint.value_syntax import constructor_call
from promptcache.lint.walk import descendants

PREFIX, AFTER, UNKNOWN = "prefix", "after", "unknown"
FIXED_CALL = "fixed-call"  # a use that calls the builder with fixed arguments (a literal, a module constant)
DEPTH = 6
BUDGET = 5000  # steps per file (a name read in many places, each read assigned on: the fan-out is bounded)
SYSTEM_ROLES = frozenset({"system", "developer"})
NOT_SENT = frozenset({"print", "len", "isinstance", "repr", "hash", "bool"})
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})


def is_store(node: cst.Name, parent: cst.CSTNode | None) -> bool:
    """True where a Name is not a read: a target, a parameter, a definition's or an import's name, the
    attribute part of ``x.name``, a keyword's name."""
    if isinstance(parent, (cst.AssignTarget, cst.Param, cst.ImportAlias, cst.FunctionDef, cst.ClassDef, cst.AsName,
                           cst.Global, cst.Nonlocal, cst.NameItem)):
        return True
    if isinstance(parent, cst.Attribute):
        return parent.attr is node
    if isinstance(parent, cst.Arg):
        return parent.keyword is node
    if isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
        return parent.target is node
    return False


class Placer:
    """The message-placing methods of the prompt-use tracer (a mixin: the host provides ``flow``,
    ``parent``, ``seen``, ``steps``, ``land`` and ``_returned``)."""

    # -- messages ---------------------------------------------------------
    def _message(self, message: cst.CSTNode, role: str, scope, depth) -> set[str]:
        if role in SYSTEM_ROLES:
            return {PREFIX}
        return self._place(message, scope, depth)

    def _step(self, once, node: cst.CSTNode, tag: str, scope, depth) -> set[str]:
        """``once(node, scope, depth)`` within the bounds: UNKNOWN past DEPTH or BUDGET steps, nothing for a
        ``node`` already being followed under ``tag`` (a cycle)."""
        self.steps += 1
        if depth > DEPTH or self.steps > BUDGET:
            return {UNKNOWN}
        key = (id(node), tag)
        if key in self.seen:
            return set()
        self.seen.add(key)
        try:
            return once(node, scope, depth)
        finally:
            self.seen.discard(key)

    def _place(self, message: cst.CSTNode, scope, depth) -> set[str]:
        """Where a non-system message goes: last in a message list or appended (AFTER), before others (PREFIX)."""
        return self._step(self._place_once, message, "m", scope, depth)

    def _place_once(self, message, scope, depth) -> set[str]:
        p = self.parent.get(message)
        if isinstance(p, cst.Element):
            container = self.parent[p]
            if not isinstance(container, (cst.List, cst.Tuple)):
                return {UNKNOWN}
            if container.elements[-1] is not p:
                return {PREFIX}
            return self._list(container, scope, depth + 1)  # last in the literal: after the prefix if sent as it is
        if isinstance(p, cst.Arg) and isinstance(self.parent[p], cst.Call):
            call = self.parent[p]
            method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
            if method == "append":
                return {AFTER}
            if method == "insert":
                return {PREFIX}
            callee = self.flow.index.function_named(call.func, scope)
            return {UNKNOWN} if callee is None else self._parameter_message(callee, call, p, depth)
        if isinstance(p, (cst.Assign, cst.AnnAssign)) and p.value is message:
            targets = [t.target for t in p.targets] if isinstance(p, cst.Assign) else [p.target]
            out: set[str] = set()
            for t in targets:
                if not isinstance(t, cst.Name):
                    return {UNKNOWN}
                found, _ = self.flow.index.lookup(t.value, scope)
                for node in descendants((found or scope).node, cst.Name):
                    if node.value == t.value and not is_store(node, self.parent.get(node)):
                        inner = self.flow.scope_at(node)
                        if inner is not None and self.flow.index.lookup(t.value, inner)[0] is (found or scope):
                            out |= self._place(node, inner, depth + 1)
            return out
        if isinstance(p, cst.Return):
            return self._returned(scope, depth, message=True)
        return {UNKNOWN}

    def _parameter_message(self, callee, call, arg, depth, follow=None) -> set[str]:
        """Follow a positional argument into the module's own function (``follow``: ``_place`` or ``_list``)."""
        if arg.star or arg.keyword is not None:
            return {UNKNOWN}
        position = [a for a in call.args if a.keyword is None].index(arg)
        position += 1 if callee.self_name is not None and isinstance(call.func, cst.Attribute) else 0
        if position >= len(callee.params):
            return {UNKNOWN}
        name = callee.params[position]
        out: set[str] = set()
        for node in descendants(callee.node, cst.Name):
            if node.value == name and not is_store(node, self.parent.get(node)):
                inner = self.flow.scope_at(node)
                if inner is not None and self.flow.index.lookup(name, inner)[0] is callee:
                    out |= (follow or self._place)(node, inner, depth + 1)
        return out

    # -- the list a message is last in ------------------------------------
    def _list(self, node: cst.BaseExpression, scope, depth) -> set[str]:
        """Where a list whose last element is the message goes: AFTER only when it is handed to a call as it
        is (``create(messages=msgs)``, a wrapper's ``generate(messages=[...])``); PREFIX when something is
        placed after it (``[*msgs, *history]``, ``msgs + history``); UNKNOWN when it may be extended, spliced,
        copied or stored before it is sent (``msgs.extend(history)``, ``msgs += history``, ``self.msgs = msgs``)
        or goes anywhere else; empty when it is not sent (a comparison, a log call)."""
        return self._step(self._list_once, node, "l", scope, depth)

    def _list_once(self, node, scope, depth) -> set[str]:
        p = self.parent.get(node)
        if isinstance(p, cst.StarredElement):  # `[*msgs, ...]`
            container = self.parent.get(p)
            if not isinstance(container, (cst.List, cst.Tuple)):
                return {UNKNOWN}
            return self._list(container, scope, depth + 1) if container.elements[-1] is p else {PREFIX}
        if isinstance(p, cst.BinaryOperation) and isinstance(p.operator, cst.Add):
            return {PREFIX} if p.left is node else self._list(p, scope, depth + 1)
        if isinstance(p, cst.Arg) and p.value is node and not p.star and isinstance(self.parent[p], cst.Call):
            return self._handed(p, self.parent[p], scope, depth)
        if isinstance(p, (cst.Assign, cst.AnnAssign)) and p.value is node:
            targets = [t.target for t in p.targets] if isinstance(p, cst.Assign) else [p.target]
            if not all(isinstance(t, cst.Name) for t in targets):
                return {UNKNOWN}  # `self.messages = [...]`: kept, and may be extended later
            shortest = sum(1 for el in node.elements if isinstance(el, cst.Element)) if isinstance(node, (cst.List, cst.Tuple)) else 0
            return set().union(*(self._list_reads(t.value, scope, depth + 1, shortest) for t in targets))
        if isinstance(p, cst.Return):
            func = self.flow.holder_of(scope)
            calls = self.flow.calls_of(func) if func is not None else []
            return set().union(*(self._list(c, s, depth + 1) for c, s in calls)) if calls else {UNKNOWN}
        if isinstance(p, (cst.Expr, cst.Comparison, cst.ComparisonTarget, cst.If, cst.While, cst.Assert)):
            return set()
        return {UNKNOWN}  # a method of the list (`.copy()`, `.extend()`), a slice, an element of another value

    def _handed(self, arg: cst.Arg, call: cst.Call, scope, depth) -> set[str]:
        """The list is an argument of ``call``."""
        name = self.flow.index.qualified(call.func, scope) or ""
        method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
        if name in NOT_SENT or name.startswith(("logging.", "logger.", "log.")) or method in LOG_METHODS:
            return set()
        if method in ("append", "extend", "insert") or name in ("list", "tuple", "copy.copy", "copy.deepcopy"):
            return {UNKNOWN}  # spliced into another list, or a copy that may be extended
        callee = self.flow.index.function_named(call.func, scope)
        if callee is not None:
            return self._parameter_message(callee, call, arg, depth, follow=self._list)
        return {AFTER}  # handed over as written: the request, or a call that sends it

    def _recorded(self, name: cst.Name) -> bool:
        """``name`` is given to a class (``ModelMessage(prior_messages=messages)``): a record of it, not a request."""
        arg = self.parent.get(name)
        call = self.parent.get(arg) if isinstance(arg, cst.Arg) else None
        return isinstance(call, cst.Call) and constructor_call(call.func)

    def _list_reads(self, name: str, scope, depth, shortest: int = 0) -> set[str]:
        """Where the list bound to ``name`` goes; ``name += ...`` anywhere in its scope extends it (UNKNOWN).
        ``msgs.insert(k, x)`` with a literal ``k`` below ``shortest``, the length of the literal the list was bound
        to, puts ``x`` ahead of its last message, which stays last (mentat's revisor: ``insert(1, code_message)``)."""
        found, _ = self.flow.index.lookup(name, scope)
        home = found or scope
        places: list[tuple[cst.Name, set[str]]] = []
        for node in descendants(home.node, cst.Name):
            if node.value != name:
                continue
            parent = self.parent.get(node)
            inner = self.flow.scope_at(node)
            if inner is None or self.flow.index.lookup(name, inner)[0] is not home:
                continue
            if isinstance(parent, cst.AugAssign) and parent.target is node:
                places.append((node, {UNKNOWN}))
            elif _inserted_before_last(parent, self.parent.get(parent), shortest):
                continue
            elif not is_store(node, parent):
                places.append((node, self._list(node, inner, depth)))
        sent = [self.flow.facts.order.get(n, 0) for n, landed in places if landed & {AFTER, PREFIX} and not self._recorded(n)]
        # `msgs.append(reply)` after the last call that sends the list, in no loop: the record of the exchange
        # (mentat's revisor), not a message of the request already sent
        return set().union(*(landed for n, landed in places if not (
            sent and landed == {UNKNOWN} and _appended(n, self.parent) and self.flow.facts.order.get(n, 0) > max(sent)
            and self.flow.facts.loop_of(n) is None)))


def _appended(name: cst.Name, parent) -> bool:
    """``name`` is the receiver of ``.append(...)`` / ``.extend(...)``."""
    attribute = parent.get(name)
    return isinstance(attribute, cst.Attribute) and attribute.value is name and attribute.attr.value in ("append", "extend") \
        and isinstance(parent.get(attribute), cst.Call)


def _inserted_before_last(attribute: cst.CSTNode, call: cst.CSTNode | None, shortest: int) -> bool:
    """``attribute`` is ``msgs.insert`` called with a literal index below ``shortest`` (the list's known length)."""
    if not (isinstance(attribute, cst.Attribute) and attribute.attr.value == "insert" and isinstance(call, cst.Call)
            and call.func is attribute and len(call.args) == 2 and isinstance(call.args[0].value, cst.Integer)):
        return False
    index = call.args[0].value.evaluated_value
    return isinstance(index, int) and 0 <= index < shortest


__all__ = ["AFTER", "BUDGET", "DEPTH", "LOG_METHODS", "NOT_SENT", "PREFIX", "SYSTEM_ROLES", "UNKNOWN", "Placer", "is_store"]
