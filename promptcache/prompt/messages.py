"""Provider-neutral conversation messages: parsed from either SDK's shape, rendered to each.

The history and the turn of a prompt are sequences of :class:`Message`
objects. A message is immutable and renders the same bytes every time, so a
conversation that only appends renders an append-only request body (its
renderings are computed once and memoised on the message).

Neutral model (provider-cache-rules.md: Anthropic renders tool results as
blocks of the next user turn, OpenAI as ``tool`` messages):

- ``user``: :class:`ToolResult` blocks first, then :class:`Text` blocks.
- ``assistant``: :class:`Thinking` blocks (Anthropic extended thinking, kept
  verbatim), then :class:`Text` blocks, then :class:`ToolCall` blocks.

Renderings (key order as the SDKs and the shared traces have it):

=============  =====================================================================================
Anthropic      ``{"role", "content": [blocks]}``; ``{"type": "text", "text"}``,
               ``{"type": "tool_use", "id", "name", "input"}``,
               ``{"type": "tool_result", "tool_use_id", "content"[, "is_error"]}``
OpenAI chat    ``{"role": "tool", "tool_call_id", "content"}`` per result, then
               ``{"role": "user", "content": text}``; ``{"role": "assistant", "content": text|None[,
               "tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}]]}``
Responses      ``{"type": "function_call_output", "call_id", "output"}``, ``{"role", "content": text}``,
               ``{"type": "function_call", "call_id", "name", "arguments"}``
=============  =====================================================================================

Several text blocks of one message join with the section separator into one
OpenAI string. ``thinking`` / ``redacted_thinking`` blocks render only for
Anthropic, exactly as the model returned them (the API requires them back,
unmodified, in tool loops; their signature covers the content); OpenAI has no
counterpart, so they are left out of its renderings and of the ChatML token
counts. A tool call keeps both its ``input`` object and its
``arguments`` JSON text, so both providers' renderings are byte-stable.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from promptcache.tokens.chatml import message_body, message_tokens
from promptcache.convert import SEPARATOR
from promptcache.errors import PromptError

__all__ = ["Message", "Text", "Thinking", "ToolCall", "ToolResult", "check_order", "message_from_responses",
           "parse_message", "parse_messages"]


class Text:
    """A text block."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Text) and other.text == self.text

    def __hash__(self) -> int:
        return hash(("text", self.text))


class ToolCall:
    """An assistant's call of a tool: ``input`` (a JSON object) and the same as ``arguments`` JSON text."""

    __slots__ = ("id", "name", "input", "arguments")

    def __init__(self, id: str, name: str, input: Mapping[str, Any], arguments: str) -> None:  # noqa: A002
        self.id, self.name, self.input, self.arguments = id, name, input, arguments

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolCall) and (other.id, other.name, other.arguments) == (
            self.id, self.name, self.arguments)

    def __hash__(self) -> int:
        return hash(("call", self.id, self.name, self.arguments))


class ToolResult:
    """The result of a tool call, sent back in the next user turn (``content`` is text)."""

    __slots__ = ("tool_call_id", "content", "is_error")

    def __init__(self, tool_call_id: str, content: str, is_error: bool = False) -> None:
        self.tool_call_id, self.content, self.is_error = tool_call_id, content, is_error

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolResult) and (other.tool_call_id, other.content, other.is_error) == (
            self.tool_call_id, self.content, self.is_error)

    def __hash__(self) -> int:
        return hash(("result", self.tool_call_id, self.content, self.is_error))


class Thinking:
    """An assistant's ``thinking`` or ``redacted_thinking`` block, kept verbatim for Anthropic.

    ``block`` is the block as the model returned it (``{"type": "thinking",
    "thinking", "signature"}`` or ``{"type": "redacted_thinking", "data"}``),
    with its keys in the API's order (``type`` first) and without a
    ``cache_control`` marker (the API refuses one there).
    """

    __slots__ = ("block", "_key")

    _FIELDS = {"thinking": ("thinking", "signature"), "redacted_thinking": ("data",)}

    def __init__(self, block: Mapping[str, Any]) -> None:
        kind = block["type"]
        first = [k for k in self._FIELDS.get(kind, ()) if k in block]  # the API's order, whatever the source
        rest = [k for k in block if k not in ("type", "cache_control", *first)]
        self.block = {"type": kind, **{k: block[k] for k in (*first, *rest)}}
        self._key = json.dumps(self.block, sort_keys=True, ensure_ascii=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Thinking) and other._key == self._key

    def __hash__(self) -> int:
        return hash(("thinking", self._key))


