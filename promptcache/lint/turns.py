"""Conversation history and the per-turn path (lint-rules.md, "Per-turn path", "Shared history").

- A **history** is a list (name or ``self.attr``) that reaches a sink's
  ``messages=`` / ``input=`` (a keyword, or an entry of a ``**params`` request
  dict: :func:`promptcache.lint.request_view.conversations`) or promptcache's
  ``PromptBuilder.history(...)``, directly or spliced (``[system, *history]``, ``[system] + history``,
  ``list(history)``, ``Conversation(history)``).
- The **per-turn path** is the body of a loop, or a function that contains a
  sink (a request handler).
- A **size guard** is an ``if``/``while``/conditional expression that compares
  ``len(...)`` or a token count, or names ``max_*``, ``*limit*``,
  ``*threshold*``, ``*budget*``; an earlier ``if <guard>: return`` counts too,
  as does a guard at the top of the called function.

:class:`Turns` answers the history rules: where history is trimmed from the
front (PC203) and edited in place (PC204); :mod:`promptcache.lint.summaries`
builds on it for summarisation (PC201, PC202).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint import history_edits, history_masking, trim_guard
from promptcache.lint.history_edits import constant_index
from promptcache.lint.dict_view import string_key
from promptcache.lint.expressions import int_value, is_system_dict
from promptcache.lint.index import Binding, Scope
from promptcache.lint.request_view import all_sinks, conversations
from promptcache.lint.sdk_builder import conversation_messages
from promptcache.lint.sinks import PROMPTCACHE
from promptcache.lint.trim_guard import Trim, ends_in_exit
from promptcache.lint.walk import descendants
from promptcache.lint.window_fills import fixed_list, window_fills

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis

Ref = tuple[str, int, str]
_GUARD_WORD = re.compile(r"(?i)(max|limit|threshold|budget|token|too_|exceed|overflow)")
_LIST_CALLS = ("list", "tuple", "reversed", "collections.deque")


class Turns:
    """History and per-turn answers for one module (lazily computed)."""

    def __init__(self, flow: FlowAnalysis):
        self.flow = flow
        self.index = flow.index
        self.facts = flow.facts

    # -- history references ------------------------------------------------
    def ref_of(self, expr: cst.BaseExpression, scope: Scope) -> Ref | None:
        """The binding identity of a name or ``self.attr``, or of a string-keyed entry of one
        (``state["messages"]``: the list is the entry, not the dict that holds it)."""
        key = _entry_key(expr)
        if key is not None:
            base = self.ref_of(expr.value, scope)
            return (base[0] + "[]", base[1], f"{base[2]}[{key!r}]") if base is not None and "[]" not in base[0] else None
        if isinstance(expr, cst.Name):
            found, bindings = self.index.lookup(expr.value, scope)
            return ("n", id(found), expr.value) if found is not None else None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            cls = self.index.class_of_receiver(expr.value, scope)
            if cls is not None:
                return ("a", id(cls), expr.attr.value)
        return None

    def bindings_of(self, expr: cst.BaseExpression, scope: Scope) -> list[Binding]:
        if isinstance(expr, cst.Name):
            return self.index.lookup(expr.value, scope)[1]
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            cls = self.index.class_of_receiver(expr.value, scope)
            if cls is not None:
                return cls.attrs.get(expr.attr.value, [])
        return []

    def list_refs(self, expr: cst.BaseExpression | None, scope: Scope, seen: set | None = None) -> set[Ref]:
        """The history lists whose elements ``expr`` sends, following list-building assignments."""
        seen = set() if seen is None else seen
        out: set[Ref] = set()
        if expr is None or id(expr) in seen:
            return out
        seen.add(id(expr))
        if isinstance(expr, (cst.Name, cst.Attribute)):
            ref = self.ref_of(expr, scope)
            if ref is not None:
                out.add(ref)
                for b in self.bindings_of(expr, scope):
                    if b.kind in ("assign", "walrus") and isinstance(b.value, (cst.BinaryOperation, cst.List, cst.Tuple, cst.Call, cst.Subscript, cst.Name, cst.Attribute, cst.ListComp)):
                        out |= self.list_refs(b.value, b.scope, seen)
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            out |= self.list_refs(expr.left, scope, seen) | self.list_refs(expr.right, scope, seen)
        elif isinstance(expr, (cst.List, cst.Tuple)):
            for el in expr.elements:
                if isinstance(el, cst.StarredElement):
                    out |= self.list_refs(el.value, scope, seen)
        elif isinstance(expr, (cst.ListComp, cst.GeneratorExp)) and _alias(expr):
            out |= self.list_refs(expr.for_in.iter, scope, seen)  # `[m for m in h if ...]`: h's own messages
        elif isinstance(expr, cst.Call) and (callee := self.callee(expr, scope)) is not None:
            for ret in callee.returns:  # `messages = self.to_messages()`, `Condenser().condense(events)`
                out |= self.list_refs(ret, callee, seen)
        elif isinstance(expr, cst.Call) and expr.args:
            name = self.index.qualified(expr.func, scope)
            wrapped = conversation_messages(self.index, expr, scope)
            if wrapped is not None:
                out |= self.list_refs(wrapped, scope, seen)
            elif name in _LIST_CALLS or (isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "copy"):
                target = expr.args[0].value if name in _LIST_CALLS else expr.func.value
                out |= self.list_refs(target, scope, seen)
        elif isinstance(expr, cst.Subscript) and _entry_key(expr) is not None:
            ref = self.ref_of(expr, scope)  # `state["messages"]`: that entry, not every key of `state`
            out |= {ref} if ref is not None else set()
        elif isinstance(expr, cst.Subscript):
            out |= self.list_refs(expr.value, scope, seen)
        elif isinstance(expr, cst.IfExp):
            out |= self.list_refs(expr.body, scope, seen) | self.list_refs(expr.orelse, scope, seen)
        return out

    def callee(self, call: cst.Call, scope: Scope) -> Scope | None:
        """The module-local function or method a call runs: ``f()``, ``self.m()``, ``Cls(...).m()``."""
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name):
            cls = self.index.class_of_receiver(func.value.func, scope)
            return cls.methods.get(func.attr.value) if cls is not None else None
        return self.index.function_named(func, scope)

    @cached_property
    def history_refs(self) -> set[Ref]:
        """Every list that some sink sends as its conversation."""
        refs: set[Ref] = set()
        for _, expr, scope, _ in conversations(self.flow):
            refs |= self.list_refs(expr, scope)
        return refs

    def is_history(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        ref = self.ref_of(expr, scope)
        return ref is not None and ref in self.history_refs

    # -- per-turn path and size guards --------------------------------------
    def per_turn(self, node: cst.CSTNode) -> bool:
        """True inside a loop body, or in a function that contains a sink (a request handler).

        When every sink of that function runs inside a loop of the function (a
        conversation loop, an agent loop), only the loop body is the per-turn
        path: code before the loop (listing MCP tools once, loading the
        history) runs once per conversation.
        """
        for anc in self.facts.ancestors(node):
            if isinstance(anc, (cst.For, cst.While)):
                return True
            if isinstance(anc, cst.FunctionDef):
                func = self.index.scope_of_node.get(anc)
                sinks = [s for s in all_sinks(self.flow) if self.flow.holder_of(s.scope) is func]
                return bool(sinks) and not all(self.facts.loop_of(s.call) is not None for s in sinks)
        return False

    def is_size_guard(self, test: cst.CSTNode) -> bool:
        """An expression comparing a length or a token count, or naming a limit/threshold/budget."""
        for n in descendants(test, (cst.Call, cst.Name, cst.Attribute)):
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "len":
                return True
            if isinstance(n, cst.Name) and _GUARD_WORD.search(n.value):
                return True
            if isinstance(n, cst.Attribute) and _GUARD_WORD.search(n.attr.value):
                return True
        return False

    def guarded(self, node: cst.CSTNode, scope: Scope | None = None) -> bool:
        """True when a size guard dominates ``node`` (enclosing test or an earlier guarded exit)."""
        child = node
        for anc in self.facts.ancestors(node):
            if isinstance(anc, (cst.If, cst.While, cst.IfExp)) and child is not anc.test and self.is_size_guard(anc.test):
                return True
            if isinstance(anc, (cst.IndentedBlock, cst.Module)):
                for stmt in anc.body:
                    if stmt is child:
                        break
                    if isinstance(stmt, cst.If) and self.is_size_guard(stmt.test) and ends_in_exit(stmt.body):
                        return True
            if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
                break
            child = anc
        if isinstance(node, cst.Call) and scope is not None:
            callee = self.index.function_named(node.func, scope)
            if callee is not None and isinstance(callee.node, cst.FunctionDef):
                body = callee.node.body
                return isinstance(body, cst.IndentedBlock) and any(
                    isinstance(stmt, (cst.If, cst.While)) and self.is_size_guard(stmt.test) for stmt in body.body
                )
        return False

    # -- the history rules ----------------------------------------------------
    @cached_property
    def trims(self) -> list[tuple[cst.CSTNode, str]]:
        """PC203 sites: front-trimming rebinds, ``pop(0)``, ``del h[0]``, ``deque(maxlen=)``, inline windows."""
        out: list[tuple[cst.CSTNode, str]] = []
        for ref, bindings in self.history_bindings():
            out += self._trim_bindings(ref, bindings)
        for call, scope in self.index.calls:
            func = call.func
            if isinstance(func, cst.Attribute) and self.is_history(func.value, scope):
                is_pop0 = func.attr.value == "pop" and len(call.args) == 1 and int_value(call.args[0].value) == 0
                if is_pop0 and isinstance(func.value, cst.Name) and _in_system_head_branch(self.facts, call, func.value.value):
                    continue  # `if h[0]["role"] == "system": system = h.pop(0)["content"]`: a system head, once
                single = Trim(func.value, single=True)
                if (is_pop0 or (func.attr.value == "popleft" and not call.args)) and self._per_turn_trim(call, single, scope):
                    out.append((call, f"{self.flow.code(func)}(...)"))
        for node, scope in self.index.deletes:
            for target in node.target.elements if isinstance(node.target, cst.Tuple) else [node.target]:
                t = target.value if isinstance(target, cst.Element) else target
                if isinstance(t, cst.Subscript) and self.is_history(t.value, scope) and _drops_front(t) and self._per_turn_trim(node, trim_guard.of_slice(t), scope):
                    out.append((node, "del " + self.flow.code(t)))
        for _, expr, sent_scope, _ in conversations(self.flow):
            for sent, scope in [(expr, sent_scope), *self._returns_sent(expr, sent_scope, set())]:
                for sub in descendants(sent, cst.Subscript):
                    if _sliding(sub) and self.list_refs(sub.value, scope) & self.history_refs and not fixed_list(self.index, sub.value, scope) \
                            and not trim_guard.rare(self, sub, trim_guard.of_slice(sub), scope):
                        out.append((sub, self.flow.code(sub)))
        out += window_fills(self, _sliding)  # `messages += history[-10:]`, `for m in history[-5:]: messages.append(m)`
        return list({id(node): (node, detail) for node, detail in out}.values())

    def _returns_sent(self, expr: cst.BaseExpression, scope: Scope, seen: set) -> list[tuple[cst.BaseExpression, Scope]]:
        """The returns of the module's functions whose value ``expr`` sends: ``messages = Condenser().condense(events)``
        sends ``head + events[-self.max_events:]`` from ``condense``. Through names bound to such calls."""
        out = []
        for node in descendants(expr, (cst.Call, cst.Name)):
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, cst.Name):
                for b in self.index.lookup(node.value, scope)[1]:
                    if b.kind in ("assign", "walrus") and isinstance(b.value, (cst.Call, cst.Await)):
                        out += self._returns_sent(b.value, b.scope, seen)
            elif (callee := self.callee(node, scope)) is not None:
                for ret in callee.returns:
                    out.append((ret, callee))
                    out += self._returns_sent(ret, callee, seen)
        return out

    def history_bindings(self) -> Iterator[tuple[Ref, list[Binding]]]:
        """``(ref, bindings)`` of each name or ``self.`` attribute some sink sends as its conversation."""
        refs = self.history_refs
        for scope in self.index.scopes:
            yield from ((ref, b) for name, b in scope.bindings.items() if (ref := ("n", id(scope), name)) in refs)
        for cls in self.index.classes:
            yield from ((ref, b) for attr, b in cls.attrs.items() if (ref := ("a", id(cls), attr)) in refs)

    def _trim_bindings(self, ref: Ref, bindings: list[Binding]) -> list[tuple[cst.CSTNode, str]]:
        out = []
        for b in bindings:
            if b.kind not in ("assign", "walrus") or b.value is None:
                continue
            for call in descendants(b.value, cst.Call):
                if self.index.qualified(call.func, b.scope) == "collections.deque" and any(
                    a.keyword is not None and a.keyword.value == "maxlen" and not (isinstance(a.value, cst.Name) and a.value.value == "None")
                    for a in call.args
                ):
                    out.append((call, "deque(maxlen=...)"))
            for sub in descendants(b.value, cst.Subscript):
                source = self.ref_of(sub.value, b.scope)
                moving = (source == ref and _front_window(sub)) or (source in self.history_refs and _sliding(sub))
                if moving and self._per_turn_trim(b.node, trim_guard.of_slice(sub), b.scope) and not self._splits_head(b, sub):
                    out.append((sub, self.flow.code(sub)))
        return out

    def _splits_head(self, b: Binding, sub: cst.Subscript) -> bool:
        """``h = h[1:]`` in a function, outside any loop (the rebinding does not carry over to the next turn), after
        an earlier statement of the same block bound ``h[0]`` to a name that function sends in another slot
        (``instructions = h[0]["content"]`` then ``instructions=instructions``, or a system message's content): the
        first message is moved to that slot, not dropped (khoj's Responses API call, open-interpreter's
        ``llm.run``; issue 11). The same message goes out each turn, elsewhere."""
        sl = _slice(sub)
        if sl is None or int_value(sl.lower) != 1 or not isinstance(sub.value, cst.Name) or b.scope.kind != "function":
            return False
        statement = next((a for a in self.facts.ancestors(b.node) if isinstance(a, cst.SimpleStatementLine)), None)
        block = self.facts.parent.get(statement)
        if statement is None or not isinstance(block, (cst.IndentedBlock, cst.Module)):
            return False
        name = sub.value.value
        for anc in self.facts.ancestors(statement):
            if isinstance(anc, (cst.For, cst.While)):
                return False  # `for q in inbox: ... h = h[1:]`: one more message dropped every turn
            if anc is b.scope.node:
                break
        guarded = _in_system_head_branch(self.facts, statement, name)  # only a system head is split off
        position = next(i for i, st in enumerate(block.body) if st is statement)
        for earlier in block.body[:position]:
            # a simple statement, or one inside an `if` on the content's type (FastChat: `if type(h[0]["content"])
            # == dict: system_prompt = h[0]["content"]["text"]`)
            lines = [earlier] if isinstance(earlier, cst.SimpleStatementLine) else \
                descendants(earlier, cst.SimpleStatementLine) if guarded else []
            if any(_reads_head(line, name) and (any(self._sent_in_slot(t, b.scope) for t in _assigned_names(line))
                                                or any(self._sent_as_params(t, b.scope) for t in _slot_entries(line)))
                   for line in lines):
                return True
        return False

    def _sent_as_params(self, name: str, func: Scope) -> bool:
        """``name`` is a request dict ``func`` sends as ``**name`` to a request (``kwargs["system"] = h[0]["content"]``
        then ``client.messages.create(**kwargs)``: agentscope's Anthropic model); not ``log.info(**meta)``."""
        for node in descendants(func.node, cst.Name):
            arg = self.facts.parent.get(node)
            if node.value == name and isinstance(arg, cst.Arg) and arg.value is node and arg.star == "**":
                api = self.flow.sinks.api_of(self.facts.parent[arg], self.flow.scope_at(node) or func)
                if api is not None and api != PROMPTCACHE:  # an SDK request method given the dict
                    return True
        return False

    def _sent_in_slot(self, name: str, func: Scope) -> bool:
        """``name`` is passed in ``func`` as a system slot of a call (``instructions=``, ``system=``,
        ``system_message=``, ``system_prompt=``) or as the content of a system message literal."""
        for node in descendants(func.node, cst.Name):
            if node.value != name:
                continue
            p = self.facts.parent.get(node)
            if isinstance(p, cst.Arg) and p.value is node and p.keyword is not None and p.keyword.value in _HEAD_SLOTS:
                return True
            if isinstance(p, cst.DictElement) and p.value is node and is_system_dict(self.facts.parent.get(p)):
                return True
        return False

    def _per_turn_trim(self, node: cst.CSTNode, trim: Trim, scope: Scope) -> bool:
        """On the per-turn path and not made rare by a size guard with hysteresis (:mod:`promptcache.lint.trim_guard`)."""
        return self.per_turn(node) and not trim_guard.rare(self, node, trim, scope)

    @cached_property
    def edits(self) -> list[tuple[cst.CSTNode, str]]:
        """PC204 sites: changes to an already-sent message (:mod:`promptcache.lint.history_edits`), older messages
        masked by position in a rebuilt list (:mod:`promptcache.lint.history_masking`)."""
        return history_edits.edits(self) + history_masking.masks(self)


def _in_system_head_branch(facts, node: cst.CSTNode, name: str) -> bool:
    """``node`` is in the body (not the ``else``) of ``if name[0]["role"] == "system":`` (also ``h and ...``), with
    no loop or other ``if`` in between: it runs only while the head is a system message."""
    child = node
    for anc in facts.ancestors(node):
        if isinstance(anc, (cst.For, cst.While, cst.FunctionDef)):
            return False
        if isinstance(anc, cst.If):
            # another condition in between (`if len(h) > MAX: h.pop(1); h.pop(0)`) trims whatever the head is
            return child is anc.body and _system_head_test(anc.test, name)
        child = anc
    return False


def _system_head_test(test: cst.BaseExpression, name: str) -> bool:
    """``test`` is ``name[0]["role"] == "system"`` (or ``.get("role")``, ``"developer"``), alone or joined by ``and``."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _system_head_test(test.left, name) or _system_head_test(test.right, name)
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Equal)):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    return any(_reads_head(x, name) for x in sides) and any(
        isinstance(x, cst.SimpleString) and x.evaluated_value in ("system", "developer") for x in sides)


def _reads_head(node: cst.CSTNode, name: str) -> bool:
    """``node`` reads ``name[0]``."""
    return any(isinstance(read.value, cst.Name) and read.value.value == name and constant_index(read) == 0
               for read in descendants(node, cst.Subscript))


_HEAD_SLOTS = frozenset({"instructions", "system", "system_message", "system_prompt"})


def _assigned_names(statement: cst.CSTNode) -> list[str]:
    """The names a simple statement line assigns (``x = ...``, ``x: T = ...``)."""
    out = []
    for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
        if isinstance(small, cst.Assign):
            out += [t.target.value for t in small.targets if isinstance(t.target, cst.Name)]
        elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
            out.append(small.target.value)
    return out


def _slot_entries(statement: cst.CSTNode) -> list[str]:
    """The names of the dicts a simple statement line stores a system slot in (``kwargs["system"] = ...``)."""
    out = []
    for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
        for t in small.targets if isinstance(small, cst.Assign) else ():
            target = t.target
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and _entry_key(target) in _HEAD_SLOTS:
                out.append(target.value.value)
    return out


def _entry_key(expr: cst.BaseExpression) -> str | None:
    """``"messages"`` for ``x["messages"]`` (a string-literal key), else None."""
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        return string_key(expr.slice[0].slice.value)
    return None


def _slice(sub: cst.Subscript) -> cst.Slice | None:
    if len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Slice):
        return sub.slice[0].slice
    return None


def _front_window(sub: cst.Subscript) -> bool:
    """``h[k:]`` / ``h[-N:]``: rebinding to it drops the oldest messages."""
    sl = _slice(sub)
    return sl is not None and sl.lower is not None and sl.upper is None and int_value(sl.lower) != 0


def _drops_front(sub: cst.Subscript) -> bool:
    """``del h[0]`` / ``del h[:k]``: the oldest messages go."""
    sl = _slice(sub)
    if sl is None:
        return len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index) and int_value(sub.slice[0].slice.value) == 0
    return sl.lower is None and sl.upper is not None


def _sliding(sub: cst.Subscript) -> bool:
    """``h[-N:]`` (N > 1) or ``h[start:]`` with a computed start: a window that moves with the conversation.
    ``h[-1:]`` is the newest message alone: no conversation is sent, so none is cached to lose."""
    sl = _slice(sub)
    if sl is None or sl.lower is None or sl.upper is not None:
        return False
    value = int_value(sl.lower)
    return value is None or value < -1


def _alias(comp: cst.ListComp | cst.GeneratorExp) -> bool:
    """``[m for m in h if ...]``: the elements are ``h``'s own objects (a filter, not a copy)."""
    return (comp.for_in.inner_for_in is None and isinstance(comp.elt, cst.Name) and isinstance(comp.for_in.target, cst.Name)
            and comp.elt.value == comp.for_in.target.value)
