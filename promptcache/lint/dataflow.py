"""The data-flow questions rules ask, answered once per file.

:class:`FlowAnalysis` ties the module index, the sink finder and the taint
engine together and answers, for the rules:

- which **prefix slots** the module has (``system=``, ``instructions=``, a
  system/developer message, LangChain system messages, ``tools=``,
  prompt-named constants and prompt-builder functions in LLM files and prompt
  modules), see :meth:`FlowAnalysis.system_slots` / :meth:`tool_slots`;
- which tainted values reach them and where each enters, as facts
  (:class:`Flow`: the slot, the node, the source kinds on the path, the part
  of the request): :attr:`FlowAnalysis.prefix_flows`,
  :attr:`FlowAnalysis.breakpoint_flows` (blocks at or before the last
  Anthropic ``cache_control``) and :attr:`FlowAnalysis.cache_key_flows`.

The engine never decides which rule a fact is: each
:class:`~promptcache.lint.rule.FlowRule` reads the facts and says which are
its findings, with what message (``lint_rules/``).

History, summary and prompt-text questions live in :mod:`promptcache.lint.turns`,
:mod:`promptcache.lint.summaries` and :mod:`promptcache.lint.prompt_text`,
reached through :attr:`turns`, :attr:`summaries` and :attr:`text`.
"""

from __future__ import annotations

import re
from functools import cached_property

import libcst as cst

from promptcache.lint import slots
from promptcache.lint import sources as S
from promptcache.lint.breakpoints import message_blocks_before_last_breakpoint, system_blocks_after_last_breakpoint
from promptcache.lint.config import LintConfig
from promptcache.lint.flow_facts import Flow, Issue, dedupe, identity
from promptcache.lint.index import ModuleIndex, Scope
from promptcache.lint.framework_slots import message_lists
from promptcache.lint.object_state import built_per_call
from promptcache.lint.call_sites import CallSites
from promptcache.lint.prompt_text import PromptText
from promptcache.lint.request_view import conversations, requests, sent_values
from promptcache.lint.clock_periods import division_period
from promptcache.lint.sinks import SinkFinder
from promptcache.lint.slots import Slot
from promptcache.lint.summaries import Summaries
from promptcache.lint.taint import Source, TaintEngine, as_period
from promptcache.lint.template_inputs import behind_template_input
from promptcache.lint.turns import Turns
from promptcache.lint.value_syntax import PROMPT_FIELD
from promptcache.lint.walk import TreeFacts

SYSTEM_KINDS = frozenset({S.VOLATILE, S.SHUFFLED, S.UNSORTED_JSON, S.SUMMARY, S.IDENTITY, S.PARAM})
TOOL_KINDS = frozenset({S.VOLATILE, S.IDENTITY, S.ENV, S.SHUFFLED, S.UNSORTED_JSON, S.UNORDERED, S.FS_ORDER, S.MCP, S.MCP_CALL})
CONTENT_KINDS = frozenset({S.VOLATILE, S.IDENTITY, S.ENV, S.UNSORTED_JSON})


