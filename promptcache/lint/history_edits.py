"""Where a conversation that was already sent is changed in place (PC204).

A provider cached the conversation as it was sent; the next request must
repeat it byte for byte up to the new messages. These change it instead:

- a store into an earlier message: ``h[i]["content"] = ...`` (``i`` not the
  last index), ``h[1] = {...}`` (a fixed index replaced with current state),
  or a loop storing into the messages of ``h`` (``m["content"] = "<omitted>"``,
  ``m["content"] = m["content"][:budget // len(tool_msgs)]``), also through a
  filtered alias ``[m for m in h if ...]``, whose elements are ``h``'s own;
- a store into a field of the records a sent list is rendered from
  (``for step in self.steps[:-2]: step.observations = None`` where the
  messages are built from ``step.observations``), and of a smolagents
  agent's memory steps (``for s in agent.memory.steps: s.observations_images = None``);
- ``h.remove(x)`` on the per-turn path on a history that lives across turns
  (``self.history``, a module list, the caller's list passed in), and
  ``h.insert(i, x)`` at the head of a ``self`` or module-level history.

Not: the newest message (``h[-1]``, not yet sent), ``cache_control`` markers,
re-setting the constant system message at index 0 (the same bytes each turn),
an insert or removal under a size guard or a test of the same list (a one-time
set-up: ``if not self.history: self.history.insert(0, SYSTEM)``), an insert
or a removal in a list built fresh for each request, a store into the records of
a ``copy.deepcopy`` made in the same function (a format conversion on the way out),
a store into a list made for this request (:func:`fresh_list`), a constant added to
a dict literal of a list literal made here (``messages[0]["content"] += RULES``), a field of every message normalised in place
(``for m in h: m["content"] = m["content"].rstrip()``: :mod:`promptcache.lint.normalising_edits`).
The copies count only where the messages changed are not picked by the list's
length or from its end (:mod:`promptcache.lint.history_positions`): a moving
``<omitted>`` mask on a per-request copy changes bytes that were sent unmasked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.dict_view import entries
from promptcache.lint.expressions import argument, int_value, is_system_dict
from promptcache.lint.history_positions import chosen_by_position
from promptcache.lint.index import Scope
from promptcache.lint.literal_messages import constant_text, own_literal_dict
from promptcache.lint.normalising_edits import normalising_store
from promptcache.lint.object_state import set_up
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.turns import Ref, Turns


def edits(turns: Turns) -> list[tuple[cst.CSTNode, str]]:
    """PC204 sites: ``(node, detail)`` for every change to an already-sent message."""
    flow, index = turns.flow, turns.index
    out: list[tuple[cst.CSTNode, str]] = []
    rendered = rendered_refs(turns)
    for store in index.stores:
        target, scope = store.target, store.scope
        key = field_name(target)
        if key == "cache_control":
            continue
        base = target.value
        if normalising_store(target, store.value, store.node, flow.code, flow.facts, _settings(scope)):
            continue  # `m["content"] = m["content"].rstrip()`: the same bytes as last sent (normalising_edits)
        if isinstance(target, cst.Subscript) and turns.is_history(base, scope) and not is_last(target, base, flow):
            if not (constant_index(target) == 0 and _static_system(store.value, turns, scope)) and \
                    not _request_copy(turns, base, scope, store.node, target, elements=False):
                out.append((store.node, flow.code(target)))
            continue
        if isinstance(base, cst.Subscript) and turns.is_history(base.value, scope) and not is_last(base, base.value, flow):
            if not _request_copy(turns, base.value, scope, store.node, base, elements=True) and \
                    not own_literal_dict(turns, base, constant_index(base), scope, store.value, store.node):
                out.append((store.node, flow.code(target)))
            continue
        if isinstance(base, cst.Name):
            for b in index.lookup(base.value, scope)[1]:
                if b.kind != "for":
                    continue
                if _deep_copy(turns, iterated(b.value), b.scope) and not chosen_by_position(turns, store.node, scope):
                    continue
                refs = turns.list_refs(iterated(b.value), b.scope)
                if refs & turns.history_refs or refs & rendered.get(key or "", set()) or (
                        key in SMOLAGENTS_RENDERED and _agent_memory(turns, iterated(b.value))):
                    out.append((store.node, flow.code(target)))
                    break
    for call, scope in index.calls:
        func = call.func
        if not isinstance(func, cst.Attribute) or not turns.is_history(func.value, scope) or not turns.per_turn(call):
            continue
        method = func.attr.value
        if method == "remove" and call.args and _lives_across_turns(turns, func.value, scope, params=True) and \
                not _set_up(turns, call, func.value):
            out.append((call, f"{flow.code(func)}(...)"))
        elif method == "insert" and len(call.args) == 2 and _head(call.args[0].value) and \
                _lives_across_turns(turns, func.value, scope) and not _set_up(turns, call, func.value):
            out.append((call, f"{flow.code(func)}({flow.code(call.args[0].value)}, ...)"))
    return out


def _settings(scope: Scope):
    """``set_up(attr)`` for the method holding ``scope``: ``self.attr`` is bound only in ``__init__`` or the class
    body (a setting fixed per object, TaskWeaver's ``self.config``); False outside a method."""
    method = scope
    while method is not None and method.cls is None:
        method = method.parent
    cls = method.cls if method is not None else None
    return (lambda attr: set_up(cls, attr)) if cls is not None else lambda _: False


def rendered_refs(turns: Turns) -> dict[str, set[Ref]]:
    """By field name: the lists whose records a sent list is rendered from, reading that field.

    ``for step in self.steps: messages.append({"role": "user", "content": step.observations})`` with
    ``messages`` sent gives ``{"observations": {self.steps}}``: a later ``step.observations = None`` over
    ``self.steps`` changes what was sent. Only fields the rendering reads count (a bookkeeping flag set on
    the records is not sent)."""
    out: dict[str, set[Ref]] = {}
    index = turns.index
    for scope in index.scopes:
        for name, bindings in scope.bindings.items():
            if ("n", id(scope), name) in turns.history_refs:
                _render_sources(turns, bindings, out)
    for cls in index.classes:
        for attr, bindings in cls.attrs.items():
            if ("a", id(cls), attr) in turns.history_refs:
                _render_sources(turns, bindings, out)
    return out


def _render_sources(turns: Turns, bindings, out: dict[str, set]) -> None:
    for b in bindings:
        if b.kind != "mutate" or b.value is None:
            continue
        for name in descendants(b.value, cst.Name):
            for loop in turns.index.lookup(name.value, b.scope)[1]:
                if loop.kind != "for":
                    continue
                refs = turns.list_refs(iterated(loop.value), loop.scope)
                for field in _fields_read(b.value, name.value):
                    out.setdefault(field, set()).update(refs)


def _fields_read(value: cst.CSTNode, name: str) -> set[str]:
    """The fields of ``name`` that ``value`` reads: ``name.attr`` and ``name["key"]``."""
    fields = set()
    for node in descendants(value, (cst.Attribute, cst.Subscript)):
        if isinstance(node.value, cst.Name) and node.value.value == name:
            key = field_name(node)
            if key:
                fields.add(key)
    return fields


# The memory-step fields smolagents renders into the messages of every model call (`to_messages` of ActionStep,
# PlanningStep, TaskStep, SystemPromptStep in smolagents/memory.py, 1.27.0.dev0, read 2026-12); not
# `model_input_messages`, `timing`, `token_usage` (a record of the step, never sent).
SMOLAGENTS_RENDERED = frozenset({"model_output", "tool_calls", "observations", "observations_images", "error", "plan",
                                 "task", "task_images", "system_prompt"})


def _agent_memory(turns: Turns, iterable: cst.BaseExpression | None) -> bool:
    """``agent.memory.steps`` in a module that imports smolagents: the agent renders every memory step into the
    messages of each model call (smolagents ``AgentMemory``, ``ActionStep.to_messages``), so a field cleared on
    older steps (``step.observations_images = None``, its vision browser example) changes sent messages."""
    if isinstance(iterable, cst.Subscript):
        iterable = iterable.value  # `agent.memory.steps[:-2]`
    return (isinstance(iterable, cst.Attribute) and iterable.attr.value == "steps" and isinstance(iterable.value, cst.Attribute)
            and iterable.value.attr.value == "memory" and any(m.split(".")[0] == "smolagents" for m in turns.index.imports))


def fresh_list(turns: Turns, expr: cst.BaseExpression, scope: Scope, elements: bool, seen: set | None = None) -> bool:
    """Whether ``expr`` is a list built for this request only, so a store into it reaches no stored history.

    ``elements=False`` (a slot replaced, ``h[i] = {...}``): a list literal or comprehension made here, or the
    return of a module function that builds one (``out = []`` then appends). ``elements=True`` (a field of an
    element changed, ``h[0]["content"] += ...``): the elements must be new too, so only a call of a function of
    another module that converts the messages (``serialize_messages(messages)``, browser-use), or of a module
    function whose returns are all such lists. Through local names bound only to such values and through the
    parameters of a private function whose every call passes one (khoj's ``_format_messages_for_summary``).
    Never ``self.attr``, a module-level list, the parameter of a public function, or a copy of a known list.
    ``seen``: the expressions on the path (a cycle, ``msgs = self._clean(msgs)``, adds no other source)."""
    seen = set() if seen is None else seen
    if id(expr) in seen:
        return True
    if len(seen) > 12:
        return False
    seen.add(id(expr))
    if isinstance(expr, cst.Name):
        found, bindings = turns.index.lookup(expr.value, scope)
        if found is None or found.kind != "function" or not bindings:
            return False
        for b in bindings:
            if b.kind == "param":
                calls = turns.flow.call_sites.visible_calls(b.scope)
                offset = 1 if b.scope.self_name is not None else 0
                args = [argument(c, b.index - (offset if isinstance(c.func, cst.Attribute) else 0), expr.value) for c, _ in calls or []]
                if not calls or any(a is None or not fresh_list(turns, a, s, elements, seen) for a, (_, s) in zip(args, calls)):
                    return False
            elif b.kind in ("assign", "walrus"):
                if not fresh_list(turns, b.value, b.scope, elements, seen):
                    return False
            elif b.kind != "mutate":
                return False
        return True
    if isinstance(expr, cst.Await):
        return fresh_list(turns, expr.expression, scope, elements, seen)
    if isinstance(expr, (cst.List, cst.ListComp)):
        return not elements
    if isinstance(expr, cst.Call):
        callee = turns.callee(expr, scope)
        if callee is not None:
            return bool(callee.returns) and all(fresh_list(turns, r, callee, elements, seen) for r in callee.returns)
        return elements and not turns.list_refs(expr, scope) and _imported_function(turns, expr.func, scope)
    return False


def _request_copy(turns: Turns, lst: cst.BaseExpression, scope: Scope, node: cst.CSTNode, sub: cst.Subscript,
                  elements: bool) -> bool:
    """A store at ``node`` into ``sub`` (``lst[i]``) changes only a copy made for this request, at a position
    that does not move: ``lst`` is a :func:`fresh_list` or a :func:`copied_before` copy, and neither the index
    nor an enclosing loop picks the messages by the list's length or from its end (a moving ``<omitted>`` mask
    on a per-request copy changes bytes the previous request sent unmasked)."""
    if not (fresh_list(turns, lst, scope, elements) or copied_before(turns, lst, scope, node)):
        return False
    index = sub.slice[0].slice.value if len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index) else None
    return not chosen_by_position(turns, node, scope, index)


