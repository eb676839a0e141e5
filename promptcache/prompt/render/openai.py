"""A prompt as keyword arguments of ``openai.OpenAI().chat.completions.create`` and ``responses.create``.

OpenAI caches automatically (provider-cache-rules.md, "OpenAI"): no markers;
what matters is that the prefix is byte-stable and that requests sharing it
share a ``prompt_cache_key`` (it routes them to the same cache machine).

Chat Completions body, keys ``model, messages``, then alphabetically (the SDK's wire order):

- ``messages``: one system message with the system-side sections joined by
  ``"\\n\\n"`` (instructions, documents, examples), then the conversation
  (:meth:`promptcache.prompt.messages.Message.to_openai_chat`);
- ``tools``: ``{"function": {"description", "name", "parameters"[, "strict"]}, "type": "function"}``,
  keys sorted at every depth.

Responses body, keys ``model`` then alphabetically (as ``responses.create``
sends them): ``instructions`` holds the system-side text, ``input`` the
conversation items (:meth:`~promptcache.prompt.messages.Message.to_openai_responses`),
``tools`` the flat function tools (``strict`` is sent explicitly, ``false``
unless the tool says otherwise, since the Responses API defaults it to true).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from promptcache.providers.apis import OPENAI_CHAT, sdk_ordered
from promptcache.prompt.messages import fresh
from promptcache.prompt.render.tokens import chat_messages, chat_tool

if TYPE_CHECKING:
    from promptcache.prompt.model import Prompt

__all__ = ["render_openai_chat", "render_openai_responses", "responses_tool"]


def _check(params: dict[str, Any], owned: tuple[str, ...]) -> None:
    clash = [k for k in params if k in owned]
    if clash:
        raise ValueError(f"{clash} come from the prompt; build them with PromptBuilder instead of passing them")


def render_openai_chat(prompt: Prompt, model: str, *, prompt_cache_key: str | None = None,
                       **params: Any) -> dict[str, Any]:
    """Keyword arguments for ``client.chat.completions.create(**kwargs)`` (a new dict, SDK key order).

    Args:
        model: the OpenAI model.
        prompt_cache_key: routes requests sharing a prefix to one cache machine (per tenant / app, never per request).
        params: further parameters (``max_completion_tokens``, ``tool_choice``, ``response_format``, ...).

    Raises:
        ValueError: a parameter the prompt owns (``messages``, ``tools``, ``model``).
    """
    _check(params, ("messages", "tools", "model", "prompt_cache_key"))
    body: dict[str, Any] = {"model": model, "messages": chat_messages(prompt), **params}
    if prompt_cache_key is not None:
        body["prompt_cache_key"] = prompt_cache_key
    if prompt.tools:
        body["tools"] = [fresh(chat_tool(t), 2) for t in prompt.tools]  # schemas shared, read-only
    return sdk_ordered(OPENAI_CHAT, body)


def responses_tool(spec: Any) -> dict[str, Any]:
    """The Responses API function tool of a :class:`~promptcache.prompt.normalize.ToolSpec`, keys sorted."""
    return spec.as_dict("parameters", strict=bool(spec.strict), type="function")


def render_openai_responses(prompt: Prompt, model: str, *, prompt_cache_key: str | None = None,
                            **params: Any) -> dict[str, Any]:
    """Keyword arguments for ``client.responses.create(**kwargs)`` (a new dict, the SDK's key order).

    Raises:
        ValueError: a parameter the prompt owns (``input``, ``instructions``, ``tools``, ``model``).
    """
    _check(params, ("input", "instructions", "tools", "model", "prompt_cache_key"))
    body: dict[str, Any] = dict(params)
    items: list[dict[str, Any]] = []
    for message in prompt.messages:
        items.extend(message.to_openai_responses())
    body["input"] = items
    if prompt.sections:
        body["instructions"] = prompt.system_text
    if prompt_cache_key is not None:
        body["prompt_cache_key"] = prompt_cache_key
    if prompt.tools:
        body["tools"] = [responses_tool(t) for t in prompt.tools]
    head = [k for k in ("stream", "service_tier") if k in body]
    return {"model": model, **{k: body[k] for k in head}, **{k: body[k] for k in sorted(body) if k not in head}}
