"""Request bodies -> prompt token ids, through the model's chat template.

The one place where a chat body becomes tokens, shared by the server and
``promptcache verify`` (local backend), so a trace replayed in process and the
same requests sent over HTTP are tokenised identically. A body is first
checked at the ``API`` level of :mod:`promptcache.trace.shape` (what the
provider refuses with a 400); a bad one raises :class:`InvalidBodyError`,
worded as the provider words it. Then:

* OpenAI chat bodies: ``messages`` and ``tools`` go to
  ``tokenizer.apply_chat_template`` (tool definitions and assistant
  ``tool_calls`` are rendered into the prompt, so they count as prefix as they
  do at the providers);
* OpenAI Responses bodies are rendered as their Chat view
  (:func:`promptcache.convert.responses_to_chat`: ``instructions`` as the
  leading system message, function calls as ``tool_calls``, flat tools as Chat
  tools), so a prompt sent through either OpenAI API renders identically;
* Anthropic bodies are converted with :func:`promptcache.convert.anthropic_to_openai`
  first, and their ``cache_control`` markers become **breakpoint offsets**:
  for each marked block, the number of leading prompt tokens that end with
  that block (the common prefix of the full prompt and the prompt rendered
  with the request cut right after the block). Top-level ``cache_control``
  (automatic caching) marks the last block of the last message.

The offsets feed the Anthropic usage mapping (design doc ``local-backend.md``,
"Server"): see :func:`anthropic_usage`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from local_backend.errors import InvalidBodyError
from local_backend.tokenizer import EngineTokenizer
from promptcache.convert import anthropic_to_openai, responses_to_chat
from promptcache.misses.prefix_index import common_prefix
from promptcache.providers.apis import ANTHROPIC_MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES
from promptcache.trace.shape import Level, body_issues


def check_chat_body(api: str, body: Mapping[str, Any]) -> None:
    """Refuse a body the provider of ``api`` would refuse (:data:`~promptcache.trace.shape.Level.API`; the model
    is the caller's to check).

    Raises:
        InvalidBodyError: the first problem, in the provider's words, with OpenAI's ``param``.
    """
    issues = body_issues(api, body, Level.API, model_given=True, first=True)
    if issues:
        raise InvalidBodyError(*issues[0].provider_message(api))


@dataclass(frozen=True)
class ChatPrompt:
    """A chat request rendered for the engine.

    Attributes:
        token_ids: the prompt, generation prompt included (length = prompt tokens).
        messages / tools: the OpenAI-shaped request that was rendered.
        breakpoints: token offsets of the Anthropic cache breakpoints, ascending
            (empty for OpenAI bodies and unmarked Anthropic bodies).
    """

    token_ids: list[int]
    messages: list[dict[str, Any]]
    tools: list[Any] | None
    breakpoints: tuple[int, ...] = ()


def render_messages(tokenizer: EngineTokenizer, messages: Any, tools: Any = None,
                    add_generation_prompt: bool = True) -> list[int]:
    """Token ids of OpenAI-shaped ``messages`` (and ``tools``) under the model's chat template.

    Raises:
        InvalidBodyError: the template cannot render them (bad content shape, no template).
    """
    if tools is not None and not isinstance(tools, list):
        raise InvalidBodyError("tools must be a list of tool definitions", "tools")
    try:
        return tokenizer.apply_chat_template(messages, tools=tools or None, add_generation_prompt=add_generation_prompt)
    except (TypeError, ValueError, KeyError) as exc:
        raise InvalidBodyError(f"messages cannot be rendered with the chat template ({type(exc).__name__}: {exc}); "
                               "check the messages' content and tool calls", "messages") from exc


def openai_chat_prompt(tokenizer: EngineTokenizer, body: Mapping[str, Any]) -> ChatPrompt:
    """Validate (:func:`check_chat_body`) and render an OpenAI chat body.

    Raises:
        InvalidBodyError: naming the bad message, content part, tool call or tool definition.
    """
    check_chat_body(OPENAI_CHAT, body)
    messages, tools = list(body["messages"]), body.get("tools")
    return ChatPrompt(render_messages(tokenizer, messages, tools), messages, tools)


def responses_prompt(tokenizer: EngineTokenizer, body: Mapping[str, Any]) -> ChatPrompt:
    """Validate (:func:`check_chat_body` with the Responses rules) and render an OpenAI Responses body whose
    chain is already resolved (the whole input in ``input``; a ``previous_response_id`` left in it is ignored).

    Raises:
        InvalidBodyError: naming the bad input item, content part or tool (``input[2].content``), or an item
            the Chat view cannot render (a built-in tool's call, an ``item_reference``).
    """
    check_chat_body(OPENAI_RESPONSES, body)
    try:
        view = responses_to_chat(body).body
    except ValueError as exc:  # the converter names the Responses path
        raise InvalidBodyError(str(exc), str(exc).split(":", 1)[0]) from exc
    messages, tools = view["messages"], view.get("tools")
    return ChatPrompt(render_messages(tokenizer, messages, tools), messages, tools)


def anthropic_prompt(tokenizer: EngineTokenizer, body: Mapping[str, Any]) -> ChatPrompt:
    """Render an Anthropic Messages body and locate its cache breakpoints.

    Raises:
        InvalidBodyError: a body that is invalid (:func:`check_chat_body`: more than 4 breakpoints too)
            or that the converter refuses (the message names the path).
    """
    check_chat_body(ANTHROPIC_MESSAGES, body)
    markers = breakpoint_cuts(body)
    messages, tools = _to_openai(body)
    token_ids = render_messages(tokenizer, messages, tools)
    offsets = []
    for cut in markers:
        cut_messages, cut_tools = _to_openai(cut)
        try:
            cut_ids = render_messages(tokenizer, cut_messages, cut_tools, add_generation_prompt=False)
        except Exception:  # a template that cannot render a cut (e.g. no user message): end of the prompt
            cut_ids = token_ids
        offsets.append(common_prefix(token_ids, cut_ids))
    return ChatPrompt(token_ids, messages, tools, tuple(sorted(offsets)))


def _to_openai(body: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[Any] | None]:
    try:
        converted = anthropic_to_openai(body).body
    except ValueError as exc:  # the converter names the path
        raise InvalidBodyError(str(exc)) from exc
    except (TypeError, KeyError, AttributeError) as exc:
        raise InvalidBodyError(f"the body cannot be converted for the chat template ({type(exc).__name__}: {exc}); "
                          "check that every block has the fields its type requires") from exc
    return converted["messages"], converted.get("tools")


def breakpoint_cuts(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One truncated copy of ``body`` per ``cache_control`` marker, ending with the marked block.

    Anthropic's render order is tools, system, messages; a cut keeps
    everything before the marked block and the block itself. The top-level
    ``cache_control`` marks the last block of the last message.
    """
    cuts: list[dict[str, Any]] = []
    base = {k: v for k, v in body.items() if k not in ("tools", "system", "messages")}
    tools = body.get("tools") if isinstance(body.get("tools"), list) else []
    system = body.get("system")
    messages = body.get("messages") if isinstance(body.get("messages"), list) else []
    for k, tool in enumerate(tools):
        if isinstance(tool, Mapping) and tool.get("cache_control"):
            cuts.append({**base, "tools": tools[:k + 1], "messages": []})
    if isinstance(system, list):
        for j, block in enumerate(system):
            if isinstance(block, Mapping) and block.get("cache_control"):
                cuts.append({**base, "tools": tools, "system": system[:j + 1], "messages": []})
    head = {**base, "tools": tools, **({"system": system} if system is not None else {})}
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if isinstance(block, Mapping) and block.get("cache_control"):
                cut_message = {**message, "content": content[:j + 1]}
                cuts.append({**head, "messages": [*messages[:i], cut_message]})
    if body.get("cache_control") and messages:
        cuts.append({**head, "messages": messages})
    return cuts


def anthropic_usage(prompt_tokens: int, engine_hit: int, breakpoints: tuple[int, ...], output_tokens: int
                    ) -> dict[str, int]:
    """Anthropic's usage fields from the engine's prefix hit, by the request's breakpoints.

    Design doc ``local-backend.md``, "Server": with markers,
    ``cache_read_input_tokens = min(hit, last breakpoint offset)``,
    ``cache_creation_input_tokens = last breakpoint offset - read`` (never
    negative), ``input_tokens`` = the rest; with no marker, read = the engine
    hit and creation = 0. All values are tokens; the three input fields add
    up to ``prompt_tokens``.
    """
    if breakpoints:
        last = breakpoints[-1]
        read = min(engine_hit, last)
        creation = max(last - read, 0)
    else:
        read, creation = engine_hit, 0
    return {"input_tokens": prompt_tokens - read - creation, "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": read, "output_tokens": output_tokens}
