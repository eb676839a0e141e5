"""Sinks: the LLM request calls (lint-rules.md, "Sink").

A call is a sink when its callee ends in ``.messages.create|stream|parse``
(Anthropic, ``beta.messages`` included, ``count_tokens`` and a stored thread's or agent's
``threads.messages`` / ``agents.messages`` not),
``.chat.completions.create|parse|stream`` or ``.responses.create|parse|stream``
(OpenAI), ``.models.generate_content|generate_content_stream`` (Gemini,
``google.genai``; its ``contents=`` is the conversation), is
``litellm.completion|acompletion``, is a LangChain chat model's run (``llm.invoke(messages)``, ``ainvoke``,
``stream``, ``astream``; ``llm`` built as ``ChatOpenAI(...)`` or by ``init_chat_model(...)``, or annotated
``BaseChatModel``; its first argument, the conversation, shown to be a list of messages, not text:
:func:`conversation_value`), or matches an ``extra-sinks``
entry from the config (whose table may say which arguments carry which option: :attr:`Sink.arguments`), AND it passes at least one of ``model=``,
``messages=``, ``system=``, ``instructions=``, ``input=``, ``tools=``,
``contents=``: a Twilio ``client.messages.create(to=..., body=...)`` is not a sink.
The SDKs' ``.with_raw_response.`` / ``.with_streaming_response.`` wrappers before the method
(``client.beta.messages.with_raw_response.create``, ``client.chat.completions.with_streaming_response.create``)
send the same request and are sinks too.
The callee may call a client returned by a call (``self._get_client().chat.completions.create``, crewAI,
OpenHands, openai-agents: :func:`_call_path`). A call that passes the request only as ``**params`` is read by
:mod:`promptcache.lint.request_view`, which the prefix slots read too.

promptcache's own ``PromptBuilder(...).history(conversation)`` is a
conversation sink (api ``promptcache``): the list or ``Conversation`` it is
given is sent as the history of the request the builder renders, so the
history rules read it as they read ``messages=`` / ``input=``
(:meth:`Sink.conversation`). The builder is resolved through imports
(:func:`promptcache.lint.sdk_builder.builder_root`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.index import ModuleIndex, Scope
from promptcache.lint.sdk_builder import builder_root, history_argument
from promptcache.lint.expressions import argument as positional_argument, last_name
from promptcache.lint.value_syntax import annotation_types
from promptcache.lint.walk import iter_children

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.extra_sinks import ExtraSink

SINK_KEYWORDS = frozenset({"model", "messages", "system", "instructions", "input", "tools", "contents"})
_LITELLM = frozenset({"litellm.completion", "litellm.acompletion"})
# The SDKs' wrappers that return the raw HTTP response or stream it: `client.messages.with_raw_response.create(...)`
# sends the same request as `client.messages.create(...)` (anthropic 2.15.0 `MessagesWithRawResponse.create`,
# openai 3.57.0 `CompletionsWithRawResponse.create` / `.parse`, `ResponsesWithStreamingResponse.create`).
_RESPONSE_WRAPPERS = frozenset({"with_raw_response", "with_streaming_response"})
# A LangChain Runnable's run methods (a model, a prompt template, a chain): `.invoke(input)` and its variants.
RUNNABLE_CALLS = frozenset({"invoke", "ainvoke", "stream", "astream", "batch", "abatch"})
PROMPTCACHE = "promptcache"  # the api of a ``PromptBuilder.history(...)`` conversation sink
# A LangChain chat model run, `llm.invoke(messages)`: its first argument (or `input=`) is the conversation
# (langchain-core 1.x `BaseChatModel.invoke(input, config=None, *, stop=None, **kwargs)`).
LANGCHAIN = "langchain"
LANGCHAIN_ARGUMENTS = {"messages": (0, "input")}
# What returns a chat model from a chat model: `llm.bind_tools(tools).invoke(...)`.
_CHAT_MODEL = re.compile(r"^(Azure)?Chat(?!Prompt|Message)\w+$|ChatModel$")
_MODEL_WRAPPERS = frozenset({"bind_tools", "bind", "with_config", "with_retry", "with_fallbacks", "with_listeners",
                             "with_structured_output"})
_CHAT_RUNS = frozenset({"invoke", "ainvoke", "stream", "astream"})  # not batch: a list of separate inputs
# A name for a conversation: `history`, `chat_history`, `messages`, `self.turns` (review helper-91: the shape of what
# is sent, where the code shows no list)
CONVERSATION_NAME = re.compile(r"(?i)(^|_)(history|messages|conversation|chat|dialog(ue)?|turns)$")
_SEQUENCE_TYPES = frozenset({"list", "List", "Sequence", "MutableSequence"})
# `client.beta.threads.messages.create(thread_id, ...)` (OpenAI Assistants) and `client.agents.messages.create(
# agent_id=..., messages=[...])` (Letta) add a message to a conversation the server keeps and prompts with itself:
# not a request whose messages are the prompt.
_STORED_CONVERSATIONS = frozenset({"threads", "agents"})


@dataclass(eq=False)
class Sink:
    """One LLM request call. ``api`` is anthropic, openai_chat, openai_responses, gemini, litellm, langchain, extra,
    or promptcache (``PromptBuilder.history(...)``: it carries the conversation, not the request options).
    ``arguments``: for an extra sink whose entry maps them, request option -> the wrapper's keywords or
    positions that carry it (``{"system": ("system_prompt",), "messages": ("history", 1)}``)."""

    call: cst.Call
    scope: Scope
    api: str
    arguments: dict[str, tuple[int | str, ...]] = field(default_factory=dict)

    def kw(self, name: str) -> cst.BaseExpression | None:
        """The value the call passes as request option ``name`` (the keyword of that name, or what
        :attr:`arguments` maps it to), or None."""
        for source in self.arguments.get(name, (name,)):
            if (value := argument(self.call, source)) is not None:
                return value
        return None

    def label(self, name: str) -> str:
        """How a message names request option ``name`` on this call: ``system=``, or where a mapped option
        comes from (``system_prompt=``, ``system (position 1)``: positions count from 0, as in the table), or the
        run of a LangChain model (``invoke()``: the messages, its first argument; its other options by keyword, as
        ``tools=``: review helper-96)."""
        if self.api == LANGCHAIN:
            return f"{self.call.func.attr.value}()" if name in LANGCHAIN_ARGUMENTS else f"{name}="
        for source in self.arguments.get(name, ()):
            if argument(self.call, source) is not None:
                return f"{source}=" if isinstance(source, str) else f"{name} (position {source})"
        return f"{name}="

    def conversation(self) -> list[tuple[str, cst.BaseExpression]]:
        """``(label, expression)`` for what the call sends as the conversation: ``messages=`` and
        ``input=`` of a provider call (0, 1 or 2 pairs; ``contents=`` for Gemini), or the argument of ``PromptBuilder.history()``."""
        if self.api == PROMPTCACHE:
            arg = history_argument(self.call)
            return [("PromptBuilder.history()", arg)] if arg is not None else []
        if self.api == LANGCHAIN:  # `llm.invoke(messages)`: the run's first argument (or its `input=`), once
            value = self.kw("messages")
            return [(self.label("messages"), value)] if value is not None else []
        return [(self.label(kw), value) for kw in ("messages", "input", "contents") if (value := self.kw(kw)) is not None]

    @property
    def is_request(self) -> bool:
        """True for a provider call (its result is the model's reply), False for a builder method."""
        return self.api != PROMPTCACHE


def argument(call: cst.Call, source: int | str) -> cst.BaseExpression | None:
    """The argument ``call`` passes as keyword ``source`` (a str) or at position ``source`` (an int; None once a
    ``*args`` comes before it: :func:`promptcache.lint.expressions.argument`)."""
    if isinstance(source, int):
        return positional_argument(call, source, "")
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == source), None)


