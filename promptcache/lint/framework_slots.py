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
  (an explicit cache: its contents are the cached prefix).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis

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
