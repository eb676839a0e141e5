"""Conversation summaries (lint-rules.md, PC201 and PC202).

Builds on :class:`promptcache.lint.turns.Turns` (history, per-turn path, size
guards) and answers where the conversation is summarised on every turn
(:attr:`Summaries.summarisations`, PC201) and where a summary is placed ahead
of the retained history outside the system slots
(:attr:`Summaries.summaries_before_history`, PC202).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.builder_returns import route_handler
from promptcache.lint.index import Scope
from promptcache.lint.request_view import all_sinks, conversations, request_of
from promptcache.lint.sinks import attribute_path
from promptcache.lint.turns import int_value, is_system_dict
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis

_SUMMARY_MEMORY = ("ConversationSummaryMemory", "ConversationSummaryBufferMemory", "ChatSummaryMemoryBuffer")


class Summaries:
    """Summarisation answers for one module (lazily computed)."""

    def __init__(self, flow: FlowAnalysis):
        self.flow = flow
        self.index = flow.index
        self.turns = flow.turns

    @cached_property
    def summarisations(self) -> list[tuple[cst.CSTNode, str]]:
        """PC201 sites: summary memories, and summarise calls on the per-turn path without a size guard.

        An LLM call asking for a summary, alone in its function, makes that
        function a summarising helper (reported where it is called per turn),
        unless the function is a turn itself: a request handler
        (``@app.post(...)``) that replaces the history with the summary.
        """
        out = []
        helpers: set[int] = set()
        summarising = []
        sinks = all_sinks(self.flow)
        for sink in sinks:
            call, scope = sink.call, sink.scope
            if self._asks_to_summarise(sink):
                holder = self.flow.holder_of(scope)
                others = [s for s in sinks if s is not sink and self.flow.holder_of(s.scope) is holder]
                if holder is not None and not others and not self.turns.facts.loop_of(call) is not None and not self._is_turn(holder):
                    helpers.add(id(holder))
                else:
                    summarising.append(call)
        for call, scope in self.index.calls:
            name = self.index.qualified(call.func, scope) or ""
            path = attribute_path(call.func)
            last = name.rsplit(".", 1)[-1] if name else (path[-1] if path else "")
            if last in _SUMMARY_MEMORY:
                out.append((call, f"LangChain {last}"))
                continue
            candidate = call in summarising
            detail = f"{self.flow.code(call.func)}() asking for a summary" if candidate else f"{last}()"
            callee = self.index.function_named(call.func, scope)
            if callee is not None and id(callee) in helpers:
                candidate = True
                detail = f"{last}() (an LLM call asking for a summary)"
            elif not candidate and last and S.summarise_callee(last) and request_of(self.flow, call) is None and self.flow.sinks.sink_at(call, scope) is None:
                candidate = (S.history_word(last) or any(self.turns.list_refs(a.value, scope) & self.turns.history_refs for a in call.args)
                             or (callee is not None and self._rebinds_history(callee)))
            if candidate and self.turns.per_turn(call) and not self.turns.guarded(call, scope) and not self._per_item(call, scope):
                out.append((call, detail))
        return out

    def _asks_to_summarise(self, sink) -> bool:
        """The literal prompt text of a sink asks to summarise: the call's own text, and that of the
        ``**params`` dict it sends (:mod:`promptcache.lint.request_view`)."""
        req = request_of(self.flow, sink.call)
        nodes = [sink.call, *(req.content.nodes if req is not None else ())]
        return S.asks_to_summarise(" ".join(t for n in nodes for t in self.flow.sinks.literal_text(n, sink.scope)))

    def _rebinds_history(self, func: Scope) -> bool:
        """True when method ``func`` assigns a new list to an attribute sent as the conversation
        (``self.messages = [...]`` in ``condense()``; issue 11 review, snips/d2_condense.py)."""
        cls = func.cls
        if cls is None or func.kind != "function":
            return False
        return any(("a", id(cls), attr) in self.turns.history_refs and b.kind == "assign" and b.scope is func
                   for attr, bindings in cls.attrs.items() for b in bindings)

    def _per_item(self, call: cst.Call, scope: Scope) -> bool:
        """A call that summarises the item of the loop around it, not the history: ``for chunk in chunks:
        text = fmt(chunk); llm(... text)`` maps over the pieces of one conversation (a summariser's own steps,
        crewAI's ``summarize_messages``; issue 11), reported where the summariser is called per turn. A loop over
        turns summarises the stored history, which outlives the iteration; so: an argument reads a name bound
        from the loop target in the loop's body, and none is a history list."""
        loop = self.turns.facts.loop_of(call)
        if not isinstance(loop, cst.For):
            return False
        targets = {n.value for n in descendants(loop.target, cst.Name)}
        derived = set(targets)
        for stmt in descendants(loop.body, (cst.Assign, cst.AnnAssign)):
            value = stmt.value
            if value is not None and any(n.value in derived for n in descendants(value, cst.Name)):
                for t in ([x.target for x in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]):
                    derived |= {n.value for n in descendants(t, cst.Name)}
        names = {n.value for a in call.args for n in descendants(a.value, cst.Name)}
        history = any(self.turns.list_refs(a.value, scope) & self.turns.history_refs for a in call.args) or any(
            self.turns.is_history(n, scope) for a in call.args for n in descendants(a.value, (cst.Name, cst.Attribute)))
        return bool(names & derived) and not history

    def _is_turn(self, func: Scope) -> bool:
        """Whether a function holding a summarising LLM call is a turn that rewrites the history: a
        request handler (``@app.post(...)``) that stores the summary in place of the history."""
        node = func.node
        routed = route_handler(node)
        return routed and self._replaces_history(func)

    def _replaces_history(self, func: Scope) -> bool:
        """True when ``func`` stores a summary (its call's result) as the history or into the store it came from."""
        containers = {name for ref in self.turns.history_refs if ref[0] == "n" for name in [ref[2]]}
        for name in list(containers):
            for b in func.bindings.get(name, ()):
                if b.kind in ("assign", "walrus") and b.value is not None:
                    containers |= {n.value for n in descendants(b.value, cst.Name)}
        targets = [(st.target, st.value) for st in self.index.stores if st.scope is func]
        targets += [(cst.Name(name), b.value) for name, bs in func.bindings.items() for b in bs if b.kind == "assign"]
        for target, value in targets:
            root = target
            while isinstance(root, (cst.Subscript, cst.Attribute)):
                root = root.value
            if not (isinstance(root, cst.Name) and root.value in containers):
                continue
            if any(s.kind == S.SUMMARY for s in self.flow.taint.of(value, func)):
                return True
        return False

    @cached_property
    def summaries_before_history(self) -> list[cst.CSTNode]:
        """PC202 sites outside system slots: a summary inserted at index 0 or listed before ``*history``."""
        out = []
        for call, scope in self.index.calls:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "insert" and len(call.args) == 2 and int_value(call.args[0].value) == 0:
                if self.turns.is_history(func.value, scope) and any(s.kind == S.SUMMARY for s in self.flow.taint.of(call.args[1].value, scope)):
                    out.append(call.args[1].value)
        for _, expr, scope, _ in conversations(self.flow):
            if not isinstance(expr, (cst.List, cst.Tuple)):
                continue
            before: list[cst.BaseExpression] = []
            for el in expr.elements:
                if isinstance(el, cst.StarredElement) and self.turns.list_refs(el.value, scope) & self.turns.history_refs:
                    for value in before:
                        out += [n for n, _ in self.flow.sites(value, scope, frozenset({S.SUMMARY}))]
                    break
                if not is_system_dict(el.value):
                    before.append(el.value)
        return out
