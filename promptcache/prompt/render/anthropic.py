"""A prompt as keyword arguments of ``anthropic.Anthropic().messages.create``, breakpoints planned.

Body (the shape of the shared traces; keys in the SDK's wire order
``max_tokens, messages, model``, then the optional parameters alphabetically,
:func:`promptcache.providers.apis.sdk_ordered`):

- ``tools``: canonical JSON (``{"description", "input_schema", "name"[, "strict"]}``,
  keys sorted at every depth), in the prompt's tool order;
- ``system``: text blocks, one per section: the instructions, each document, the examples;
- ``messages``: the history then the turn, content always a list of blocks
  (:meth:`promptcache.prompt.messages.Message.to_anthropic`);
- ``cache_control`` markers from :mod:`promptcache.prompt.breakpoints`: at the end of
  tools + system (the instructions block, or the last tool when there are no
  instructions), on the last document block, on the examples block, and on
  the last block of the newest message; ``{"type": "ephemeral"}`` for the
  default 5-minute TTL, ``{"type": "ephemeral", "ttl": "1h"}`` otherwise.
  With a top-level ``cache_control`` (automatic caching) the API places the
  moving breakpoint on the last block itself, so the newest message gets no marker.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, sdk_ordered
from promptcache.prompt.breakpoints import BreakpointPlan, automatic_ttl, plan_breakpoints
from promptcache.prompt.messages import fresh
from promptcache.prompt.normalize import ToolSpec
from promptcache.providers.profiles import model_profile
from promptcache.prompt.render.tokens import layer_boundaries

if TYPE_CHECKING:
    from promptcache.prompt.model import Prompt

__all__ = ["anthropic_tool", "plan_for", "render_anthropic"]

_RESERVED_PARAMS = ("messages", "system", "tools", "model", "max_tokens")


@functools.lru_cache(maxsize=4096)
def _tool(spec: ToolSpec) -> dict[str, Any]:
    return spec.as_dict("input_schema")


def anthropic_tool(spec: ToolSpec) -> dict[str, Any]:
    """The Anthropic tool dict of ``spec``, keys sorted at every depth (a new dict; its schema is shared, read-only)."""
    return fresh(_tool(spec), 1)


def plan_for(prompt: Prompt, model: str, *, reserved: int = 0,
             cache_control: Mapping[str, Any] | None = None) -> BreakpointPlan:
    """The breakpoint plan of ``prompt`` for the Anthropic ``model`` (TTLs from :meth:`Prompt.resolved_ttls`).

    Args:
        reserved: slots taken by markers the caller adds itself.
        cache_control: the top-level ``cache_control`` of the request (automatic
            caching), if any: it is the moving breakpoint, so no ``history``
            marker is planned, and its TTL is the history layer's.

    Raises:
        ValueError: TTLs that increase along the prompt (:func:`promptcache.prompt.breakpoints.check_ttls`),
            or a ``cache_control`` the API would refuse (:func:`promptcache.prompt.breakpoints.automatic_ttl`).
    """
    profile = model_profile("anthropic", model)
    automatic = automatic_ttl(cache_control, profile) if cache_control is not None else None
    ttls = prompt.resolved_ttls(profile.default_ttl, history=automatic)
    return plan_breakpoints(layer_boundaries(prompt, ttls), model, reserved=reserved, profile=profile,
                            automatic=automatic)


def render_anthropic(prompt: Prompt, model: str, *, max_tokens: int = 1024, **params: Any) -> dict[str, Any]:
    """Keyword arguments for ``client.messages.create(**kwargs)``; the SDK sends them as this JSON, key order included.

    Args:
        model: the Anthropic model (also selects the minimum cacheable tokens of the planner).
        max_tokens: the output limit (required by the API).
        params: further ``messages.create`` parameters (``tool_choice``,
            ``metadata``, ``thinking``, ``cache_control`` for automatic caching, ...).
            A top-level ``cache_control`` is the moving breakpoint (the API puts it
            on the last block): the planner then places no marker on the newest
            message and keeps the other 3 slots for the stable layers.

    Returns:
        A new dict the caller may edit.

    Raises:
        ValueError: a parameter the prompt owns (``messages``, ``system``, ``tools``),
            TTLs that increase along the prompt (a ``1h`` top-level ``cache_control``
            after a ``5m`` layer too), or a top-level ``cache_control`` that is not
            ``{"type": "ephemeral"[, "ttl": "5m" | "1h"]}``.
    """
    clash = [k for k in params if k in _RESERVED_PARAMS]
    if clash:
        raise ValueError(f"{clash} come from the prompt; build them with PromptBuilder instead of passing them")
    plan = plan_for(prompt, model, cache_control=params.get("cache_control"))
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
