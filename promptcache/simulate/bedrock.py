"""Amazon Bedrock prompt caching for Claude through the Converse API, simulated from Bedrock's documented rules.

Rules (numbers from ``promptcache/data/providers.toml``, ``[providers.bedrock]``, each with its source):

- Cache checkpoints are ``{"cachePoint": {"type": "default", "ttl": "5m" | "1h"}}`` blocks placed after the
  content to cache, in ``toolConfig.tools``, ``system`` and message ``content`` (API reference
  ``CachePointBlock``); at most ``max_breakpoints`` (4) per request.
- A checkpoint caches only when the prefix up to it reaches the model's minimum *on Bedrock*
  (``min_cacheable_tokens`` of the Bedrock entry, e.g. Claude 3.7 Sonnet 1,024, Claude 3.5 Haiku 2,048: the
  Bedrock user guide's model table; not the Claude API's minimums); below it "inference still succeeds" and
  nothing is cached.
- TTLs must not increase from ``toolConfig`` to ``system`` to ``messages``; ``1h`` only on the models whose
  entry lists it (Claude 4.5 and later, from 2026-01-26); a longer TTL after a shorter one is refused.
- Reads: the 20-block lookback of the Claude API ("Bedrock checks ~20 preceding blocks"), TTL refreshed on every
  hit ("a TTL that resets with each successful cache hit").
- Usage: ``cacheReadInputTokens`` / ``cacheWriteInputTokens`` (:func:`promptcache.providers.usage.normalize_usage`).
- InvokeModel with a Claude Messages body (an ``anthropic.messages`` trace under ``--provider bedrock``, or with a
  Bedrock model id): ``cache_control`` markers as on the Claude API, Bedrock's minimums and TTLs; a top-level
  ``cache_control`` is refused on the legacy integration's models (:meth:`BedrockSimulator.simulate_invoke`).

The body is checked as a Converse body, refused when it carries Claude Messages API fields (``cache_control``,
``max_tokens``, ``tools``...: the Converse API rejects unknown members), then rendered through its Messages
equivalent (:func:`promptcache.convert.from_bedrock.converse_to_anthropic`) and simulated with
:class:`~promptcache.simulate.anthropic.AnthropicSimulator`'s breakpoint machinery under the Bedrock profile.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from promptcache.convert.from_bedrock import converse_to_anthropic
from promptcache.providers.apis import ANTHROPIC_MESSAGES, BEDROCK_CONVERSE
from promptcache.providers.profiles import ModelProfile, bare_model_id
from promptcache.providers.usage import Usage
from promptcache.simulate.anthropic import AnthropicSimulator
from promptcache.simulate.base import RequestRefused, RequestResult
from promptcache.simulate.render import render_prompt
from promptcache.trace.shape import MalformedBody, check_body
from promptcache.trace.shape.bedrock import STRING_CONTENT, claude_api_fields


LEGACY_INVOKE = re.compile(r"^claude-(?:3-|(?:opus|sonnet)-4(?:$|-[0-6](?:$|-))|(?:opus|sonnet)-4-\d{8}|haiku-4-5)")
"""Claude models behind Bedrock's legacy Claude integration, which answers a top-level ``cache_control``
(automatic caching) in an InvokeModel body with HTTP 400: "Opus 4.6 and earlier" (provider-audit-2026-12.md
section 3, Bedrock row, and the Claude docs' automatic-caching note as of 2026-09). Applied to every Claude model up
to the 4.6 generation: assumed, the sources name Opus only."""




def cache_points(body: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """``(path, cachePoint)`` of a Converse body in render order: ``toolConfig.tools``, ``system``, messages."""
    places: list[tuple[str, Any]] = []
    tool_config = body.get("toolConfig")
    if isinstance(tool_config, Mapping):
        places.append(("toolConfig.tools", tool_config.get("tools")))
    places.append(("system", body.get("system")))
    places += [(f"messages[{i}].content", m.get("content")) for i, m in enumerate(body.get("messages") or [])
               if isinstance(m, Mapping)]
    return [(f"{where}[{j}].cachePoint", block["cachePoint"]) for where, blocks in places
            for j, block in enumerate(blocks if isinstance(blocks, list) else [])
            if isinstance(block, Mapping) and isinstance(block.get("cachePoint"), Mapping)]


def refusal(body: Mapping[str, Any], profile: ModelProfile) -> str | None:
    """Why Bedrock would refuse a Converse body (HTTP 400 ValidationException), else None: a Claude Messages API
    field, more than ``max_breakpoints`` cachePoints, a TTL the model does not offer, a longer TTL after a shorter."""
    foreign = claude_api_fields(body)
    if foreign:
        path, instead = foreign[0]
        if instead == STRING_CONTENT:
            return f"{path} is a string (the Claude API's shape); Bedrock {instead}"
        return f"{path} is a Claude API field; Bedrock Converse does not take it: {instead}"
    points = cache_points(body)
    limit = profile.max_breakpoints
    if limit is not None and len(points) > limit:
        return f"at most {limit} cachePoint blocks may be provided per request on Bedrock; found {len(points)}"
    shortest: str | None = None
    for path, point in points:
        if point.get("type") != "default":
            return (f"{path}.type must be 'default', not {point.get('type')!r} (the only cachePoint type, API "
                    "reference CachePointBlock)")
        ttl = str(point.get("ttl", profile.default_ttl))
        if ttl not in profile.ttl_seconds:
            return (f"{path}.ttl {ttl!r} is not available for {profile.model} on Bedrock (TTLs: "
                    f"{', '.join(profile.ttl_seconds)})")
        if shortest is not None and profile.ttl_seconds[ttl] > profile.ttl_seconds[shortest]:
            return (f"{path}: ttl {ttl!r} after a {shortest!r} cachePoint; Bedrock requires TTLs that do not increase "
                    "from toolConfig to system to messages (longer TTLs first)")
        if shortest is None or profile.ttl_seconds[ttl] < profile.ttl_seconds[shortest]:
            shortest = ttl
    return None


class BedrockSimulator(AnthropicSimulator):
    """Bedrock's prompt cache for Claude, Converse API (``bedrock.converse`` trace bodies).

    Example::

        sim = BedrockSimulator()
        result = sim.simulate({"modelId": "us.anthropic.claude-3-7-sonnet-20250219-v1:0", "messages": [...],
                               "system": [{"text": "..."}, {"cachePoint": {"type": "default"}}]}, t=0.0)
        result.usage.cache_write_5m   # cacheWriteInputTokens
    """

    provider = "bedrock"
    api = BEDROCK_CONVERSE

    def model_of(self, body: Mapping[str, Any]) -> str:
        """The model a request is simulated as: ``--model``, else the body's ``modelId``."""
        return self.model or str(body.get("modelId") or "")

    def simulate(self, body: Mapping[str, Any], t: float) -> RequestResult:
        """Simulate one Converse request starting at ``t`` seconds (see the module docstring).

        Raises:
            MalformedBody: not a Converse body, or a block with no Claude counterpart to render.
        """
        model = self.model_of(body)
        if model and isinstance(model, str) and claude_api_fields(body):  # a Claude-shaped body: refused, not malformed
            profile = self.profile(model)
            return RequestResult(Usage(), 0, profile, error=refusal(body, profile))
        check_body(self.api, body, model_given=self.model is not None)
        profile = self.profile(model)
        reason = refusal(body, profile)
        if reason is not None:
            return RequestResult(Usage(), 0, profile, error=reason)
        try:
            converted = converse_to_anthropic(body, model)
        except ValueError as exc:
            if "cachePoint" in str(exc):
                return RequestResult(Usage(), 0, profile, error=str(exc))
            raise MalformedBody(f"cannot be rendered: {exc}") from exc
        return self._claude_body(converted, profile, model, t)

    def simulate_invoke(self, body: Mapping[str, Any], t: float) -> RequestResult:
        """Simulate one InvokeModel request whose body is a Claude Messages body (``anthropic_version`` is
        dropped; the model is ``--model`` or the body's ``model``), under the Bedrock profile of its model.
        A top-level ``cache_control`` is refused on :data:`LEGACY_INVOKE` models.

        Raises:
            MalformedBody: not a Claude Messages body.
        """
        body = {key: value for key, value in body.items() if key != "anthropic_version"}
        model = self.model or str(body.get("model") or "")
        profile = self.profile(model)
        if body.get("cache_control") is not None and LEGACY_INVOKE.match(bare_model_id(model)):
            assumed = "" if bare_model_id(model).startswith(("claude-opus-", "claude-3-opus")) else (
                " (assumed for this model: the sources name Opus 4.6 and earlier only)")
            return RequestResult(Usage(), 0, profile, error=(
                f"cache_control (top-level, automatic caching) is refused by Bedrock's legacy Claude integration "
                f"for {model}{assumed}: put cache_control on the blocks to cache instead"))
        check_body(ANTHROPIC_MESSAGES, body, model_given=True)
        return self._claude_body(body, profile, model, t)

    def _claude_body(self, body: Mapping[str, Any], profile: Any, model: str, t: float) -> RequestResult:
        """A Claude Messages body under ``profile``: rendered, then simulated (a refusal is the result's error).

        Raises:
            MalformedBody: the body cannot be rendered.
        """
        try:
            render = render_prompt(self.prompt_body(body, profile), ANTHROPIC_MESSAGES, model=model)
        except ValueError as exc:
            raise MalformedBody(f"cannot be rendered: {exc}") from exc
        try:
            return self._simulate(render, profile, float(t))
        except RequestRefused as refused:
            return RequestResult(Usage(), len(render), profile, error=str(refused), render=render)