def _imported_function(turns: Turns, func: cst.BaseExpression, scope: Scope) -> bool:
    """``serialize_messages`` or ``Serializer.serialize_messages`` bound by an import (not a builtin, not a method
    of an object the module holds, such as ``self.memory.messages()`` or ``history.copy()``)."""
    root = func.value if isinstance(func, cst.Attribute) else func
    if not isinstance(root, cst.Name) or (isinstance(func, cst.Attribute) and func.attr.value in ("copy", "get")):
        return False
    return turns.index.imported(root.value, scope)


def _deep_copy(turns: Turns, iterable: cst.BaseExpression | None, scope: Scope) -> bool:
    """``messages = copy.deepcopy(raw_messages)`` (every binding of the name): records copied for this request,
    so a store into them (a format conversion on the way out) never reaches the stored history (khoj's
    ``format_message_for_api``; issue 11)."""
    if not isinstance(iterable, cst.Name):
        return False
    bindings = turns.index.lookup(iterable.value, scope)[1]
    return bool(bindings) and all(
        b.kind == "assign" and isinstance(b.value, cst.Call) and turns.index.qualified(b.value.func, b.scope) == "copy.deepcopy"
        for b in bindings)


def copied_before(turns: Turns, expr: cst.BaseExpression, scope: Scope, node: cst.CSTNode) -> bool:
    """``messages = copy.deepcopy(messages)`` as a statement of the function body before ``node``, with no other
    binding of the name between the copy and ``node``: a store at ``node`` changes the copy made for this request
    (Qwen-Agent's ``_prepend_knowledge_prompt`` rebinds its parameter to its copy; issue 11). Stores before the
    copy, or after a later rebinding (``messages = self.history``), still reach the caller's list."""
    if not isinstance(expr, cst.Name):
        return False
    found, bindings = turns.index.lookup(expr.value, scope)
    if found is None or found.kind != "function":
        return False
    order = turns.facts.order
    at = order.get(node, -1)
    copies = [b for b in bindings if b.kind == "assign" and isinstance(b.value, cst.Call) and order.get(b.node, at) < at
              and turns.index.qualified(b.value.func, b.scope) == "copy.deepcopy" and _body_statement(turns, b.node, found)]
    if not copies:
        return False
    last = max(order[c.node] for c in copies)
    return not any(b.kind not in ("mutate", "param") and last < order.get(b.node, -1) < at for b in bindings)


