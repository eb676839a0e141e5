"""Taint propagation within one module.

``TaintEngine.of(expr, scope)`` answers "which sources can reach the value of ``expr``?" as a frozen set of
:class:`Source`. Propagation follows lint-rules.md: assignment, augmented assignment, unpacking, walrus, f-strings,
``%``, ``.format``, ``+``, ``str()``, ``join``, ``textwrap.dedent``, list/dict literals, subscripts,
``.append/.extend/.insert``, ``await``, conditional expressions, ``self.attr`` by class; calls (sources, sanitisers
and function returns through per-function summaries) are :mod:`promptcache.lint.call_taint`'s, the part of a value a
source reaches (tuple elements, fields, dict entries) :mod:`promptcache.lint.fields`'.

It is flow-insensitive: a name carries the union of all its bindings, less the plain assignments of its
function that cannot run before the read (:mod:`promptcache.lint.binding_order`).
Parameters become per-request data only once they are interpolated into a
template with static text (``param`` sources with ``templated=True``).
"""

from __future__ import annotations

import dataclasses
import re

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.binding_order import overwritten, unreached
from promptcache.lint.import_time import ImportTime
from promptcache.lint.index import Binding, ModuleIndex, Scope
from promptcache.lint.iteration_order import (as_read, filling_loops, iterables, key_ordered, keyed_store, loop_order,
                                              set_annotation, update_call)
from promptcache.lint.object_state import built_per_call, set_per_object, set_up
from promptcache.lint.call_taint import CallTaint
from promptcache.lint.clock_periods import clock_period, division_period, field_period
from promptcache.lint.expressions import has_text, int_value, is_dict_view, is_literal, key_text, last_name
from promptcache.lint.fields import FieldSensitivity
from promptcache.lint.lookup_keys import TEXT_METHODS
from promptcache.lint.sinks import SinkFinder
from promptcache.lint.sources import EMPTY, Source, as_period, as_text, source, templated, unkeyed
from promptcache.lint.rendering import same_field
from promptcache.lint.value_syntax import PROMPT_FIELD, class_annotation, config_param, constructor_call, guard_flag, handle_annotation, imports_code

_SET_OPERATORS = (cst.BitAnd, cst.BitOr, cst.BitXor, cst.Subtract)
_NAMED = (S.VOLATILE, S.IDENTITY)  # the kinds a name gives (TaintEngine.names)


