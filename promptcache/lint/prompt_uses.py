"""Where the prompts a file imports from a prompt module land in its requests (the facts of one file).

A prompt module (``prompts.py``, imported by LLM code) is linted without its
importers: a prompt-named constant or builder there is taken for a system
prompt. What its importers do with it settles that. Each file gives its half
of the answer, computed per file and cached with it: in a prompt module, the
definitions a finding depends on (:mod:`promptcache.lint.prompt_definitions`);
here, :func:`import_uses`: in an LLM file, for each imported prompt-named name
(qualified as imported: ``.prompts.build_prompt``, ``app.prompts.SYSTEM``),
where its value lands: ``prefix`` (system, instructions, tools, a message
before others, a request's ``system`` entry, a PromptBuilder prefix layer,
a list spread or concatenated ahead of others), ``after`` (the last message
of a list that is handed to a call as written, an appended message (later
edits of that list are not checked), a PromptBuilder ``.user()``: the
newest turn, where per-request content belongs) or ``unknown`` (passed
somewhere the analysis does not follow; a list that is also extended,
``+=``-ed, copied or stored). ``from m import *`` gives ``m.*: unknown``;
a file that was not analysed has :data:`UNSEEN`. A read that is never sent
(logged, compared, a test's expected value) lands nowhere.

The run joins the two (:mod:`promptcache.lint.cross_module`). The value is
followed forward through f-strings, ``+``, ``.format``/``join``-style method
calls, assignments to names and ``self`` attributes, the parameters of the
module's own functions and their returns, six steps deep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.expressions import last_name
from promptcache.lint.lookup_keys import flag_service
from promptcache.lint.imports import imported_modules, is_llm_module, is_standard_library
from promptcache.lint.prompt_places import AFTER, DEPTH, FIXED_CALL, LOG_METHODS, NOT_SENT, PREFIX, SYSTEM_ROLES, UNKNOWN, Placer, is_store
from promptcache.lint.sdk_builder import BUILDER_LAYERS, builder_root
from promptcache.lint.dict_view import entry as dict_value
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope

UNSEEN: dict[str, tuple[str, ...]] = {"*": (UNKNOWN,)}  # the uses of a file that was not analysed (see cross_module)
_PREFIX_KEYS = frozenset({"system", "instructions", "system_prompt", "system_message", "system_instruction", "preamble",
                          "tools", "developer_message"})
_MESSAGE_ROLES = frozenset({"user", "human", "assistant", "ai", "tool", "function", "model"})
_TEXT_KEYS = frozenset({"content", "text", "parts"})
_MESSAGE_CLASSES = ("HumanMessage", "UserMessage", "AIMessage", "AssistantMessage", "ChatMessage",
                    "HumanMessagePromptTemplate.from_template")
_SYSTEM_CLASSES = ("SystemMessage", "SystemMessagePromptTemplate.from_template")


def import_uses(flow: FlowAnalysis) -> dict[str, tuple[str, ...]]:
    """``{qualified name: landings}`` for every read of an imported prompt-named name (see the module docstring).

    Only names imported from modules that are neither an LLM SDK nor the standard library are followed.
    """
    imported = {name for scope in flow.index.scopes for name, bindings in scope.bindings.items()
                if any(b.kind == "import" and b.qualified and not _external(b.qualified) for b in bindings)}
    out: dict[str, set[str]] = {}
    reads: list[tuple[cst.Name, cst.CSTNode]] = []
    # One pass over the walk's parent map, in its order (not source order): the tracer's step budget is shared by
    # the reads, so their order decides which come back unknown in a file that runs out of it.
    for node, parent in flow.facts.parent.items():  # star imports, and reads of imported names
        if type(node) is cst.Name:
            if node.value in imported:
                reads.append((node, parent))
        elif type(node) is cst.ImportFrom and isinstance(node.names, cst.ImportStar):
            module = imported_modules(node)[0]
            if module.strip(".") and not _external(module):
                out[module + ".*"] = {UNKNOWN}  # `from .prompts import *`: its names are read unseen
    tracer = _Tracer(flow)
    for node, parent in reads:
        if is_store(node, parent):
            continue
        if isinstance(parent, (cst.ImportAlias, cst.Attribute)) and not (isinstance(parent, cst.Attribute) and parent.value is node):
            continue
        scope = flow.scope_at(node)
        if scope is None or not any(b.kind == "import" for b in flow.index.lookup(node.value, scope)[1]):
            continue
        use: cst.BaseExpression = node
        while isinstance(flow.facts.parent.get(use), cst.Attribute) and flow.facts.parent[use].value is use:
            use = flow.facts.parent[use]
        if isinstance(flow.facts.parent.get(use), (cst.Import, cst.ImportFrom, cst.ImportAlias)):
            continue  # the import statement itself
        qualified = flow.index.qualified(use, scope)
        if not qualified or not flow.is_prompt_name(qualified.rsplit(".", 1)[-1]):
            continue
        call = flow.facts.parent.get(use)
        value = call if isinstance(call, cst.Call) and call.func is use else use
        landed = tracer.land(value, scope, 0)
        if value is call and landed - {AFTER} and call.args \
                and all(not a.star and flow.call_sites.fixed_value(a.value, scope) for a in call.args):
            landed = landed | {FIXED_CALL}  # `system=build_system_prompt("a pirate")`: the same inputs on every call
        out.setdefault(qualified, set()).update(landed)
    return {q: tuple(sorted(kinds)) for q, kinds in sorted(out.items())}


def _external(module: str) -> bool:
    """An LLM SDK or a standard-library module (not where a project's prompts are defined)."""
    return is_llm_module(module) or is_standard_library(module)


class _Tracer(Placer):
    """Follows one value forward to where it lands (a set of PREFIX / AFTER / UNKNOWN; empty: never sent)."""

    def __init__(self, flow: FlowAnalysis):
        self.flow = flow
        self.parent = flow.facts.parent
        self.seen: set[tuple[int, str]] = set()
        self.steps = 0  # a bound on the work for one file: past BUDGET steps every answer is UNKNOWN

    def land(self, node: cst.CSTNode, scope: Scope, depth: int) -> set[str]:
        return self._step(self._land, node, "v", scope, depth)

    def _land(self, node, scope, depth) -> set[str]:
        p = self.parent.get(node)
        up = lambda n: self.land(n, scope, depth)  # noqa: E731 - the same value, one node further out
        if isinstance(p, cst.FormattedStringExpression):
            return up(self.parent[p])
        if isinstance(p, (cst.FormattedString, cst.ConcatenatedString, cst.BinaryOperation, cst.Await, cst.StarredElement)):
            return up(p)
        if isinstance(p, cst.IfExp):
            return up(p) if node is not p.test else set()
        if isinstance(p, cst.BooleanOperation):
            return up(p)
        if isinstance(p, cst.Attribute) and p.value is node:
            call = self.parent.get(p)
            return up(call) if isinstance(call, cst.Call) and call.func is p else {UNKNOWN}
        if isinstance(p, cst.Arg):
            call = self.parent[p]  # a Call, or a ClassDef whose base or keyword it is: no value sent
            return self._argument(p, call, scope, depth) if isinstance(call, cst.Call) else set()
        if isinstance(p, cst.Element):
            container = self.parent[p]
            if isinstance(container, cst.Tuple) and len(container.elements) == 2 and container.elements[1] is p:
                role = container.elements[0].value
                if isinstance(role, cst.SimpleString) and role.value[1:-1] in SYSTEM_ROLES | _MESSAGE_ROLES:
                    return self._message(container, role.value[1:-1], scope, depth)
            return up(container)
        if isinstance(p, cst.DictElement) and p.value is node:
            d = self.parent[p]
            key = p.key.value[1:-1] if isinstance(p.key, cst.SimpleString) else None
            role = dict_value(d, "role")
            if role is not None:
                if key in _TEXT_KEYS and isinstance(role, cst.SimpleString):
                    return self._message(d, role.value[1:-1], scope, depth)
                return {UNKNOWN}
            if key in _PREFIX_KEYS:
                return {PREFIX}
            return up(d) if key in _TEXT_KEYS else {UNKNOWN}
        if isinstance(p, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr)) and p.value is node:
            targets = [t.target for t in p.targets] if isinstance(p, cst.Assign) else [p.target]
            return set().union(*(self._target(t, scope, depth) for t in targets))
        if isinstance(p, cst.Return):
            return self._returned(scope, depth, message=False)
        if isinstance(p, cst.Subscript) and p.value is node:
            return up(p)  # `prompt[:2000]`: part of the value
        if isinstance(p, (cst.Expr, cst.Comparison, cst.ComparisonTarget, cst.If, cst.While, cst.Assert, cst.Index, cst.Slice,
                          cst.UnaryOperation)):
            return set()  # a statement of its own, a test, a key: the value is not sent from here
        return {UNKNOWN}

    def _argument(self, arg: cst.Arg, call: cst.Call, scope, depth) -> set[str]:
        flow = self.flow
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword in _PREFIX_KEYS:
            return {PREFIX}
        name = flow.index.qualified(call.func, scope) or ""
        func = call.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if name in NOT_SENT or name.startswith(("logging.", "logger.", "log.")) or method in LOG_METHODS:
            return set()
        if method is not None and flag_service(last_name(func.value)):
            return set()  # `EXPERIMENTATION_PROVIDER.get_value_cached(flag, id, properties=props)`: targeting data
        role = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "role"), None)
        if keyword == "content" and isinstance(role, cst.SimpleString):
            return self._message(call, role.value[1:-1], scope, depth)  # `Message(role="system", content=...)`
        if name.endswith(_SYSTEM_CLASSES):
            return {PREFIX}
        if name.endswith(_MESSAGE_CLASSES):
            return self._message(call, "user", scope, depth) if keyword in (None, "content", "template") else {UNKNOWN}
        if method is not None and builder_root(flow.index, func.value, scope) is not None:
            if method in BUILDER_LAYERS:
                return {PREFIX}
            return {AFTER} if method == "user" else {UNKNOWN}
        if method in ("format", "join", "replace", "strip", "rstrip", "lstrip") or name in ("str", "textwrap.dedent", "inspect.cleandoc"):
            return self.land(call, scope, depth)
        callee = flow.index.function_named(func, scope)
        if callee is not None:
            return self._parameter(callee, call, arg, depth)
        if method in ("append", "extend", "insert") and keyword is None:
            return self._target(func.value, scope, depth)
        return {UNKNOWN}

    def _parameter(self, callee: Scope, call: cst.Call, arg: cst.Arg, depth) -> set[str]:
        """Follow an argument into the module's own function through the parameter that receives it."""
        if arg.star:
            return {UNKNOWN}
        params = callee.params
        if arg.keyword is not None:
            name = arg.keyword.value
        else:
            position = [a for a in call.args if a.keyword is None].index(arg)
            position += 1 if callee.self_name is not None and isinstance(call.func, cst.Attribute) else 0
            name = params[position] if position < len(params) else None
        if name is None or name not in params:
            return {UNKNOWN}
        return self._reads_of(name, callee, depth + 1)

    def _target(self, target: cst.BaseExpression, scope, depth) -> set[str]:
        if isinstance(target, cst.Name):
            found, _ = self.flow.index.lookup(target.value, scope)
            return self._reads_of(target.value, found or scope, depth + 1)
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            cls = self.flow.index.class_of_receiver(target.value, scope)
            if cls is not None:
                return self._attribute_reads(cls, target.attr.value, depth + 1)
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            key = target.slice[0].slice if len(target.slice) == 1 else None
            if isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString) and key.value.value[1:-1] in _PREFIX_KEYS:
                return {PREFIX}
        return {UNKNOWN}

    def _reads_of(self, name: str, binding_scope: Scope, depth: int) -> set[str]:
        """Where the reads of ``name`` (bound in ``binding_scope``) land."""
        if depth > DEPTH:
            return {UNKNOWN}
        out: set[str] = set()
        for node in descendants(binding_scope.node, cst.Name):
            if node.value != name or is_store(node, self.parent.get(node)):
                continue
            scope = self.flow.scope_at(node)
            if scope is None or self.flow.index.lookup(name, scope)[0] is not binding_scope:
                continue
            out |= self.land(node, scope, depth)
        return out

    def _attribute_reads(self, cls, attr: str, depth: int) -> set[str]:
        out: set[str] = set()
        for method in cls.methods.values():
            for node in descendants(method.node, cst.Attribute):
                if node.attr.value == attr and isinstance(node.value, cst.Name) and node.value.value == method.self_name:
                    p = self.parent.get(node)
                    if isinstance(p, cst.AssignTarget) or (isinstance(p, (cst.AugAssign, cst.AnnAssign)) and p.target is node):
                        continue
                    out |= self.land(node, self.flow.scope_at(node) or method, depth)
        return out

    def _returned(self, scope, depth, message: bool) -> set[str]:
        """Follow a function's return value to the module's calls of it (none: unknown)."""
        func = self.flow.holder_of(scope)
        if func is None:
            return {UNKNOWN}
        calls = self.flow.calls_of(func)
        if not calls:
            return {UNKNOWN}
        out: set[str] = set()
        for call, call_scope in calls:
            out |= self._place(call, call_scope, depth + 1) if message else self.land(call, call_scope, depth + 1)
        return out