def attribute_path(func: cst.BaseExpression) -> list[str]:
    """The trailing attribute names of a callee: ``self.client.chat.completions.create`` gives
    ``["self", "client", "chat", "completions", "create"]`` (stops at the first non-name)."""
    parts: list[str] = []
    while isinstance(func, cst.Attribute):
        parts.append(func.attr.value)
        func = func.value
    if isinstance(func, cst.Name):
        parts.append(func.value)
    return list(reversed(parts))


def _call_path(func: cst.BaseExpression) -> list[str]:
    """:func:`attribute_path` that reads through calls: ``self._get_client().chat.completions.create`` gives
    ``["self", "_get_client", "chat", "completions", "create"]``."""
    # Exact type checks: asked for every call of the module, and an isinstance check that fails on a libcst
    # class goes through ABCMeta (ten times the cost); a parsed tree holds no subclasses of these node types.
    parts: list[str] = []
    while True:
        kind = type(func)
        if kind is cst.Call:
            func = func.func
        elif kind is cst.Attribute:
            parts.append(func.attr.value)
            func = func.value
        else:
            break
    if kind is cst.Name:
        parts.append(func.value)
    return list(reversed(parts))


class SinkFinder:
    """Recognises sinks in one module; ``extra_sinks`` are qualified names or ``*.suffix`` patterns (strings, or
    :class:`~promptcache.lint.extra_sinks.ExtraSink` entries, whose argument maps the sinks they match carry).

    A method entry (``myapp.llm.LLM.chat``, ``LLM.chat``, ``*.LLM.chat``) also matches ``x.chat(...)`` where the
    class of ``x`` is read in view (:func:`_receiver_classes`). ``matched`` collects the entries that named a call,
    ``unread`` those with a call it cannot read (no table's map, none of the SDKs' keyword names), ``unresolved``
    the method entries whose method is called on an object whose class the module does not show (the run warns).
    """

    def __init__(self, index: ModuleIndex, extra_sinks: tuple[ExtraSink | str, ...] = ()):
        self.index = index
        self._maps = {e.call: dict(e.arguments) for e in extra_sinks if not isinstance(e, str) and e.arguments}
        self._order = {e if isinstance(e, str) else e.call: i for i, e in enumerate(extra_sinks)}
        extra_sinks = tuple(e if isinstance(e, str) else e.call for e in extra_sinks)
        self._extra_qualified = frozenset(s for s in extra_sinks if not s.startswith("*."))
        self._extra_suffixes = tuple((s, s[2:].split(".")) for s in extra_sinks if s.startswith("*."))
        # (entry, class path, method) of the entries of two or more parts: those that may name a method
        self._extra_methods = tuple((s, parts[:-1], parts[-1]) for s in extra_sinks
                                    if len(parts := [p for p in s.split(".") if p != "*"]) >= 2)
        self.matched: set[str] = set()
        self.unread: dict[str, cst.Call] = {}  # entries with a call that passes no request option it can read -> the first
        self.unresolved: dict[str, cst.Call] = {}  # method entries called on an object of unknown class -> the first
        self._entries: dict[cst.Call, list[str]] = {}
        self._arguments: dict[cst.Call, dict[str, tuple[int | str, ...]]] = {}
        self._memo: dict[cst.Call, Sink | None] = {}
        self._apis: dict[tuple[cst.Call, Scope], str | None] = {}
        self._all: list[Sink] | None = None

    def sink_at(self, call: cst.Call, scope: Scope) -> Sink | None:
        """The :class:`Sink` for ``call``, or None when it is not an LLM request."""
        if call in self._memo:
            return self._memo[call]
        found = None
        api = self.api_of(call, scope)
        if api == PROMPTCACHE:
            found = Sink(call, scope, api) if history_argument(call) is not None else None
        elif api is not None and (api == LANGCHAIN or call in self._arguments or any(
                (a.star == "**" and api == "extra") or a.keyword is not None and a.keyword.value in SINK_KEYWORDS
                for a in call.args)):
            found = Sink(call, scope, api, self.arguments_of(call))
        if api == "extra" and (found is None or call in self._arguments and not self._mapped_read(call)):
            # it passes nothing by the SDKs' names and has no map (left to the other readings of the call), or none of
            # the arguments its table maps (`ask(q, prompt, history)` against `system = "system_prompt"`, newcomer
            # helper-95): the run says so, naming the first such call
            for entry in self._entries.get(call, ()):
                if not entry.startswith("*."):
                    self.unread.setdefault(entry, call)
        self._memo[call] = found
        return found

    def api_of(self, call: cst.Call, scope: Scope) -> str | None:
        """The api ``call``'s callee names, whatever its arguments, also through a client returned by a call
        (``self._get_client().chat.completions.create``); None when it names none. Such a call is a request
        when its keywords or ``**params`` dict set a request keyword (:mod:`promptcache.lint.request_view`)."""
        if not self.index.is_complete:
            return self._api(call, scope, _call_path(call.func))
        key = (call, scope)
        if key in self._apis:
            return self._apis[key]
        found = self._apis[key] = self._api(call, scope, _call_path(call.func))
        return found

    def _api(self, call: cst.Call, scope: Scope, path: list[str]) -> str | None:
        if len(path) >= 4 and path[-2] in _RESPONSE_WRAPPERS:  # `.messages.with_raw_response.create`
            path = path[:-2] + path[-1:]
        if len(path) >= 3 and path[-2] == "messages" and path[-1] in ("create", "stream", "parse") \
                and path[-3] not in _STORED_CONVERSATIONS:
            return "anthropic"
        if len(path) >= 4 and path[-3:-1] == ["chat", "completions"] and path[-1] in ("create", "parse", "stream"):
            return "openai_chat"
        if len(path) >= 3 and path[-2] == "responses" and path[-1] in ("create", "parse", "stream"):
            return "openai_responses"
        if len(path) >= 3 and path[-2] == "models" and path[-1] in ("generate_content", "generate_content_stream"):
            return "gemini"
        if path and path[-1] == "history" and isinstance(call.func, cst.Attribute) and builder_root(self.index, call.func.value, scope) is not None:
            return PROMPTCACHE
        qualified = self.index.qualified(call.func, scope)
        if qualified in _LITELLM:
            return "litellm"
        if path and path[-1] in _CHAT_RUNS and isinstance(call.func, cst.Attribute) and self.index.imports_langchain \
                and _chat_model(self.index, call.func.value, scope) \
                and conversation_value(self.index, argument(call, 0) or argument(call, "input"), scope):
            self._arguments[call] = LANGCHAIN_ARGUMENTS
            return LANGCHAIN
        entries = sorted(self._extra_entries(call, scope, path, qualified), key=self._order.__getitem__)  # config order
        self.matched.update(entries)
        self._entries[call] = entries
        mapped = next((entry for entry in entries if entry in self._maps), None)
        if mapped is not None:  # the whole map of the first entry in the config that has one (docs/lint.md)
            self._arguments[call] = dict(self._maps[mapped])
        return "extra" if entries else None

    def _mapped_read(self, call: cst.Call) -> bool:
        """A call of a mapped entry passes something read: an argument a table maps, an SDK keyword, or ``*args`` /
        ``**kwargs`` (what they hold is not known)."""
        return any(a.star or a.keyword is not None and a.keyword.value in SINK_KEYWORDS for a in call.args) \
            or any(self._readable(entry, call) for entry in self._entries.get(call, ()))

    def _readable(self, entry: str, call: cst.Call) -> bool:
        """``call`` passes a request option that ``entry`` would read: an SDK keyword, or an argument its map names."""
        sources = [source for sources in self._maps.get(entry, {}).values() for source in sources]
        if sources:  # a table: the arguments it names
            return any(argument(call, source) is not None for source in sources)
        # the SDKs' names of what a prompt is made of (not `model=` / `input=`: `subprocess.run(input=...)`)
        return any(a.keyword is not None and a.keyword.value in ("system", "messages", "tools", "instructions")
                   for a in call.args)

    def arguments_of(self, call: cst.Call) -> dict[str, tuple[int | str, ...]]:
        """The argument map of the ``extra-sinks`` entries that name ``call`` (:attr:`Sink.arguments`); empty
        for an SDK call and an entry without one. Valid once :meth:`api_of` has seen ``call``."""
        return self._arguments.get(call, {})

    def _extra_entries(self, call: cst.Call, scope: Scope, path: list[str], qualified: str | None) -> list[str]:
        """Every ``extra-sinks`` entry that names ``call`` (all of them, so none is said to match nothing)."""
        found = []
        if qualified is not None:
            parts = [p for p in qualified.split(".") if p]  # `from .llm import complete`: `.llm.complete`
            found += [e for e in self._extra_qualified if qualified == e or qualified.startswith(".")
                      and e.split(".")[-len(parts):] == parts]
        found += [entry for entry, suffix in self._extra_suffixes if path[-len(suffix):] == suffix]
        if self._extra_methods and isinstance(call.func, cst.Attribute):
            wanted = [(entry, cls) for entry, cls, name in self._extra_methods if name == call.func.attr.value]
            built = _receiver_classes(self.index, call.func.value, scope) if wanted else []
            found += [entry for entry, cls in wanted if any(b[-len(cls):] == cls or cls[-len(b):] == b for b in built)]
            if wanted and not any(b[-1][:1].isupper() for b in built):  # no class: `llm = get_llm()` of another
                # module, `llm.ask(...)` of an unannotated parameter; said of a call that passes what it would read
                for entry, cls in wanted:
                    if not entry.startswith("*.") and cls[-1][:1].isupper() and self._readable(entry, call):
                        self.unresolved.setdefault(entry, call)
        return list(dict.fromkeys(found))

    def all(self) -> list[Sink]:
        """Every sink of the module, in source order."""
        if self._all is None:
            self._all = [s for call, scope in self.index.calls if (s := self.sink_at(call, scope)) is not None]
        return self._all

    def asks_to_summarise(self, call: cst.Call, scope: Scope) -> bool:
        """True when the literal prompt text of a sink asks to summarise a conversation."""
        return S.asks_to_summarise(" ".join(self.literal_text(call, scope)))

    def literal_text(self, node: cst.CSTNode, scope: Scope, depth: int = 0) -> list[str]:
        """The static text of the string literals inside ``node`` (names bound to constants followed once)."""
        out: list[str] = []
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, cst.SimpleString):
                out.append(n.value)
            elif isinstance(n, cst.FormattedStringText):
                out.append(n.value)
            elif isinstance(n, cst.Name) and depth == 0:
                _, bindings = self.index.lookup(n.value, scope)
                if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].scope.kind == "module":
                    out += self.literal_text(bindings[0].value, bindings[0].scope, depth + 1)
            elif isinstance(n, (cst.Lambda, cst.Comparison)):
                continue
            else:
                stack.extend(iter_children(n))
        return out


