"""Prefix slots: where a value becomes part of the cached prefix (lint-rules.md, "Prefix slot").

- **System slots**: ``system=`` / ``instructions=`` / ``response_format=`` of a sink
  (OpenAI renders the structured-output schema ahead of the messages); in an LLM file
  (one that imports an LLM SDK, contains a sink, or is a prompt module) also
  the content of a ``{"role": "system" | "developer", ...}`` message, LangChain
  ``SystemMessage(...)`` / ``("system", ...)`` / ``SystemMessagePromptTemplate``,
  agent ``system_prompt=`` / ``instructions=``, module or class constants whose
  name matches ``prompt-name-regex`` and the returns of prompt-named builder
  functions (not those whose return is a reply or the newest turn:
  :mod:`promptcache.lint.builder_returns`).
- **PromptBuilder layers**: ``.system(...)``, ``.document(...)``, ``.example(...)``
  (system slots) and ``.tools(...)`` (a tool slot, checked for content: the
  builder orders tools by name) of a :class:`promptcache.PromptBuilder`; the
  SDK normalises their text, so only values, not whitespace, can break them.
- **Tool slots**: ``tools=`` of a sink or agent, ``.bind_tools(x)``; in an LLM
  file also tool-named constants (``TOOLS``, ``*_TOOLS``, ``TOOL_SPECS``) and
  the returns of tool-named functions (``enabled_tools()``), so a ``tools.py``
  imported by the file that calls the SDK is checked where the tools are built.
  A tool *table* (a dict of definitions) is checked for content, not order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.agent_calls import agent_calls as _agent_calls
from promptcache.lint.builder_returns import (conversation, conversation_sent_last, message_sent_last, returns_reply, role_of,
                                               route_handler, suffix_only, user_content_only, user_turn)
from promptcache.lint.dict_view import entry, is_block
from promptcache.lint.dict_view import entry as dict_value  # a dict literal's or an SDK param call's entry
from promptcache.lint.expected_values import compared_only
from promptcache.lint.framework_slots import framework_slots, message_list_slots
from promptcache.lint.history_notes import appended_note
from promptcache.lint.prompt_uses import returned_landings, sent_as_written, sent_last
from promptcache.lint.request_view import requests, sent_values
from promptcache.lint.sdk_builder import BUILDER_LAYERS, builder_root
from promptcache.lint.sinks import Sink, argument
from promptcache.lint.system_edits import system_content_stores
from promptcache.lint.template_fills import template_fills
from promptcache.lint.value_syntax import constructor_call, returns_not_text, returns_scored
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope

_SYSTEM_KEYWORDS = ("system", "instructions", "response_format")
_AGENT_KEYWORDS = ("system_prompt", "system_message", "instructions")
# TOOLS, ALL_TOOLS, enabled_tools, TOOL_SPECS, tool_definitions: names for a tools array or table; not
# `_map_mcp_list_tools` (named after the MCP call whose result it maps into message parts: pydantic-ai).
_TOOL_NAME = re.compile(r"(?i)^_?(\w+_)?tools$|^_?(\w+_)?tool_?(specs|defs|definitions)$")
_TOOL_LISTS = (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp)
_TOOL_TABLES = (cst.Dict, cst.DictComp)


@dataclass(eq=False)
class Slot:
    """A place whose value becomes part of the cached prefix.

    ``kind``: system, tools, tool_table, constant (a prompt-named constant),
    builder (a return of a prompt-builder function), cache_key or messages.
    ``holder`` is the function whose parameters are per-request data for this
    slot (the function holding the sink), or None. ``label`` names the slot in
    messages (``system=``, ``SYSTEM_PROMPT``). ``sanitiser`` is ``"sdk"`` for
    a :class:`~promptcache.PromptBuilder` layer, whose text the SDK normalises.
    """

    kind: str
    expr: cst.BaseExpression
    scope: Scope
    holder: Scope | None
    label: str
    sink: Sink | None = None
    sanitiser: str = ""
    requires: tuple[str, str] | None = None  # (imported template, variable): a slot only if the template names it


class _Collector:
    def __init__(self, flow: FlowAnalysis):
        self.flow = flow
        self.slots: list[Slot] = []
        self.seen: set[int] = set()

    def add(self, kind, expr, scope, label, sink=None, holder: Scope | None | bool = True, sanitiser: str = "",
            requires: tuple[str, str] | None = None) -> None:
        if expr is not None and id(expr) not in self.seen and (sink or not compared_only(self.flow, expr, scope)):
            self.seen.add(id(expr))
            owner = self.flow.holder_of(scope) if holder is True else holder
            self.slots.append(Slot(kind, expr, scope, owner, label, sink, sanitiser, requires))

    def named(self, pattern, kinds_for) -> None:
        """Constants (module/class level) and builder functions whose names match ``pattern``.

        ``kinds_for(value)`` gives the slot kind for a value (None: not a slot).
        """
        index = self.flow.index
        for scope in index.scopes:
            if scope.kind in ("module", "class"):
                for name, bindings in scope.bindings.items():
                    if pattern(name):
                        for b in bindings:
                            kind = kinds_for(b.value) if b.kind == "assign" else None
                            if kind is not None:
                                self.add(kind, b.value, scope, name, holder=None)
            elif scope.parent is not None and scope.parent.kind in ("module", "class") and pattern(scope.name) \
                    and not _response_handler(scope) and not user_content_only(self.flow, scope) \
                    and not suffix_only(self.flow, scope) and not returns_not_text(scope.node) \
                    and not _never_sent(self.flow, scope) and not returns_reply(self.flow, scope, _agent_calls(self.flow)):
                for ret in (value for r in scope.returns for value in _returned(r, pattern, _discarded(self.flow, scope))):
                    shape = self._shape(ret, scope)
                    kind = kinds_for(shape)
                    if kind is None and conversation(shape) and not conversation_sent_last(self.flow, scope, shape):
                        kind = "constant"  # a conversation spliced ahead of the history: all of it is prefix
                    elif kind is None and isinstance(shape, (cst.Call, cst.Dict)) and role_of(shape) == "user" \
                            and not message_sent_last(self.flow, scope, called=isinstance(shape, cst.Call)):
                        kind = "constant"  # `[create_system_message(user), *history, q]`: a user-role object ahead
                    if kind is not None:
                        self.add("builder" if kind == "constant" else kind, ret, scope, f"{scope.name}()", holder=None)

    def _shape(self, expr: cst.BaseExpression, scope: Scope) -> cst.BaseExpression:
        """What a returned name was built as (its list/dict literal; a message with a role when that is the name's
        only binding and its role is not written later), else the expression itself."""
        if isinstance(expr, cst.Name):
            bindings = self.flow.index.lookup(expr.value, scope)[1]
            for b in bindings:
                if b.kind == "assign" and isinstance(b.value, (*_TOOL_LISTS, *_TOOL_TABLES)):
                    return b.value
            if len(bindings) == 1 and bindings[0].kind == "assign" and role_of(bindings[0].value) is not None and not any(
                    isinstance(st.target, cst.Attribute) and st.target.attr.value == "role" and isinstance(st.target.value, cst.Name)
                    and st.target.value.value == expr.value and st.scope is scope for st in self.flow.index.stores):
                return bindings[0].value
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("list", "sorted", "tuple"):
            return cst.List([])
        return expr


def builder_method(flow: FlowAnalysis, call: cst.Call, scope: Scope) -> str | None:
    """``system`` / ``tools`` / ``document`` / ``example`` when ``call`` adds that layer to a
    :class:`promptcache.PromptBuilder` (``PromptBuilder().system(...)``, ``base.document(...)``), else None."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in BUILDER_LAYERS and builder_root(flow.index, func.value, scope) is not None:
        return func.attr.value
    return None


