"""How much literal text a one-shot request shows: PC102 weighs it (issue 11, open_deep_research).

PC102's cost is the shared prefix each user or call no longer shares. A request whose prefix is shorter than
the model's minimum cacheable length is never cached at all, so moving its per-request data loses and gains
nothing until the prompt grows (provider-cache-rules.md: Anthropic 512-4,096 tokens per model, OpenAI 1,024;
the values come from the providers data). The request must be **one-shot**: its messages a list literal with
no history spliced in (no ``*history``, no ``[system] + history``) and no tools bound, since a history after a
per-request system prompt is a cost whatever the size.

:func:`measure` counts the characters of the string literals an expression is built from, through names,
``+``, ``%``, f-strings, ``.format``, ``join``, ``dedent`` and same-module functions. Values the code does not
show count 0 (a parameter without a default, a call's result): it is a measure of what the code shows. A file read
(``open(...)``) cannot be measured. A name imported from another module is kept as a symbol, settled with that
module's :func:`module_sizes` (:mod:`promptcache.lint.cross_module`).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.literals import string_value
from promptcache.lint.walk import descendants
from promptcache.providers import PROVIDERS, known_models, model_profile, provider_for_model

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import ModuleIndex as Index, Scope
    from promptcache.lint.slots import Slot

# PC102's claim, and what the run says instead for a one-shot request below the minimum (cross_module).
PER_REQUEST_CLAIM = "each user or call gets its own copy of an otherwise identical prefix and its own cache entry"
SMALL_CLAIM = ("not a cost yet: this one-shot request shows about {tokens:,} tokens of text, below the {minimum:,}-token "
               "minimum cacheable length ({model}), so no cache entry is lost; once it grows, each user or call gets "
               "its own")
OPTIONAL = "?"  # marks a symbol filled into a template (`f"{settings.NAME}"`): unknown, it counts 0
CHARS_PER_TOKEN = 4  # the catalogue's estimate (lint-rules.md, PC604), as in promptcache.lint.markers
_DEPTH = 24
_TEXT_METHODS = frozenset({"strip", "lstrip", "rstrip", "replace", "lower", "upper", "title", "capitalize",
                           "removeprefix", "removesuffix", "expandtabs", "encode", "decode"})
_TRANSFORMS = frozenset({"textwrap.dedent", "inspect.cleandoc", "str", "textwrap.indent"})
_READS = frozenset({"open", "io.open", "codecs.open"})
_READ_METHODS = frozenset({"read", "read_text", "read_bytes", "readlines", "load", "loads"})
_TEXT_NAME = re.compile(r"prompt|instruction|template|system|message|rules|persona|guideline", re.IGNORECASE)
_CONSTRUCTORS = ("Message", "MessageParam", "Content", "Part", "Block", "BlockParam")
_INVOKE_METHODS = frozenset({"invoke", "ainvoke", "stream", "astream", "batch", "abatch", "generate", "agenerate"})


@dataclass(frozen=True)
class Size:
    """``chars`` of literal text; ``symbols``: names imported from other modules (qualified as imported) whose
    text adds to it."""

    chars: int = 0
    symbols: frozenset[str] = frozenset()  # a leading OPTIONAL: a value filled in, 0 when its module is not in the run

    def __add__(self, other: Size) -> Size:
        return Size(self.chars + other.chars, self.symbols | other.symbols)


@dataclass(frozen=True)
class Weight:
    """A one-shot request's literal text (``size``) and the ``minimum`` cacheable length (tokens) that
    applies, from ``model`` (a model id, or where the number comes from)."""

    size: Size
    minimum: int
    model: str


def _largest(sizes: list[Size | None]) -> Size | None:
    """The largest of alternative values (branches, several bindings); None if any is unknown."""
    if any(s is None for s in sizes):
        return None
    if not sizes:
        return Size()
    symbols = frozenset().union(*(s.symbols for s in sizes))
    return Size(max(s.chars for s in sizes), symbols)


def _total(sizes) -> Size | None:
    out = Size()
    for s in sizes:
        if s is None:
            return None
        out = out + s
    return out


def measure(index: Index, expr: cst.BaseExpression | None, scope: Scope, filled: bool = False,
            _seen: frozenset = frozenset()) -> Size | None:
    """The literal text ``expr`` is built from (see the module docstring); None when it cannot be measured: a file
    read, ``*`` repetition, more than 24 levels, or a call the module does not define as the text itself (a value
    ``filled`` into a template, ``f"{get_date()}"`` or ``.format(x=f())``, counts 0 instead)."""
    if expr is None:
        return Size()
    if (id(expr), id(scope)) in _seen:
        return Size()  # `x = str(x)`: counted where it was first met
    if len(_seen) > _DEPTH:
        return None
    seen = _seen | {(id(expr), id(scope))}
    m = lambda e, sc=scope, f=filled: measure(index, e, sc, f, seen)  # noqa: E731
    if isinstance(expr, cst.SimpleString):
        value = string_value(expr)
        return Size(len(value) if value is not None else 0)
    if isinstance(expr, cst.ConcatenatedString):
        return _total([m(expr.left), m(expr.right)])
    if isinstance(expr, cst.FormattedString):
        return _total([Size(len(p.value)) if isinstance(p, cst.FormattedStringText) else m(p.expression, f=True)
                       for p in expr.parts])
    if isinstance(expr, cst.Name):
        return _name(index, expr, scope, m, filled)
    if isinstance(expr, cst.Attribute):
        qualified = index.qualified(expr, scope)
        root = expr
        while isinstance(root, cst.Attribute):
            root = root.value
        if qualified and isinstance(root, cst.Name) and any(b.kind == "import" for b in index.lookup(root.value, scope)[1]):
            return Size(0, frozenset({_symbol(qualified, filled)}))
        if isinstance(expr.value, cst.Name) and (cls := index.class_of_receiver(expr.value, scope)) is not None:
            return _largest([m(b.value, b.scope) for b in cls.attrs.get(expr.attr.value, ()) if b.kind == "assign"])
        return Size()  # an attribute of a parameter or an object: per-request or unknown, not shown
    if isinstance(expr, cst.Subscript):
        return m(expr.value)
    if isinstance(expr, cst.Call):
        return _call(index, expr, scope, m, filled)
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, (cst.Add, cst.Modulo)):
            return _total([m(expr.left), m(expr.right, f=filled or isinstance(expr.operator, cst.Modulo))])
        return None if isinstance(expr.operator, cst.Multiply) else Size()
    if isinstance(expr, cst.IfExp):
        return _largest([m(expr.body), m(expr.orelse)])
    if isinstance(expr, cst.BooleanOperation):
        return _largest([m(expr.left), m(expr.right)])
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        return _total([m(el.value) for el in expr.elements])
    if isinstance(expr, cst.Dict):
        return _total([m(el.value) for el in expr.elements
                       if not (isinstance(el, cst.DictElement) and string_value(el.key) == "role")])
    if isinstance(expr, cst.Await):
        return m(expr.expression)
    return Size()  # numbers, comprehensions over data, lambdas: nothing static shown


def _name(index: Index, expr: cst.Name, scope: Scope, m, filled: bool) -> Size | None:
    found, bindings = index.lookup(expr.value, scope)
    if found is None:
        return Size()
    if any(b.kind == "import" for b in bindings):
        qualified = index.qualified(expr, scope)
        return Size(0, frozenset({_symbol(qualified, filled)})) if qualified else None
    grown = _total([m(b.value, b.scope) for b in bindings if b.kind in ("aug", "mutate")])
    # a parameter's default may be what most calls send (`def ask(q, rules=RULES)`); its other values are not shown
    base = _largest([m(b.value, b.scope) for b in bindings if b.kind in ("assign", "walrus", "with", "param")])
    return None if grown is None or base is None else base + grown


def _symbol(qualified: str, filled: bool) -> str:
    """An imported name as a :class:`Size` symbol: :data:`OPTIONAL` when it is a value filled into a template
    (``{g.user.name}``), not a text constant (``{prompts.BASE}``, ``{SYSTEM_PROMPT}``), which must be measured."""
    last = qualified.rsplit(".", 1)[-1]
    text = last.isupper() or _TEXT_NAME.search(last) is not None
    return OPTIONAL + qualified if filled and not text else qualified


def _call(index: Index, call: cst.Call, scope: Scope, m, filled: bool) -> Size | None:
    func = call.func
    qualified = index.qualified(func, scope) or ""
    method = func.attr.value if isinstance(func, cst.Attribute) else None
    args = [a.value for a in call.args]
    if qualified in _READS or method in _READ_METHODS:
        return None
    if method in ("format", "format_map"):
        return _total([m(func.value), *(m(a, f=True) for a in args)])
    if method == "join" or method in _TEXT_METHODS:
        return _total([m(func.value), *(m(a) for a in args)])
    if qualified in _TRANSFORMS:
        return m(args[0]) if args else Size()
    callee = index.function_named(func, scope)
    if callee is not None:
        return _largest([m(r, callee) for r in callee.returns])
    name = (qualified or (method or "")).rsplit(".", 1)[-1]
    if name.endswith(_CONSTRUCTORS) or name in ("dict", "list", "tuple"):
        return _total([m(a) for a in args])  # a message or its parts: their arguments
    return Size() if filled else None


def module_sizes(index: Index) -> dict[str, int]:
    """``{name: chars}`` of the module-level names bound once to text this module shows whole (no import in it),
    for the importers' :class:`Weight` (:mod:`promptcache.lint.cross_module`)."""
    module = next(sc for sc in index.scopes if sc.kind == "module")
    out: dict[str, int] = {}
    for name, bindings in module.bindings.items():
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].element == -1 \
                and _has_text(bindings[0].value):
            size = measure(index, bindings[0].value, module)
            if size is not None and not size.symbols and size.chars:
                out[name] = size.chars
    return out