def sent_last(flow: FlowAnalysis, message: cst.CSTNode, scope) -> bool:
    """``message`` goes out last in every request it is followed to (the last message of a list sent as written,
    or appended): the newest turn, by position, not by role. False where a place is a prefix or unknown."""
    return _Tracer(flow)._place(message, scope, 0) == {AFTER}


def sent_as_written(flow: FlowAnalysis, messages: cst.CSTNode, scope) -> bool:
    """The list literal ``messages`` is handed to the request as it is, nothing added after it."""
    return _Tracer(flow)._list(messages, scope, 0) == {AFTER}


def lands_in_prefix(flow: FlowAnalysis, value: cst.CSTNode, scope) -> bool:
    """Some use of ``value`` puts it in a prefix place (``system=``, a system message, text ahead of others)."""
    return PREFIX in _Tracer(flow).land(value, scope, 0)


EXPORTED = "exported"


class _ReturnTracer(_Tracer):
    """The tracer, with a value returned by a prompt-named function the module never calls (``def system(self):
    return self.build_system_prompt()``) marked EXPORTED, a prompt its importers place, rather than UNKNOWN."""

    def _returned(self, scope, depth, message: bool) -> set[str]:
        func = self.flow.holder_of(scope)
        if func is not None and self.flow.is_prompt_name(func.name) and not _called(self.flow, func):
            return {EXPORTED}
        return super()._returned(scope, depth, message)


def returned_landings(flow: FlowAnalysis, func: Scope) -> set[str] | None:
    """Where the module's calls of ``func`` put what it returns (a set of PREFIX / AFTER / UNKNOWN, and EXPORTED
    where a caller returns it out of the module; empty: never sent), or None when the module never calls it."""
    if not _called(flow, func):
        return None
    return _ReturnTracer(flow)._returned(func, 0, message=False)


def _called(flow: FlowAnalysis, func: Scope) -> bool:
    """The module calls ``func`` somewhere (a call its index resolves to it)."""
    return bool(flow.calls_of(func))


__all__ = ["AFTER", "EXPORTED", "PREFIX", "UNKNOWN", "UNSEEN", "import_uses", "is_store", "lands_in_prefix", "returned_landings", "sent_as_written",
           "sent_last"]
