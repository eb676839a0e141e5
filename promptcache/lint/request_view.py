"""The options of one LLM request as the code builds them: keyword arguments, and dicts passed as ``**params``.

PC306, PC501-PC503 and PC601-PC604 read requests through :func:`requests`: a call with keywords
(``client.messages.create(model=..., messages=...)``), a call that passes the request as a dict
(``client.messages.create(**params)``; the dict is read by :mod:`promptcache.lint.request_dict`), or both. A call
that passes only ``**params``, or calls a client returned by a call (``self._get_client().messages.create``),
is a request when its keywords or dict set one of the request keywords (``model``, ``messages``, ...:
:data:`promptcache.lint.sinks.SINK_KEYWORDS`); a Twilio ``client.messages.create(**sms)`` with ``to`` and
``body`` is not. The taint engine's prefix slots (:mod:`promptcache.lint.slots`) read the system, tools and
messages of these requests through :func:`sent_values`, the history rules (PC2xx) their conversations through
:func:`conversations`.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.index import Scope
from promptcache.lint.request_dict import Content, Value, read
from promptcache.lint.sinks import PROMPTCACHE, SINK_KEYWORDS, Sink

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis

_CONVERSATION = ("messages", "input", "contents")
_MEMO: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_BY_CALL: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CONVERSATIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_ALL_SINKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(eq=False)
class Request:
    """One provider request call: its :class:`Sink` and the options it sends (``content``: keyword -> values)."""

    sink: Sink
    content: Content

    @property
    def call(self) -> cst.Call:
        return self.sink.call

    @property
    def scope(self) -> Scope:
        return self.sink.scope

    @property
    def api(self) -> str:
        return self.sink.api

    def values(self, name: str) -> list[Value]:
        """Every value option ``name`` may have on this call (see :class:`promptcache.lint.request_dict.Value`)."""
        return self.content.get(name)

    def value(self, name: str) -> Value | None:
        """The one value option ``name`` has on every run (``expr`` None: not passed); None when it may have
        several, or the code does not show it."""
        found = self.values(name)
        return found[0] if len(found) == 1 and not found[0].unseen else None

    def conversation(self) -> list[tuple[str, Value]]:
        """``(label, value)`` for the known ``messages=`` / ``input=`` / ``contents=`` the call sends."""
        return [(f"{kw}=", v) for kw in _CONVERSATION if (v := self.value(kw)) is not None and v.expr is not None]

    @property
    def opaque(self) -> bool:
        """True when some option the call sends is not shown by the code (an unreadable ``**kwargs``)."""
        return any(v.unseen for v in self.content.rest)

    def written_in(self, flow: FlowAnalysis, node: cst.CSTNode) -> bool:
        """True when ``node`` is written inside the call or a dict literal / write that builds its request."""
        return any(flow.facts.within(node, n) for n in (self.call, *self.content.nodes))


def _options(flow: FlowAnalysis, sink: Sink) -> Content:
    """The keywords of the sink's call over what its ``**`` dicts hold (a key in both is a TypeError, so a keyword
    is what the call sends). An extra sink's mapped options (:attr:`Sink.arguments`) are read where the map says,
    and the keywords it maps are not options of their own."""
    call, scope = sink.call, sink.scope
    out = Content(scope)
    for arg in call.args:
        if arg.star == "**":
            out.merge(read(flow, arg.value, scope, call))
    keywords = {s for sources in sink.arguments.values() for s in sources if isinstance(s, str)}  # a map's
    if sink.arguments:  # `llm.ask(q, **{"system_prompt": ...})`: the dict's keys are the wrapper's names too
        written = dict(out.entries)
        for option, sources in sink.arguments.items():
            out.entries.pop(option, None)
            found = next((written[s] for s in sources if isinstance(s, str) and s in written), None)
            if found is not None:
                out.entries[option] = found
        for source in keywords - set(sink.arguments):
            out.entries.pop(source, None)
    mapped = set(sink.arguments) | keywords
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value not in mapped:
            out.write(arg.keyword.value, Value(arg.value, scope))
    for option in sink.arguments:
        if (value := sink.kw(option)) is not None:
            out.write(option, Value(value, scope))
    return out


def requests(flow: FlowAnalysis) -> list[Request]:
    """Every provider request call of the module, in source order (built once per file)."""
    found = _MEMO.get(flow)
    if found is not None:
        return found
    out: list[Request] = []
    for call, scope in flow.index.calls:
        sink = flow.sinks.sink_at(call, scope)
        if sink is not None:
            if sink.is_request:
                out.append(Request(sink, _options(flow, sink)))
            continue
        api = flow.sinks.api_of(call, scope)
        if api is None or api == PROMPTCACHE:
            continue
        sink = Sink(call, scope, api, flow.sinks.arguments_of(call))
        content = _options(flow, sink)
        if any(v.expr is not None for k in SINK_KEYWORDS for v in content.get(k)):
            out.append(Request(sink, content))
    _MEMO[flow] = out
    return out


def request_of(flow: FlowAnalysis, call: cst.Call) -> Request | None:
    """The :class:`Request` of ``call``, or None when it is not a provider request."""
    by_call = _BY_CALL.get(flow)
    if by_call is None:
        by_call = _BY_CALL[flow] = {id(r.call): r for r in requests(flow)}
    return by_call.get(id(call))


def sent_values(req: Request, name: str) -> list[tuple[cst.BaseExpression, Scope]]:
    """``(expression, scope)`` for each value the request may send as option ``name`` (a keyword, or the
    entries of the ``**`` dicts it passes: :mod:`promptcache.lint.request_dict`), for the taint rules' prefix
    slots. Empty when any of them is one the code does not show (a dict that escapes, is aliased, or merges
    something unreadable says nothing), or when the option is not sent."""
    values = req.values(name)
    if any(v.unseen for v in values):
        return []
    return [(v.expr, v.scope) for v in values if v.expr is not None]


def conversations(flow: FlowAnalysis) -> list[tuple[str, cst.BaseExpression, Scope, Sink]]:
    """``(label, expression, scope, sink)`` for each conversation the module sends, for the history rules
    (PC2xx): every value a request may send as ``messages=`` / ``input=`` / ``contents=``, as a keyword or an
    entry of its ``**params`` dict (:func:`sent_values`: none when the dict is not fully shown), and the
    argument of promptcache's ``PromptBuilder.history(...)``. In source order."""
    found = _CONVERSATIONS.get(flow)
    if found is not None:
        return found
    out = [(label, expr, s.scope, s) for s in flow.sinks.all() if not s.is_request for label, expr in s.conversation()]
    out += [(req.sink.label(kw), expr, scope, req.sink) for req in requests(flow) for kw in _CONVERSATION
            for expr, scope in sent_values(req, kw)]
    order = flow.facts.order
    out.sort(key=lambda item: order.get(item[3].call, 0))
    _CONVERSATIONS[flow] = out
    return out


def all_sinks(flow: FlowAnalysis) -> list[Sink]:
    """Every provider request (keywords or ``**params``: :func:`requests`) and ``PromptBuilder.history(...)``
    call of the module, in source order: the sinks whose function is a request handler (the per-turn path)."""
    found = _ALL_SINKS.get(flow)
    if found is None:
        order = flow.facts.order
        found = [r.sink for r in requests(flow)] + [s for s in flow.sinks.all() if not s.is_request]
        found = _ALL_SINKS[flow] = sorted(found, key=lambda s: order.get(s.call, 0))
    return found


def is_anthropic(req: Request) -> bool:
    """A call of Anthropic's API, or of a Claude model (a literal ``model=``) through LiteLLM."""
    if req.api == "anthropic":
        return True
    model = req.value("model")
    return (req.api == "litellm" and model is not None and isinstance(model.expr, cst.SimpleString)
            and "claude" in model.expr.value.lower())


__all__ = ["Request", "all_sinks", "conversations", "is_anthropic", "request_of", "requests", "sent_values"]
