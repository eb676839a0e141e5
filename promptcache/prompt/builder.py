"""The fluent, immutable prompt builder: the cache-friendly layout is the only one it can build.

Example::

    from promptcache import Conversation, PromptBuilder

    base = (PromptBuilder()
            .system("You are Harbor, the support assistant of Harborline Outfitters.")
            .tools(TOOLS)                       # any order, either provider's shape: sorted, canonical JSON
            .document(HANDBOOK, name="handbook")
            .example("Where is my order?", "Let me look it up: what is the order number?"))
    chat = Conversation(budget_tokens=20_000)   # append-only, truncated in large chunks
    prompt = base.history(chat).user("My tent pole cracked", context={"customer": "A", "today": today}).build()
    response = client.messages.create(**prompt.to_anthropic(model="claude-sonnet-4-6"))
    chat.record(prompt, response)               # the turn, context included, enters the history verbatim

Every method returns a new builder and leaves the original unchanged, so a
base builder holding the stable layers can be shared by requests and threads.
Each method checks its input at once and raises there
(:class:`~promptcache.errors.PromptError` for input that cannot be built,
:class:`~promptcache.errors.PrefixStabilityError` for input that would break
the cached prefix); :meth:`PromptBuilder.build` checks the whole request
(role order, tool results against tool calls, whitespace drift of the stable
layers against those built earlier in the process) and returns a
:class:`~promptcache.prompt.model.Prompt`, or raises and returns nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from promptcache.prompt.breakpoints import check_ttls
from promptcache.prompt.conversation import Conversation
from promptcache.errors import PromptError
from promptcache.prompt.model import Document, Example, Prompt, render_context
from promptcache.prompt.messages import Message, Text, ToolResult, check_order, parse_messages
from promptcache.prompt.normalize import ToolSet, ToolSpec, check_unique, normalize_text, order_tools, tool_spec
from promptcache.providers.profiles import provider_rules
from promptcache.prompt.stability import LayerRegistry, check_volatile, default_registry

__all__ = ["PromptBuilder"]


@dataclasses.dataclass(frozen=True)
class _State:
    tools: tuple[ToolSpec, ...] = ()
    frozen_order: bool = False
    instructions: tuple[str, ...] = ()
    documents: tuple[Document, ...] = ()
    examples: tuple[Example, ...] = ()
    history: tuple[Message, ...] = ()
    conversation: Conversation | None = None
    conversation_mark: tuple[int, int] | None = None
    results: tuple[ToolResult, ...] = ()
    user_text: str | None = None
    extra_turn: tuple[Message, ...] = ()
    ttls: tuple[tuple[str, str], ...] = ()


def _text(value: Any, item: str) -> str:
    if not isinstance(value, str):
        raise PromptError(item, f"must be a string, not {type(value).__name__}", "pass text")
    return value


class PromptBuilder:
    """Builds a :class:`~promptcache.prompt.model.Prompt` layer by layer (see the module docstring).

    Args:
        tool_order: ``"name"`` (default) sorts tools by name; ``"registered"``
            keeps the order of the ``tools()`` calls. A :class:`~promptcache.prompt.normalize.ToolSet`
            passed to :meth:`tools` always keeps its own frozen order.
        registry: where stable layers are remembered for the whitespace-drift
            check (default: the process-wide :data:`promptcache.prompt.stability.default_registry`).
        drift_check: set False to skip that check.
    """

    __slots__ = ("_state", "_tool_order", "_registry", "_drift_check")

    def __init__(self, *, tool_order: str = "name", registry: LayerRegistry | None = None,
                 drift_check: bool = True) -> None:
        order_tools((), tool_order)  # validates the name
        self._state = _State()
        self._tool_order, self._registry, self._drift_check = tool_order, registry or default_registry, drift_check

    def _with(self, **changes: Any) -> PromptBuilder:
        new = object.__new__(PromptBuilder)
        new._state = dataclasses.replace(self._state, **changes)
        new._tool_order, new._registry, new._drift_check = self._tool_order, self._registry, self._drift_check
        return new

    # -- stable layers -------------------------------------------------------------------------
    def system(self, *sections: str, allow: Iterable[str] = (), kinds: Iterable[str] | None = None) -> PromptBuilder:
        """Add system instruction sections (normalised; joined with ``"\\n\\n"``; later calls add more).

        Args:
            allow: exact values that look volatile but are fixed (per-value opt-out).
            kinds: volatile kinds refused (default: all of :data:`promptcache.prompt.volatile.KINDS`).

        Raises:
            PromptError: a section that is not a string.
            VolatileValueError: a timestamp / id-like value (names it and the fix).
        """
        allow = tuple(allow)
        texts = []
        for i, section in enumerate(sections):
            text = normalize_text(_text(section, f"system section {i}"))
            check_volatile(text, "system", "system", kinds=kinds, allow=allow)
            if text:
                texts.append(text)
        return self._with(instructions=self._state.instructions + tuple(texts))

    def tools(self, tools: Iterable[Mapping[str, Any]] | ToolSet, *, allow: Iterable[str] = (),
              kinds: Iterable[str] | None = None) -> PromptBuilder:
        """Add tools given in Anthropic, OpenAI Chat or OpenAI Responses shape (canonical JSON, ordered at build).

        Raises:
            PromptError: a tool without a name, two tools with one name, a
                schema that is not JSON-serialisable, mixing a ToolSet with other tools.
            VolatileValueError: a volatile-looking value in a tool definition.
        """
        state = self._state
        if isinstance(tools, ToolSet):
            if state.tools:
                raise PromptError("tools", "a ToolSet fixes the order of all tools, but tools were added already",
                                  "put every tool into the one ToolSet")
            specs, frozen = tools.specs, True
        else:
            if state.frozen_order:
                raise PromptError("tools", "tools were given as a ToolSet already", "add these tools to the ToolSet")
            if isinstance(tools, Mapping) or not isinstance(tools, Iterable):
                raise PromptError("tools", "expected a list of tool dicts", "wrap a single tool in a list")
            specs = tuple(tool_spec(t, len(state.tools) + i) for i, t in enumerate(tools))
            frozen = False
        check_unique(state.tools + specs)
        for i, spec in enumerate(specs):
            check_volatile(spec.json, "tools", f"tools[{len(state.tools) + i}] {spec.name!r}", kinds=kinds,
                           allow=tuple(allow))
        return self._with(tools=state.tools + specs, frozen_order=frozen)

    def document(self, text: str, name: str | None = None, *, allow: Iterable[str] = (),
                 kinds: Iterable[str] | None = None) -> PromptBuilder:
        """Add a reference document (normalised), rendered after the instructions.

        Args:
            name: shown in the ``<document name="...">`` tag; also names it in errors.
            kinds: volatile kinds refused (default: clock-level timestamps and request ids only,
                :data:`promptcache.prompt.stability.DEFAULT_KINDS`).

        Raises:
            PromptError / VolatileValueError: as :meth:`system`.
        """
        path = f"documents[{name!r}]" if name else f"documents[{len(self._state.documents)}]"
        if name is not None and (not isinstance(name, str) or '"' in name or "\n" in name):
            raise PromptError(path, "a document name must be a one-line string without quotes", "rename it")
        body = normalize_text(_text(text, path))
        if not body:
            raise PromptError(path, "the document is empty", "drop it or give it text")
        check_volatile(body, "documents", path, kinds=kinds, allow=tuple(allow))
        return self._with(documents=self._state.documents + (Document(body, name),))

    def example(self, user: str, assistant: str, *, allow: Iterable[str] = (),
                kinds: Iterable[str] | None = None) -> PromptBuilder:
        """Add a few-shot pair (normalised), rendered in the ``<examples>`` block in the order added.

        Raises:
            PromptError / VolatileValueError: as :meth:`system`.
        """
        path = f"examples[{len(self._state.examples)}]"
        pair = (normalize_text(_text(user, f"{path}.user")), normalize_text(_text(assistant, f"{path}.assistant")))
        if not all(pair):
            raise PromptError(path, "an example needs a user and an assistant text", "give both")
        for text in pair:
            check_volatile(text, "examples", path, kinds=kinds, allow=tuple(allow))
        return self._with(examples=self._state.examples + (Example(*pair),))

    def cache_ttl(self, **ttls: str) -> PromptBuilder:
        """Anthropic cache TTL per breakpoint layer: ``system``, ``documents``, ``examples``, ``history`` (``5m``/``1h``).

        An unset layer takes the TTL of the next later layer that has one, so
        ``cache_ttl(documents="1h")`` caches the system prefix for 1h too.

        Raises:
            ValueError: an unknown layer or label, or a longer TTL after a shorter one.
        """
        merged = dict(self._state.ttls) | ttls
        check_ttls(merged)  # layers and labels
        check_ttls(Prompt(ttls=merged).resolved_ttls(provider_rules("anthropic")["default_ttl"]))
        return self._with(ttls=tuple(merged.items()))

    # -- history and turn ----------------------------------------------------------------------
    def history(self, conversation: Conversation | Iterable[Any]) -> PromptBuilder:
        """Set the history: a :class:`Conversation` (append-only) or a list of message dicts (either shape).

        Raises:
            PromptError: malformed messages or an impossible role order, naming ``history[i]``.
        """
        if isinstance(conversation, Conversation):
            return self._with(history=conversation.messages, conversation=conversation,
                              conversation_mark=conversation.mark)
        if isinstance(conversation, Mapping | str):
            raise PromptError("history", "expected a Conversation or a list of messages", "wrap it in a list")
        messages = parse_messages(conversation, where="history")
        check_order(messages, "history")
        return self._with(history=tuple(messages), conversation=None, conversation_mark=None)

    def user(self, text: str, context: Mapping[str, Any] | None = None) -> PromptBuilder:
        """Set the new user message; ``context`` holds the request's facts (user name, time, ids).

        The facts render at the head of the turn as a ``<context>`` block of
        ``key: value`` lines (in the given order), never in the prefix. Values
        are JSON-like: strings as they are; numbers, booleans, None, lists,
        tuples and dicts as JSON; ``datetime`` / ``date`` / ``time`` as ISO 8601
        (:func:`~promptcache.prompt.model.render_context`).

        Raises:
            PromptError: empty text, a second ``user()``, context keys that are not
                strings, or a context value of another type (``object()``, a set, a
                custom class), named by its key (``turn.context['n']``).
        """
        if self._state.user_text is not None:
            raise PromptError("turn", "user() was called twice", "put the whole message in one user() call")
        _text(text, "turn")
        if context is not None and (not isinstance(context, Mapping) or not all(isinstance(k, str) for k in context)):
            raise PromptError("turn.context", "context must be a dict with string keys", "pass {'name': value, ...}")
        rendered = render_context(text, context)
        if not rendered:
            raise PromptError("turn", "the user message is empty", "give it text")
        return self._with(user_text=rendered)

    def tool_result(self, tool_call_id: str, content: Any, *, is_error: bool = False) -> PromptBuilder:
        """Add the result of a tool call of the last assistant message to the turn (results come first).

        ``content`` is text; anything else is serialised as canonical JSON.

        Raises:
            PromptError: content that is not JSON-serialisable.
        """
        if not isinstance(content, str):
            from promptcache.prompt.normalize import canonical_json_text, canonical_json_value

            content = canonical_json_text(canonical_json_value(content, f"tool_result {tool_call_id!r}"))
        return self._with(results=self._state.results + (ToolResult(str(tool_call_id), content, bool(is_error)),))

    def turn(self, message: Any) -> PromptBuilder:
        """Set the turn from a user message dict in either provider's shape (or an OpenAI tool message list).

        Raises:
            PromptError: as :func:`promptcache.prompt.messages.parse_messages`.
        """
        items = message if isinstance(message, list) else [message]
        return self._with(extra_turn=self._state.extra_turn + tuple(parse_messages(items, where="turn")))

    # -- build ---------------------------------------------------------------------------------
    def _turn(self) -> tuple[tuple[Message, ...], tuple[Message, ...]]:
        state, history = self._state, self._state.history
        blocks: list[Any] = list(state.results)
        if state.user_text is not None:
            blocks.append(Text(state.user_text))
        turn = ((Message("user", blocks),) if blocks else ()) + state.extra_turn
        if len(turn) > 1:
            merged = parse_messages(turn, where="turn")
            if len(merged) > 1:
                raise PromptError("turn", "the turn holds more than one user message", "send one user message")
            turn = tuple(merged)
        if not turn and history and history[-1].role == "user":
            history, turn = history[:-1], history[-1:]
        if not turn:
            raise PromptError("turn", "the prompt has no new user message", "call .user(text) or .tool_result(...)")
        return history, turn

    def _check_drift(self, prompt: Prompt) -> None:
        if not self._drift_check:
            return
        if prompt.instructions:
            self._registry.check("system", "system", prompt.sections[0][1])
        for i, doc in enumerate(prompt.documents):
            self._registry.check("documents", f"documents[{doc.name!r}]" if doc.name else f"documents[{i}]", doc.text)
        if prompt.examples:
            self._registry.check("examples", "examples", prompt.sections[-1][1])

    def build(self) -> Prompt:
        """Check the whole request and return the :class:`~promptcache.prompt.model.Prompt`.

        Raises:
            PromptError: no turn, an impossible role order, tool calls without
                results (or results without calls), naming the message.
            WhitespaceDriftError: a stable layer equals one built earlier in
                this process except for whitespace.
        """
        state = self._state
        history, turn = self._turn()
        context = list(history[-1:]) if state.conversation is not None else list(history)
        labels = [f"history[{len(history) - len(context) + i}]" for i in range(len(context))] + ["turn"]
        check_order(context + list(turn), labels=labels, first_is_start=len(context) == len(history), complete=True)
        tools = state.tools if state.frozen_order else order_tools(state.tools, self._tool_order)
        prompt = Prompt(tools=tools, instructions=state.instructions, documents=state.documents,
                        examples=state.examples, history=history, turn=turn, ttls=dict(state.ttls),
                        conversation=state.conversation, conversation_mark=state.conversation_mark)
        self._check_drift(prompt)
        return prompt
