"""System-prompt slots of the agent frameworks and the Gemini SDK (lint-rules.md, "Prefix slot").

:mod:`promptcache.lint.slots` already reads the keyword forms (LangChain
``SystemMessage(...)`` and ``("system", ...)``, pydantic-ai
``Agent(system_prompt=..., instructions=...)``, the OpenAI Agents SDK
``Agent(instructions="...")``). This module adds the forms whose text is
produced by code the framework calls on every run:

- pydantic-ai ``@agent.system_prompt`` / ``@agent.instructions`` functions
  (also ``@agent.system_prompt(dynamic=True)``): what they return is the
  system prompt (pydantic-ai docs, "System prompts" / "Instructions");
- a callable given as ``instructions=`` / ``system_prompt=`` to an agent
  (the OpenAI Agents SDK's dynamic instructions, ``instructions=fn`` or
  ``instructions=lambda ctx, agent: ...``): what it returns;
- Gemini (``google.genai``): ``system_instruction=`` of
  ``types.GenerateContentConfig`` / ``CreateCachedContentConfig`` /
  ``LiveConnectConfig`` (and the older ``google.generativeai.GenerativeModel``),
  a ``"system_instruction"`` key of a ``config={...}`` dict given to
  ``generate_content``, and the ``contents=`` of a ``CreateCachedContentConfig``
  (an explicit cache: its contents are the cached prefix);
- an app's own message classes in a module that imports no SDK
  (:func:`message_list_slots`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.dict_view import entry
from promptcache.lint.expressions import last_name

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope

_DECORATORS = ("system_prompt", "instructions")
_AGENT_KEYWORDS = ("system_prompt", "instructions")
_GEMINI_CONFIGS = ("GenerateContentConfig", "CreateCachedContentConfig", "LiveConnectConfig", "GenerativeModel")
_GEMINI_CALLS = ("generate_content", "generate_content_stream")


def _decorator_name(decorator: cst.BaseExpression) -> str | None:
    """``system_prompt`` for ``@agent.system_prompt`` or ``@agent.system_prompt(dynamic=True)``, else None."""
    if isinstance(decorator, cst.Call):
        decorator = decorator.func
    if isinstance(decorator, cst.Attribute) and decorator.attr.value in _DECORATORS:
        return decorator.attr.value
    return None


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)


_ROLE_CLASSES = {"SystemMessage": "system", "UserMessage": "user", "HumanMessage": "user", "AIMessage": "assistant",
                 "AssistantMessage": "assistant"}
_CONTENT_KEYS = ("content", "message", "text")
_MESSAGES_NAME = re.compile(r"(?i)messages")


def _role_and_content(node: cst.BaseExpression) -> tuple[str, cst.BaseExpression | None]:
    """``(role, content)`` of a message written as an app's class (``SystemMessage(content=x)``), a call with a
    literal ``role=`` (``format_chat_message(role="system", message=x)``) or a dict literal; ``("", None)`` else."""
    if isinstance(node, cst.Call):
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        role = _ROLE_CLASSES.get(last_name(node.func), "")
        if not role and isinstance(keywords.get("role"), cst.SimpleString):
            role = keywords["role"].evaluated_value
        content = next((keywords[k] for k in _CONTENT_KEYS if k in keywords), None)
        if content is None and role:
            content = next((a.value for a in node.args if a.keyword is None), None)
        return (role if isinstance(role, str) else ""), content
    if isinstance(node, cst.Dict):
        role, content = entry(node, "role"), next((v for k in _CONTENT_KEYS if (v := entry(node, k)) is not None), None)
        return (role.evaluated_value if isinstance(role, cst.SimpleString) and isinstance(role.evaluated_value, str)
                else ""), content
    return "", None


def message_lists(flow: FlowAnalysis) -> list[tuple[cst.BaseExpression, Scope]]:
    """The content and scope of each system message that heads a request's message list built with an app's own
    helpers: a list literal whose first element is a system (or developer) message, with a user message after it
    and no assistant message (a stored conversation or a dataset row has one), or bound to a name that a
    prompt- or messages-named function returns (browser-use's ``[SystemMessage(content=system_prompt),
    UserMessage(content=prompt)]``, sent through its own model wrapper; TaskWeaver's ``compose_prompt`` returning
    ``[format_chat_message(role="system", message=...)]`` extended with the rounds; blind set 31). Not a lone
    ``[SystemMessage(...)]`` handed to a call (marvin's thread stores it)."""
    found = []
    for listed in flow.facts.of_type(cst.List):
        if not listed.elements:
            continue
        role, content = _role_and_content(listed.elements[0].value)
        if role not in ("system", "developer") or content is None:
            continue
        roles = [_role_and_content(el.value)[0] for el in listed.elements[1:]]
        scope = flow.scope_at(listed)
        if "assistant" not in roles and ("user" in roles or _returned_by_prompt_function(flow, listed, scope)):
            found.append((content, scope))
            found += [(c, scope) for c in _system_appends(flow, listed, scope)]
    return found


def _system_appends(flow: FlowAnalysis, listed: cst.List, scope) -> list[cst.BaseExpression]:
    """The contents of the system messages appended to ``listed`` (bound to a name) by the statements right after
    it, before any other statement: ``messages.append({"role": "system", "content": f"The time is
    {time.strftime('%c')}"})`` ahead of the history (SuperAGI's ``build_agent_messages``; blind set 34). Not one
    after a helper that fills the list, a rebinding or a loop (review helper-93)."""
    assign = flow.facts.parent.get(listed)
    line = flow.facts.parent.get(assign)
    block = flow.facts.parent.get(line)
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) \
            or not isinstance(line, cst.SimpleStatementLine) or not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return []
    name, out = assign.targets[0].target.value, []
    for stmt in block.body[block.body.index(line) + 1:]:
        # `if history_enabled:` its appends come first there; one that also adds other messages (`messages +=
        # history`) ends the head: what follows it may come after the history (review helper-96)
        inner = list(stmt.body.body) if isinstance(stmt, cst.If) and not stmt.orelse else [stmt]
        contents = _system_contents(inner, name)
        out += contents
        if len(contents) < len(inner) or not inner:
            break
    return out