def _has_text(expr: cst.BaseExpression) -> bool:
    return next(descendants(expr, (cst.SimpleString, cst.FormattedString)), None) is not None


def one_shot_weight(flow: FlowAnalysis, slot: Slot) -> Weight | None:
    """The :class:`Weight` of the one-shot request ``slot`` belongs to; None when it is not one-shot (a history,
    tools, a message list built elsewhere) or cannot be measured."""
    found = _request(flow, slot)
    if found is None:
        return None
    call, parts, scope = found
    size = _total([measure(flow.index, p, scope, filled) for p, filled in parts])
    if size is None:
        return None
    minimum, model = _minimum(call)
    return Weight(size, minimum, model)


def _request(flow: FlowAnalysis, slot: Slot):
    """``(call, parts, scope)``: the request call, the ``(expression, filled)`` of its prefix (the system text;
    the other messages, whose unknown values count 0) and their scope; None unless the messages are a list
    literal of messages, and no tools are sent."""
    parent = flow.facts.parent
    if slot.sink is not None:
        call, sink = slot.sink.call, slot.sink
        conversation = [v for _, v in sink.conversation()]
        if len(conversation) != 1:
            return None
        messages = conversation[0]
        if isinstance(messages, cst.Name):
            messages = _bound_list(flow, messages, slot.scope, call)
        if isinstance(messages, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            pass  # `input="..."`: one user turn
        elif not _message_list(messages):
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
        if not isinstance(messages, cst.List) or not isinstance(call, cst.Call) or not _message_list(messages):
            return None
        sink = flow.sinks.sink_at(call, slot.scope)
        method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
        if sink is None and method not in _INVOKE_METHODS:
            return None
        parts = [(el.value, el.value is not node) for el in messages.elements]
    if _sends_tools(flow, call, slot.scope, sink):
        return None
    if sink is not None and (system := sink.kw("system")) is not None and system is not slot.expr:
        parts.append((system, False))
    return call, parts, slot.scope


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
    if any(start < order.get(n, -1) < at and n is not name for n in descendants(body, cst.Name) if n.value == name.value):
        return None
    parent = flow.facts.parent
    return assigns[0].value if _loop_of(assigns[0].node, parent) is _loop_of(call, parent) else None


def _sender(flow: FlowAnalysis, assign: cst.Assign, messages: cst.List, scope: Scope) -> cst.Call | None:
    """The request call that sends the list ``assign`` binds to one name, as :func:`_bound_list` allows."""
    if len(assign.targets) != 1 or not isinstance(target := assign.targets[0].target, cst.Name):
        return None
    for call, call_scope in flow.index.calls:
        if call_scope is not scope:
            continue
        sink = flow.sinks.sink_at(call, scope)
        method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
        sent = [v for _, v in sink.conversation()] if sink is not None else \
            [a.value for a in call.args[:1]] if method in _INVOKE_METHODS else []
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


def _message_list(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.List) and all(
        not isinstance(el, cst.StarredElement) and isinstance(el.value, (cst.Dict, cst.Call, cst.Tuple))
        for el in expr.elements)


def _sends_tools(flow: FlowAnalysis, call: cst.Call, scope: Scope, sink) -> bool:
    """Tools in the request: a ``tools=`` / ``functions=`` keyword, or a LangChain model with ``.bind_tools``."""
    if any(a.keyword is not None and a.keyword.value in ("tools", "functions", "tool_config") for a in call.args):
        return True
    receiver, depth = call.func, 0
    while depth < _DEPTH:
        depth += 1
        if isinstance(receiver, cst.Attribute):
            if receiver.attr.value == "bind_tools":
                return True
            receiver = receiver.value
        elif isinstance(receiver, cst.Call):
            if any(a.keyword is not None and a.keyword.value == "tools" for a in receiver.args):
                return True
            receiver = receiver.func
        elif isinstance(receiver, cst.Name):
            values = [b.value for b in flow.index.lookup(receiver.value, scope)[1] if b.kind == "assign"]
            if len(values) != 1:
                return len(values) > 1 and any(_mentions_tools(v) for v in values)
            receiver = values[0]
        else:
            return False
    return True


def _mentions_tools(expr: cst.BaseExpression) -> bool:
    return any(n.value == "bind_tools" for n in descendants(expr, cst.Name))


def _minimum(call: cst.Call) -> tuple[int, str]:
    """``(tokens, model)``: the minimum cacheable length of the call's literal ``model=`` from the providers data,
    else the smallest of any model there (the request may go to any of them)."""
    model = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "model"), None)
    name = string_value(model) if model is not None else None
    if name:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return model_profile(provider_for_model(name), name).min_cacheable_tokens, name
            except (KeyError, ValueError):
                pass
    return _smallest(), "any Anthropic, OpenAI, Gemini or Bedrock model"


@lru_cache(maxsize=None)
def _smallest() -> int:
    """The smallest minimum of the Anthropic, OpenAI, Gemini and Bedrock models in the providers data. DeepSeek's
    64-token unit is left out: its best-effort disk cache is not what an app that names no model is assumed to
    run on (assumed, issue 11)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return min(model_profile(p, m).min_cacheable_tokens for p in PROVIDERS if p != "deepseek"
                   for m in known_models(p))


__all__ = ["CHARS_PER_TOKEN", "OPTIONAL", "PER_REQUEST_CLAIM", "SMALL_CLAIM", "Size", "Weight", "measure", "module_sizes", "one_shot_weight"]
