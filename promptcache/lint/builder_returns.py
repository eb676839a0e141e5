"""What a prompt-named builder function returns, when that is not part of the cached prefix (issue 11).

:mod:`promptcache.lint.slots` treats the returns of a function named like a prompt (``build_prompt``,
``_format_instructions``) as prefix text. Not when, by data flow rather than by its name:

- it sends a request and returns the model's reply (:func:`returns_reply`: khoj's ``acheck_if_safe_prompt``);
- every call of it is the ``content`` of a user message that goes out last (:func:`user_content_only`:
  gpt-researcher's editor), the newest turn by position;
- it returns the user's message or a conversation literal (:func:`user_turn`) whose last message goes out last
  and which no call splices ahead of other messages (:func:`conversation_sent_last`);
- it is a request handler (:func:`route_handler`: ``@router.get("/prompt-reports")``) that returns objects, not
  text: the HTTP response (screenshot-to-code's ``list_prompt_reports``; checked in :mod:`promptcache.lint.slots`).

A user message placed *before* the history (``[ctx, *history, q]``) is prefix: the position decides
(:func:`promptcache.lint.prompt_uses.sent_last`), not the role.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.dict_view import entry
from promptcache.lint.expressions import last_name
from promptcache.lint.prompt_uses import lands_in_prefix, sent_last
from promptcache.lint.value_syntax import constructor_call
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope

_ROLES = frozenset({"user", "assistant", "system", "developer", "tool"})


def user_turn(value: cst.BaseExpression | None) -> bool:
    """``{"role": "user", ...}``: a prompt-named builder that returns the user's message builds the newest turn,
    where per-request data belongs (pydantic-ai's ``_map_user_prompt``; issue 11), whatever its name says.
    Also a returned conversation literal (``[{"role": "system", ...}, {"role": "user", ...}]``, gpt-researcher's
    editor): its system and developer messages are slots of their own (the role dicts), the rest are turns,
    provided the conversation is sent last (:func:`conversation_sent_last`, checked where the builder is known)."""
    return conversation(value) or role_of(value) == "user"


def conversation(value: cst.BaseExpression | None) -> bool:
    """A list or tuple literal of role dicts (a conversation)."""
    return isinstance(value, (cst.List, cst.Tuple)) and bool(value.elements) and all(
        isinstance(el, cst.Element) and role_of(el.value) is not None for el in value.elements)


def _newest(flow: FlowAnalysis, message: cst.CSTNode, scope: Scope) -> bool:
    """``message`` goes out last (the last message of the list sent, or appended): the newest turn, by position,
    not by role. A message before others (``[ctx, *history, q]``) or sent somewhere unknown is not."""
    return sent_last(flow, message, scope)


def message_sent_last(flow: FlowAnalysis, func: Scope, called: bool) -> bool:
    """The user message ``func`` returns (``{"role": "user", ...}``, ``Message(role=MessageRole.user, ...)``) is
    the newest turn: no call of it in the module is spliced ahead of other messages (:func:`_spliced_ahead`:
    ``[build_alert(), *history, q]``, review of blind set 28). ``called``: the module must call it (a message
    object sent from where the module does not show may head the list); a dict a builder the module never calls
    returns is taken for the newest turn, as its role says (pydantic-ai's ``_map_user_prompt``)."""
    calls = [call for call, _ in flow.calls_of(func)]
    return (bool(calls) or not called) and not any(_spliced_ahead(flow, call) for call in calls)


def _spliced_ahead(flow: FlowAnalysis, call: cst.Call) -> bool:
    """``[func(), *history, q]`` or ``func() + history``: the call's value goes ahead of other messages."""
    node: cst.CSTNode = call
    while isinstance(flow.facts.parent.get(node), cst.Await):
        node = flow.facts.parent[node]
    p = flow.facts.parent.get(node)
    if isinstance(p, (cst.StarredElement, cst.Element)) and flow.facts.parent.get(p) is not None:
        elements = getattr(flow.facts.parent[p], "elements", None)
        if elements and elements[-1] is not p:
            return True
    return isinstance(p, cst.BinaryOperation) and p.left is node


def conversation_sent_last(flow: FlowAnalysis, func: Scope, returned: cst.List | cst.Tuple) -> bool:
    """The conversation ``func`` returns is the end of what is sent: its last message goes out last
    (:func:`_newest`) and no call of ``func`` is spliced ahead of other messages (``[*func(), *history, q]``,
    ``func() + history``)."""
    if any(_spliced_ahead(flow, call) for call, _ in flow.calls_of(func)):
        return False
    return _newest(flow, returned.elements[-1].value, func)


def role_of(value: cst.BaseExpression | None) -> str | None:
    """``"user"`` for ``{"role": "user", ...}`` (a dict literal, an SDK param call, a message class's
    ``role=`` keyword) or ``Message(role=MessageRole.user, ...)`` (an enum member named after the role: letta),
    else None."""
    role = entry(value, "role") if value is not None else None
    if role is None and isinstance(value, cst.Call) and constructor_call(value.func):
        role = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "role"), None)
    if isinstance(role, cst.Attribute) and role.attr.value.lower() in _ROLES and constructor_call(role.value):
        return role.attr.value.lower()
    return role.value[1:-1] if isinstance(role, cst.SimpleString) else None


