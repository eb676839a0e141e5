"""The prompt model: a :class:`Prompt` is six layers, most stable first.

Architecture doc, "The prompt model":

=====  ===========  ====================  =============================================
order  layer        lifetime              rendered as
=====  ===========  ====================  =============================================
1      tools        deploy                canonical JSON (sorted keys), sorted by name
2      system       deploy                Anthropic ``system[0]``; OpenAI system message
3      documents    hours                 one more system text block each (Anthropic);
                                          sections of the OpenAI system message
4      examples     deploy                one system text block (Anthropic); a section (OpenAI)
5      history      session, append-only  the conversation's messages
6      turn         request               the new user message (with the request's facts)
=====  ===========  ====================  =============================================

Sections of the OpenAI system message are joined with the canonical separator
``"\\n\\n"``; a document renders as ``<document name="...">`` ... ``</document>``
and the examples as ``<examples>`` of ``<example>`` pairs. Per-request facts
passed with ``user(text, context={...})`` render at the head of the turn as a
``<context>`` block and enter the history verbatim once sent.

Prompts are immutable; build them with :class:`promptcache.prompt.builder.PromptBuilder`.
Renderers: :meth:`Prompt.to_anthropic`, :meth:`Prompt.to_openai_chat`,
:meth:`Prompt.to_openai_responses`, :meth:`Prompt.to_tokens`.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import hashlib
import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from promptcache.errors import PromptError
from promptcache.prompt.messages import Message
from promptcache.prompt.normalize import SECTION_SEPARATOR, ToolSpec, join_sections

if TYPE_CHECKING:
    import tiktoken

    from promptcache.prompt.breakpoints import BreakpointPlan
    from promptcache.prompt.conversation import Conversation

__all__ = ["LAYERS", "Document", "Example", "Prompt", "render_context"]

LAYERS = ("tools", "system", "documents", "examples", "history", "turn")
"""The prompt model's layers, most stable first."""


@dataclasses.dataclass(frozen=True)
class Document:
    """A reference document of the ``documents`` layer (normalised text)."""

    text: str
    name: str | None = None

    @property
    def section(self) -> str:
        """The rendered section: the text wrapped in ``<document name="...">`` tags."""
        head = f'<document name="{self.name}">' if self.name else "<document>"
        return f"{head}\n{self.text}\n</document>"


@dataclasses.dataclass(frozen=True)
class Example:
    """A few-shot pair of the ``examples`` layer (normalised texts)."""

    user: str
    assistant: str


def examples_section(examples: tuple[Example, ...]) -> str:
    """The rendered examples layer (``""`` when there are none)."""
    if not examples:
        return ""
    pairs = "\n".join(f"<example>\nUser: {e.user}\nAssistant: {e.assistant}\n</example>" for e in examples)
    return f"<examples>\n{pairs}\n</examples>"


@functools.lru_cache(maxsize=256)
def stable_sections(instructions: tuple[str, ...], documents: tuple[Document, ...],
                    examples: tuple[Example, ...]) -> tuple[tuple[str, str], ...]:
    """``(layer, text)`` of the system-side sections, memoised: prompts built from one base share the result."""
    out = []
    if instructions:
        out.append(("system", join_sections(instructions)))
    out.extend(("documents", d.section) for d in documents)
    if examples:
        out.append(("examples", examples_section(examples)))
    return tuple(out)


@functools.lru_cache(maxsize=256)
def _joined(sections: tuple[tuple[str, str], ...]) -> str:
    return SECTION_SEPARATOR.join(text for _, text in sections)


CONTEXT_TYPES = "a str, int, float, bool, None, list, tuple or dict (datetime, date and time render as ISO 8601)"
"""The values ``user(text, context={...})`` accepts, for error messages and docs."""


