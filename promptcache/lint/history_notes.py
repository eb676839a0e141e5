"""A system note appended to a running history: a turn of the conversation, not its system prompt (issue 11).

Apps add system-role messages mid-conversation: mentat's command output (``self.add_message({"role":
"system", "content": f"Command ran: {cmd}..."})``), a chat bot's ``/time`` command. Appended after the
messages already sent, such a note changes no cached prefix whatever its role; PC101 and PC102 leave it out
(:func:`promptcache.lint.slots.system_slots`). It is a note, not the head of a new history, when:

- it is appended to a list kept across turns: ``self.messages.append(m)`` (or through the object's own method
  whose body appends its parameter there) outside ``__init__``, or ``messages.append(m)`` on a module-level
  name bound only to non-empty list literals (a script's ``messages = [system]`` and its ``while`` loop); not a
  function's own list, built for one request, where more messages may be put after the note;
- no ``if not self.messages:`` check is around it, and no reset of that list may come before it: earlier in
  the function, in any branch, or in the same loop (``= []``, ``.clear()``, ``[:] = []``, ``del``, or a call of
  the class's method or the module's function that does one), so the list is not empty there. A reset to the
  head (``self.messages = [system]``) is none: a note after the head stays where it is for the whole
  conversation, as a first user turn would;
- its text is labels and run-time values, with no module constant or prompt-named name in it
  (``f"{RULES} Now: {now}"`` is a system prompt starting a history, wherever it is appended).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.expressions import last_name
from promptcache.lint.prompt_places import is_store
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope


def appended_note(flow: FlowAnalysis, message: cst.CSTNode, content: cst.BaseExpression | None, scope: Scope) -> bool:
    """``message`` (a system message literal or constructor call, ``content`` its text) is a note appended to a
    running history, as the module docstring says."""
    arg = flow.facts.parent.get(message)
    call = flow.facts.parent.get(arg)
    if not (isinstance(arg, cst.Arg) and arg.keyword is None and not arg.star and isinstance(call, cst.Call)):
        return False
    holder = flow.holder_of(scope)
    if holder is not None and holder.name == "__init__" or content is None or not _note_text(flow, content, scope):
        return False
    if holder is None and not any(isinstance(a, (cst.For, cst.While)) for a in flow.facts.ancestors(call)):
        return False  # appended once, at import: part of the head every request of the process starts with
    history = _appended_to(flow, call, arg, scope, holder)
    if history is None:
        return False
    if any(isinstance(anc, cst.If) and _mentions(anc.test, history) for anc in flow.facts.ancestors(call)):
        return False  # `if not self.messages: self.messages.append(system)`: the head of a new history
    body = holder.node if holder is not None else flow.module
    me = holder.self_name if holder is not None else None
    # the methods of the class (for `self.messages`) or the module's functions (for `messages`) that empty the list
    resetters = {f.name for f in flow.index.scopes if f.kind == "function" and f is not holder
                 and (f.cls is holder.cls and f.cls is not None if history.startswith("self.") else True)
                 and any(True for _ in _resets(f.node, history, f.self_name))}
    resets = [*_resets(body, history, me),
              *(c for c in descendants(body, cst.Call) if last_name(c.func) in resetters)]
    return not any(_before(flow, r, call) for r in resets)


def _appended_to(flow: FlowAnalysis, call: cst.Call, arg: cst.Arg, scope: Scope, holder: Scope | None) -> str | None:
    """``"self.messages"`` or ``"messages"``: the list ``call`` appends its argument to (directly, or through the
    object's own method), when it is kept across turns; None otherwise."""
    direct = _list_appended(flow, call, scope, holder)
    if direct is not None or holder is None:
        return direct
    callee = flow.index.function_named(call.func, scope)
    if callee is None or callee.self_name is None or not isinstance(call.func, cst.Attribute):
        return None
    position = [a for a in call.args if a.keyword is None].index(arg) + 1
    if position >= len(callee.params):
        return None
    name = callee.params[position]
    reads = [n for n in descendants(callee.node, cst.Name) if n.value == name and not is_store(n, flow.facts.parent.get(n))]
    lists = {_list_appended(flow, flow.facts.parent.get(flow.facts.parent.get(n)), callee, callee) for n in reads}
    return lists.pop() if reads and len(lists) == 1 and None not in lists and next(iter(lists)).startswith("self.") else None


def _list_appended(flow: FlowAnalysis, call: cst.CSTNode | None, scope: Scope, holder: Scope | None) -> str | None:
    """``"self.messages"`` for ``self.messages.append(x)`` in a method, ``"messages"`` for ``messages.append(x)`` on
    a module-level list bound only to non-empty list literals; None for anything else."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "append"):
        return None
    target = call.func.value
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and holder is not None \
            and target.value.value == holder.self_name:
        return f"self.{target.attr.value}"
    if isinstance(target, cst.Name):
        found, bindings = flow.index.lookup(target.value, scope)
        if found is None or found.kind != "module":
            return None  # a function's own list is built for one request: what is appended may go ahead of more
        bindings = [b for b in bindings if b.kind != "mutate"]  # not the appends
        assigns = [b for b in bindings if b.kind in ("assign", "walrus")]
        if assigns and len(assigns) == len(bindings) and all(
                isinstance(b.value, cst.List) and b.value.elements for b in assigns):
            return target.value  # `messages = [system]`, appended to in the turn loop
    return None


def _note_text(flow: FlowAnalysis, content: cst.BaseExpression, scope: Scope) -> bool:
    """``content`` is text written here (a string, an f-string, a sum of them; or a name bound once in the
    function to one) with no module constant, upper-case or prompt-named name in it: labels and values only.
    Text a helper returns (``build_rules(now)``) may be a whole system prompt."""
    if isinstance(content, cst.Name):
        found, bindings = flow.index.lookup(content.value, scope)
        if found is not scope or len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].value is None:
            return False
        content = bindings[0].value
    if not isinstance(content, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString, cst.BinaryOperation)):
        return False
    for node in (content, *descendants(content, (cst.Name, cst.Attribute))):
        name = last_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else ""
        if name and (name.isupper() or flow.is_prompt_name(name)):
            return False
        if isinstance(node, cst.Name):
            found = flow.index.lookup(node.value, scope)[0]
            if found is not None and found.kind == "module" and any(b.kind == "assign" for b in found.bindings.get(node.value, [])):
                return False
    return True


def _mentions(node: cst.CSTNode, history: str) -> bool:
    """``node`` names the list (``self.messages`` by its attribute, ``messages`` by its name)."""
    last = history.rsplit(".", 1)[-1]
    return any(isinstance(n, cst.Attribute) and n.attr.value == last or isinstance(n, cst.Name) and n.value == history
               for n in descendants(node, (cst.Attribute, cst.Name)))


def _resets(body: cst.CSTNode, history: str, me: str | None):
    """The nodes of ``body`` that empty ``history`` (``self.messages`` or ``messages``) or rebind it to anything
    but a non-empty list literal: an assignment (also annotated or to a slice), ``del``, ``.clear()``.
    (``self.messages = [system]`` starts it again with its head: what is appended later is still a note.)"""
    for node in descendants(body, (cst.Assign, cst.AnnAssign, cst.Del, cst.Call)):
        if isinstance(node, (cst.Assign, cst.AnnAssign)) and isinstance(node.value, cst.List) and node.value.elements:
            continue
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.func if isinstance(node, cst.Call) else node.target]
        if isinstance(node, cst.Call):
            if not (isinstance(targets[0], cst.Attribute) and targets[0].attr.value == "clear"):
                continue
            targets = [targets[0].value]
        if any(_dotted(t, me) == history for t in targets):
            yield node


def _dotted(target: cst.BaseExpression, me: str | None) -> str | None:
    """``"self.messages"`` for ``me.messages`` (``me``: the method's first parameter), ``"messages"`` for a name,
    through subscripts (``h[:]``); None for anything else."""
    while isinstance(target, cst.Subscript):
        target = target.value
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == me:
        return f"self.{target.attr.value}"
    return target.value if isinstance(target, cst.Name) else None


def _before(flow: FlowAnalysis, reset: cst.CSTNode, call: cst.Call) -> bool:
    """``reset`` may run before ``call``: earlier in the source (in a ``try``, a ``with``, another branch: any
    order), or in the same loop (``messages.clear()`` at the end of the turn empties it for the next one)."""
    order = flow.facts.order
    if order.get(reset, 0) < order.get(call, 0):
        return True
    loops = (cst.For, cst.While)
    reset_loops = {id(a) for a in flow.facts.ancestors(reset) if isinstance(a, loops)}
    return any(id(a) in reset_loops for a in flow.facts.ancestors(call) if isinstance(a, loops))


__all__ = ["appended_note"]
