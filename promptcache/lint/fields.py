"""Field-sensitive taint: which part of a value a source reaches (a mixin of the taint engine).

Two shapes that real LLM-app code uses all the time, where whole-value taint reported the wrong thing
(issue 11, from pydantic-ai and openai-agents-python):

- unpacking: ``tools, betas = prepare()`` with ``return tools, betas``: ``tools`` gets the sources of
  the first element only, not of the ``betas`` set beside it;
- objects built with keyword arguments: ``Request(instructions=x, timestamp=now()).instructions`` gets
  ``x``'s sources, not the clock's;
- dict entries holding session state: ``self.state["rules"]`` gets the values written under ``"rules"``
  (in a dict literal, ``state["rules"] = ...``, ``state.update({...})``), not ``state["now"]`` beside it;
- a tool object given its schema: ``FunctionTool(func=session.search, openai_tool_schema=schema)`` renders
  ``schema``; the callable beside it (and the session it is bound to) is what runs, not what is sent
  (:func:`implementation_arguments`; camel's ``ChatAgent._clone_tools``).

Both only ever narrow the whole value's sources: a shape they do not know answers with all of them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.dict_view import string_key
from promptcache.lint.index import Scope
from promptcache.lint.rendering import managed
from promptcache.lint.value_syntax import constructor_call

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.sources import Source

EMPTY: frozenset = frozenset()

# A keyword giving an object a tool's input schema: camel `openai_tool_schema=`, OpenAI Agents
# `params_json_schema=`, pydantic-ai `parameters_json_schema=`, LangChain `args_schema=`, MCP `inputSchema=`,
# Anthropic `input_schema=`. Not an output, response, state or dependency schema (`Agent(task=t,
# output_model_schema=Posts)`, browser-use, is no tool).
_SCHEMA_KEYWORD = re.compile(r"(?i)(tool|input|params?|parameters|args?)_?(json_?)?schema$")
# Keywords that stay part of what such an object renders: the fields of the providers' tool definitions
# (OpenAI: type, function, name, description, parameters, strict; Anthropic: name, description, input_schema,
# cache_control, defer_loading, input_examples; MCP: title, inputSchema), any name, title or description
# (OpenAI Agents `Handoff(tool_name=, tool_description=)`, crewAI `MCPNativeTool(server_name=, tool_name=)` make
# the tool's name from them) and any text or prompt keyword.
_RENDERED_KEYWORD = re.compile(r"(?i)schema$|(^|_)(name|title|description)$|^_?(type|function|parameters|strict"
                               r"|cache_control|defer_loading|input_examples)$|prompt|instruction|system|message|content"
                               r"|text|input")


def flat_items(e: cst.CSTNode | None) -> list[cst.BaseExpression] | None:
    """The elements of a tuple or list literal without starred items, else None."""
    if isinstance(e, (cst.Tuple, cst.List)) and not any(isinstance(el, cst.StarredElement) for el in e.elements):
        return [el.value for el in e.elements]
    return None


def implementation_arguments(call: cst.Call) -> list[cst.Arg]:
    """The keyword arguments of ``call`` that are not part of the definition the object renders, when ``call``
    gives it a tool's input schema explicitly (``openai_tool_schema=``, ``args_schema=``..., not ``None``):
    ``func=`` in ``FunctionTool(func=getattr(toolkit, name), openai_tool_schema=tool.get_openai_tool_schema())``
    is the implementation, and a session id bound into it is never sent (camel; issue 11). Without such a
    keyword: ``[]``. Definition and text keywords (name, description, parameters, strict, prompt, messages...),
    positional and ``**`` arguments are always kept."""
    if not any(a.keyword is not None and _SCHEMA_KEYWORD.search(a.keyword.value)
               and not (isinstance(a.value, cst.Name) and a.value.value == "None") for a in call.args):
        return []
    return [a for a in call.args if a.keyword is not None and not _RENDERED_KEYWORD.search(a.keyword.value)]


class FieldSensitivity:
    """Methods of :class:`~promptcache.lint.taint.TaintEngine` (``of``, ``union``, ``names``, ``index`` and
    ``_apply_summary`` come from it)."""

    _fields_active: set[tuple[int, int, str]]
    _fields_memo: dict[tuple[int, int, str], frozenset[Source]]

    def element_of(self, e: cst.CSTNode, k: int, scope: Scope) -> frozenset[Source]:
        """The sources of element ``k`` of the tuple ``e`` evaluates to (``a, b = e``): field-sensitive for a
        tuple or list literal and for a module-local function whose every return is one of the same length
        (``return tools, betas``); the whole value's sources otherwise."""
        items = flat_items(e)
        if items is not None and k < len(items):
            return self.of(items[k], scope)
        if isinstance(e, cst.Await):  # `a, b = await self._map(...)`
            return self.element_of(e.expression, k, scope)
        if isinstance(e, cst.Call) and (callee := self.index.function_named(e.func, scope)) is not None:
            returns = [flat_items(r) for r in callee.returns]
            if returns and all(r is not None and len(r) > k and len(r) == len(returns[0]) for r in returns):
                return self._apply_summary(callee, e, scope, element=k)
        return self.of(e, scope)

    def _imported_setting(self, e: cst.Attribute, scope: Scope) -> bool:
        """``config.browser_config.proxy.username``: an attribute of an object imported from another module, through
        a settings-named step, is a setting read at start-up (:func:`promptcache.lint.sources.imported_setting`)."""
        names, base = [], e.value
        while isinstance(base, cst.Attribute):
            names.append(base.attr.value)
            base = base.value
        return isinstance(base, cst.Name) and self.index.imported(base.value, scope) and \
            S.imported_setting([base.value, *names])

    def _field(self, e: cst.CSTNode, attr: str, scope: Scope) -> frozenset[Source]:
        """The sources that may reach field ``attr`` of the value of ``e``: those of its own keyword argument when
        ``e`` constructs an object naming that field (``Request(instructions=x, timestamp=now())``:
        ``.instructions`` gets ``x``'s, not the clock), followed through names, subscripts, literals and
        branches. Everything else (a field the call does not name, which a property may derive from any
        argument; a call of a function of this module, a factory) answers with the whole value's sources, so
        this only ever narrows. Memoised per (node, scope, field); a cycle adds nothing."""
        key = (id(e), id(scope), attr)
        found = self._fields_memo.get(key)
        if found is not None:
            return found
        if key in self._fields_active:
            return EMPTY
        self._fields_active.add(key)
        try:
            found = self._field_of(e, attr, scope)
        finally:
            self._fields_active.discard(key)
        self._fields_memo[key] = found
        return found

    def entry(self, e: cst.BaseExpression, key: cst.BaseExpression, scope: Scope) -> frozenset[Source] | None:
        """The sources of entry ``key`` (a string literal) of the dict that the name or ``self.attr`` ``e``
        holds, when every binding of it says what it writes under which key: a dict literal, ``d["k"] = v``,
        ``d.update({...})``. A computed key or ``**spread`` counts for every key; any other binding (a call,
        a parameter, a loop) answers None (the whole value's sources apply)."""
        wanted = string_key(key)
        if wanted is None or not isinstance(e, (cst.Name, cst.Attribute)):
            return None
        bindings = self.index.bindings_of(e, scope)
        if not bindings:
            return None
        out: set = set()
        for b in bindings:
            literal = b.value if b.kind in ("assign", "walrus") and b.element == -1 else \
                b.value if b.kind == "mutate" and b.op == "extend" and isinstance(b.node, cst.Call) else None
            if isinstance(literal, cst.Dict):
                for el in literal.elements:
                    k = string_key(el.key) if isinstance(el, cst.DictElement) else None
                    if k is None or k == wanted:
                        out |= self.of(el.value, b.scope) | (self.of(el.key, b.scope) if isinstance(el, cst.DictElement) and k is None else EMPTY)
            elif b.kind == "mutate" and b.op == "setitem":
                into, k = _written_key(b.node, e)
                if not into or k is None or k == wanted:
                    out |= self.of(b.value, b.scope)
            else:
                return None
        return frozenset(out)

    def _field_of(self, e: cst.CSTNode, attr: str, scope: Scope) -> frozenset[Source]:
        if isinstance(e, cst.Await):  # `params = await self._build_params(...)`
            return self._field(e.expression, attr, scope)
        if isinstance(e, cst.Call):
            mine = [a for a in e.args if a.keyword is not None and a.keyword.value == attr]
            callee = self.index.function_named(e.func, scope)
            if mine and callee is None:
                return self.of(mine[0].value, scope) | self.union((a.value for a in e.args if a.keyword is None), scope)
            if callee is not None and callee.returns and all(_constructs(r, attr) for r in callee.returns):
                # a factory of this module whose every return constructs the object naming the field:
                # the field of what it returns, its parameters bound to this call's arguments
                inner = EMPTY.union(*(self._field(r, attr, callee) for r in callee.returns))
                return self.bind_params(callee, e, scope, inner)
            whole = self.of(e, scope)
            meta = [a.value for a in e.args if a.keyword is not None and self.volatile_name.search(a.keyword.value)]
            if not mine and meta and (constructor_call(e.func) or managed(e, self.parents)):
                # a field the call does not name: not an id or timestamp passed beside it as a keyword to a class
                # or a context manager (`async with session(run_id=rid) as r: r.instructions`, pydantic-ai;
                # issue 11); a function such as `registry.render(now=...)` may put every keyword in the text
                rest = self.union((a.value for a in e.args if a.value not in meta), scope)
                if isinstance(e.func, cst.Attribute):
                    rest |= self.of(e.func.value, scope)
                return whole - (self.union(meta, scope) - rest)
            return whole
        if isinstance(e, cst.Name):
            _, bindings = self.index.lookup(e.value, scope)
            if not bindings or any(b.kind not in ("assign", "mutate", "with") or b.element != -1 for b in bindings):
                return self.of(e, scope)
            return EMPTY.union(*(self._field(b.value, attr, b.scope) for b in bindings)) | self.names(e.value)
        if isinstance(e, cst.Subscript):
            return self._field(e.value, attr, scope) | self.of(e.slice[0].slice, scope) if e.slice else self.of(e, scope)
        if isinstance(e, (cst.List, cst.Tuple)):
            return EMPTY.union(*(self._field(el.value, attr, scope) for el in e.elements))
        if isinstance(e, cst.IfExp):
            return self._field(e.body, attr, scope) | self._field(e.orelse, attr, scope)
        if isinstance(e, cst.BooleanOperation):
            return self._field(e.left, attr, scope) | self._field(e.right, attr, scope)
        return self.of(e, scope)


def _written_key(stmt: cst.CSTNode, container: cst.BaseExpression) -> tuple[bool, str | None]:
    """For a ``container[k]... = v`` statement: whether it writes into ``container`` through one of its entries,
    and that entry's key when it is a string literal (``(True, None)``: a computed key)."""
    targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else \
        [stmt.target] if isinstance(stmt, (cst.AugAssign, cst.AnnAssign)) else []
    for t in targets:
        while isinstance(t, cst.Subscript) and isinstance(t.value, cst.Subscript):
            t = t.value
        if isinstance(t, cst.Subscript) and t.value.deep_equals(container):
            index = t.slice[0].slice if len(t.slice) == 1 else None
            return True, string_key(index.value) if isinstance(index, cst.Index) else None
    return False, None


def _constructs(ret: cst.BaseExpression, attr: str) -> bool:
    """A ``return Cls(..., attr=...)`` (also awaited): an object built with the field as a keyword."""
    ret = ret.expression if isinstance(ret, cst.Await) else ret
    return isinstance(ret, cst.Call) and any(a.keyword is not None and a.keyword.value == attr for a in ret.args)


__all__ = ["FieldSensitivity", "flat_items", "implementation_arguments"]