def _check_context_value(value: Any, where: str) -> None:
    """Raise :class:`PromptError` naming ``where`` unless ``value`` is JSON-like (nested) or a date/time."""
    if value is None or isinstance(value, str | bool | int | datetime.date | datetime.time):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PromptError(where, f"{value!r} is not a finite number", "pass a finite number, or a string")
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check_context_value(item, f"{where}[{index}]")
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise PromptError(where, f"a dict key {key!r} is not a string", "use string keys")
            _check_context_value(item, f"{where}[{key!r}]")
        return
    raise PromptError(where, f"a value of type {type(value).__name__} cannot be rendered into the prompt",
                      f"pass {CONTEXT_TYPES}; convert other values with str() first")


def _json_default(value: Any) -> Any:
    # Only what _check_context_value accepted reaches here: mappings that are not dicts
    # (MappingProxyType, ...), dates and times.
    if isinstance(value, Mapping):
        return dict(value)
    return value.isoformat()


def _context_text(value: Any) -> str:
    if isinstance(value, str):
        return str.__str__(value)  # a str subclass (StrEnum, (str, Enum)) by its value, as json.dumps renders it nested
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=_json_default)


def render_context(text: str, context: Mapping[str, Any] | None) -> str:
    """The text of a turn: a ``<context>`` block of ``key: value`` lines (given order), a blank line, the text.

    Values render as: strings as they are (a ``str`` subclass such as a
    ``StrEnum`` or ``(str, Enum)`` member by its string value, ``"pro"``, not
    ``Plan.PRO``; a string with line breaks verbatim, over several lines of the
    block); ``datetime`` / ``date`` / ``time`` as ISO 8601 (``isoformat()``);
    numbers, booleans, None, lists, tuples and dicts as JSON (``true``,
    ``null``, ``["a", "b"]``, ``{"k": 1}``; keys in the given order, non-ASCII
    kept, dates inside them as ISO strings, an ``IntEnum`` as its number).
    Keys render the same way as string values; a key must be a non-empty single
    line (spaces and colons are kept as given).

    Raises:
        PromptError: an empty key or one with a line break (any
            :meth:`str.splitlines` separator: ``\\n``, ``\\r``, U+2028, ...), which
            would break the one-line-per-key block; a value of any other type
            (``object()``, a set, a custom class: its ``str()`` would be a memory
            address or unstable), a NaN or infinite float, or a non-string key
            (of ``context`` or a dict in it); the message names the key.
    """
    if not context:
        return text
    for key, value in context.items():
        if not isinstance(key, str):
            raise PromptError("turn.context", "context must be a dict with string keys", "pass {'name': value, ...}")
        where = f"turn.context[{str.__str__(key)!r}]"
        if key.splitlines() != [key]:
            raise PromptError(where, "a context key must be a non-empty line: it is empty or holds a line break",
                              "name the fact in one line, e.g. 'customer' or 'local time'")
        _check_context_value(value, where)
    lines = "\n".join(f"{_context_text(key)}: {_context_text(value)}" for key, value in context.items())
    return f"<context>\n{lines}\n</context>{SECTION_SEPARATOR}{text}"