def _system_contents(statements: list, name: str) -> list[cst.BaseExpression]:
    """The contents of the system messages that the leading ``name.append(...)`` statements add."""
    out = []
    for stmt in statements:
        call = stmt.body[0].value if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr) else None
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "append"
                and isinstance(call.func.value, cst.Name) and call.func.value.value == name and call.args):
            break
        role, content = _role_and_content(call.args[0].value)
        if role not in ("system", "developer") or content is None:
            break
        out.append(content)
    return out


def _returned_by_prompt_function(flow: FlowAnalysis, listed: cst.List, scope) -> bool:
    """``listed`` is bound to a name (``chat_history = [...]``) that its function, named for a prompt or for
    messages (``compose_prompt``, ``build_messages``), returns."""
    assign = flow.facts.parent.get(listed)
    if scope is None or scope.kind != "function" or not isinstance(assign, cst.Assign) or len(assign.targets) != 1 \
            or not isinstance(assign.targets[0].target, cst.Name):
        return False
    name = assign.targets[0].target.value
    return (flow.is_prompt_name(scope.name) or bool(_MESSAGES_NAME.search(scope.name))) and any(
        isinstance(r, cst.Name) and r.value == name for r in scope.returns)


def message_list_slots(flow: FlowAnalysis, add) -> None:
    """The content of each of :func:`message_lists`' system messages, in a module that is no LLM file (in one,
    :func:`promptcache.lint.slots.system_slots` reads every ``SystemMessage`` and role dict): PC101 alone runs
    for these (:meth:`promptcache.lint.rule.FlowRule.leave_Module`): a clock or an id there is certain, while a
    parameter may be the one-shot request's whole point (agno's parser model, crewAI's router; blind set 31)."""
    if not flow.is_llm_file:
        for content, scope in flow.message_lists:
            add("system", content, scope, "the system message")


def framework_slots(flow: FlowAnalysis, add, agent_call) -> None:
    """Add the slots above through ``add(kind, expr, scope, label)`` (the slot collector's method);
    ``agent_call(call)`` tells an agent constructor (:func:`promptcache.lint.agent_calls.agent_call`)."""
    index = flow.index
    for scope in index.scopes:
        node = scope.node
        if scope.kind == "function" and isinstance(node, cst.FunctionDef):
            for d in node.decorators:
                name = _decorator_name(d.decorator)
                if name is not None:
                    for ret in scope.returns:
                        add("system", ret, scope, f"the @{name} function {scope.name}()")
    for call, scope in index.calls:
        if agent_call(call):
            for kw in _AGENT_KEYWORDS:
                value = _keyword(call, kw)
                if isinstance(value, cst.Lambda):
                    add("system", value.body, scope, f"{kw}= (a callable)")
                elif isinstance(value, (cst.Name, cst.Attribute)):
                    func = index.function_named(value, scope)
                    for ret in (func.returns if func is not None else ()):
                        add("system", ret, func, f"{kw}= ({func.name}())")
        qualified = index.qualified(call.func, scope) or ""
        if qualified.split(".")[-1] in _GEMINI_CONFIGS:
            add("system", _keyword(call, "system_instruction"), scope, "system_instruction=")
            if qualified.endswith("CreateCachedContentConfig"):
                add("system", _keyword(call, "contents"), scope, "the cached contents=")
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _GEMINI_CALLS:
            config = _keyword(call, "config")
            if isinstance(config, cst.Dict):
                for el in config.elements:
                    if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString) and el.key.value[1:-1] == "system_instruction":
                        add("system", el.value, scope, "system_instruction=")


__all__ = ["framework_slots"]
