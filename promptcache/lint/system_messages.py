"""System-role messages a module builds (issue 11, blind set 30).

A message whose role is ``system`` or ``developer`` heads the prompt it is sent in, whoever sends it: a dict
literal (``{"role": "system", "content": ...}``), an SDK param call
(``ChatCompletionSystemMessageParam(role="system", ...)``) or an app's own message class with a ``role=`` keyword
(``Message(role="system", content=...)``, ``Message(role=MessageRole.system, ...)``: R2R's agent, letta).
Building one makes a module LLM code (:attr:`FlowAnalysis.is_llm_file`) even when its requests go out through
a wrapper the linter does not know, and its content is a system slot (:func:`promptcache.lint.slots.system_slots`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import libcst as cst

from promptcache.lint.builder_returns import role_of
from promptcache.lint.dict_view import entry, is_block
from promptcache.lint.value_syntax import constructor_call

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope

_SYSTEM_ROLES = ("system", "developer")


class SystemMessage(NamedTuple):
    node: cst.CSTNode  # the dict literal or the call
    content: cst.BaseExpression | None  # its content entry or ``content=`` keyword; None when it has none
    scope: Scope
    role: str  # "system" or "developer"


def system_messages(flow: FlowAnalysis) -> list[SystemMessage]:
    """The module's system-role messages, dicts and SDK param calls first, then message classes; each in source
    order. A role written as a string literal, or as an enum member named after the role on a CamelCase class."""
    out: list[SystemMessage] = []
    params = [(call, scope) for call, scope in flow.index.calls if is_block(call) and entry(call, "role") is not None]
    for node, scope in [*flow.index.role_dicts, *params]:
        role = entry(node, "role")
        if isinstance(role, cst.SimpleString) and role.value[1:-1] in _SYSTEM_ROLES:
            out.append(SystemMessage(node, entry(node, "content"), scope, role.value[1:-1]))
    for call, scope in flow.index.calls:
        if is_block(call) or not constructor_call(call.func):
            continue
        role = role_of(call)
        if role in _SYSTEM_ROLES:
            content = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "content"), None)
            out.append(SystemMessage(call, content, scope, role))
    return out


__all__ = ["SystemMessage", "system_messages"]
