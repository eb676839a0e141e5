"""Which requests PC102 weighs, and against which minimum cacheable length (issue 11, open_deep_research).

PC102's cost is the shared prefix each user or call no longer shares. A prefix shorter than the model's minimum
cacheable length is never cached (provider-cache-rules.md: Anthropic 512-4,096 tokens per model, OpenAI 1,024;
the numbers come from the providers data), so moving per-request data out of it gains nothing until the prompt
grows. Only a **one-shot** request is weighed: its messages a list literal (or a name bound once to one and sent
as written) with no history spliced in anywhere (``*history``, ``[system] + history``, ``previous_response_id=``,
``conversation=``), no tools (``tools=``, ``functions=``, ``mcp_servers=``, ``.bind_tools``, or a model object
the code does not show being made), no ``**kwargs``. A history after a per-request system prompt is a cost
whatever the size. A structured-output schema counts toward the prefix (:func:`request_size.schema_size`).
"""

from __future__ import annotations

import functools
import warnings
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.literals import string_value
from promptcache.lint.request_size import Size, Weight, measure, schema_size
from promptcache.lint.sinks import LANGCHAIN, RUNNABLE_CALLS
from promptcache.lint.walk import descendants
from promptcache.providers import PROVIDERS, known_models, model_profile, provider_for_model

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope
    from promptcache.lint.slots import Slot

# PC102's claim and advice, and what the run says instead below the minimum (cross_module).
PER_REQUEST_CLAIM = ("each user or call gets its own copy of an otherwise identical prefix and its own cache entry; "
                     "put per-request data in the final user message")
SMALL_CLAIM = ("at about {tokens:,} tokens this one-shot request is below the {minimum:,}-token minimum cacheable "
               "length ({model}), so it is not cached yet; put per-request data in the final user message before "
               "the prompt grows")
NO_MODEL = "no model named: the smallest hosted minimum"
_NOT_ONE_SHOT = frozenset({"tools", "functions", "tool_config", "mcp_servers", "previous_response_id",
                           "conversation", "tool_resources", "cached_content", "toolConfig", "prompt", "extra_body"})
_SCHEMAS = frozenset({"response_format", "text_format", "output_type", "response_model"})
_INVOKE_METHODS = RUNNABLE_CALLS | {"generate", "agenerate"}  # a LangChain model run
_DEPTH = 24


def one_shot_weight(flow: FlowAnalysis, slot: Slot) -> Weight | None:
    """The :class:`~promptcache.lint.request_size.Weight` of the one-shot request ``slot`` belongs to; None when
    the request is not one-shot, its text cannot be measured, or its model has no known minimum."""
    found = _request(flow, slot)
    if found is None:
        return None
    call, parts, schemas, scope = found
    sizes = [measure(flow.index, p, scope, filled) for p, filled in parts]
    sizes += [schema_size(flow.index, s, scope) for s in schemas]
    if any(s is None for s in sizes):
        return None
    least = _minimum(flow, call, scope)
    return Weight(sum(sizes, Size()), *least) if least is not None else None


def _request(flow: FlowAnalysis, slot: Slot):
    """``(call, parts, schemas, scope)``: the request call, the ``(expression, filled)`` of its prefix (the system
    text; the other messages, whose unknown values count 0), its structured-output schemas; None unless one-shot."""
    parent = flow.facts.parent
    if slot.sink is not None:
        call, sink = slot.sink.call, slot.sink
        conversation = [v for _, v in sink.conversation()]
        if len(conversation) != 1:
            return None
        messages = conversation[0]
        if isinstance(messages, cst.Name):
            messages = _bound_list(flow, messages, slot.scope, call)
        if not isinstance(messages, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)) \
                and not _message_list(messages):  # `input="..."` is one user turn
            return None
        parts = [(slot.expr, False), (messages, True)]
    else:
        node, messages = slot.expr, None
        for _ in range(5):  # content -> Arg / DictElement / Element -> the message -> Element -> List
            up = parent.get(node)
            if isinstance(up, cst.Element) and isinstance(parent.get(up), cst.List):
                messages = parent.get(up)
                break
            if not isinstance(up, (cst.Arg, cst.DictElement, cst.Element, cst.Dict, cst.Call, cst.Tuple)):
                return None
            node = up
        arg = parent.get(messages)
        call = parent.get(arg) if isinstance(arg, cst.Arg) else None
        if isinstance(arg, cst.Assign):  # `messages = [system, user]`, then sent as it is
            call = _sender(flow, arg, messages, slot.scope)
        if not isinstance(call, cst.Call) or not _message_list(messages):
            return None
        if not _sends(flow, call, slot.scope):
            return None
        sink = flow.sinks.sink_at(call, slot.scope)
        parts = [(el.value, el.value is not node) for el in messages.elements]
    if any(a.star == "**" or a.keyword is not None and a.keyword.value in _NOT_ONE_SHOT for a in call.args):
        return None
    schemas = [a.value for a in call.args if a.keyword is not None and a.keyword.value in _SCHEMAS]
    if sink is None or not sink.is_request or sink.api == LANGCHAIN:  # a LangChain model: what was bound to it
        chain = _model_chain(flow, call.func, slot.scope, call)
        if chain is None:
            return None
        schemas += chain[0]
        call = chain[1]  # the constructor: its `model=` names the model
    if sink is not None and (system := sink.kw("system")) is not None and system is not slot.expr:
        parts.append((system, False))
    return call, parts, schemas, slot.scope