def _registered_order(root: cst.CSTNode) -> bool:
    """``PromptBuilder(tool_order="registered")``: the builder keeps the order tools were added in."""
    return isinstance(root, cst.Call) and any(
        a.keyword is not None and a.keyword.value == "tool_order" and not (isinstance(a.value, cst.SimpleString) and a.value.value[1:-1] == "name")
        for a in root.args
    )


def _never_sent(flow: FlowAnalysis, func: Scope) -> bool:
    """Every call of ``func`` is in a function of the module, and puts what it returns nowhere sent (a log line, a
    feature-flag service's targeting properties: skyvern's ``_prompt_type_flag_properties``). A call at module level,
    or in a function that declares ``global`` / ``nonlocal``, may bind a name read elsewhere (``_REGISTRY = ...``)."""
    calls = flow.calls_of(func)
    return bool(calls) and all(scope.kind == "function" and next(descendants(scope.node, (cst.Global, cst.Nonlocal)), None) is None
                               for _, scope in calls) and returned_landings(flow, func) == set()


def _later_message_last(flow: FlowAnalysis, message: cst.CSTNode, scope: Scope) -> bool:
    """A system message after other messages of a list literal that goes out last (``[{"role": "system", ...
    RULES}, user, {"role": "system", "content": f"Diff: {diff}"}]``): the newest turn by position, where
    per-request data belongs, whatever its role (mentat's revisor; issue 11); one after the spread history of a
    list sent as written (``[system, *history, note, user]``); or one appended to the history."""
    element = flow.facts.parent.get(message)
    if isinstance(element, cst.Arg):
        return appended_note(flow, message, dict_value(message, "content"), scope)
    if isinstance(element, cst.Assign) and len(element.targets) == 1 and isinstance(element.targets[0].target, cst.Name):
        name = element.targets[0].target.value  # `tail = {"role": "system", ...}`, placed once in a list
        reads = [n for n in descendants(scope.node, cst.Name) if n.value == name and n is not element.targets[0].target]
        element = flow.facts.parent.get(reads[0]) if len(reads) == 1 else None
    container = flow.facts.parent.get(element)
    if not (isinstance(element, cst.Element) and isinstance(container, (cst.List, cst.Tuple))) or container.elements[0] is element:
        return False
    at = next(i for i, el in enumerate(container.elements) if el is element)
    if any(isinstance(el, cst.StarredElement) for el in container.elements[:at]) and not any(
            isinstance(el, cst.StarredElement) for el in container.elements[at:]):
        return sent_as_written(flow, container, scope)  # `[system, *history, note, user]`: after the conversation
    return sent_last(flow, message, scope)


