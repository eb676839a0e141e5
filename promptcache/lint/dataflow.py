"""The data-flow questions rules ask, answered once per file.

:class:`FlowAnalysis` ties the module index, the sink finder and the taint
engine together and answers, for the rules:

- which **prefix slots** the module has (``system=``, ``instructions=``, a
  system/developer message, LangChain system messages, ``tools=``,
  prompt-named constants and prompt-builder functions in LLM files and prompt
  modules), see :meth:`FlowAnalysis.system_slots` / :meth:`tool_slots`;
- which tainted values reach them and where each enters (:meth:`prefix_issues`):
  every problem is classified once, at the site where it enters the slot
  (or, for shuffles and ``json.dumps``, where it starts), with one code per
  site in priority order, so one value is never reported by two rules;
- the Anthropic breakpoint order (:meth:`breakpoint_issues`) and
  ``prompt_cache_key`` values (:meth:`cache_key_issues`).

History, summary and prompt-text questions live in :mod:`promptcache.lint.turns`,
:mod:`promptcache.lint.summaries` and :mod:`promptcache.lint.prompt_text`,
reached through :attr:`turns`, :attr:`summaries` and :attr:`text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst

from promptcache.lint import slots
from promptcache.lint import sources as S
from promptcache.lint.breakpoints import message_blocks_before_last_breakpoint
from promptcache.lint.config import LintConfig
from promptcache.lint.index import ModuleIndex, Scope
from promptcache.lint.call_sites import CallSites
from promptcache.lint.prompt_text import PromptText
from promptcache.lint.sinks import SinkFinder
from promptcache.lint.slots import Slot
from promptcache.lint.summaries import Summaries
from promptcache.lint.taint import Source, TaintEngine
from promptcache.lint.turns import Turns
from promptcache.lint.walk import TreeFacts

SYSTEM_KINDS = frozenset({S.VOLATILE, S.SHUFFLED, S.UNSORTED_JSON, S.SUMMARY, S.IDENTITY, S.PARAM})
TOOL_KINDS = frozenset({S.VOLATILE, S.IDENTITY, S.ENV, S.SHUFFLED, S.UNSORTED_JSON, S.UNORDERED, S.FS_ORDER, S.MCP, S.MCP_CALL})
CONTENT_KINDS = frozenset({S.VOLATILE, S.IDENTITY, S.ENV, S.UNSORTED_JSON})


@dataclass(eq=False)
class Issue:
    """A classified problem: rule ``code`` at ``node``; ``detail`` names the first source.

    ``sources`` are all the sources the message names (every volatile or
    identity source that reaches the slot through ``node``), ``()`` for rules
    whose message names one origin. ``more_slots`` are the other slots the
    same ``node`` reaches with the same code (one constant read by two
    ``tools=``), reported once, at ``node``: a fix must cover them all.
    """

    code: str
    node: cst.CSTNode
    detail: str
    slot: Slot
    sources: tuple[Source, ...] = ()
    more_slots: list[Slot] = field(default_factory=list)
    origin: cst.CSTNode | None = None  # where the first source starts (the listing call of PC302), when known


class FlowAnalysis:
    """Per-file data-flow answers, computed lazily and cached."""

    def __init__(self, module: cst.Module, index: ModuleIndex, facts: TreeFacts, config: LintConfig, prompt_module: bool = False):
        self.module = module
        self.index = index
        self.facts = facts
        self.config = config
        self.prompt_module = prompt_module
        self.prompt_name = re.compile(config.prompt_name_regex)
        self.sinks = SinkFinder(index, config.extra_sinks)
        self.taint = TaintEngine(index, self.sinks, re.compile(config.volatile_name_regex), frozenset(config.extra_volatile_sources))

    # -- module facts --------------------------------------------------------
    @cached_property
    def is_llm_file(self) -> bool:
        """Imports an LLM SDK, contains a sink or builds a PromptBuilder layer, or is a prompt module imported by one."""
        return self.index.imports_llm or self.prompt_module or bool(self.sinks.all()) or bool(self.builder_calls)

    @cached_property
    def call_sites(self) -> CallSites:
        """The module's calls of its own functions, by callee (built on first use)."""
        return CallSites(self.index, self.module)

    @cached_property
    def builder_calls(self) -> list[tuple[cst.Call, Scope, str]]:
        """``(call, scope, layer)`` for every PromptBuilder ``.system/.tools/.document/.example`` call."""
        out = []
        for call, scope in self.index.calls:
            method = slots.builder_method(self, call, scope)
            if method is not None:
                out.append((call, scope, method))
        return out

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
            if followed is not None:
                parts = [(v, s, kinds if not mutated else kinds - S.ORDER_KINDS - {S.MCP_CALL}) for v, s, mutated in followed]
        elif isinstance(e, cst.Call) and self._is_builder_call(e, scope):
            args = frozenset(s for s in self.taint.union((a.value for a in e.args), scope) if s.kind in kinds)
            return [(e, args)] if args else []
        found: list[tuple[cst.CSTNode, frozenset[Source]]] = []
        for sub, sub_scope, sub_kinds in parts:
            found += self.sites(sub, sub_scope, sub_kinds, depth + 1)
        covered = {_identity(s) for _, sub_t in found for s in sub_t}
        rest = frozenset(s for s in t if _identity(s) not in covered)
        return found + [(expr, rest)] if rest else found

    def follow(self, e: cst.BaseExpression, scope: Scope):
        """Where a name or ``self.attr`` leads for :meth:`sites` (and for PC301's fix, which retraces it).

        None: not followed (report at the use). ``[]``: a prompt-named
        constant, reported at its own definition. Otherwise the
        ``(value, scope, mutated)`` triples of its bindings, when all of them build a
        container literal in place (``d = {...}``, ``msgs = [...]`` plus appends;
        ``mutated`` is True for an append, whose order is not the container's).
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
        return None

    def _is_builder_call(self, call: cst.Call, scope: Scope) -> bool:
        callee = self.index.function_named(call.func, scope)
        return callee is not None and id(callee) in self._root_values

    # -- classification -----------------------------------------------------
    @cached_property
    def prefix_issues(self) -> list[Issue]:
        """Every classified problem in system slots and tool slots (one code per site)."""
        issues: list[Issue] = []
        for slot in self.system_slots:
            per_request = self._per_request(slot)
            for node, t in self.sites(slot.expr, slot.scope, SYSTEM_KINDS):
                issues += self._classify_system(slot, node, t, per_request)
        for slot in self.tool_slots:
            kinds = TOOL_KINDS if slot.kind == "tools" else CONTENT_KINDS
            for node, t in self.sites(slot.expr, slot.scope, kinds):
                issues += self._classify_tools(slot, node, t)
        issues += self._shuffled_messages()
        return self._innermost(_dedupe(issues))

    def _shuffled_messages(self) -> list[Issue]:
        """PC303 in ``messages=`` / ``input=``: every message before the last (few-shot examples, the
        history) is part of the cached prefix, so a shuffled or sampled one there breaks it."""
        issues = []
        for sink in self.sinks.all():
            for label, expr in sink.conversation():
                if not isinstance(expr, (cst.List, cst.Tuple)) or len(expr.elements) < 2:
                    continue
                slot = Slot("messages", expr, sink.scope, self.holder_of(sink.scope), label, sink)
                for el in expr.elements[:-1]:
                    for node, t in self.sites(el.value, sink.scope, frozenset({S.SHUFFLED})):
                        issues += [Issue("PC303", s.origin or node, s.detail, slot) for s in _by_kind(t)[S.SHUFFLED]]
        return issues

    def _innermost(self, issues: list[Issue]) -> list[Issue]:
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
        if slot.holder is None:
            return set()
        return {  # a parameter every call binds to one fixed value is per process (promptcache.lint.call_sites)
            (s.func_id, s.index)
            for s in self.taint.of(slot.expr, slot.scope)
            if s.kind == S.PARAM and s.templated and s.func_id == id(slot.holder)
            and not self.call_sites.fixed_everywhere(slot.holder, s.index)
        }

    def _classify_system(self, slot: Slot, node, t: frozenset[Source], per_request) -> list[Issue]:
        by_kind = _by_kind(t)
        if S.VOLATILE in by_kind:
            return [Issue("PC101", node, by_kind[S.VOLATILE][0].detail, slot, _of_kinds(by_kind, S.VOLATILE, S.IDENTITY))]
        if S.SHUFFLED in by_kind:
            return [Issue("PC303", s.origin or node, s.detail, slot) for s in by_kind[S.SHUFFLED]]
        if S.UNSORTED_JSON in by_kind:
            return [Issue("PC304", s.origin or node, s.detail, slot) for s in by_kind[S.UNSORTED_JSON]]
        if S.SUMMARY in by_kind:
            return [Issue("PC202", node, by_kind[S.SUMMARY][0].detail, slot)]
        params = tuple(s for s in by_kind.get(S.PARAM, ()) if (s.func_id, s.index) in per_request)
        if S.IDENTITY in by_kind:
            detail = f"the user identity `{by_kind[S.IDENTITY][0].detail}`"
            return [Issue("PC102", node, detail, slot, _of_kinds(by_kind, S.IDENTITY) + params)]
        if params:
            return [Issue("PC102", node, f"the per-request parameter `{params[0].detail}`", slot, params)]
        return []

    def _classify_tools(self, slot: Slot, node, t: frozenset[Source]) -> list[Issue]:
        by_kind = _by_kind(t)
        out: list[Issue] = []
        if S.SHUFFLED in by_kind:
            out += [Issue("PC303", s.origin or node, s.detail, slot) for s in by_kind[S.SHUFFLED]]
        elif S.MCP in by_kind:
            out.append(Issue("PC305", node, "unsorted", slot))
        elif S.FS_ORDER in by_kind:
            first = by_kind[S.FS_ORDER][0]
            out.append(Issue("PC302", node, first.detail, slot, origin=first.origin))
        elif S.UNORDERED in by_kind:
            out.append(Issue("PC301", node, by_kind[S.UNORDERED][0].detail, slot))
        elif S.MCP_CALL in by_kind:
            for s in by_kind[S.MCP_CALL]:
                if s.origin is not None and self.turns.per_turn(s.origin):
                    out.append(Issue("PC305", s.origin, "re-listed", slot))
        for kind in (S.VOLATILE, S.IDENTITY):  # an environment value is per process, not per request (issue 11)
            if kind in by_kind:
                out.append(Issue("PC104", node, by_kind[kind][0].detail, slot, _of_kinds(by_kind, S.VOLATILE, S.IDENTITY)))
                break
        else:
            if S.UNSORTED_JSON in by_kind:
                out += [Issue("PC304", s.origin or node, s.detail, slot) for s in by_kind[S.UNSORTED_JSON]]
        return out

    @cached_property
    def cache_key_issues(self) -> list[Issue]:
        """PC105: volatile ``prompt_cache_key=`` values."""
        issues = []
        for sink in self.sinks.all():
            key = sink.kw("prompt_cache_key")
            if key is None:
                continue
            slot = Slot("cache_key", key, sink.scope, self.holder_of(sink.scope), "prompt_cache_key=", sink)
            for node, t in self.sites(key, sink.scope, frozenset({S.VOLATILE})):
                volatile = _by_kind(t)[S.VOLATILE]
                issues.append(Issue("PC105", node, volatile[0].detail, slot, tuple(volatile)))
        return issues

    @cached_property
    def breakpoint_issues(self) -> list[Issue]:
        """PC103: volatile or identity values in message blocks at or before the last ``cache_control``."""
        issues = []
        for sink in self.sinks.all():
            if sink.api not in ("anthropic", "litellm", "extra"):
                continue
            for block, scope in message_blocks_before_last_breakpoint(self, sink):
                slot = Slot("messages", block, scope, self.holder_of(scope), "a cached message block", sink)
                for node, t in self.sites(block, scope, frozenset({S.VOLATILE, S.IDENTITY})):
                    kinds = _by_kind(t)
                    detail = (kinds.get(S.VOLATILE) or kinds.get(S.IDENTITY))[0].detail
                    issues.append(Issue("PC103", node, detail, slot, _of_kinds(kinds, S.VOLATILE, S.IDENTITY)))
        return _dedupe(issues)

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


def _identity(s: Source) -> tuple:
    return (s.kind, s.detail, s.origin_id, s.func_id, s.index)


def _by_kind(t: frozenset[Source]) -> dict[str, list[Source]]:
    out: dict[str, list[Source]] = {}
    for s in sorted(t, key=lambda s: (s.kind, s.detail, s.origin_id)):
        out.setdefault(s.kind, []).append(s)
    return out


def _of_kinds(by_kind: dict[str, list[Source]], *kinds: str) -> tuple[Source, ...]:
    """The sources of ``kinds``, kind by kind (the order the message names them in)."""
    return tuple(s for kind in kinds for s in by_kind.get(kind, ()))


def _dedupe(issues: list[Issue]) -> list[Issue]:
    """One issue per (code, node), the first; the slots of the others go to its ``more_slots``."""
    seen: dict[tuple[str, int], Issue] = {}
    for issue in issues:
        key = (issue.code, id(issue.node))
        first = seen.get(key)
        if first is None:
            seen[key] = issue
        elif issue.slot is not first.slot and issue.slot not in first.more_slots:
            first.more_slots.append(issue.slot)
    return list(seen.values())


__all__ = ["FlowAnalysis", "Issue", "Slot"]
