"""Whether a prompt builder's text already differs per call ahead of a value (issue 11, gpt-researcher).

A prompt-named builder (``def generate_report_prompt(question, context): return f'Information: "{context}" ...
{date}'``) is a template: the parameters inside its text are its inputs, filled per call. A value that enters the
returned text *after* a per-request input changes no cached prefix: the text differs from that input on in every
request anyway, so the prefix break, if any, is the input's. An input counts as per-request when no call in the
module binds it to a fixed value and every call there passes it a parameter of the calling function (none: the
builder is called from elsewhere, as gpt-researcher's ``PromptFamily`` methods are). A per-user or per-session
input (``build_system_prompt(self.name)``, an attribute set in ``__init__``, the user's ``{user.name}``) is the
same on every turn of one conversation or user, so a clock after it is still reported.
A parameter that *starts* the text (``f"{base} @ {now}"``) is a prompt being wrapped, not an input: often a
constant system prompt, so the value after it is still reported.

:func:`behind_template_input` answers it for one node of a builder slot; only the text before the node within
the same f-string, concatenation or ``+`` counts (not an earlier statement).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.expressions import argument

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.slots import Slot


IMPORTERS = "importers"  # behind an input only the importers' calls fill (see behind_template_input)


def behind_template_input(flow: FlowAnalysis, slot: Slot, node: cst.CSTNode) -> bool | str:
    """True when ``node`` of the builder slot ``slot`` comes after a per-call template input in the same text.
    :data:`IMPORTERS` instead when the builder is a prompt module's and no call of it is in the module: its
    importers' calls decide (a finding there stands only if one passes fixed arguments:
    :mod:`promptcache.lint.cross_module`; ``build_system_prompt("a pirate")`` in ``main.py``, newcomer, stop 31)."""
    found = _behind(flow, slot, node)
    if found and flow.prompt_module and not flow.calls_of(slot.scope):
        return IMPORTERS
    return found


def _behind(flow: FlowAnalysis, slot: Slot, node: cst.CSTNode) -> bool:
    func = slot.scope
    if slot.kind != "builder" or func.kind != "function":
        return False
    child: cst.CSTNode = node
    for anc in flow.facts.ancestors(node):
        earlier = []
        if isinstance(anc, cst.FormattedString):
            text = False  # the template's own text seen: an input after it is a data slot, not a wrapped prompt
            for part in anc.parts:
                if part is child:
                    break
                if isinstance(part, cst.FormattedStringText):
                    text = text or bool(part.value.strip())
                elif text:
                    earlier.append(part.expression)
        elif isinstance(anc, (cst.BinaryOperation, cst.ConcatenatedString)) and anc.right is child and _starts_with_text(anc.left):
            earlier = [anc.left]
        if any(_per_call_input(flow, func, e) for e in earlier):
            return True
        if anc is slot.expr or isinstance(anc, (cst.FunctionDef, cst.SimpleStatementLine)):
            return False
        child = anc
    return False


def _starts_with_text(e: cst.CSTNode) -> bool:
    """The leftmost piece of ``e`` is literal text (``"Context: " + context``), not an input (``base + "..."``)."""
    while isinstance(e, (cst.BinaryOperation, cst.ConcatenatedString)):
        e = e.left
    if isinstance(e, cst.FormattedString):
        first = e.parts[0] if e.parts else None
        return isinstance(first, cst.FormattedStringText) and bool(first.value.strip())
    return isinstance(e, cst.SimpleString) and bool(str(e.evaluated_value).strip())


def _per_call_input(flow: FlowAnalysis, func, e: cst.BaseExpression) -> bool:
    taint = flow.taint.of(e, func)
    if any(s.kind == S.IDENTITY for s in taint):
        return False  # `{user.name}`: the same on every request of one user, so a clock after it still breaks
    for s in taint:
        if s.kind == S.PARAM and s.func_id == id(func) and not flow.call_sites.fixed_somewhere(func, s.index) \
                and not flow.call_sites.default_only(func, s.index) and _per_request_everywhere(flow, func, s.index):
            return True
    return False


def _per_request_everywhere(flow: FlowAnalysis, func, position: int) -> bool:
    """Every call of ``func`` in the module passes parameter ``position`` a request's own value: a parameter of
    the calling function (not of ``__init__``, not an object's attribute such as ``self.name``: those are per
    user or per session, the same on every turn of one conversation)."""
    if position >= len(func.params):
        return False
    offset = 1 if func.self_name is not None else 0
    for call, scope in flow.calls_of(func):
        value = argument(call, position - (offset if isinstance(call.func, cst.Attribute) else 0), func.params[position])
        holder = flow.holder_of(scope)
        if value is None or holder is None or holder.name == "__init__" or not any(
                s.kind == S.PARAM and s.func_id == id(holder) for s in flow.taint.of(value, scope)):
            return False
    return True


__all__ = ["IMPORTERS", "behind_template_input"]