def _body_statement(turns: Turns, node: cst.CSTNode, scope: Scope) -> bool:
    """``node`` is a simple statement directly in the body of ``scope``'s function (not under an ``if`` or a loop)."""
    line = turns.facts.parent.get(node)
    block = turns.facts.parent.get(line)
    return isinstance(line, cst.SimpleStatementLine) and block is not None and turns.facts.parent.get(block) is scope.node


def _head(position: cst.BaseExpression) -> bool:
    """An insert position before the end: a constant (``0``, ``1``), not ``len(h)``."""
    index = constant_index(position)
    return index is not None and index >= 0


def _lives_across_turns(turns: Turns, history: cst.BaseExpression, scope: Scope, params: bool = False) -> bool:
    """``self.attr``, or a list bound at module level (with ``params``, also a parameter: the caller's list): it
    keeps the change for the next turn. Not a list the function builds for this request."""
    ref = turns.ref_of(history, scope)
    if ref is None:
        return False
    if ref[0] == "a":
        return True
    found, bindings = turns.index.lookup(history.value, scope) if isinstance(history, cst.Name) else (None, [])
    if found is not None and found.kind == "module":
        return True
    return params and any(b.kind == "param" for b in bindings) and not any(b.kind in ("assign", "walrus") for b in bindings)