def returns_reply(flow: FlowAnalysis, func: Scope, agent_call: Callable[[cst.Call], bool]) -> bool:
    """``func`` sends a request (a sink, or a model-bound call such as ``send_message_to_model_wrapper(...)``) and
    returns what comes back, through local names (``response = await ...; return is_safe, response["reason"]``):
    a request handler named after the prompt it handles (khoj's ``acheck_if_safe_prompt``,
    ``generate_better_image_prompt``; issue 11), whose return is the model's reply, not a prompt. Not when a
    return builds text around it (``f"You help {user.name}. {reply}"``)."""
    replies: set[str] = set()
    for call, scope in flow.index.calls:
        if scope is not func:
            continue
        sink = flow.sinks.sink_at(call, scope)
        if not (sink is not None and sink.is_request or agent_call(call) and _hands_built_text(func, call)
                or _runs_prompt_object(func, call)):
            continue
        node = flow.facts.parent.get(call)
        if isinstance(node, cst.Await):
            node = flow.facts.parent.get(node)
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            replies.add(node.targets[0].target.value)
    if not replies:
        return False
    for _ in range(4):  # `response = json.loads(response.text)`, `reason = response.get("reason")`
        for name, bindings in func.bindings.items():
            if name not in replies and any(b.kind == "assign" and b.value is not None and
                                           any(n.value in replies for n in descendants(b.value, cst.Name)) for b in bindings):
                replies.add(name)
    templates = (cst.FormattedString, cst.ConcatenatedString, cst.BinaryOperation)
    return any(n.value in replies for r in func.returns for n in descendants(r, cst.Name)) and not any(
        isinstance(r, templates) or isinstance(r, cst.Call) and isinstance(r.func, cst.Attribute) and r.func.attr.value == "format"
        for r in func.returns)  # a text built around the reply is a prompt again


# Not `invoke`: a LangChain template's `.invoke({...})` returns the prompt value.
_RUNS = frozenset({"run", "arun", "execute", "aexecute", "execute_safe", "kickoff", "kickoff_async"})
_PROMPT_KEYWORDS = frozenset({"prompt", "instructions", "system_prompt"})
_TEXT_MAKERS = ("Template", "Renderer", "Formatter", "Builder", "Prompt", "Message", "Messages")