def _receiver_classes(index: ModuleIndex, receiver: cst.BaseExpression, scope: Scope, depth: int = 0) -> list[list[str]]:
    """The dotted names (as parts, leading dots of a relative import dropped) of the classes ``receiver`` (a call,
    a name or ``self.attr``) is built from (``LLM(...)``, ``llm or LLM()``, ``with LLM() as llm``, a function of
    the module annotated ``-> LLM``) or annotated with (``llm: LLM``, ``Optional[LLM]``, a class-level ``llm: LLM`` field), by any of its bindings."""
    out: list[list[str]] = []
    classes: list[tuple[cst.BaseExpression, Scope]] = []  # the class expressions, and where to read them
    if isinstance(receiver, cst.Call):  # `LLM().chat(...)`
        classes.append((receiver.func, scope))
    if isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) \
            and (cls := index.class_of_receiver(receiver.value, scope)) is not None:
        classes += [(ann, cls.scope) for ann in _field_annotations(cls.node, receiver.attr.value)]
    for binding in index.bindings_of(receiver, scope) or ():
        if isinstance(binding.node, (cst.Param, cst.AnnAssign)) and binding.node.annotation is not None:
            classes += [(t, binding.scope) for t in annotation_types(binding.node.annotation.annotation)]
        elif binding.kind in ("assign", "with", "walrus"):
            for value in _alternatives(binding.value):
                while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                        and value.func.attr.value in _MODEL_WRAPPERS:  # `ChatOpenAI().with_structured_output(S)`
                    value = value.func.value
                if isinstance(value, cst.Call):
                    classes.append((value.func, binding.scope))
                    factory = index.function_named(value.func, binding.scope)  # `def get_llm() -> LLM:`
                    if factory is not None and isinstance(factory.node, cst.FunctionDef) and factory.node.returns:
                        classes += [(t, factory.parent or factory) for t in annotation_types(factory.node.returns.annotation)]
                elif isinstance(value, (cst.Name, cst.Attribute)) and depth < 3:  # `self.llm = llm` (a parameter)
                    out += _receiver_classes(index, value, binding.scope, depth + 1)
    for kind, where in classes:
        if isinstance(kind, (cst.Name, cst.Attribute)):
            name = index.qualified(kind, where) or (kind.value if isinstance(kind, cst.Name) else None)
            if name:  # (a class of this module is qualified as its name)
                out.append([p for p in name.split(".") if p])
    return out


