"""Which calls make an agent or an assistant: calls whose ``tools=`` / ``system_prompt=`` / ``instructions=`` go to
a model (``Agent(...)``, ``create_agent(...)``, ``client.beta.assistants.create(...)``, ``self.llm(...)``), judged
by the callee's last two names, since frameworks are many; :mod:`promptcache.lint.slots` reads their keywords as
prefix slots when the file is LLM code.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.expressions import last_name
from promptcache.lint.value_syntax import constructor_call

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis

# Callees whose tools= / system_prompt= / instructions= go to a model: agent and assistant constructors.
_AGENT_CALLEE = re.compile(r"(?i)(agent|assistant|chat|llm|model|completion|crew)")
# The last word of a class that describes or stores an agent rather than making one (letta's AgentFileSchema).
_DESCRIPTIONS = frozenset({"Schema", "State", "Record", "Row", "File", "Export"})
# Keywords that make such a call a request or an agent's set-up after all (a request body, a state with a prompt).
_REQUEST_KEYWORDS = frozenset({"model", "model_name", "messages", "llm", "prompt", "system_prompt", "system", "instructions"})


def agent_calls(flow: FlowAnalysis):
    """``agent_call(call)`` for the calls of the module's index, each decided once (:func:`agent_call`)."""
    agents = flow.agent_calls
    if agents is None:
        agents = flow.agent_calls = {id(call) for call, _ in flow.index.calls if agent_call(call)}
    return lambda call: id(call) in agents


def agent_call(call: cst.Call) -> bool:
    """True for calls like ``create_agent(...)``, ``Agent(...)``, ``client.beta.assistants.create(...)``."""
    func = call.func  # the callee's last two names: `Agent`, `assistants.create`, `self.llm`
    if described_agent(call):
        return False
    if isinstance(func, cst.Name):
        return _AGENT_CALLEE.search(func.value) is not None
    if not isinstance(func, cst.Attribute):
        return False
    if _AGENT_CALLEE.search(func.attr.value) is not None:
        return True
    outer = func.value
    if isinstance(outer, cst.Attribute):
        return _AGENT_CALLEE.search(outer.attr.value) is not None
    return isinstance(outer, cst.Name) and _AGENT_CALLEE.search(outer.value) is not None


def described_agent(call: cst.Call) -> bool:
    """``AgentFileSchema(agents=..., tools=...)``, ``AgentState(...)``: a class named as a schema, a state or a
    record describes or stores an agent (an export file, a database row: letta), unless the call names a model,
    messages or a prompt, or passes ``**params`` (``ChatCompletionRequestSchema(model=..., messages=..., tools=...)``:
    a request body). Not ``AgentExecutor(agent=..., tools=...)`` or ``AgentConfig(tools=...)``: they run or set up
    an agent."""
    name = last_name(call.func.value if isinstance(call.func, cst.Subscript) else call.func)
    if not constructor_call(call.func) or name.isupper():
        return False
    words = re.findall(r"[A-Z][a-z0-9]*", name)
    return bool(words) and words[-1] in _DESCRIPTIONS and _AGENT_CALLEE.search(name) is not None \
        and not any(a.star == "**" or a.keyword is not None and a.keyword.value in _REQUEST_KEYWORDS for a in call.args)


__all__ = ["agent_call", "agent_calls", "described_agent"]
