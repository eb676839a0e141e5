"""Taint through calls (a mixin of :class:`~promptcache.lint.taint.TaintEngine`).

What a call's value carries: the catalogue's sources and sanitisers by qualified name
(:mod:`promptcache.lint.sources`: the clock, ``uuid``, ``random.shuffle``, ``os.getenv``, ``sorted``,
``json.dumps`` without ``sort_keys``), MCP ``list_tools()``, summarising calls, and the functions of the
module itself through per-function summaries (the taint of a function's returns with its parameters
left symbolic; a call substitutes its arguments: :meth:`CallTaint.bind_params`).
"""

from __future__ import annotations

import builtins
import dataclasses
import re

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.clock_periods import clock_period, format_periods, method_period
from promptcache.lint.expressions import argument, has_text, key_text, last_name, variadic_arguments
from promptcache.lint.fields import flat_items, implementation_arguments
from promptcache.lint.imports import is_standard_library
from promptcache.lint.import_time import ImportTime
from promptcache.lint.index import Scope
from promptcache.lint.iteration_order import loop_order, picking_loops, set_valued
from promptcache.lint.lookup_keys import (TEXT_METHODS, as_is, flag_service, list_order_only, lookup_arguments,
                                          predicate_call, redacts, text_call, textual)
from promptcache.lint.rendering import rendered_whole
from promptcache.lint.sources import EMPTY, Source, as_period, as_text, source, templated, through_call, unkeyed
from promptcache.lint.untaken_branches import none_at, switched_off
from promptcache.lint.value_syntax import (PROMPT_GETTER, caller_mapping, constructor_call, literal_key,
                                           mapping_iterated, sent_history, sizing_argument, typed_elsewhere)
from promptcache.lint.walk import descendants


# Methods that test membership in their argument and never iterate it into their result: SQLAlchemy
# ``ColumnOperators.in_`` / ``not_in`` / ``notin_`` (an SQL ``IN`` filter: rows come back in the query's
# ``order_by``), pandas ``Series.isin``, and ``set.issubset`` / ``issuperset`` / ``isdisjoint`` (a bool).
# A set given to them passes no order on (onyx ``Tool.server_id.in_(visible_ids)``; onyx review #6).
_MEMBERSHIP_METHODS = frozenset({"in_", "not_in", "notin_", "isin", "issubset", "issuperset", "isdisjoint"})
_BOOL_METHODS = frozenset({"issubset", "issuperset", "isdisjoint"})
_FIELD_SELECTORS = frozenset({"exclude", "include"})  # pydantic `model_dump` / `model_dump_json` / `dict` / `copy`
_STR_METHODS = frozenset(m for m in dir(str) if not m.startswith("_"))  # `.strip()`, `.split()`, `.encode()`
_BUILTINS = frozenset(dir(builtins))  # `str(info.user_id)`: the value itself, not a function that picks tools
_TOOLS = re.compile(r"(?i)(tools|toolset|toolkit)$")  # a callee that returns tools: `construct_tools`, `get_tools`
_TRACE_KEYWORD = re.compile(r"(?i)(^|_)(request|trace|run|correlation|span)_?id$")  # `emit_event(trace_id=...)`
# A callee that records what it is given (an event, a log line, a metric, a span) and is not named to render text:
# a tracing id given to it by keyword is kept with the record, not written into text it returns (parlant's
# `emit_message_event(trace_id=...)`; not `format_trace_header(...)`, `event_system_prompt(...)`, `login_banner()`).
_RECORDS = re.compile(r"(?i)(^|_)(emit|log|track|record|publish|trace|span|event|metric|audit|telemetry|notify)(?=_|$|[A-Z])")
# Receivers whose prompts are a request's or a user's (`request.get_prompts()`, `user_profile.get_prompts()`).
_PER_REQUEST_HOLDER = re.compile(r"(?i)req|ctx|context|user|profile|session|message|query|input|state|turn|chat")
# Words of data other than the conversation: a summarising call given it summarises that (dspy's
# `create_dataset_summary(trainset=...)`), unless the conversation is also among its inputs.
_OTHER_DATA = re.compile(r"(?i)(data_?set|train|document|page|article|paper|pdf|html|web|repo|code_?base|table|image)")


