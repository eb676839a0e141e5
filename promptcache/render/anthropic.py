"""A prompt as keyword arguments of ``anthropic.Anthropic().messages.create``, breakpoints planned.

Body (the shape of the shared traces; keys in the SDK's wire order
``max_tokens, messages, model``, then the optional parameters alphabetically,
:func:`promptcache.apis.sdk_ordered`):

- ``tools``: canonical JSON (``{"description", "input_schema", "name"[, "strict"]}``,
  keys sorted at every depth), in the prompt's tool order;
- ``system``: text blocks, one per section: the instructions, each document, the examples;
- ``messages``: the history then the turn, content always a list of blocks
  (:meth:`promptcache.messages.Message.to_anthropic`);
- ``cache_control`` markers from :mod:`promptcache.breakpoints`: at the end of
  tools + system (the instructions block, or the last tool when there are no
  instructions), on the last document block, on the examples block, and on
  the last block of the newest message; ``{"type": "ephemeral"}`` for the
  default 5-minute TTL, ``{"type": "ephemeral", "ttl": "1h"}`` otherwise.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from promptcache.apis import ANTHROPIC_MESSAGES, sdk_ordered
from promptcache.breakpoints import BreakpointPlan, plan_breakpoints
from promptcache.messages import fresh
from promptcache.normalize import ToolSpec
from promptcache.providers import model_profile
from promptcache.render.tokens import layer_boundaries

if TYPE_CHECKING:
    from promptcache.layers import Prompt

__all__ = ["anthropic_tool", "plan_for", "render_anthropic"]

_RESERVED_PARAMS = ("messages", "system", "tools", "model", "max_tokens")


@functools.lru_cache(maxsize=4096)
def _tool(spec: ToolSpec) -> dict[str, Any]:
    return spec.as_dict("input_schema")


def anthropic_tool(spec: ToolSpec) -> dict[str, Any]:
    """The Anthropic tool dict of ``spec``, keys sorted at every depth (a new dict; its schema is shared, read-only)."""
    return fresh(_tool(spec), 1)


def plan_for(prompt: Prompt, model: str, *, reserved: int = 0) -> BreakpointPlan:
    """The breakpoint plan of ``prompt`` for the Anthropic ``model`` (TTLs from :meth:`Prompt.resolved_ttls`).

    Raises:
        ValueError: TTLs that increase along the prompt (:func:`promptcache.breakpoints.check_ttls`).
    """
    profile = model_profile("anthropic", model)
    ttls = prompt.resolved_ttls(profile.default_ttl)
    return plan_breakpoints(layer_boundaries(prompt, ttls), model, reserved=reserved, profile=profile)


def render_anthropic(prompt: Prompt, model: str, *, max_tokens: int = 1024, **params: Any) -> dict[str, Any]:
    """Keyword arguments for ``client.messages.create(**kwargs)``; the SDK sends them as this JSON, key order included.

    Args:
        model: the Anthropic model (also selects the minimum cacheable tokens of the planner).
        max_tokens: the output limit (required by the API).
        params: further ``messages.create`` parameters (``tool_choice``,
            ``metadata``, ``thinking``, ``cache_control`` for automatic caching, ...).

    Returns:
        A new dict the caller may edit.

    Raises:
        ValueError: a parameter the prompt owns (``messages``, ``system``, ``tools``),
            or TTLs that increase along the prompt.
    """
    clash = [k for k in params if k in _RESERVED_PARAMS]
    if clash:
        raise ValueError(f"{clash} come from the prompt; build them with PromptBuilder instead of passing them")
    plan = plan_for(prompt, model, reserved=1 if params.get("cache_control") else 0)
    tools = [anthropic_tool(t) for t in prompt.tools]
    system = [{"type": "text", "text": text} for _, text in prompt.sections]
    messages = [m.to_anthropic() for m in prompt.messages]
    default = plan.profile.default_ttl
    for point in plan.breakpoints:
        if point.layer == "history":
            target = messages[-1]["content"][-1]
        elif point.layer == "system" and not prompt.instructions:
            target = tools[-1]
        else:
            target = system[max(i for i, (layer, _) in enumerate(prompt.sections) if layer == point.layer)]
        target["cache_control"] = point.marker(default)
    body: dict[str, Any] = {"max_tokens": max_tokens, "messages": messages, "model": model, **params}
    if system:
        body["system"] = system
    if tools:
        body["tools"] = tools
    return sdk_ordered(ANTHROPIC_MESSAGES, body)