class Prompt:
    """An immutable, layered prompt, ready to render for any provider.

    Attributes:
        tools: the tools in their final order (:class:`~promptcache.prompt.normalize.ToolSpec`).
        instructions: the system sections (normalised), joined into the ``system`` layer.
        documents: the ``documents`` layer, in the order added.
        examples: the ``examples`` layer, in the order added.
        history: the conversation so far (:class:`~promptcache.prompt.messages.Message`).
        turn: the new message(s) of this request (one user message).
        ttls: explicit cache TTL labels per breakpoint layer (``system``,
            ``documents``, ``examples``, ``history``); see :meth:`resolved_ttls`.
        conversation: the :class:`~promptcache.prompt.conversation.Conversation` the
            history came from (``None`` for a list), and ``conversation_mark``
            its state when the prompt was built (:meth:`Conversation.record` checks it).
    """

    __slots__ = ("tools", "instructions", "documents", "examples", "history", "turn", "ttls", "conversation",
                 "conversation_mark", "_sections", "_hints", "_fingerprints")

    def __init__(self, *, tools: tuple[ToolSpec, ...] = (), instructions: tuple[str, ...] = (),
                 documents: tuple[Document, ...] = (), examples: tuple[Example, ...] = (),
                 history: tuple[Message, ...] = (), turn: tuple[Message, ...] = (),
                 ttls: Mapping[str, str] | None = None, conversation: Conversation | None = None,
                 conversation_mark: tuple[int, int] | None = None) -> None:
        self.tools, self.instructions, self.documents, self.examples = tools, instructions, documents, examples
        self.history, self.turn, self.ttls = history, turn, dict(ttls or {})
        self.conversation, self.conversation_mark = conversation, conversation_mark
        self._sections: tuple[tuple[str, str], ...] | None = None
        self._hints: dict[str, dict[str, Any]] = {}
        self._fingerprints: dict[str, str] | None = None

    def __repr__(self) -> str:
        return (f"Prompt(tools={len(self.tools)}, documents={len(self.documents)}, examples={len(self.examples)}, "
                f"history={len(self.history)}, turn={len(self.turn)})")

    @property
    def messages(self) -> tuple[Message, ...]:
        """History then turn: the conversation messages of the request."""
        return self.history + self.turn

    @property
    def sections(self) -> tuple[tuple[str, str], ...]:
        """``(layer, text)`` of each system-side section in order: instructions, documents, examples."""
        if self._sections is None:
            self._sections = stable_sections(self.instructions, self.documents, self.examples)
        return self._sections

    @property
    def system_text(self) -> str:
        """The system-side sections joined with the canonical separator (the OpenAI system message)."""
        return _joined(self.sections)

    def resolved_ttls(self, default: str = "5m", *, history: str | None = None) -> dict[str, str]:
        """TTL label per breakpoint layer: the explicit one, else the next later layer's, else ``default``.

        So giving ``documents`` ``1h`` gives the earlier ``system`` ``1h`` too
        (a shorter TTL may follow a longer one, never the reverse).

        Args:
            default: the provider's default TTL label.
            history: the moving breakpoint's TTL when a top-level ``cache_control``
                (automatic caching) sets it; the earlier layers then default to it.

        Raises:
            ValueError: ``history`` differs from an explicit ``cache_ttl(history=...)``.
        """
        if history is not None and self.ttls.get("history", history) != history:
            raise ValueError(f"the top-level cache_control (ttl {history!r}) is the moving breakpoint, but the "
                             f"prompt sets cache_ttl(history={self.ttls['history']!r}); give them the same TTL")
        out: dict[str, str] = {}
        later = self.ttls.get("history", history or default)
        for layer in ("history", "examples", "documents", "system"):
            later = out[layer] = self.ttls.get(layer, later)
        return {layer: out[layer] for layer in ("system", "documents", "examples", "history")}

    def layer_hints(self, api: str) -> dict[str, Any]:
        """The layer of every block of this prompt's body for ``api``, for the prefix guard.

        Anthropic: ``system[i]`` -> its section's layer (system, documents,
        examples). OpenAI Chat: ``messages[0].content`` -> ``((layer, end
        character), ...)``, the spans of the sections in the one system message.
        Both: ``messages[k]`` -> ``history`` or ``turn`` (a message may render as
        several OpenAI messages: tool results). The format of ``layers`` in
        :func:`promptcache.misses.rendering.decompose`; ``{}`` for another api.
        """
        if api in self._hints:
            return dict(self._hints[api])
        hints: dict[str, Any] = {}
        if api == "anthropic.messages":
            hints.update({f"system[{i}]": layer for i, (layer, _) in enumerate(self.sections)})
            sizes, k = [1] * len(self.messages), 0
        elif api == "openai.chat":
            spans, end = [], -len(SECTION_SEPARATOR)
            for layer, text in self.sections:
                end += len(SECTION_SEPARATOR) + len(text)  # a separator belongs to the section after it
                spans.append((layer, end))
            if spans:
                hints["messages[0].content"] = tuple(spans)
            sizes, k = [len(m.to_openai_chat()) for m in self.messages], int(bool(spans))
        else:
            return hints
        for i, size in enumerate(sizes):
            for _ in range(size):
                hints[f"messages[{k}]"] = "history" if i < len(self.history) else "turn"
                k += 1
        self._hints[api] = hints
        return dict(hints)

    def fingerprints(self) -> dict[str, str]:
        """A 16-hex-digit SHA-256 of each non-empty layer's canonical rendering, in layer order.

        Equal fingerprints mean an unchanged layer between two prompts (the runtime guard compares the rendered
        request's layers: :func:`promptcache.misses.rendering.layer_fingerprints`).
        """
        if self._fingerprints is None:
            parts: dict[str, list[str]] = {layer: [] for layer in LAYERS}
            parts["tools"] = [t.json for t in self.tools]
            for layer, text in self.sections:
                parts[layer].append(text)
            parts["history"] = [repr(m.to_openai_chat()) for m in self.history]
            parts["turn"] = [repr(m.to_openai_chat()) for m in self.turn]
            self._fingerprints = {layer: hashlib.sha256("\x00".join(items).encode()).hexdigest()[:16]
                                  for layer, items in parts.items() if items}
        return dict(self._fingerprints)

    def breakpoints(self, model: str, *, reserved: int = 0, cache_control: Mapping[str, Any] | None = None
                    ) -> BreakpointPlan:
        """The Anthropic cache breakpoints planned for ``model`` (see :mod:`promptcache.prompt.breakpoints`).

        ``cache_control``: the top-level value ``to_anthropic`` would get (automatic caching);
        ``reserved``: slots taken by markers of your own.
        """
        from promptcache.prompt.render.anthropic import plan_for

        return plan_for(self, model, reserved=reserved, cache_control=cache_control)

    def to_anthropic(self, model: str, *, max_tokens: int = 1024, **params: Any) -> dict[str, Any]:
        """Keyword arguments for ``anthropic.Anthropic().messages.create`` (see :mod:`promptcache.prompt.render.anthropic`)."""
        from promptcache.prompt.render.anthropic import render_anthropic

        return render_anthropic(self, model, max_tokens=max_tokens, **params)

    def to_openai_chat(self, model: str, *, prompt_cache_key: str | None = None, **params: Any) -> dict[str, Any]:
        """Keyword arguments for ``openai.OpenAI().chat.completions.create`` (see :mod:`promptcache.prompt.render.openai`)."""
        from promptcache.prompt.render.openai import render_openai_chat

        return render_openai_chat(self, model, prompt_cache_key=prompt_cache_key, **params)

    def to_openai_responses(self, model: str, *, prompt_cache_key: str | None = None, **params: Any) -> dict[str, Any]:
        """Keyword arguments for ``openai.OpenAI().responses.create`` (see :mod:`promptcache.prompt.render.openai`)."""
        from promptcache.prompt.render.openai import render_openai_responses

        return render_openai_responses(self, model, prompt_cache_key=prompt_cache_key, **params)

    def to_tokens(self, tokenizer: tiktoken.Encoding | str | None = None, *,
                  add_generation_prompt: bool = False) -> list[int]:
        """Token ids of the whole prompt under the ChatML template (see :mod:`promptcache.prompt.render.tokens`)."""
        from promptcache.prompt.render.tokens import render_tokens

        return render_tokens(self, tokenizer, add_generation_prompt=add_generation_prompt)

    def count_tokens(self, model: str | None = None) -> int:
        """Tokens of the whole prompt: ``len(self.to_tokens(model))``.

        Without ``model`` (ChatML cl100k) the count comes from memoised per-layer
        and per-message counts (exact: ChatML encodes each message on its own);
        with a model the whole prompt is encoded with that model's encoding.
        """
        from promptcache.prompt.render.tokens import prompt_token_count, render_tokens

        return prompt_token_count(self) if model is None else len(render_tokens(self, model))