class FlowAnalysis:
    """Per-file data-flow answers, computed lazily and cached."""

    def __init__(self, module: cst.Module, index: ModuleIndex, facts: TreeFacts, config: LintConfig, prompt_module: bool = False,
                 path: str = "", enabled: frozenset[str] | None = None):
        self.module = module
        self.path = path
        self.enabled_codes = enabled
        self.index = index
        self.facts = facts
        self.config = config
        self.prompt_module = prompt_module
        self.prompt_name = re.compile(config.prompt_name_regex)
        self.sinks = SinkFinder(index, config.extra_sinks)
        self.taint = TaintEngine(index, self.sinks, re.compile(config.volatile_name_regex), frozenset(config.extra_volatile_sources), facts.parent)
        self.agent_calls: set[int] | None = None  # ids of the calls that look like agent constructors (slots)

    def enabled(self, code: str) -> bool:
        """Rule ``code`` runs on this file (selected, not ignored, not in a file-level ``# promptcache: noqa``)."""
        return self.enabled_codes is None or code in self.enabled_codes

    # -- module facts --------------------------------------------------------
    @cached_property
    def is_llm_file(self) -> bool:
        """Imports an LLM SDK, contains a sink (a request sent with keywords or ``**params``, or a call that an
        ``extra-sinks`` entry names, whatever it passes) or builds a PromptBuilder layer, or is a prompt module
        imported by one."""
        return (self.index.imports_llm or self.prompt_module or bool(self.sinks.all()) or bool(self.sinks.matched)
                or bool(self.builder_calls) or bool(requests(self)))

    @cached_property
    def message_lists(self) -> list:
        """The request message lists built with an app's own classes (:func:`~promptcache.lint.framework_slots.message_lists`)."""
        return message_lists(self)

    @cached_property
    def call_sites(self) -> CallSites:
        """The module's calls of its own functions, by callee (built on first use)."""
        return CallSites(self.index, self.module, self.facts, self._calls_by_callee, self.path)

    @cached_property
    def builder_calls(self) -> list[tuple[cst.Call, Scope, str]]:
        """``(call, scope, layer)`` for every PromptBuilder ``.system/.tools/.document/.example`` call."""
        out = []
        for call, scope in self.index.calls:
            method = slots.builder_method(self, call, scope)
            if method is not None:
                out.append((call, scope, method))
        return out

    @cached_property
    def _calls_by_callee(self) -> dict[int, list[tuple[cst.Call, Scope]]]:
        out: dict[int, list[tuple[cst.Call, Scope]]] = {}
        for call, scope in self.index.calls:
            callee = self.index.function_named(call.func, scope)
            if callee is not None:
                out.setdefault(id(callee), []).append((call, scope))
        return out

    def calls_of(self, func: Scope) -> list[tuple[cst.Call, Scope]]:
        """``(call, calling scope)`` for every call in the module of the module-local function ``func``
        (:meth:`ModuleIndex.function_named`), in source order."""
        return self._calls_by_callee.get(id(func), [])

    def scope_at(self, node: cst.CSTNode) -> Scope | None:
        """The innermost function, class or module scope whose body holds ``node``."""
        for anc in self.facts.ancestors(node):
            scope = self.index.scope_of_node.get(anc)
            if scope is not None:
                return scope
        return None

    def holder_of(self, scope: Scope) -> Scope | None:
        """The innermost function scope at or above ``scope``."""
        current: Scope | None = scope
        while current is not None and current.kind != "function":
            current = current.parent
        return current

    # -- slots ---------------------------------------------------------------
    @cached_property
    def system_slots(self) -> list[Slot]:
        """System-prompt slots, prompt-named constants and prompt-builder returns (:mod:`promptcache.lint.slots`)."""
        return slots.system_slots(self)

    @cached_property
    def tool_slots(self) -> list[Slot]:
        """Tool slots (:mod:`promptcache.lint.slots`)."""
        return slots.tool_slots(self)

    def is_prompt_name(self, name: str) -> bool:
        """A name for a prompt (the configured regex); what the value is decides whether it is a prefix slot
        (a user-role message is not: :func:`promptcache.lint.slots.system_slots`)."""
        return bool(self.prompt_name.search(name))

    @cached_property
    def _root_values(self) -> set[int]:
        """Binding values and functions that are slots of their own (reported where they are defined)."""
        roots = {id(s.expr) for s in self.system_slots + self.tool_slots if s.kind in ("constant", "tools", "tool_table") and s.holder is None and s.sink is None}
        roots |= {id(s.scope) for s in self.system_slots + self.tool_slots if s.label.endswith("()") and s.holder is None}
        return roots

    # -- locating where taint enters ---------------------------------------
    def sites(self, expr: cst.BaseExpression, scope: Scope, kinds: frozenset[str], depth: int = 0) -> list[tuple[cst.CSTNode, frozenset[Source]]]:
        """The innermost sub-expressions through which ``kinds`` of taint enter ``expr``.

        Descends into container literals, f-strings, concatenations and
        comprehensions, and follows names bound only to container literals
        (a dict or list built in place). Names bound to prompt-named constants,
        and calls of prompt-builder functions, are reported where they are defined.
        """
        t = frozenset(s for s in self.taint.of(expr, scope) if s.kind in kinds)
        if not t:
            return []
        if depth > 12:
            return [(expr, t)]
        parts: list[tuple[cst.BaseExpression, Scope, frozenset[str]]] = []
        e = expr
        if isinstance(e, (cst.List, cst.Tuple, cst.Set)):
            parts = [(el.value, scope, kinds) for el in e.elements]
        elif isinstance(e, cst.Dict):
            for el in e.elements:
                if isinstance(el, cst.DictElement):
                    parts += [(el.key, scope, kinds), (el.value, scope, kinds)]
                else:
                    parts.append((el.value, scope, kinds))
        elif isinstance(e, cst.FormattedString):
            parts = [(p.expression, scope, kinds) for p in e.parts if isinstance(p, cst.FormattedStringExpression)]
        elif isinstance(e, cst.ConcatenatedString):
            parts = [(e.left, scope, kinds), (e.right, scope, kinds)]
        elif isinstance(e, cst.BinaryOperation):
            parts = [(e.left, scope, kinds), (e.right, scope, kinds)]
        elif isinstance(e, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            elts = [e.key, e.value] if isinstance(e, cst.DictComp) else [e.elt]
            parts = [(x, scope, kinds - S.ORDER_KINDS - {S.MCP_CALL}) for x in elts]
            comp = e.for_in
            while comp is not None:
                parts.append((comp.iter, scope, kinds))
                comp = comp.inner_for_in
        elif isinstance(e, (cst.Await, cst.NamedExpr)):
            parts = [(e.expression if isinstance(e, cst.Await) else e.value, scope, kinds)]
        elif isinstance(e, cst.IfExp):
            parts = [(e.body, scope, kinds), (e.orelse, scope, kinds)]
        elif isinstance(e, (cst.Name, cst.Attribute)):
            followed = self.follow(e, scope)
            if followed == []:
                return []
            if followed and all(isinstance(v, cst.Call) and self._is_builder_call(v, s) for v, s, _ in followed):
                return [site for v, s, _ in followed for site in self.sites(v, s, kinds, depth + 1)]
            if followed is not None:
                parts = [(v, s, kinds if not mutated else kinds - S.ORDER_KINDS - {S.MCP_CALL}) for v, s, mutated in followed]
        elif isinstance(e, cst.Call) and self._is_builder_call(e, scope):
            # what the call passes in and the builder's body carries to its return (not `system_for(user_tz)`'s
            # zone, which only renders a date there)
            carried = {identity(s) for s in t}  # (written into text there or not)
            args = frozenset(s for s in self.taint.union((a.value for a in e.args), scope) if s.kind in kinds and identity(s) in carried)
            return [(e, args)] if args else []
        found: list[tuple[cst.CSTNode, frozenset[Source]]] = []
        for sub, sub_scope, sub_kinds in parts:
            sub_sites = self.sites(sub, sub_scope, sub_kinds, depth + 1)
            if isinstance(e, cst.FormattedString) and (period := self.taint.spec_period(self.facts.parent.get(sub))):
                sub_sites = [(node, as_period(sub_t, period)) for node, sub_t in sub_sites]  # `{now:%Y-%m-%d}`
            if isinstance(e, cst.BinaryOperation) and (period := division_period(e, self.index, scope)):
                sub_sites = [(node, as_period(sub_t, period)) for node, sub_t in sub_sites]  # `time.time() // 3600`
            if isinstance(e, (cst.Dict, cst.FormattedString)):  # `{"description": describe(user)}`: in the text now
                sub_sites = [(node, S.written(sub_t)) for node, sub_t in sub_sites]
            found += sub_sites
        covered = {identity(s) for _, sub_t in found for s in sub_t}
        rest = frozenset(s for s in t if identity(s) not in covered)
        return found + [(expr, rest)] if rest else found

    def follow(self, e: cst.BaseExpression, scope: Scope):
        """Where a name or ``self.attr`` leads for :meth:`sites` (and for PC301's fix, which retraces it).

        None: not followed (report at the use). ``[]``: a prompt-named
        constant, reported at its own definition. Otherwise the
        ``(value, scope, mutated)`` triples of its bindings, when all of them build a
        container literal in place (``d = {...}``, ``msgs = [...]`` plus appends;
        ``mutated`` is True for an append, whose order is not the container's), or
        all of them call a prompt or tool builder of the module (``tools = build_tools(x)``).
        """
        if isinstance(e, cst.Name):
            found_scope, bindings = self.index.lookup(e.value, scope)
            name = e.value
            constant = found_scope is not None and found_scope.kind in ("module", "class")
        elif isinstance(e, cst.Attribute) and isinstance(e.value, cst.Name):
            cls = self.index.class_of_receiver(e.value, scope)
            if cls is None:
                return None
            name = e.attr.value
            bindings = cls.attrs.get(name, [])
            constant = bool(bindings) and all(b.scope.kind == "class" for b in bindings)
        else:
            return None
        if constant and any(b.kind == "assign" and id(b.value) in self._root_values for b in bindings):
            return []
        valued = [b for b in bindings if b.kind != "mutate"]
        containers = (cst.List, cst.Tuple, cst.Dict, cst.Set)
        if valued and all(b.kind in ("assign", "walrus") and isinstance(b.value, containers) for b in valued):
            return [(b.value, b.scope, b.kind == "mutate") for b in bindings]
        if valued and len(valued) == len(bindings) and all(
                b.kind in ("assign", "walrus") and isinstance(b.value, cst.Call) and self._is_builder_call(b.value, b.scope) for b in valued):
            # `tools = build_tools(enabled)`: the builder is reported at its own definition; only what the call
            # passes in is reported here (one problem, one report; issue 11)
            return [(b.value, b.scope, False) for b in valued]
        return None

    def _is_builder_call(self, call: cst.Call, scope: Scope) -> bool:
        callee = self.index.function_named(call.func, scope)
        return callee is not None and id(callee) in self._root_values

    # -- facts --------------------------------------------------------------
    @cached_property
    def prefix_flows(self) -> list[Flow]:
        """Every tainted value in a system slot, a tool slot or an earlier message (in that order).

        The rules decide which of these facts are their findings
        (:meth:`promptcache.lint.rule.FlowRule.findings`).
        """
        flows: list[Flow] = []
        for slot in self.system_slots:
            per_request = frozenset(self._per_request(slot))
            after = system_blocks_after_last_breakpoint(self, slot.sink) if slot.sink is not None and slot.sink.api == "anthropic" else set()
            for node, t in self.sites(slot.expr, slot.scope, SYSTEM_KINDS):
                past = bool(after) and any(id(n) in after for n in (node, *self.facts.ancestors(node)))
                flows.append(Flow(slot, node, t, "system", per_request, past, behind_template_input(self, slot, node)))
        for slot in self.tool_slots:
            area, kinds = ("tools", TOOL_KINDS) if slot.kind == "tools" else ("tool_content", CONTENT_KINDS)
            flows += [Flow(slot, node, t, area) for node, t in self.sites(slot.expr, slot.scope, kinds)]
        return flows + self._earlier_message_flows()

    def _earlier_message_flows(self) -> list[Flow]:
        """Shuffles in ``messages=`` / ``input=`` before the last message (few-shot examples, the
        history): all of them are part of the cached prefix."""
        flows = []
        for label, expr, scope, sink in conversations(self):  # keywords, and the entries of a `**params` dict
            if not isinstance(expr, (cst.List, cst.Tuple)) or len(expr.elements) < 2:
                continue
            slot = Slot("messages", expr, scope, self.holder_of(scope), label, sink)
            for el in expr.elements[:-1]:
                flows += [Flow(slot, node, t, "messages") for node, t in self.sites(el.value, scope, frozenset({S.SHUFFLED}))]
        return flows

    def innermost(self, issues: list[Issue]) -> list[Issue]:
        """Drop an issue whose node contains another issue of the same code: one value, one report.

        A slot nested in another (a LangChain system message inside a
        prompt-named ``ChatPromptTemplate``) reports the value at the inner slot.
        """
        by_code: dict[str, set[cst.CSTNode]] = {}
        for issue in issues:
            by_code.setdefault(issue.code, set()).add(issue.node)
        contains: set[tuple[str, cst.CSTNode]] = set()
        for code, nodes in by_code.items():
            for node in nodes:
                for anc in self.facts.ancestors(node):
                    if anc in nodes:
                        contains.add((code, anc))
        return [i for i in issues if (i.code, i.node) not in contains]

    def _per_request(self, slot: Slot) -> set[tuple[int, int]]:
        """The parameters of the slot's function that differ between its calls, as ``(func_id, index)``.

        Not: a parameter every call binds to one fixed value (per process: :mod:`promptcache.lint.call_sites`);
        the parameters of ``__init__`` (set once per object: a conversation's system message built when the
        conversation starts, OpenHands), unless the module builds an object for one call
        (:meth:`_init_per_call`); a parameter whose only value in the module is its literal default
        (no call passes it: ``n_examples: int = 3``, pydantic-evals); the conversation or the tool list passed
        in as a whole (``messages``, ``tools``: a converter re-maps the system message it is given and
        describes the agent's tools, OpenHands' ``convert_fncall_messages_to_non_fncall_messages``; a summary
        or a tool set per call are other rules'), but not a value picked from one of its messages by position
        (``detect(messages[-1]["content"])``: a locale detected from the newest message, issue 11 review); a
        parameter named as the system prompt with text added (``system_prompt + "\nCite sources."``: the prompt it
        was given), unless a call in the module gives it a template around per-request data
        (:meth:`_templated_by_caller`).
        """
        if slot.holder is None:
            return set()
        init = self._init_per_call(slot.holder)
        if slot.holder.name == "__init__" and init is None:
            return set()
        params = slot.holder.params
        per_object = {(s.func_id, s.index) for s in self.taint.of(slot.expr, slot.scope)
                      if init is not None and s.kind == S.PARAM and s.templated and s.func_id == id(init)}
        return per_object | {
            (s.func_id, s.index)
            for s in self.taint.of(slot.expr, slot.scope)
            if s.kind == S.PARAM and s.templated and s.func_id == id(slot.holder)
            and not (_conversation_or_tools(name := params[s.index] if s.index < len(params) else s.detail) and not s.picked
                     and not (PROMPT_FIELD.search(name) and self._templated_by_caller(slot.holder, s.index)))
            and not self.call_sites.fixed_everywhere(slot.holder, s.index)
            and not self.call_sites.default_only(slot.holder, s.index)
        }

    def _templated_by_caller(self, func: Scope, index: int) -> bool:
        """Some call of ``func`` in the module passes parameter ``index`` a template around per-request data (an
        identity, or its own parameter with text, not one named as a prompt: ``ask(f"You help {user.name}.", q)``):
        a prompt-named parameter given that is no fixed prompt passed through."""
        return any(value is not None and any(s.kind == S.IDENTITY or s.kind == S.PARAM and s.templated
                                             and not PROMPT_FIELD.search(s.detail) for s in self.taint.of(value, scope))
                   for value, scope in self.call_sites.arguments(func, index))

    def _init_per_call(self, holder: Scope) -> Scope | None:
        """The ``__init__`` of ``holder``'s class when the module builds its objects for one call each
        (:func:`~promptcache.lint.object_state.built_per_call`: ``Tutor(req.topic).ask(req.q)``), else None: its
        parameters are then per request, not per object (issue 11 review)."""
        cls = holder.cls
        init = cls.methods.get("__init__") if cls is not None else None
        return init if init is not None and built_per_call(self.index, self.facts.parent, cls) else None

    @cached_property
    def cache_key_flows(self) -> list[Flow]:
        """Volatile ``prompt_cache_key=`` values (a keyword, or an entry of a ``**params`` request dict)."""
        flows = []
        for req in requests(self):
            for key, scope in sent_values(req, "prompt_cache_key"):
                slot = Slot("cache_key", key, scope, self.holder_of(scope), "prompt_cache_key=", req.sink)
                flows += [Flow(slot, node, t, "cache_key") for node, t in self.sites(key, scope, frozenset({S.VOLATILE}))]
        return flows

    @cached_property
    def breakpoint_flows(self) -> list[Flow]:
        """Volatile or identity values in Anthropic message blocks at or before the last ``cache_control``."""
        flows = []
        for req in requests(self):  # keywords, and the entries of a `**params` request dict
            sink = req.sink
            if sink.api not in ("anthropic", "litellm", "extra"):
                continue
            for block, scope in message_blocks_before_last_breakpoint(self, sink):
                slot = Slot("messages", block, scope, self.holder_of(scope), "a cached message block", sink)
                flows += [Flow(slot, node, t, "cached_block") for node, t in self.sites(block, scope, frozenset({S.VOLATILE, S.IDENTITY}))]
        return flows

    # -- the other two helpers ----------------------------------------------
    @cached_property
    def turns(self) -> Turns:
        """History and per-turn questions (:class:`promptcache.lint.turns.Turns`)."""
        return Turns(self)

    @cached_property
    def summaries(self) -> Summaries:
        """Summarisation questions (:class:`promptcache.lint.summaries.Summaries`)."""
        return Summaries(self)

    @cached_property
    def text(self) -> PromptText:
        """Prompt-text questions (:class:`promptcache.lint.prompt_text.PromptText`)."""
        return PromptText(self)

    def code(self, node: cst.CSTNode) -> str:
        """Source text of ``node``."""
        return self.module.code_for_node(node)


_CONVERSATION_PARAM = re.compile(r"(?i)^_?(messages|history|chat_history|conversation|turns|tools|tool_specs|functions)$")


def _conversation_or_tools(name: str) -> bool:
    """A parameter that holds the conversation, the tool list or the system prompt itself, by its whole name
    (``system_prompt + compression_context``: the prompt it was given, passed through; DocsGPT's
    ``_build_messages(self, system_prompt, query)``)."""
    return bool(_CONVERSATION_PARAM.search(name) or PROMPT_FIELD.search(name))


__all__ = ["Flow", "FlowAnalysis", "Issue", "Slot", "dedupe"]