class CallTaint:
    """Methods of :class:`~promptcache.lint.taint.TaintEngine` (``of``, ``union``, ``names``, ``index``,
    ``sinks``, ``parents``, ``_static`` come from it, ``entry`` from :mod:`promptcache.lint.fields`)."""

    _returns: dict[int, frozenset[Source]]
    import_time: ImportTime

    # -- calls -----------------------------------------------------------------
    def _call(self, e: cst.Call, scope: Scope) -> frozenset[Source]:
        t = self._call_value(e, scope)
        if not any(s.kind in S.ORDER_KINDS for s in t):
            return t
        if constructor_call(e.func):
            # `ToolSpec(name=n, hints=frozenset(tags))`: an object holding a set as a field is not ordered by it;
            # only a sequence built from the set is (gptme's MCP tool specs; issue 11)
            fields = [a.value for a in e.args if a.keyword is not None and set_valued(a.value, self.index, scope)]
        else:
            # `m.model_dump(exclude={"id": True, "function": {"arguments"}})`: pydantic's field selectors pick
            # fields; the output keeps the model's field order (paper-qa; issue 11)
            fields = [a.value for a in e.args if a.keyword is not None and a.keyword.value in _FIELD_SELECTORS]
        if fields:
            held_ids = {id(f) for f in fields}
            rest = self.union([a.value for a in e.args if id(a.value) not in held_ids], scope)
            rest |= self.of(e.func.value, scope) if isinstance(e.func, cst.Attribute) else EMPTY  # the receiver's order counts
            held = frozenset(s for s in self.union(fields, scope) if s.kind not in S.ORDER_KINDS)
            rest = {dataclasses.replace(r, keyed=False) for r in rest}  # an unseen call marks its arguments' order
            t = frozenset(s for s in t if s.kind not in S.ORDER_KINDS or dataclasses.replace(s, keyed=False) in rest) | held
        return t

    def _own_method(self, func: cst.Attribute, scope: Scope) -> Scope | None:
        """The method of a class of this module that ``func`` calls (``REGISTRY.list_tools()`` of the app's own tool
        registry, PraisonAI; ``MCPClient(session).list_tools()``, a wrapper of the SDK's), or None: an SDK client's."""
        if (found := self.index.function_named(func, scope)) is not None:
            return found
        receiver = func.value
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name):  # `MCPClient(session).list_tools()`
            cls = self.index.class_of_receiver(receiver.func, scope)
            return cls.methods.get(func.attr.value) if cls is not None else None
        if isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and scope.cls is not None \
                and receiver.value.value == scope.self_name:  # `self.mcp` set from `mcp: SortingClient` (newcomer)
            held = scope.cls.attrs.get(receiver.attr.value, [])
            if not held or not all(b.kind == "assign" and isinstance(b.value, cst.Name) for b in held):
                return None
            found = {id(m): m for b in held if (m := self._own_method(cst.Attribute(b.value, func.attr), b.scope)) is not None}
            return next(iter(found.values())) if len(found) == 1 else None
        if not isinstance(receiver, cst.Name):
            return None
        classes = [self.index.class_of_receiver(func.value, scope)]
        for b in self.index.lookup(func.value.value, scope)[1]:  # `REGISTRY = Registry()`: an instance of one
            if b.kind == "assign" and isinstance(b.value, cst.Call) and isinstance(b.value.func, cst.Name):
                classes.append(self.index.class_of_receiver(b.value.func, b.scope))
            elif b.kind == "param" and isinstance(b.node, cst.Param) and b.node.annotation is not None \
                    and isinstance(b.node.annotation.annotation, cst.Name):  # `mcp: SortingClient`: one of this module's
                classes.append(self.index.class_of_receiver(b.node.annotation.annotation, b.scope))
        return next((cls.methods[func.attr.value] for cls in classes if cls is not None and func.attr.value in cls.methods), None)

    def _context_var(self, base: cst.BaseExpression, scope: Scope) -> bool:
        """``base`` is a name bound only to ``contextvars.ContextVar(...)`` and naming whose value it holds
        (``current_org = ContextVar("org")``; not ``current_agent``)."""
        if not isinstance(base, cst.Name):
            return False
        bindings = self.index.lookup(base.value, scope)[1]
        return bool(bindings) and all(b.kind == "assign" and isinstance(b.value, cst.Call)
                                      and S.context_var(self.index.qualified(b.value.func, b.scope), base.value) for b in bindings)

    def _call_value(self, e: cst.Call, scope: Scope) -> frozenset[Source]:
        func = e.func
        qualified = self.index.qualified(func, scope)
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        args = [a.value for a in e.args]
        if qualified is not None and S.seeded_generator(qualified):
            return self.union(args, scope) if args else frozenset({source(S.VOLATILE, f"{qualified}() without a seed", e)})
        if qualified is not None:
            if S.volatile_call(qualified, len(e.args)) or qualified in self.extra_volatile:
                period = "day" if qualified in S.DATE_CALLS else clock_period(args[0] if qualified == "time.strftime" and args else None)
                found = source(S.VOLATILE, f"{qualified}()", e)
                if self.import_time.at_import(e):
                    found = dataclasses.replace(found, import_time=True)
                drawn = {source(S.SHUFFLED, f"{qualified}()", e)} if S.draw_call(qualified) else set()
                return as_period(frozenset({found}), period) | drawn
            if S.shuffle_call(qualified):
                return frozenset({source(S.SHUFFLED, f"{qualified}()", e)})
            if S.env_call(qualified):
                return frozenset({source(S.ENV, f"{qualified}()", e)})
            if qualified == "len" and args and sent_history(scope.node, args[0]) and self._written_out(e) \
                    and not (isinstance(args[0], cst.Name) and not self.of(args[0], scope)):
                # `f"Turn {len(history) + 1}"`: the conversation's length grows every turn (a count of anything
                # else stays opaque: `len(TOOLS)`)
                return frozenset({source(S.VOLATILE, f"len({last_name(args[0])})", e)})
            if S.opaque_call(qualified):
                return EMPTY
            if S.value_call(qualified):
                return frozenset(s for s in self.union(args, scope) if s.kind not in S.ORDERING_KINDS)
            if qualified == "sorted":
                first = self.of(args[0], scope) if args else EMPTY
                return frozenset(s for s in first if s.kind not in S.ORDER_KINDS)
            if S.unordered_call(qualified):
                return self.union(args, scope) | {source(S.UNORDERED, f"{qualified}()", e)}
            if S.fs_order_call(qualified, None):
                return self.union(args, scope) | {source(S.FS_ORDER, f"{qualified}()", e)}
            if qualified == "json.dumps":
                return self._json_dumps(e, scope)
        if method == "from_runnable_config" and self._run_config_param(args, scope):
            # LangGraph's `Configuration.from_runnable_config(config)` of the node's `config` parameter: the run's
            # settings, fields with defaults (models, limits, the assistant's prompt; open_deep_research). Its user-
            # and id-named fields stay sources by their names; `config["configurable"]["preferences"]` read
            # directly, or a config built from the state, stays per-request.
            return EMPTY
        if method == "list_tools" and not typed_elsewhere(self.index, func.value, scope):  # `_api: ApiRequest`
            if (own := self._own_method(func, scope)) is None:
                return frozenset({source(S.MCP, "list_tools()", e), source(S.MCP_CALL, "list_tools()", e)})
            return self._apply_summary(own, e, scope)  # what the app's own method returns: its registry, or the SDK's listing
        if S.fs_order_call(None, method):
            return self.of(func.value, scope) | {source(S.FS_ORDER, f".{method}()", e)}
        callee = self.index.function_named(func, scope)
        if callee is None and isinstance(func, cst.Attribute):
            callee = self._own_method(func, scope)
        if callee is not None:
            return self._apply_summary(callee, e, scope)  # the module's own body, whatever its name says
        if predicate_call(last_name(func)):
            # `is_feature_enabled_cached("FLAG", task.workflow_run_id)`: a bool made from the run's id selects one
            # of the fixed prompt variants; the id is not in the text (skyvern; issue 11)
            return EMPTY
        if isinstance(func, cst.Attribute) and flag_service(last_name(func.value)):
            # a feature-flag service's variant (`EXPERIMENTATION_PROVIDER.get_value_cached(FLAG, run_id,
            # properties={...})`): one of those configured in it; a default text given here is the caller's
            return self.union([a for a in args if textual(a)], scope)
        last = method or (func.value if isinstance(func, cst.Name) else "")
        if last and S.summarise_callee(last) and self._of_conversation(e, last, scope):
            return frozenset({source(S.SUMMARY, f"{last}()", e)})
        if (sink := self.sinks.sink_at(e, scope)) is not None and sink.is_request:
            return frozenset({source(S.SUMMARY, "a summarising LLM call", e)}) if self.sinks.asks_to_summarise(e, scope) else EMPTY
        if constructor_call(func) and not rendered_whole(e, self.parents, lambda f: self.index.qualified(f, scope), self._names_in):
            # `Part(content=text, timestamp=now())`: an id or timestamp keyword of a class whose object is not
            # rendered whole is the object's metadata, not its text (pydantic-ai messages, RunContext(run_id=...);
            # issue 11); `asdict(ctx)`, `SystemPrompt(...).render()` may render it
            args = [a.value for a in e.args if a.keyword is None or not (self.volatile_name.search(a.keyword.value)
                                                                         or S.record_time_name(a.keyword.value))]
        elif not constructor_call(func) and _RECORDS.search(last or "") and not S.renders_text(last or ""):
            # `emitter.emit_message_event(trace_id=t, data=d)`: a tracing id given to a call whose body is not seen and
            # whose name says it records is what the callee records, not text it returns (parlant); `make_header(...)`,
            # `dict(...)`, `json.dumps(...)` may make text of it
            args = [a.value for a in e.args if a.keyword is None or not _TRACE_KEYWORD.search(a.keyword.value)]
        if constructor_call(func) and (code := {id(a.value) for a in implementation_arguments(e)}):
            # nor is the callable of a tool object given its schema, rendered or not: it renders the schema
            # (`FunctionTool(func=m, openai_tool_schema=s)`, camel; fields.implementation_arguments)
            args = [a for a in args if id(a) not in code]
        if method is not None:
            base = func.value
            if method in _MEMBERSHIP_METHODS:  # the argument's order (and a bool's) goes nowhere
                unordered = self.union(args, scope) | (self.of(base, scope) if method in _BOOL_METHODS else EMPTY)
                kept = EMPTY if method in _BOOL_METHODS else self.of(base, scope)
                return kept | frozenset(s for s in unordered if s.kind not in S.ORDER_KINDS)
            # `MultiServerMCPClient(headers=auth).get_tools()`: a client set up for the user lists the tools
            # (open_deep_research); the user is not known to be in their schemas
            held = self.of(base, scope)  # `get_run_context(run_id).placeholders(p)`: the context's method; a str
            held = as_text(held) if method in _STR_METHODS else unkeyed(held)  # method makes text of it: `.strip()`
            if PROMPT_GETTER.match(method) and isinstance(base, cst.Name) and not _PER_REQUEST_HOLDER.search(base.value):
                # `preprompts_holder.get_preprompts()`: the prompts it was given, passed through (gpt-engineer)
                held = frozenset(s for s in held if s.kind != S.PARAM)
            t = (through_call(held) if _TOOLS.search(method) and not self._in_text(e) else held) | self._unseen_call(e, args, scope, qualified)
            if period := method_period(method, e):  # `now.strftime("%Y-%m-%d")`, `now.replace(minute=0, ...)`
                return as_period(t, period)
            if method == "join" and (has_text(base) or self._has_static_element(args, scope)):
                return templated(t)
            if method in ("format", "format_map") and self._static(base, scope):  # `"{:%H:%M}".format(now)`
                periods = format_periods(base, e)
                return templated(EMPTY.union(*(as_period(self.of(a, scope), periods.get(id(a), "")) for a in args)) if periods else t)
            if method == "get" and self._context_var(base, scope):
                return frozenset({source(S.IDENTITY, f"{base.value}.get()", e)})  # the current request's value
            if method == "get" and args:
                entry = self.entry(base, args[0], scope)
                key = key_text(args[0])
                if entry is not None:  # `self.state.get("rules", RULES)`: that entry (or the default) only
                    t = entry | self.union(args[1:], scope)
                elif key:  # an entry not seen here: its key's name is all there is
                    t |= self.names(key, origin=e)
            return t
        return self.union(args, scope) if constructor_call(func) else self._unseen_call(e, args, scope, qualified)

    def _unseen_call(self, e: cst.Call, args: list, scope: Scope, qualified: str | None) -> frozenset[Source]:
        """The taint of a call whose body is not seen: its arguments'. An identity given as is (``user``) to a
        function that returns tools by its name (``construct_tools``, ``client.get_tools()``) picks or authorises
        them; it is not known to be in their schemas (:func:`~promptcache.lint.sources.through_call`; onyx
        ``construct_tools(user=user)``). Not a call written into text or a schema field: that text comes from it."""
        name = last_name(e.func)
        if qualified is not None and (qualified in _BUILTINS or is_standard_library(qualified)) \
                or self._in_text(e):
            return self.union(args, scope)  # `str(info.user_id)`, `json.loads(text)`
        tools = _TOOLS.search(name)
        if not tools and redacts(name) and not S.renders_text(name) and e.args and e.args[0].keyword is None and not e.args[0].star:
            # `redact_secrets_from_text(text, secret_values)`: the other arguments are taken out of the text
            return self.of(e.args[0].value, scope)
        if not tools and (S.renders_text(name) or text_call(name)):
            return self.union(args, scope)  # `render_header(run_id)`, `slugify(user_id)`, `.replace(k, run_id)`
        sizing = {id(a.value) for a in e.args if sizing_argument(a)}  # `get_code_message(count_tokens(msgs))`
        args = [a for a in args if id(a) not in sizing]
        t = EMPTY.union(*lookup_arguments(self, args, scope)) if not tools else \
            EMPTY.union(*(through_call(self.of(a, scope)) if as_is(a) else self.of(a, scope) for a in args))
        return list_order_only(self, e, scope, t)

    def _run_config_param(self, args: list, scope: Scope) -> bool:
        """``args`` is one name bound only to a parameter of the function (the node's ``config``)."""
        if len(args) != 1 or not isinstance(args[0], cst.Name):
            return False
        bindings = self.index.lookup(args[0].value, scope)[1]
        return bool(bindings) and all(b.kind == "param" for b in bindings)

    def _in_text(self, e: cst.Call) -> bool:
        """``e``'s result is written into text or a schema field: a dict entry's value, an f-string, a sum with a
        string, an argument of a text method (``format``, ``join``, ``replace``)."""
        node = self.parents.get(e)
        while isinstance(node, (cst.Await, cst.IfExp, cst.BooleanOperation, cst.CompFor, cst.ListComp, cst.GeneratorExp)):
            node = self.parents.get(node)  # `load(u) if x else None`, `a or load(u)`, `[p.key for p in load(u)]`
        if isinstance(node, cst.Arg):
            call = self.parents.get(node)
            return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in TEXT_METHODS
        if isinstance(node, cst.BinaryOperation):
            return any(isinstance(side, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)) for side in (node.left, node.right))
        return isinstance(node, (cst.DictElement, cst.FormattedStringExpression))

    def _written_out(self, e: cst.BaseExpression) -> bool:
        """``e`` (a number) is written into text: an f-string's value, also through arithmetic (``f"{len(h) + 1}"``),
        ``str(...)`` or ``+`` with a string; not a record's field (gptme's ``PromptSectionStat(messages=len(msgs))``)."""
        texts = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
        while isinstance(node := self.parents.get(e), cst.BinaryOperation) and not isinstance(node.left, texts):
            e = node  # `len(h) // 2 + 1`
        if isinstance(node, cst.Arg) and isinstance(call := self.parents.get(node), cst.Call) and last_name(call.func) == "str":
            return self._in_text(call)
        # an f-string's value, `"Turn %d" % n`, or an argument of `.format` / `.join` / `.replace` (as _in_text)
        return isinstance(node, (cst.FormattedStringExpression, cst.BinaryOperation)) or isinstance(node, cst.Arg) and self._in_text(e)

    def _has_static_element(self, args: list, scope: Scope) -> bool:
        if not args or not isinstance(args[0], (cst.List, cst.Tuple)):
            return False
        return any(self._static(el.value, scope) for el in args[0].elements if isinstance(el, cst.Element))

    def _json_dumps(self, e: cst.Call, scope: Scope) -> frozenset[Source]:
        t = self.union((a.value for a in e.args), scope)
        sort_keys = next((a for a in e.args if a.keyword is not None and a.keyword.value == "sort_keys"), None)
        sorted_ok = sort_keys is not None and not (isinstance(sort_keys.value, cst.Name) and sort_keys.value.value == "False")
        positional = [a.value for a in e.args if a.keyword is None and not a.star]
        if not sorted_ok and positional and self.runtime_mapping(positional[0], scope):
            return t | {source(S.UNSORTED_JSON, "json.dumps() without sort_keys=True", e)}
        return t

    def runtime_mapping(self, e: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
        """True when ``e`` is a mapping built at run time (comprehension, ``dict()``, filled in code).

        A dict literal made only of literals is not: its key order is the source order.
        """
        if depth > 4:
            return False
        if isinstance(e, cst.DictComp):
            # `{k: f(v) for k, v in list(props.items())[:2]}`: re-keys another mapping in its own order, as ordered
            # as it (bilingual_book_maker's schema example; issue 11)
            it = e.for_in.iter
            if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "sorted":
                return False  # `{k: v for k, v in sorted(m.items())}`: in sorted order
            source = mapping_iterated(e)
            return source is None or not caller_mapping(self.index, source, scope) or self.runtime_mapping(source, scope, depth + 1)
        if isinstance(e, cst.Dict):
            for el in e.elements:
                if not isinstance(el, cst.DictElement) or not isinstance(el.key, (cst.SimpleString, cst.Integer)):
                    return True
                if self.runtime_mapping(el.value, scope, depth + 1):
                    return True
            return False
        if isinstance(e, cst.Call):
            q = self.index.qualified(e.func, scope) or ""
            return q in ("dict", "collections.OrderedDict", "collections.defaultdict", "collections.Counter")
        if isinstance(e, cst.Name):
            _, bindings = self.index.lookup(e.value, scope)
            if any(b.kind in ("assign", "walrus") and isinstance(b.value, (cst.List, cst.ListComp, cst.Tuple)) for b in bindings):
                return False  # a list extended in code: its elements keep program order, and it has no keys (OpenHands)
            for b in bindings:
                if b.kind == "mutate" and b.op == "extend" or b.kind == "mutate" and b.op == "setitem" and not literal_key(b.node):
                    return True
                if b.kind in ("assign", "walrus") and self.runtime_mapping(b.value, b.scope, depth + 1):
                    return True
        return False

    def _of_conversation(self, e: cst.Call, name: str, scope: Scope) -> bool:
        """An unseen summarising call (:func:`S.summarise_callee`) is the conversation's unless it is given other
        data (:data:`_OTHER_DATA` in its name, receiver or arguments: ``create_dataset_summary(trainset=...)``, dspy
        blind set 13) and nothing of the conversation: no history word in them, in a string key
        (``state["messages"]``) or in what their names are bound to, followed through assignments."""
        parts = [a.value for a in e.args] + ([e.func.value] if isinstance(e.func, cst.Attribute) else [])
        words = [name] + [a.keyword.value for a in e.args if a.keyword is not None]
        seen: set[str] = set()
        todo = [n for part in parts for n in descendants(part, cst.Name)]
        words += [s.value for part in parts for s in descendants(part, cst.SimpleString)]
        while todo and len(seen) < 40:
            n = todo.pop()
            if n.value in seen:
                continue
            seen.add(n.value)
            words.append(n.value)
            for b in self.index.lookup(n.value, scope)[1]:
                if b.value is not None and b.kind in ("assign", "walrus", "aug", "for", "with"):
                    todo += list(descendants(b.value, cst.Name))
                    words += [s.value for s in descendants(b.value, cst.SimpleString)]
        if any(S.history_word(w) for w in words):
            return True
        return not any(_OTHER_DATA.search(w) for w in words)

    def returns_of(self, callee: Scope) -> frozenset[Source]:
        """The summary of a module-local function: taint of its returns, parameters symbolic."""
        key = id(callee)
        found = self._returns.get(key)
        if found is None:
            self._returns[key] = EMPTY  # recursion guard
            found = self.union(callee.returns, callee)
            if self.parents is not None:  # `for ex in examples: return ex`: one element, picked by the loop's order
                found |= frozenset(s for r in callee.returns
                                   for s in loop_order(picking_loops(r, r, None, self.parents), self.of, callee))
            self._returns[key] = found
        return found

    def _apply_summary(self, callee: Scope, call: cst.Call, scope: Scope, element: int = -1) -> frozenset[Source]:
        summary = self.returns_of(callee) if element < 0 else self.union((flat_items(r)[element] for r in callee.returns), callee)
        return self.bind_params(callee, call, scope, summary)

    def bind_params(self, callee: Scope, call: cst.Call, scope: Scope, summary: frozenset[Source]) -> frozenset[Source]:
        """``summary`` (sources in ``callee``) as seen at ``call``: its parameters replaced by the arguments' sources."""
        offset = 1 if callee.self_name is not None and isinstance(call.func, cst.Attribute) else 0
        out: set[Source] = set()
        for s in summary:
            if switched_off(self.parents, s, callee, call, offset):
                continue
            if s.func_id == id(callee) and s.kind != S.PARAM:  # `info.user_id` of parameter `info`
                if not none_at(call, s.index, offset, callee):
                    out.add(s)
                continue
            if s.kind != S.PARAM or s.func_id != id(callee):
                out.add(s)
                continue
            name = callee.params[s.index] if s.index < len(callee.params) else ""
            arg = argument(call, s.index - offset, name)
            t = self.of(arg, scope) if arg is not None else self.union(variadic_arguments(call, callee.node, name, offset), scope)
            out |= templated(t) if s.templated else t
        if any(s.kind == S.VOLATILE and not s.import_time for s in out) and self.import_time.once_at_import(call):
            # a helper that reads the clock, called at import (`PROMPT = f"Time: {get_time()}"`, swarms): once per process
            out = {dataclasses.replace(s, import_time=True) if s.kind == S.VOLATILE else s for s in out}
        return frozenset(out)


__all__ = ["CallTaint"]