Block = Thinking | Text | ToolCall | ToolResult


def fresh(value: Any, depth: int) -> Any:
    """A copy of plain JSON data whose dicts and lists are new down to ``depth`` levels; deeper values are shared.

    Renderers hand out bodies whose containers (message dicts, block lists,
    block dicts, tool dicts) are new, so callers may add or replace keys; the
    nested JSON values below them (tool schemas, tool call inputs) are shared
    with the prompt and must be treated as read-only. A full deep copy of 40
    tool schemas would cost more than the whole render.
    """
    if depth <= 0:
        return value
    if isinstance(value, dict):
        return {k: fresh(v, depth - 1) for k, v in value.items()}
    if isinstance(value, list):
        return [fresh(v, depth - 1) for v in value]
    return value


class Message:
    """One user or assistant message, immutable, with memoised renderings.

    Attributes:
        role: ``"user"`` or ``"assistant"``.
        blocks: user: tool results then texts; assistant: thinking blocks, texts, then tool calls.
    """

    __slots__ = ("role", "blocks", "_anthropic", "_chat", "_responses", "_tokens")

    def __init__(self, role: str, blocks: Iterable[Block]) -> None:
        self.role, self.blocks = role, tuple(blocks)
        self._anthropic: dict[str, Any] | None = None
        self._chat: list[dict[str, Any]] | None = None
        self._responses: list[dict[str, Any]] | None = None
        self._tokens: int | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Message) and other.role == self.role and other.blocks == self.blocks

    def __hash__(self) -> int:
        return hash((self.role, self.blocks))

    def __repr__(self) -> str:
        return f"Message({self.role!r}, {self.text[:40]!r}, calls={len(self.tool_calls)}, results={len(self.tool_results)})"

    @property
    def text(self) -> str:
        """The text blocks joined with the section separator."""
        return SEPARATOR.join(b.text for b in self.blocks if isinstance(b, Text))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The assistant's tool calls, in order (empty for user messages)."""
        return tuple(b for b in self.blocks if isinstance(b, ToolCall))

    @property
    def tool_results(self) -> tuple[ToolResult, ...]:
        """The tool results this user message sends back, in order (empty for assistant messages)."""
        return tuple(b for b in self.blocks if isinstance(b, ToolResult))

    def to_anthropic(self) -> dict[str, Any]:
        """The Anthropic message dict (new containers; a tool call's ``input`` is shared, read-only)."""
        if self._anthropic is None:
            content: list[dict[str, Any]] = []
            for b in self.blocks:
                if isinstance(b, Thinking):
                    content.append(dict(b.block))
                elif isinstance(b, Text):
                    content.append({"type": "text", "text": b.text})
                elif isinstance(b, ToolCall):
                    content.append({"type": "tool_use", "id": b.id, "name": b.name, "input": dict(b.input)})
                else:
                    content.append({"type": "tool_result", "tool_use_id": b.tool_call_id, "content": b.content,
                                    **({"is_error": True} if b.is_error else {})})
            self._anthropic = {"role": self.role, "content": content}
        return fresh(self._anthropic, 3)  # message, content list, blocks

    def to_openai_chat(self) -> list[dict[str, Any]]:
        """The OpenAI Chat message dicts (one per tool result, then the message itself), new dicts."""
        if self._chat is None:
            out: list[dict[str, Any]] = [{"role": "tool", "tool_call_id": r.tool_call_id, "content": r.content}
                                         for r in self.tool_results]
            text = self.text if any(isinstance(b, Text) for b in self.blocks) else None
            if self.role == "assistant":
                message: dict[str, Any] = {"role": "assistant", "content": text}
                if self.tool_calls:
                    message["tool_calls"] = [{"id": c.id, "type": "function",
                                              "function": {"name": c.name, "arguments": c.arguments}}
                                             for c in self.tool_calls]
                out.append(message)
            elif text is not None:
                out.append({"role": "user", "content": text})
            self._chat = out
        return fresh(self._chat, 5)  # list, messages, tool_calls, calls, function

    def to_openai_responses(self) -> list[dict[str, Any]]:
        """The OpenAI Responses input items of this message, new dicts."""
        if self._responses is None:
            out: list[dict[str, Any]] = [{"type": "function_call_output", "call_id": r.tool_call_id, "output": r.content}
                                         for r in self.tool_results]
            if any(isinstance(b, Text) for b in self.blocks):
                out.append({"role": self.role, "content": self.text})
            out.extend({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}
                       for c in self.tool_calls)
            self._responses = out
        return fresh(self._responses, 2)  # list, items

    def chatml_tokens(self) -> int:
        """Tokens of this message under the ChatML template (:mod:`promptcache.tokens.chatml`), memoised.

        ChatML encodes every message on its own between ``<|im_start|>`` and
        ``<|im_end|>\\n``, so these counts add up exactly to the count of the
        whole rendered prompt.
        """
        if self._tokens is None:
            self._tokens = sum(message_tokens(*message_body(m)) for m in self.to_openai_chat())
        return self._tokens