def _set_up(turns: Turns, node: cst.CSTNode, history: cst.BaseExpression) -> bool:
    """Under a size guard, or under an ``if`` that tests the same list (a one-time set-up)."""
    if turns.guarded(node):
        return True
    text = turns.flow.code(history)
    for anc in turns.facts.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            return False
        if isinstance(anc, (cst.If, cst.While)) and any(turns.flow.code(n) == text for n in descendants(anc.test, (cst.Name, cst.Attribute))):
            return True
    return False


def _static_system(value: cst.BaseExpression | None, turns: Turns, scope: Scope) -> bool:
    """A system/developer message whose every value is a literal or a module constant: the same bytes each turn."""
    if not is_system_dict(value):
        return False
    values = [el.value for el in value.elements] if isinstance(value, cst.Dict) else [v for _, v in entries(value) or ()]
    # a dict literal, or an SDK param call (`ChatCompletionSystemMessageParam(role=..., content=...)`)
    return all(constant_text(turns, v, scope) and not isinstance(v, cst.BinaryOperation) for v in values)


def constant_index(sub_or_expr: cst.CSTNode | None) -> int | None:
    """The integer of ``h[3]`` (a subscript) or of ``3`` / ``-1`` (an expression), else None."""
    e = sub_or_expr
    if isinstance(e, cst.Subscript):
        if len(e.slice) != 1 or not isinstance(e.slice[0].slice, cst.Index):
            return None
        e = e.slice[0].slice.value
    return int_value(e) if isinstance(e, cst.BaseExpression) else None


def field_name(target: cst.BaseExpression) -> str | None:
    """``"content"`` for ``m["content"]``, ``"observations"`` for ``step.observations``, else None."""
    if isinstance(target, cst.Subscript) and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
        value = target.slice[0].slice.value
        if isinstance(value, cst.SimpleString):
            return value.value[1:-1]
    if isinstance(target, cst.Attribute):
        return target.attr.value
    return None


def is_last(sub: cst.Subscript, base: cst.BaseExpression, flow) -> bool:
    """``h[-1]`` or ``h[len(h) - 1]``: the newest message, not yet sent."""
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return True  # slices are handled as trims
    if constant_index(sub) == -1:
        return True
    code = flow.code(sub.slice[0].slice.value).replace(" ", "")
    return code == f"len({flow.code(base)})-1"


def iterated(iterable: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """``h`` for ``h``, ``enumerate(h)``, ``reversed(h)``."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in ("enumerate", "reversed") and iterable.args:
        return iterable.args[0].value
    return iterable


__all__ = ["constant_index", "edits", "field_name", "is_last", "iterated", "rendered_refs"]