def _state_update(flow: FlowAnalysis, call: cst.Call) -> bool:
    """``return {"messages": [SystemMessage(...)]}`` from a function the module never calls: a LangGraph node's (or
    middleware's) state update, which the ``add_messages`` reducer appends to the conversation once; it is not the
    head of every request (deer-flow's date reminder; langchain-ai.github.io/langgraph/concepts/low_level/#reducers,
    2026-12). A graph's entry node that returns the head is once per thread, so also left out."""
    parent = flow.facts.parent
    element, listed = parent.get(call), parent.get(parent.get(call))
    entry = parent.get(listed) if isinstance(element, cst.Element) and isinstance(listed, cst.List) else None
    if not (isinstance(entry, cst.DictElement) and entry.value is listed and isinstance(entry.key, cst.SimpleString)
            and entry.key.evaluated_value == "messages"):
        return False
    ret = parent.get(parent.get(entry))
    if not isinstance(ret, cst.Return):
        return False
    return _framework_called(flow, flow.scope_at(ret), 0)


def _framework_called(flow: FlowAnalysis, func: Scope | None, depth: int) -> bool:
    """``func`` is a node or hook the framework calls: the module never calls it, or only returns its result from
    one (``def before_agent(...): return self._inject()``); not ``req = make_request(q)``."""
    if func is None or func.kind != "function" or depth > 2:
        return False
    for call, scope in flow.calls_of(func):
        node = flow.facts.parent.get(call)
        node = flow.facts.parent.get(node) if isinstance(node, cst.Await) else node
        if not (isinstance(node, cst.Return) and _framework_called(flow, scope, depth + 1)):
            return False
    return True


def _response_handler(func: Scope) -> bool:
    """A request handler (``@router.get(...)``) whose every return is an object, not text (a response model, a
    dict, a list: screenshot-to-code's ``list_prompt_reports`` returns ``PromptReportListResponse(...)``): what it
    builds is the HTTP response, whatever its name. One that returns text (a prompt preview) stays a builder."""
    returns = [r for r in func.returns if r is not None]
    return route_handler(func.node) and bool(returns) and all(
        isinstance(r, (cst.Dict, cst.List, cst.Tuple)) or isinstance(r, cst.Call) and constructor_call(r.func) for r in returns)