def _as_dict(item: Any) -> Any:
    """SDK objects (pydantic models: response content blocks, messages) as plain dicts."""
    dump = getattr(item, "model_dump", None)
    return dump(exclude_none=True) if callable(dump) else item


def _result_text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, Mapping) and p.get("type") == "text" for p in content):
        return SEPARATOR.join(str(p.get("text", "")) for p in content)
    if content is None:
        return ""
    raise PromptError(where, "a tool result must be text (a string or text blocks)",
                      "serialise the result, e.g. json.dumps(result)")


def _arguments(raw: Any, where: str) -> tuple[dict[str, Any], str]:
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError as exc:
            raise PromptError(where, f"arguments are not JSON ({exc})", "pass the arguments the model returned") from exc
        if not isinstance(parsed, dict):
            raise PromptError(where, "arguments must be a JSON object", "pass the arguments the model returned")
        return parsed, raw
    if isinstance(raw, Mapping):
        return dict(raw), json.dumps(raw, ensure_ascii=False)
    raise PromptError(where, "tool call arguments must be a JSON object or its text", "pass the model's arguments")


def _blocks(content: Any, role: str, where: str) -> list[Block]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content)] if content else []
    if not isinstance(content, list):
        raise PromptError(where, f"content must be a string or a list of blocks, not {type(content).__name__}",
                          "pass text or text / tool blocks")
    out: list[Block] = []
    for j, raw in enumerate(content):
        block, at = _as_dict(raw), f"{where}.content[{j}]"
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind in ("text", "input_text", "output_text"):
            if not isinstance(block.get("text"), str):
                raise PromptError(at, "a text block needs a string 'text'", "pass {'type': 'text', 'text': ...}")
            if block["text"]:
                out.append(Text(block["text"]))
        elif kind in ("thinking", "redacted_thinking") and role == "assistant":
            field = "thinking" if kind == "thinking" else "data"
            if not isinstance(block.get(field), str) or (kind == "thinking" and not isinstance(block.get("signature"), str)):
                raise PromptError(at, f"a {kind} block needs a string {field!r}"
                                  + (" and 'signature'" if kind == "thinking" else ""),
                                  "pass the block exactly as the model returned it")
            out.append(Thinking(block))
        elif kind == "tool_use" and role == "assistant":
            arguments = _arguments(block.get("input", {}), at)
            out.append(ToolCall(str(block.get("id")), str(block.get("name")), *arguments))
        elif kind == "tool_result" and role == "user":
            out.append(ToolResult(str(block.get("tool_use_id")), _result_text(block.get("content"), at),
                                  bool(block.get("is_error", False))))
        else:
            raise PromptError(at, f"{kind!r} blocks are not supported in a {role} message by the prompt builder",
                              "use text, thinking and tool_use (assistant), tool_result (user) blocks")
    return out


def parse_message(item: Any, where: str = "message") -> Message:
    """One message from an Anthropic or OpenAI Chat dict (or an SDK response object / :class:`Message`).

    OpenAI ``tool`` messages become a user message holding one
    :class:`ToolResult` (use :func:`parse_messages` to merge consecutive ones).

    Raises:
        PromptError: naming ``where``: no role, a system message, unsupported blocks, bad tool arguments.
    """
    if isinstance(item, Message):
        return item
    item = _as_dict(item)
    if not isinstance(item, Mapping):
        raise PromptError(where, f"a message must be a dict, not {type(item).__name__}", "pass {'role': ..., 'content': ...}")
    role = item.get("role")
    if role in ("system", "developer"):
        raise PromptError(where, f"a {role} message inside the conversation",
                          "put instructions in PromptBuilder.system(...) and per-request facts in .user(context=...)")
    if role == "tool":
        return Message("user", [ToolResult(str(item.get("tool_call_id")), _result_text(item.get("content"), where))])
    if role not in ("user", "assistant"):
        raise PromptError(where, f"unknown role {role!r}", "use 'user' or 'assistant' (or OpenAI 'tool')")
    blocks = _blocks(item.get("content"), role, where)
    for j, call in enumerate(item.get("tool_calls") or ()):
        call, at = _as_dict(call), f"{where}.tool_calls[{j}]"
        function = call.get("function") or {}
        blocks.append(ToolCall(str(call.get("id")), str(function.get("name")), *_arguments(function.get("arguments"), at)))
    order = (ToolResult, Text) if role == "user" else (Thinking, Text, ToolCall)
    blocks.sort(key=lambda b: order.index(type(b)))
    if not blocks:
        raise PromptError(where, f"empty {role} message", "drop it or give it text")
    return Message(role, blocks)