class TaintEngine(CallTaint, FieldSensitivity):
    """Computes taint for expressions of one module (memoised per node and scope)."""

    def __init__(self, index: ModuleIndex, sinks: SinkFinder, volatile_name: re.Pattern, extra_volatile: frozenset[str],
                 parents: dict | None = None):
        self.index = index
        self.parents = parents  # the walk's parent map: where a value goes next (promptcache.lint.rendering)
        self.sinks = sinks
        self.volatile_name = volatile_name
        self.extra_volatile = extra_volatile
        self._memo: dict[tuple[int, int], frozenset[Source]] = {}
        self._active: dict[tuple[int, int], int] = {}  # the keys being computed, with their depth
        self._cut: int | None = None  # the smallest depth whose key a cycle read as EMPTY (None: no open cycle)
        self._provisional: dict[tuple[int, int], frozenset[Source]] = {}  # results computed inside an open cycle
        self._returns: dict[int, frozenset[Source]] = {}
        self.import_time = ImportTime(index, parents)
        self._fields_active: set[tuple[int, int, str]] = set()
        self._fields_memo: dict[tuple[int, int, str], frozenset[Source]] = {}
        self._names_in: dict = {}  # the names of each function body rendering asks about (promptcache.lint.rendering)

    # -- entry point -------------------------------------------------------
    def of(self, expr: cst.CSTNode | None, scope: Scope) -> frozenset[Source]:
        """The sources that can reach ``expr`` evaluated in ``scope``."""
        if expr is None:
            return EMPTY
        key = (id(expr), id(scope))
        found = self._memo.get(key)
        if found is None:
            found = self._provisional.get(key)
        if found is not None:
            return found
        depth = self._active.get(key)
        if depth is not None:  # a cycle: read as EMPTY here, so what is computed above `depth` is provisional
            self._cut = depth if self._cut is None else min(self._cut, depth)
            return EMPTY
        depth = len(self._active)
        self._active[key] = depth
        try:
            result = self._compute(expr, scope)
        finally:
            del self._active[key]
        if self._cut is not None and depth > self._cut:
            self._provisional[key] = result  # read an unfinished value: reused only until that value is done
        else:
            self._memo[key] = result
            if self._cut is not None:  # the cycle is closed here (issue 11: Qwen-Agent's two system slots
                self._cut = None  # read one another's knowledge text through `messages`; the second read EMPTY)
                self._provisional.clear()
        return result

    def names(self, name: str, attribute: bool = False, origin: cst.CSTNode | None = None) -> frozenset[Source]:
        """Name-based sources: volatile-, identity- and summary-named identifiers (or attribute names).

        All-caps constants (``SUMMARY``, ``USER_ROLE``) name fixed values, not summaries or identities.
        ``origin`` is the expression that reads the name (``request_id``, ``user.email``,
        ``ctx["user_id"]``): volatile and identity sources start there, so a finding can say
        on which line each of its sources is read.
        """
        if S.summary_name(name) and not S.is_constant_name(name):
            return frozenset({source(S.SUMMARY, name)})
        found = set()
        if self.volatile_name.search(name):
            found.add(source(S.VOLATILE, name, origin))
        if S.identity_attribute(name) if attribute else S.identity_name(name):
            found.add(source(S.IDENTITY, name, origin))
        return frozenset(found)

    # -- dispatch ------------------------------------------------------------
    def _compute(self, e: cst.CSTNode, scope: Scope) -> frozenset[Source]:
        of = self.of
        if isinstance(e, (cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis, cst.Comparison, cst.Lambda)):
            return EMPTY
        if isinstance(e, cst.Name):
            return self._name(e, scope)
        if isinstance(e, cst.Attribute):  # `get_run(run_id).steps`: the run's data, not its id (`run.id` is)
            t = self._attribute(e, scope)
            if not any(s.keyed for s in t) or e.attr.value in ("id", "uuid", "pk"):
                return t  # most reads: no lookup key to judge, so the receiver is not evaluated again
            return unkeyed(t, of(e.value, scope))
        if isinstance(e, cst.Subscript):  # `lookup(run_id)["notes"]`; a slice is part of the value itself
            t = self._subscript(e, scope)
            if not any(s.keyed for s in t):
                return t
            return as_text(t) if any(isinstance(el.slice, cst.Slice) for el in e.slice) else unkeyed(t, of(e.value, scope))
        if isinstance(e, cst.Call):
            if isinstance(e.func, cst.Name) and e.func.value == "dict" and len(e.args) == 1 \
                    and isinstance(e.args[0].value, (cst.GeneratorExp, cst.ListComp)):
                return key_ordered(of(e.args[0].value, scope), self.union(iterables(e.args[0].value), scope))  # dict(pairs)
            return self._call(e, scope)
        if isinstance(e, cst.FormattedString):
            t = EMPTY.union(*(self._formatted(p, scope) for p in e.parts if isinstance(p, cst.FormattedStringExpression)))
            return as_text(templated(t) if has_text(e) else t)
        if isinstance(e, cst.ConcatenatedString):
            t = of(e.left, scope) | of(e.right, scope)
            return as_text(templated(t) if has_text(e) else t)
        if isinstance(e, cst.BinaryOperation):
            t = of(e.left, scope) | of(e.right, scope)
            if isinstance(e.operator, (cst.Add, cst.Modulo)) and (self._static(e.left, scope) or self._static(e.right, scope)):
                return as_text(templated(t))
            if isinstance(e.operator, _SET_OPERATORS) and (is_dict_view(e.left) or is_dict_view(e.right)):
                return t | {source(S.UNORDERED, "a set operation on dict keys", e)}
            return as_period(t, division_period(e, self.index, scope))  # `time.time() // 3600`: once an hour
        if isinstance(e, (cst.List, cst.Tuple, cst.Set)):
            t = as_text(self.union((el.value for el in e.elements), scope))  # `(short_label(run_id), RULES)[0]`
            return t | {source(S.UNORDERED, "a set literal", e)} if isinstance(e, cst.Set) else t
        if isinstance(e, cst.Dict):
            parts = []
            for el in e.elements:
                if isinstance(el, cst.DictElement):
                    parts += [el.key, el.value]
                else:
                    parts.append(el.value)
            return as_text(self.union(parts, scope))
        if isinstance(e, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            over = self.union(iterables(e), scope)
            t = self.union([e.key, e.value] if isinstance(e, cst.DictComp) else [e.elt], scope) | over
            if isinstance(e, cst.DictComp):  # the iteration orders the keys: not in a value read by key
                return key_ordered(t, over)
            return t | {source(S.UNORDERED, "a set comprehension", e)} if isinstance(e, cst.SetComp) else t
        if isinstance(e, (cst.Await, cst.UnaryOperation)):
            return of(e.expression, scope)
        if isinstance(e, cst.IfExp):
            body, orelse = of(e.body, scope), of(e.orelse, scope)
            flag = guard_flag(e)
            if flag is None:
                return body | orelse
            return self._guarded(body, e, flag[0], scope) | orelse if flag[1] is e.body else body | self._guarded(orelse, e, flag[0], scope)
        if isinstance(e, cst.BooleanOperation):
            return of(e.left, scope) | of(e.right, scope)
        if isinstance(e, cst.NamedExpr):
            return of(e.value, scope)
        if isinstance(e, (cst.StarredElement, cst.Element, cst.Arg)):
            return of(e.value, scope)
        return EMPTY

    def _guarded(self, t: frozenset[Source], e: cst.IfExp, name: str, scope: Scope) -> frozenset[Source]:
        """``t``, the sources of the arm of ``e`` that runs only when its flag ``name`` is true (:func:`guard_flag`),
        marked as needing the flag when that is a parameter of ``scope`` it never rebinds: a call that leaves it
        ``None``/``False`` does not take that arm (onyx's ``strftime("%B %d, %Y %H:%M") if include_hour_min else
        strftime("%B %d, %Y")``; :func:`promptcache.lint.untaken_branches.switched_off`)."""
        if not (name in scope.params and all(b.kind == "param" for b in scope.bindings.get(name, ()))):
            return t
        return frozenset(dataclasses.replace(s, guard_id=id(e), guard=e) if s.kind != S.PARAM else s for s in t)

    def _formatted(self, part: cst.FormattedStringExpression, scope: Scope) -> frozenset[Source]:
        """One ``{value:spec}`` of an f-string: a date-only spec (``{now:%Y-%m-%d}``) makes the clock daily."""
        return as_period(self.of(part.expression, scope), self.spec_period(part))

    @staticmethod
    def spec_period(part: cst.CSTNode | None) -> str:
        """How often a clock in an f-string part changes, by its strftime spec (:func:`clock_period`: ``"day"`` for
        ``{now:%Y-%m-%d}``, ``"hour"``, ``"minute"``); ``""`` without one."""
        spec = part.format_spec if isinstance(part, cst.FormattedStringExpression) else None
        if not spec or not all(isinstance(x, cst.FormattedStringText) for x in spec):
            return ""
        return clock_period(cst.SimpleString(repr("".join(x.value for x in spec))))

    def union(self, exprs, scope: Scope) -> frozenset[Source]:
        """The union of the taints of ``exprs`` (None entries skipped)."""
        out: set[Source] = set()
        for expr in exprs:
            if expr is not None:
                out |= self.of(expr, scope)
        return frozenset(out)

    def _static(self, e: cst.BaseExpression, scope: Scope) -> bool:
        """True for static text: a literal with letters or digits, an untainted expression (a constant), or a sum
        holding one (``SYSTEM + "\\n".join(shuffled)``: the prompt's text is there; newcomer helper-95)."""
        if isinstance(e, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            return has_text(e)
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Add):
            return self._static(e.left, scope) or self._static(e.right, scope)
        return not self.of(e, scope)

    # -- names -----------------------------------------------------------------
    def _name(self, e: cst.Name, scope: Scope) -> frozenset[Source]:
        found_scope, bindings = self.index.lookup(e.value, scope)
        out = set(self.names(e.value, origin=e))
        if bindings and all(b.kind == "import" for b in bindings) and S.user_session(self.index.qualified(e, scope)):
            return frozenset({source(S.IDENTITY, e.value, e)})  # `session["level"]`: the user's own session
        if any(s.kind == S.SUMMARY for s in out):
            if not bindings or not all(self._fixed(b) for b in bindings):
                return frozenset(out)
            out = set()  # `for method, path, summary in ENDPOINTS`: a summary of fixed data, not of the chat
        if bindings and not any(_per_request_origin(b) for b in bindings):
            out = {s for s in out if s.kind != S.IDENTITY}  # `reading_level = "grade 8"`: one value for everyone
        if bindings and any(b.kind == "import" for b in bindings) and all(
                b.kind == "import" and imports_code(b) or b.kind == "assign" and is_literal(b.value) for b in bindings):
            out = {s for s in out if s.kind != S.IDENTITY}  # `import locale`, `from babel import Locale`: code (aider;
            # `except ImportError: Locale = None` beside it)
        if S.time_zone_name(e.value) and self._renders_time(e):
            out = {s for s in out if s.kind != S.IDENTITY}  # `format_datetime(ts, timezone)`: the zone renders a time
            # (the clock's is PC101's), it is not written as text (letta)
        if bindings and all(b.kind in ("def", "class") for b in bindings):
            out = set()  # `tools=[lookup_account]`: a function or class is code, not a user's data
        replaced = overwritten([b.node for b in bindings], [b.node for b in bindings if b.kind == "assign"], e, self.parents) \
            if found_scope is scope and self.parents is not None and len(bindings) > 1 else set()
        for binding in bindings:
            if binding.kind in ("assign", "walrus", "with", "for") and found_scope is scope and scope.kind == "function" \
                    and self.parents is not None and unreached(binding.node, e, self.parents):
                continue  # `meta = None; prepare(meta=meta); meta = Meta(now())`: assigned after this read (onyx;
                # cognee: `with open(out_file, "w") as file` after `json.load(file)` of the input)
            if id(binding.node) in replaced:
                continue  # `t = f"...{today}"; ...; t = "Given the input..."; use(t)`: rebound in between (quivr)
            out |= as_read(binding, e, self._binding(binding, e.value), self.of, self.parents)
        if found_scope is not None and e.value in found_scope.sorted_names:
            out = {s for s in out if s.kind not in S.ORDER_KINDS}
        return frozenset(out)

    def _fixed(self, b: Binding) -> bool:
        """A binding to source-code constants: a literal, or a loop over a literal (or a constant bound to one)."""
        if b.kind in ("assign", "walrus"):
            return is_literal(b.value)
        if b.kind == "for":
            value = b.value
            if isinstance(value, cst.Name):
                found, bindings = self.index.lookup(value.value, b.scope)
                assigns = [x for x in bindings if x.kind == "assign"]
                if found is None or found.kind == "function" or len(assigns) != len(bindings) or not assigns:
                    return False
                return all(is_literal(x.value) for x in assigns)
            return is_literal(value)
        return False

    def _binding(self, b: Binding, name: str) -> frozenset[Source]:
        kind = b.kind
        if kind in ("assign", "walrus") and b.element >= 0:
            return self.element_of(b.value, b.element, b.scope)
        order = loop_order(filling_loops(b, name, self.parents), self.of, b.scope) if self.parents is not None else EMPTY
        if kind == "mutate":
            if order and (b.op == "setitem" and keyed_store(b.node, name) or update_call(b.node)):
                order = frozenset(dataclasses.replace(s, key_order=True) for s in order)
            return self.of(b.value, b.scope) | order
        if kind in ("assign", "walrus", "with", "for"):
            return self.of(b.value, b.scope) | order
        if kind == "aug":
            t = self.of(b.value, b.scope)
            return (templated(t) if b.op == "AddAssign" else t) | order
        if kind == "param":
            if b.scope.self_name == name or class_annotation(b.node) or handle_annotation(b.node) or config_param(b.node, b.scope):
                return EMPTY
            if set_annotation(b.node):
                return frozenset({Source(S.PARAM, name, func_id=id(b.scope), index=b.index),
                                  source(S.UNORDERED, f"`{name}: set`", b.node)})
            return frozenset({Source(S.PARAM, name, func_id=id(b.scope), index=b.index)})
        if kind == "shuffle":
            return frozenset({source(S.SHUFFLED, "random.shuffle()", b.value)})
        return EMPTY

    def _attribute(self, e: cst.Attribute, scope: Scope) -> frozenset[Source]:
        attr = e.attr.value
        if isinstance(e.value, cst.Name):
            cls = self.index.class_of_receiver(e.value, scope)
            if cls is not None:
                out = set(self.names(attr, origin=e))
                if any(s.kind == S.SUMMARY for s in out) and set_up(cls, attr, self.index) \
                        and not (self.parents is not None and built_per_call(self.index, self.parents, cls)):
                    # `self.compressed_summary` bound only in `__init__`: the summary the object was built with,
                    # fixed for its conversation (DocsGPT, blind set 11). A summarising call there still counts;
                    # names (the attribute's, the parameter's) do not.
                    out = {s for s in self.names(attr, origin=e) if s.kind != S.SUMMARY}
                    for binding in cls.attrs.get(attr, ()):
                        out |= {s for s in self._binding(binding, attr) if s.kind != S.SUMMARY or s.origin is not None}
                    return frozenset(out)
                bound = cls.attrs.get(attr, ())
                if bound and e.value.value == cls.name and all(b.kind == "assign" and b.scope is cls.scope and is_literal(b.value)
                                                              for b in bound) and not self.index.class_written(cls.name):
                    out = {s for s in out if s.kind != S.IDENTITY}  # `Audience.user` of `user = "end user"` in the
                    # class body: a member (an enum's), one value for everyone (newcomer, stop 36)
                if not any(s.kind == S.SUMMARY for s in out):
                    for binding in bound:
                        out |= self._binding(binding, attr)
                if any(s.kind == S.VOLATILE for s in out) and set_per_object(self.index, self.parents, cls, attr):
                    # `self.started = datetime.now()` in `__init__`: read when the object is built, not per call
                    out = {dataclasses.replace(s, per_object=True) if s.kind == S.VOLATILE and not s.import_time
                           else s for s in out}
                return frozenset(out)
        qualified = self.index.qualified(e, scope)
        if qualified == "os.environ":
            return frozenset({source(S.ENV, "os.environ", e)})
        named = self._of_param(e.value, scope, self.names(attr, attribute=True, origin=e))
        if any(s.kind == S.IDENTITY for s in named) and (self._imported_setting(e, scope) or self._class_member(e, scope)):
            named = frozenset(s for s in named if s.kind != S.IDENTITY)  # `config.proxy.username`: a setting;
            # `MessageRole.user`: an enum member
        if any(s.kind == S.SUMMARY for s in named):
            if not self._import_constant(e, scope):
                return named
            named = frozenset(s for s in named if s.kind != S.SUMMARY)
        field = self._field(e.value, attr, scope)
        # `doc.updated_at` of `Doc(text=t, updated_at=now())`: the metadata keyword the object's value leaves out
        # (:meth:`CallTaint._call_value`) is what this read gets
        t = (field if S.record_time_name(attr) else self.of(e.value, scope) & field) | named
        if (PROMPT_FIELD.search(attr) or attr == "content") and same_field(e, attr, self.parents):
            # `ModelInputData(instructions=data.instructions + " Reply briefly.")`: a parameter's prompt field
            # written back into the same field is the prompt passed through (openai-agents-python; issue 11);
            # `{"role": "system", "content": _serialize(message.content)}`: a message converted (browser-use)
            t = frozenset(s for s in t if s.kind != S.PARAM)
        return as_period(t, field_period(attr))  # `now.hour`: once an hour

    def _of_param(self, base: cst.BaseExpression, scope: Scope, named: frozenset[Source]) -> frozenset[Source]:
        """``named`` (the identity of ``info.user_id``, the id of ``info.session_id``) tied to parameter ``info`` when ``base`` is one, so that a
        call passing ``None`` for it drops them (:meth:`CallTaint.bind_params`; onyx's ``dynamic_schema_info=None``)."""
        if not named or not isinstance(base, cst.Name):
            return named
        params = [b for b in self.index.lookup(base.value, scope)[1] if b.kind == "param"]
        if len(params) != 1:
            return named
        p = params[0]
        return frozenset(dataclasses.replace(s, func_id=id(p.scope), index=p.index) if s.kind in _NAMED else s for s in named)

    def _renders_time(self, e: cst.Name) -> bool:
        """``e`` is an argument of a call that renders a time: named for one (``format_datetime(...)``,
        ``get_local_time(timezone=tz)``, ``datetime.now(tz)``, ``.astimezone(tz)``) or given a time beside it
        (``compile_metadata(memory_edit_timestamp=t, timezone=tz)``). Not ``str(tz)``, a text method
        (``.format(timezone=tz, date=d)``) or a render-named call."""
        arg = self.parents.get(e) if self.parents is not None else None
        call = self.parents.get(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(call, cst.Call):
            return False
        if arg.keyword is not None and S.time_call(arg.keyword.value):
            return True  # `.replace(tzinfo=tz)`
        callee = last_name(call.func)
        if S.time_call(callee):
            return True  # `format_datetime(ts, tz)`, `datetime.now(tz)`
        if callee in TEXT_METHODS or S.renders_text(callee):
            return False  # `PROMPT.format(timezone=tz, release_date=d)`, `render_profile(tz, last_login_at)`: text
        return any(
            a is not arg and (a.keyword is not None and S.time_call(a.keyword.value) or S.time_call(last_name(a.value)))
            for a in call.args)

    def _class_member(self, e: cst.Attribute, scope: Scope) -> bool:
        """``MessageRole.user``: an attribute of a class (CamelCase) is a member of the class, one value in every
        process (an enum member, letta), not a user's data: a class of this module (whose attributes written here
        are followed), or an imported one that this module neither writes nor calls methods on
        (:meth:`_import_constant`; ``Session.username = user.name`` is per request)."""
        base = e.value
        if not isinstance(base, cst.Name) or not constructor_call(base):
            return False
        bindings = self.index.lookup(base.value, scope)[1]
        return bool(bindings) and (all(b.kind == "class" for b in bindings) or all(
            b.kind == "import" and imports_code(b) for b in bindings) and self._import_constant(e, scope))

    def _import_constant(self, e: cst.Attribute, scope: Scope) -> bool:
        """``prompts.system_prompt_extract_relevant_summary``: an attribute of an imported name used here only as a
        namespace of values is a value another module defined, whatever its name says (khoj). Not when this module
        writes its attributes (``state.summary = ...``) or calls anything on it (``session.refresh_summary(h)``:
        an imported object, or a module function, that can rewrite the attribute at run time): a conversation
        summary needs a run-time origin, and those are one."""
        base = e.value
        if not isinstance(base, cst.Name):
            return False
        if not self.index.imported(base.value, scope):
            return False
        if any(isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
               and call.func.value.value == base.value for call, _ in self.index.calls):
            return False
        return not any(isinstance(st.target, cst.Attribute) and isinstance(st.target.value, cst.Name)
                       and st.target.value.value == base.value for st in self.index.stores)

    def _subscript(self, e: cst.Subscript, scope: Scope) -> frozenset[Source]:
        base = self.of(e.value, scope)
        if isinstance(e.value, cst.Name) and S.user_session(self.index.qualified(e.value, scope)) \
                and any(s.kind == S.IDENTITY and s.origin is e.value for s in base):
            key = key_text(e.slice[0].slice.value) if len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Index) else None
            return frozenset({source(S.IDENTITY, f'{e.value.value}["{key}"]' if key else e.value.value, e)})  # `session["level"]`
        if self.index.qualified(e.value, scope) == "os.environ":
            return frozenset({source(S.ENV, "os.environ", e)})
        if len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Index) and _position(e.slice[0].slice.value) and isinstance(e.value, cst.Name):
            # `messages[-1]`: one element of a parameter list itself (not `content[-1]` of a message mapped in a loop);
            # not `messages[0]`, the head of the conversation given as a whole: its system message, passed through
            # (open-interpreter's `system_message = messages[0]["content"]`; issue 11)
            base = frozenset(dataclasses.replace(s, picked=True) if s.kind == S.PARAM and s.detail == e.value.value else s for s in base)
        if len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Index):
            if int_value(e.slice[0].slice.value) is None:
                # `tool_defs[name]`: one value looked up by key; the order the keys were stored in is not in it
                # (swarm, blind set 15: a dict filled from os.listdir(), read in the order of a config's names)
                base = frozenset(s for s in base if not s.key_order)
            key = key_text(e.slice[0].slice.value)
            entry = self.entry(e.value, e.slice[0].slice.value, scope)
            if entry is not None:
                base = entry  # `self.state["rules"]`: that entry's values, not `state["now"]` beside it
            elif key:  # an entry not seen here: its key's name is all there is (`ROLE_COLOR['user']` is "green")
                named = self.names(key, origin=e)
                if any(s.kind == S.SUMMARY for s in named):
                    return named
                return base | named
        return base


def _position(e: cst.BaseExpression) -> bool:
    """An integer index other than the head (``-1``, ``1``): one element by position. ``0`` is the head of the
    conversation (its system message), which a converter given the whole conversation passes through."""
    if isinstance(e, cst.UnaryOperation):
        return isinstance(e.expression, cst.Integer)
    return isinstance(e, cst.Integer) and int(e.value, 0) != 0


def _per_request_origin(b: Binding) -> bool:
    """Whether a binding can give an identity-named name a per-user value.

    A parameter, an import (``current_user`` proxies), a loop or ``with``
    target, or a value computed inside a function can; a module- or
    class-level assignment (computed once, at import) and a literal cannot.
    """
    if b.kind in ("param", "import", "for", "with"):
        return True
    return b.scope.kind == "function" and not is_literal(b.value)