def _built_prompt(flow: FlowAnalysis, value: cst.BaseExpression | None, scope: Scope) -> bool:
    """``prompt = BASE.history(chat).user(q, context={...}).build()``: a prompt made by promptcache's builder.
    Its prefix layers are slots of their own (``.system()``, ``.tools()``, ...: :func:`builder_method`);
    ``.user()`` and its ``context=`` are the newest user turn, where per-request data belongs (the README)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "build":
        value = value.func.value
    return value is not None and builder_root(flow.index, value, scope) is not None


def system_slots(flow: FlowAnalysis) -> list[Slot]:
    """System-prompt slots, prompt-named constants and prompt-builder returns, in source order."""
    c = _Collector(flow)
    for req in requests(flow):  # keywords, and the entries of a `**params` request dict
        for kw in _SYSTEM_KEYWORDS:
            for expr, scope in sent_values(req, kw):
                c.add("system", expr, scope, req.sink.label(kw), req.sink)
    if flow.is_llm_file:
        index = flow.index
        agent_call = _agent_calls(flow)
        params = [(call, scope) for call, scope in index.calls if is_block(call) and entry(call, "role") is not None]
        for node, scope in [*index.role_dicts, *params]:  # `{"role": ...}`, `ChatCompletionSystemMessageParam(role=...)`
            role = dict_value(node, "role")
            if isinstance(role, cst.SimpleString) and role.value[1:-1] in ("system", "developer") \
                    and not _later_message_last(flow, node, scope):
                c.add("system", dict_value(node, "content"), scope, f"the {role.value[1:-1]} message")
        if index.imports_langchain:
            for node, scope in index.role_tuples:
                c.add("system", node.elements[1].value, scope, "the LangChain system message")
            for value, scope, label, requires in template_fills(flow):  # `chain.invoke({"user_name": user.name})`
                c.add("system", value, scope, label, requires=requires)
        for call, scope in index.calls:
            name = index.qualified(call.func, scope) or ""
            if (name.endswith("SystemMessage") or name.endswith("SystemMessagePromptTemplate.from_template")) \
                    and not _state_update(flow, call):
                content = next((a.value for a in call.args if a.keyword is None or a.keyword.value in ("content", "template")), None)
                # an app's own `SystemMessage` class is no LangChain message (onyx's `onyx.llm.models`)
                c.add("system", content, scope, "the LangChain system message" if name.startswith("langchain") else "the system message")
            if flow.sinks.sink_at(call, scope) is None and agent_call(call):
                for arg in call.args:
                    if arg.keyword is not None and arg.keyword.value in _AGENT_KEYWORDS:
                        c.add("system", arg.value, scope, f"{arg.keyword.value}=")
        framework_slots(flow, c.add, agent_call)  # pydantic-ai decorators, callable instructions, Gemini
        for value, scope in system_content_stores(flow):  # `if h[0]["role"] == "system": h[0]["content"] += x`
            c.add("system", value, scope, "the system message")
        for node, scope in index.role_dicts:  # `[{"role": "user", "content": f"Now: {now}"}, *history, q]`
            role = dict_value(node, "role")
            if isinstance(role, cst.SimpleString) and role.value[1:-1] in ("user", "assistant") and _ahead_of_history(flow, node):
                c.add("system", dict_value(node, "content"), scope, "the message ahead of the history")
        module_scope = next(sc for sc in flow.index.scopes if sc.kind == "module")
        c.named(flow.is_prompt_name, lambda value: None if _built_prompt(flow, value, module_scope) or user_turn(value) else "constant")
    message_list_slots(flow, c.add)  # an app's own message classes, in a module that is no LLM file
    for call, scope, method in flow.builder_calls:
        if method != "tools":
            for arg in call.args:
                if arg.keyword is None:
                    c.add("system", arg.value, scope, f"PromptBuilder.{method}()", sanitiser="sdk")
    c.slots.sort(key=lambda s: flow.facts.order.get(s.expr, 0))
    return c.slots


def _ahead_of_history(flow: FlowAnalysis, message: cst.CSTNode) -> bool:
    """``message`` heads every request of a conversation, whatever its role (newcomer of stop 36): in a list literal
    before a spread name and a later turn (``[ctx, ack, *history, q]``), or ``[ctx] + history + [q]``. Not in a list
    that ends with the spread (an agent's task before its steps, a prefill, a one-shot request's attachments)."""
    element = flow.facts.parent.get(message)
    listed = flow.facts.parent.get(element) if isinstance(element, cst.Element) else None
    if not isinstance(listed, cst.List):
        return False
    later = listed.elements[listed.elements.index(element) + 1:]
    spread = next((i for i, el in enumerate(later) if isinstance(el, cst.StarredElement)
                   and isinstance(el.value, (cst.Name, cst.Attribute))), None)
    if spread is not None:
        return any(not isinstance(el, cst.StarredElement) for el in later[spread + 1:])
    outer = flow.facts.parent.get(listed)
    if not (isinstance(outer, cst.BinaryOperation) and outer.left is listed and isinstance(outer.operator, cst.Add)
            and isinstance(outer.right, (cst.Name, cst.Attribute))):
        return False
    top = flow.facts.parent.get(outer)
    return isinstance(top, cst.BinaryOperation) and top.left is outer and isinstance(top.right, cst.List)


def _discarded(flow: FlowAnalysis, func: Scope) -> frozenset[tuple[int, int]]:
    """``(position, length)`` of the tuple elements every call of ``func`` in the module unpacks into ``_``
    (``prompt, _ = process_with_prompt_cache(...)``, onyx): results no caller uses. Empty when the module never
    calls it, or a call is used any other way."""
    calls = [call for call, _ in flow.calls_of(func)]
    common: set[tuple[int, int]] | None = None
    for call in calls:
        node = flow.facts.parent.get(call)
        node = flow.facts.parent.get(node) if isinstance(node, cst.Await) else node
        if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Tuple)):
            return frozenset()
        items = node.targets[0].target.elements
        if any(isinstance(el, cst.StarredElement) for el in items):
            return frozenset()
        mine = {(i, len(items)) for i, el in enumerate(items) if isinstance(el.value, cst.Name) and el.value.value == "_"}
        common = mine if common is None else common & mine
    return frozenset(common or ())


def _returned(ret: cst.BaseExpression, pattern, discarded: frozenset = frozenset()) -> list[cst.BaseExpression]:
    """What a builder returns as its prompt or tools: ``ret`` itself, or from a multi-value return
    (``return tools, servers, betas``: a tuple of names, attributes or calls) the elements whose name
    matches ``pattern`` (the others are other results, not the prompt or the tool list), when any does,
    less those every caller discards (``discarded``: ``(position, length)``, :func:`_discarded`)."""
    if not (isinstance(ret, cst.Tuple) and len(ret.elements) > 1):
        return [ret]
    size = len(ret.elements)
    if any((i, size) in discarded for i in range(size)) and not any(isinstance(el, cst.StarredElement) for el in ret.elements):
        return [el.value for i, el in enumerate(ret.elements) if (i, size) not in discarded]
    values = [el.value for el in ret.elements]
    if not all(isinstance(v, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) for v in values):
        return [ret]
    named = [v for v in values if isinstance(v, (cst.Name, cst.Attribute)) and pattern(v.value if isinstance(v, cst.Name) else v.attr.value)]
    return named or [ret]  # no element is named like the result: the whole tuple, as before


def _names_only(value: cst.BaseExpression) -> bool:
    """``[t.name for t in listed.tools]``: a comprehension of the tools' names (or of strings) lists names, not
    the definitions a request sends (agno's MCP test client ``list_tools()``; issue 11)."""
    elt = value.elt if isinstance(value, (cst.ListComp, cst.GeneratorExp)) else None
    return (isinstance(elt, cst.Attribute) and elt.attr.value == "name"
            or isinstance(elt, (cst.SimpleString, cst.FormattedString)))


def _feeds_tools(flow: FlowAnalysis, func: Scope, sent: list[cst.BaseExpression]) -> bool:
    """Whether a tool-named builder's result can be a tool list: the module never calls it (used elsewhere, its
    name is all there is), or a call of it is returned, or is, or is bound to a name that is, in a ``tools=``
    expression. Not: ``call_part, return_part = _map_mcp_list_tools(item)`` with the parts put into messages
    (pydantic-ai: it maps an MCP ``list_tools`` *output item*; issue 11), nor one annotated to return a list of
    tuples (letta's ``query_tools``: ``(tool, score, metadata)`` of a search)."""
    if returns_scored(func.node):  # `-> list[tuple[dict, float, dict]]`: search results with their scores
        return False
    calls = [call for call, _ in flow.calls_of(func)]
    if not calls:
        return True
    in_tools = {id(n) for e in sent for n in descendants(e, cst.Call)}
    names_in_tools = {n.value for e in sent for n in descendants(e, cst.Name)}
    for call in calls:
        if id(call) in in_tools:
            return True
        node = flow.facts.parent.get(call)
        while node is not None and not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            if isinstance(node, cst.Return):
                return True
            if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                if any(n.value in names_in_tools for t in targets for n in descendants(t, cst.Name)):
                    return True
            node = flow.facts.parent.get(node)
    return False


# Builtins that make a new collection of the listing: its order or its shape is the adapter's (`list(set(tools))`,
# `dict(name=t.name, ...)`), not the listing's as it came.
_REBUILDS = frozenset({"set", "frozenset", "dict", "reversed", "sorted", "zip"})


def _mcp_adapter(flow: FlowAnalysis, func: Scope) -> bool:
    """A client class's own ``list_tools`` method that hands on one MCP listing's tools as they come (letta's
    ``AsyncBaseMCPClient.list_tools``: ``response.tools``, or each tool dumped): a wrapper of the SDK's call, whose
    callers' ``x.list_tools()`` are MCP listings where they are sent (:mod:`promptcache.lint.call_taint`), so it is
    not reported itself. One that builds definitions (a dict literal, a tool class or ``dict`` called: skyvern's
    overlays), re-collects them (``set``, ``sorted``) or lists in a loop or a comprehension (servers merged) makes a
    tool list and is reported."""
    if func.name != "list_tools" or func.parent is None or func.parent.kind != "class":
        return False

    def within(node: cst.CSTNode) -> list[cst.CSTNode]:  # node's ancestors inside the method
        out = []
        for anc in flow.facts.ancestors(node):
            if anc is func.node:
                return out
            out.append(anc)
        return out

    calls = list(descendants(func.node, cst.Call))
    listings = [c for c in calls if isinstance(c.func, cst.Attribute) and c.func.attr.value == "list_tools"]
    built = any(constructor_call(c.func) and not any(isinstance(a, cst.Raise) for a in within(c))
                or isinstance(c.func, cst.Name) and c.func.value in _REBUILDS for c in calls)
    return len(listings) == 1 and not built and next(descendants(func.node, cst.Dict), None) is None \
        and not any(isinstance(a, (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp))
                    for a in within(listings[0]))


def tool_slots(flow: FlowAnalysis) -> list[Slot]:
    """``tools=`` of sinks and agent constructors, ``.bind_tools(x)``, tool-named constants and builders."""
    c = _Collector(flow)
    agent_call = _agent_calls(flow)
    for call, scope in flow.index.calls:
        expr = None
        sink = flow.sinks.sink_at(call, scope)
        if sink is not None or (flow.is_llm_file and agent_call(call)):  # (a sink: also the tools its map names)
            expr = sink.kw("tools") if sink is not None else argument(call, "tools")
        label = sink.label("tools") if sink is not None else "tools="
        if expr is None and flow.is_llm_file and isinstance(call.func, cst.Attribute) and call.func.attr.value == "bind_tools" and call.args:
            expr, label = call.args[0].value, "the list passed to bind_tools()"
        c.add("tools", expr, scope, label, sink)
    for req in requests(flow):  # `tools` of a `**params` request dict
        if req.sink.kw("tools") is None:
            for expr, scope in sent_values(req, "tools"):
                c.add("tools", expr, scope, "tools=", req.sink)
    if flow.is_llm_file:

        def kind_of(value) -> str | None:
            if _names_only(value):
                return None
            if isinstance(value, _TOOL_LISTS) or (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in ("list", "sorted", "tuple")):
                return "tools"
            return "tool_table" if isinstance(value, _TOOL_TABLES) else None

        c.named(lambda name: bool(_TOOL_NAME.search(name)), kind_of)
        sent = [sl.expr for sl in c.slots if sl.sink is not None or sl.label == "tools="]
        c.slots = [sl for sl in c.slots if sl.kind not in ("tools", "tool_table") or not sl.label.endswith("()")
                   or sl.scope.kind != "function" or (_feeds_tools(flow, sl.scope, sent) and not _mcp_adapter(flow, sl.scope))]
    for call, scope, method in flow.builder_calls:
        if method == "tools" and call.args:
            # The builder sorts tools by name (unless tool_order="registered") and writes canonical JSON:
            # only the content of the definitions is checked.
            ordered = _registered_order(builder_root(flow.index, call.func.value, scope))
            c.add("tools" if ordered else "tool_table", call.args[0].value, scope, "PromptBuilder.tools()", sanitiser="sdk")
    return c.slots