def _model_chain(flow: FlowAnalysis, receiver: cst.BaseExpression, scope: Scope, at: cst.CSTNode):
    """``(schemas, model call)``: the structured-output schemas bound to the model ``receiver.invoke(...)`` calls
    and the LangChain constructor call that makes it (``init_chat_model(...)``, ``ChatOpenAI(...)``, imported from
    a ``langchain`` package), when the code shows that call with nothing bound but ``with_structured_output``;
    None when the model may carry tools (any ``.bind*``, ``|`` chains, a parameter, an imported object or factory,
    a name bound more than once at module level). ``at``: the node that reads ``receiver``."""
    schemas: list = []
    for _ in range(_DEPTH):
        if isinstance(receiver, cst.Attribute):
            if receiver.attr.value.startswith("bind"):
                return None
            if isinstance(receiver.value, cst.Name) and (cls := flow.index.class_of_receiver(receiver.value, scope)):
                values = [b for b in cls.attrs.get(receiver.attr.value, ()) if b.kind == "assign"]
                if len(values) != 1:
                    return None
                receiver, scope, at = values[0].value, values[0].scope, values[0].node  # `self.llm = ChatOpenAI(...)`
                continue
            receiver = receiver.value
        elif isinstance(receiver, cst.Call):
            if any(a.star or a.keyword is not None and a.keyword.value in _NOT_ONE_SHOT for a in receiver.args):
                return None
            func = receiver.func
            if isinstance(func, cst.Attribute) and func.attr.value == "with_structured_output" and receiver.args:
                schemas.append(receiver.args[0].value)
            elif isinstance(func, cst.Name):
                if flow.index.imported(func.value, scope):
                    made = flow.index.qualified(func, scope) or ""
                    return (schemas, receiver) if made.startswith("langchain") else None
            receiver = func
        elif isinstance(receiver, cst.Name):
            found, bindings = flow.index.lookup(receiver.value, scope)
            if found is not None and found.kind == "module" and (len(bindings) != 1 or _declared_global(flow, receiver.value)):
                return None  # `llm = llm.bind_tools(...)` elsewhere, a `global llm` set in a function
            values = _reaching(flow, bindings, at)
            if values is None:
                return None  # a parameter, an import, a name bound some other way
            if len(values) > 1:  # made in both arms of an `if`: each must be shown free of tools
                found = [_model_chain(flow, b.value, b.scope, b.node) for b in values]
                if any(f is None for f in found):
                    return None
                return schemas + [s for f in found for s in f[0]], found[0][1]
            receiver, scope, at = values[0].value, values[0].scope, values[0].node
        else:
            return None  # `prompt | llm.bind_tools(T)`, a subscript: not shown
    return None


def _declared_global(flow: FlowAnalysis, name: str) -> bool:
    return any(n.name.value == name for g in descendants(flow.module, cst.Global) for n in g.names)


def _reaching(flow: FlowAnalysis, bindings: list, at: cst.CSTNode) -> list | None:
    """The assignments of a name that can reach ``at``: the last one before it in the function's own body, or
    else every one before it (``if ...: llm = A() else: llm = B()``); None for other bindings (a parameter)."""
    if not bindings or any(b.kind != "assign" for b in bindings):
        return None
    order, parent = flow.facts.order, flow.facts.parent
    before = sorted((b for b in bindings if order.get(b.node, -1) < order.get(at, -1)), key=lambda b: order.get(b.node, -1))
    if not before:
        return None
    last = before[-1]
    top = isinstance(parent.get(parent.get(last.node)), cst.IndentedBlock) and \
        isinstance(parent.get(parent.get(parent.get(last.node))), cst.FunctionDef)
    return [last] if top or len(before) == 1 else before