def _chat_model(index: ModuleIndex, receiver: cst.BaseExpression, scope: Scope) -> bool:
    """``receiver`` is a LangChain chat model: built from or annotated with a ``langchain*`` chat model class
    (``ChatOpenAI``, ``AzureChatOpenAI``, ``BaseChatModel``) or by ``init_chat_model(...)``, also through
    ``.bind_tools(...)`` and the like. Not a chain, a ``ChatPromptTemplate``, a ``ChatMessageHistory`` or an agent:
    their input is not the conversation as sent."""
    while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
            and receiver.func.attr.value in _MODEL_WRAPPERS:
        receiver = receiver.func.value
    return any(parts[0].startswith("langchain") and (_CHAT_MODEL.search(parts[-1]) or parts[-1] == "init_chat_model")
               for parts in _receiver_classes(index, receiver, scope) if len(parts) >= 2)


def conversation_value(index: ModuleIndex, expr: cst.BaseExpression | None, scope: Scope, depth: int = 0) -> bool:
    """``expr`` is shown to be a list of messages, not text (``llm.invoke("Summarize: " + text[-4000:])``): a list
    literal or comprehension, ``list(...)``, a sum or slice of one, ``state["messages"]``, a name or attribute named
    for a conversation (:data:`CONVERSATION_NAME`) or annotated as a sequence, or a local bound to one of these."""
    if isinstance(expr, (cst.List, cst.ListComp)):
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return conversation_value(index, expr.left, scope, depth) or conversation_value(index, expr.right, scope, depth)
    if isinstance(expr, cst.Subscript):
        key = expr.slice[0].slice if len(expr.slice) == 1 else None
        if isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString):
            return bool(CONVERSATION_NAME.search(key.value.value[1:-1]))  # `state["messages"]`
        return conversation_value(index, expr.value, scope, depth)
    if isinstance(expr, cst.Call):
        return isinstance(expr.func, cst.Name) and expr.func.value == "list"
    if isinstance(expr, cst.Attribute):
        return bool(CONVERSATION_NAME.search(expr.attr.value))
    if not isinstance(expr, cst.Name):
        return False
    if CONVERSATION_NAME.search(expr.value):
        return True
    for b in index.lookup(expr.value, scope)[1]:
        if isinstance(b.node, cst.Param) and b.node.annotation is not None:
            if any(isinstance(t, cst.Subscript) and last_name(t.value) in _SEQUENCE_TYPES or last_name(t) in _SEQUENCE_TYPES
                   for t in annotation_types(b.node.annotation.annotation)):
                return True
        elif b.kind in ("assign", "walrus") and depth < 3 and isinstance(b.value, cst.BaseExpression) \
                and conversation_value(index, b.value, b.scope, depth + 1):
            return True
    return False


def _alternatives(value: cst.CSTNode | None) -> list[cst.CSTNode]:
    """The values a binding may take: both sides of ``a or b`` and of ``a if c else b``."""
    if isinstance(value, cst.BooleanOperation):
        return [*_alternatives(value.left), *_alternatives(value.right)]
    if isinstance(value, cst.IfExp):
        return [*_alternatives(value.body), *_alternatives(value.orelse)]
    return [value] if value is not None else []


def _field_annotations(cls: cst.ClassDef, name: str) -> list[cst.BaseExpression]:
    """The types a class-level annotation ``name: T`` (a dataclass or pydantic field) allows."""
    return [t for stmt in cls.body.body if isinstance(stmt, cst.SimpleStatementLine) for small in stmt.body
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value == name
            for t in annotation_types(small.annotation.annotation)]


def anthropic_request(sink: Sink) -> bool:
    """A call of Anthropic's API, or of a Claude model (a literal ``model=``) through LiteLLM."""
    model = sink.kw("model")
    return sink.api == "anthropic" or sink.api == "litellm" and isinstance(model, cst.SimpleString) and "claude" in model.value.lower()