def message_from_responses(output: Iterable[Any], where: str = "reply") -> Message:
    """The assistant :class:`Message` of an OpenAI Responses ``output`` list (``message`` and ``function_call``
    items; reasoning items are not part of the conversation and are skipped).

    Raises:
        PromptError: an output without text or tool calls.
    """
    texts: list[Block] = []
    calls: list[Block] = []
    for j, raw in enumerate(output):
        item, at = _as_dict(raw), f"{where}.output[{j}]"
        if item.get("type") == "message":
            texts.extend(Text(p["text"]) for p in item.get("content") or () if p.get("type") == "output_text" and p["text"])
        elif item.get("type") == "function_call":
            calls.append(ToolCall(str(item.get("call_id")), str(item.get("name")), *_arguments(item.get("arguments"), at)))
    if not texts and not calls:
        raise PromptError(where, "the response has no text and no function call", "pass the model's response")
    return Message("assistant", texts + calls)


def parse_messages(items: Iterable[Any], where: str = "history") -> list[Message]:
    """Messages from a list of Anthropic / OpenAI Chat message dicts (either shape, even mixed).

    Consecutive OpenAI ``tool`` messages, and a user message right after them,
    merge into one user :class:`Message` (results first), as Anthropic has it.

    Raises:
        PromptError: as :func:`parse_message`, naming ``where[i]``.
    """
    out: list[Message] = []
    open_results = False  # the last message was built from OpenAI tool messages
    for i, item in enumerate(items):
        role = _as_dict(item).get("role") if not isinstance(item, Message) else item.role
        message = parse_message(item, f"{where}[{i}]")
        if open_results and message.role == "user" and (role == "tool" or not message.tool_results):
            out[-1] = Message("user", out[-1].blocks + message.blocks)
        else:
            out.append(message)
        open_results = role == "tool"
    return out


def check_order(messages: list[Message], where: str = "history", *, labels: list[str] | None = None,
                first_is_start: bool = True, complete: bool = False) -> None:
    """Check roles and tool pairing: user first, roles alternating, every tool call answered next turn.

    Args:
        labels: the name of each message in errors (default ``where[i]``).
        first_is_start: ``messages[0]`` starts the conversation (it must be a user message).
        complete: also require the sequence to end with a user message (a
            request); otherwise a trailing assistant message may still await
            its tool results.

    Raises:
        PromptError: naming the message, e.g. ``history[3]: two user messages in a row``.
    """
    names = labels or [f"{where}[{i}]" for i in range(len(messages))]
    for i, message in enumerate(messages):
        if i == 0 and first_is_start and message.role != "user":
            raise PromptError(names[0], "the conversation starts with an assistant message",
                              "start with the user's message")
        if i and message.role == messages[i - 1].role:
            raise PromptError(names[i], f"two {message.role} messages in a row ({names[i - 1]} and {names[i]})",
                              "alternate user and assistant messages; join the two or add the missing reply")
        calls = {c.id for c in messages[i - 1].tool_calls} if i and message.role == "user" else set()
        results = [r.tool_call_id for r in message.tool_results]
        if len(set(results)) != len(results):
            raise PromptError(names[i], "two results for one tool call", "send one result per call")
        if set(results) - calls and (i or first_is_start):
            raise PromptError(names[i], f"tool result(s) for unknown call id(s) {sorted(set(results) - calls)}",
                              "send results only for the calls of the assistant message right before")
        if calls and set(results) != calls:
            raise PromptError(names[i], f"tool call(s) {sorted(calls - set(results))} of {names[i - 1]} are not "
                              "answered", "answer every tool call in the very next user message, results first")
    if complete and messages and messages[-1].role != "user":
        raise PromptError(names[-1], "the request ends with an assistant message",
                          "add the new user turn (.user(...) or .tool_result(...))")