def _bound_list(flow: FlowAnalysis, name: cst.Name, scope: Scope, call: cst.Call) -> cst.List | None:
    """The list literal a local ``name`` is bound to once, when nothing reads or adds to it between that and
    ``call`` (an append after it, the reply kept, is fine) and both are in the same loop body; else None."""
    bindings = flow.index.lookup(name.value, scope)[1]
    assigns = [b for b in bindings if b.kind == "assign"]
    order = flow.facts.order
    at = order.get(call)
    if len(assigns) != 1 or not isinstance(assigns[0].value, cst.List) or at is None:
        return None
    start = order.get(assigns[0].value, at)  # after the target name
    if any(b is not assigns[0] and (b.kind not in ("mutate", "aug") or order.get(b.node, -1) <= at) for b in bindings):
        return None
    body = scope.node if scope.node is not None else flow.module
    parent = flow.facts.parent
    reads = [n for n in descendants(body, cst.Name) if n.value == name.value and n is not name
             and not (isinstance(up := parent.get(n), cst.Arg) and up.keyword is n)  # `messages=` itself
             and not (isinstance(up, cst.Attribute) and up.attr is n)]  # `self.messages`
    if any(start < order.get(n, -1) < at for n in reads):
        return None
    for n in reads:  # sent again later (`messages.append(reply); create(messages=messages)`): a history
        arg = parent.get(n)
        if order.get(n, -1) > at and isinstance(arg, cst.Arg) and _sends(flow, parent.get(arg), scope):
            return None
    return assigns[0].value if _loop_of(assigns[0].node, parent) is _loop_of(call, parent) else None


def _sends(flow: FlowAnalysis, call, scope: Scope) -> bool:
    """``call`` is a request: an SDK sink or a LangChain ``invoke``."""
    if not isinstance(call, cst.Call):
        return False
    return flow.sinks.sink_at(call, scope) is not None or \
        isinstance(call.func, cst.Attribute) and call.func.attr.value in _INVOKE_METHODS


def _sender(flow: FlowAnalysis, assign: cst.Assign, messages: cst.List, scope: Scope) -> cst.Call | None:
    """The request call that sends the list ``assign`` binds to one name, as :func:`_bound_list` allows."""
    if len(assign.targets) != 1 or not isinstance(target := assign.targets[0].target, cst.Name):
        return None
    for call, call_scope in flow.index.calls:
        if call_scope is not scope:
            continue
        sink = flow.sinks.sink_at(call, scope)
        sent = [v for _, v in sink.conversation()] if sink is not None else \
            [a.value for a in call.args[:1]] if _sends(flow, call, scope) else []
        for value in sent:
            if isinstance(value, cst.Name) and value.value == target.value \
                    and _bound_list(flow, value, scope, call) is messages:
                return call
    return None


def _loop_of(node: cst.CSTNode, parent: dict) -> cst.CSTNode | None:
    up = parent.get(node)
    while up is not None and not isinstance(up, (cst.FunctionDef, cst.Module)):
        if isinstance(up, (cst.For, cst.While)):
            return up
        up = parent.get(up)
    return None


def _message_list(expr: cst.BaseExpression | None) -> bool:
    """A non-empty list literal of message literals with nothing spliced in, at any depth (``*history`` in a
    message's content, ``**extra`` in its dict)."""
    return isinstance(expr, cst.List) and bool(expr.elements) and all(
        isinstance(el, cst.Element) and isinstance(el.value, (cst.Dict, cst.Call, cst.Tuple)) for el in expr.elements
    ) and next(descendants(expr, (cst.StarredElement, cst.StarredDictElement)), None) is None


def _minimum(flow: FlowAnalysis, call: cst.Call, scope: Scope) -> tuple[int, str] | None:
    """``(tokens, model)``: the minimum cacheable length of the call's ``model=`` (a literal, or a module constant)
    from the providers data; the smallest hosted minimum when no model is named; None for a model the data does
    not know (a self-hosted model: vLLM and SGLang cache from the first block)."""
    model = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "model"), None)
    if model is None:
        return smallest_minimum(), NO_MODEL
    if isinstance(model, cst.Name):
        found, bindings = flow.index.lookup(model.value, scope)
        if found is None or found.kind != "module" or len(bindings) != 1 or bindings[0].kind != "assign":
            return smallest_minimum(), NO_MODEL  # `model=model_name`: chosen elsewhere
        model = bindings[0].value
    name = string_value(model) if isinstance(model, cst.SimpleString) else None
    if name is None:
        return smallest_minimum(), NO_MODEL
    least = model_minimum(name)
    return (least, name) if least is not None else None


def model_minimum(name: str) -> int | None:
    """The minimum cacheable length (tokens) of model ``name`` in the providers data, or None when the data does
    not list it (its family's fallback is the *largest* minimum, wrong for a claim that a prefix is too short)."""
    try:
        provider = provider_for_model(name)
    except ValueError:
        return None
    if name not in known_models(provider):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # retired models keep the rules they had
        return model_profile(provider, name).min_cacheable_tokens


@functools.lru_cache(maxsize=None)
def smallest_minimum(providers: tuple[str, ...] = tuple(p for p in PROVIDERS if p != "deepseek")) -> int:
    """The smallest minimum cacheable length (tokens) of ``providers``' models in the providers data. By default
    DeepSeek's 64-token unit is left out: its best-effort disk cache is not what an app that names no model is
    assumed to run on (assumed, issue 11)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return min(model_profile(p, m).min_cacheable_tokens for p in providers for m in known_models(p))


__all__ = ["NO_MODEL", "PER_REQUEST_CLAIM", "SMALL_CLAIM", "model_minimum", "one_shot_weight", "smallest_minimum"]