def _runs_prompt_object(func: Scope, call: cst.Call) -> bool:
    """``call`` runs an object ``func`` built from its prompt: ``block = TextPromptBlock(prompt=prompt, ...)`` then
    ``result = await block.execute_safe(...)`` (skyvern's script ``prompt()`` step; issue 11); what it returns is
    the run's output."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value in _RUNS and isinstance(call.func.value, cst.Name)):
        return False
    bindings = func.bindings.get(call.func.value.value, [])
    return bool(bindings) and all(
        b.kind == "assign" and isinstance(b.value, cst.Call) and constructor_call(b.value.func)
        and not last_name(b.value.func).endswith(_TEXT_MAKERS)
        and any(a.keyword is not None and a.keyword.value in _PROMPT_KEYWORDS for a in b.value.args) for b in bindings)


def _hands_built_text(func: Scope, call: cst.Call) -> bool:
    """An argument of ``call`` is text built here (an f-string, a concatenation, ``PROMPT.format(...)``), or a name
    ``func`` binds only to such text: the prompt handed to the model (not ``schema.model_json_schema()``)."""
    texts = (cst.FormattedString, cst.ConcatenatedString, cst.SimpleString, cst.BinaryOperation)
    def built(e) -> bool:
        if isinstance(e, cst.IfExp):
            return built(e.body) and built(e.orelse)
        return isinstance(e, texts) or isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute) and e.func.attr.value == "format"
    for arg in call.args:
        if built(arg.value):
            return True
        if isinstance(arg.value, cst.Name):
            bindings = func.bindings.get(arg.value.value, [])
            if bindings and all(b.kind == "assign" and built(b.value) for b in bindings):
                return True
    return False


def user_content_only(flow: FlowAnalysis, func: Scope) -> bool:
    """Every call of ``func`` (its callers all visible, at least one) is the ``content`` of a user message
    (``{"role": "user", "content": self._format_instructions(...)}``) that goes out last (:func:`_newest`): the
    builder writes the newest user turn, whatever its name says (gpt-researcher's editor; issue 11)."""
    calls = flow.call_sites.visible_calls(func)
    if not calls:
        return False
    for call, scope in calls:
        value: cst.CSTNode = call
        element = flow.facts.parent.get(value)
        if isinstance(element, cst.Await):
            value, element = element, flow.facts.parent.get(element)
        if not (isinstance(element, cst.DictElement) and element.value is value and isinstance(element.key, cst.SimpleString)
                and element.key.value[1:-1] == "content" and role_of(flow.facts.parent.get(element)) == "user"):
            return False
        if not _newest(flow, flow.facts.parent[element], scope):
            return False  # a user message ahead of the history is part of the cached prefix
    return True


def suffix_only(flow: FlowAnalysis, func: Scope) -> bool:
    """Every call of ``func`` (its callers all visible, at least one) is added after other text, with no static text
    after it in that sum (``"\\n\\nREQUEST CONTEXT:" + policy + _repair_context_prompt(ctx) + todo_prompt(ctx)``),
    and no use puts the sum in a prefix place: the builder writes a tail of a larger text, judged where that text
    goes (skyvern's copilot; issue 11)."""
    calls = flow.call_sites.visible_calls(func)
    if not calls:
        return False
    for call, scope in calls:
        node: cst.CSTNode = call
        while isinstance(flow.facts.parent.get(node), cst.Await):
            node = flow.facts.parent[node]
        p = flow.facts.parent.get(node)
        if not (isinstance(p, cst.BinaryOperation) and isinstance(p.operator, cst.Add) and p.right is node):
            return False
        outer = _static_after(flow, node, scope)
        if outer is None or lands_in_prefix(flow, outer, scope):
            return False  # `context = "Context:" + _ctx_prompt(); create(system=context + RULES)`
        assign = flow.facts.parent.get(outer)
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
            name = assign.targets[0].target.value  # `context = ... + _ctx_prompt(); return context + RULES`
            if any(_static_after(flow, read, scope) is None for read in descendants(scope.node, cst.Name)
                   if read.value == name and read is not assign.targets[0].target):
                return False
    return True


def _static_after(flow: FlowAnalysis, node: cst.CSTNode, scope: Scope) -> cst.CSTNode | None:
    """The whole sum or f-string ``node`` ends, or None when static text follows it there (``node + RULES``,
    ``f"{node}\\n{RULES}"``)."""
    p = flow.facts.parent.get(node)
    while True:
        if isinstance(p, cst.BinaryOperation) and isinstance(p.operator, cst.Add):
            if p.left is node and _static(flow, p.right, scope):
                return None
        elif isinstance(p, cst.FormattedStringExpression):
            f = flow.facts.parent.get(p)
            later = f.parts[f.parts.index(p) + 1:] if isinstance(f, cst.FormattedString) else []
            if any(isinstance(x, cst.FormattedStringText) and x.value.strip() or isinstance(x, cst.FormattedStringExpression)
                   and _static(flow, x.expression, scope) for x in later):
                return None
            p = f
        else:
            return node
        node, p = p, flow.facts.parent.get(p)


def _static(flow: FlowAnalysis, e: cst.BaseExpression, scope: Scope) -> bool:
    """``e`` is literal text or carries no taint (a constant)."""
    return isinstance(e, (cst.SimpleString, cst.ConcatenatedString)) or not flow.taint.of(e, scope)


_ROUTES = frozenset({"get", "post", "put", "patch", "delete", "route", "api_route", "websocket", "message", "event", "command"})


def route_handler(node: cst.CSTNode | None) -> bool:
    """A function decorated as a request handler: ``@app.post("/chat")``, ``@router.websocket(...)``,
    ``@bot.message(...)``."""
    if not isinstance(node, cst.FunctionDef):
        return False
    for d in node.decorators:
        func = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        if isinstance(func, cst.Attribute) and func.attr.value in _ROUTES:
            return True
    return False


__all__ = ["conversation", "conversation_sent_last", "returns_reply", "role_of", "route_handler", "suffix_only",
           "user_content_only", "user_turn"]
