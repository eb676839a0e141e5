"""An Amazon Bedrock Converse body as the Claude Messages body Bedrock hands a Claude model.

Bedrock runs Claude on the same prompt layout and cache as the Claude API (tools -> system -> messages, cache
checkpoints with a 20-block lookback: the Bedrock user guide "Prompt caching", read 2026-12-02), so the simulator
renders a Converse body through its Messages equivalent:

- ``toolConfig.tools[].toolSpec {name, description, inputSchema.json}`` -> ``tools[] {name, description,
  input_schema}``; ``toolConfig.toolChoice`` ``{auto}`` / ``{any}`` / ``{tool: {name}}`` -> ``tool_choice``;
- ``system[] {text}`` -> text blocks; message blocks ``text``, ``image``, ``document``, ``toolUse``,
  ``toolResult``, ``reasoningContent`` -> ``text``, ``image``, ``document``, ``tool_use``, ``tool_result``,
  ``thinking`` blocks;
- a ``cachePoint {type, ttl}`` block -> ``cache_control {"type": "ephemeral", "ttl"}`` on the block before it
  (in the same list; a cachePoint with nothing before it has nothing to cache and raises);
- ``inferenceConfig.maxTokens`` -> ``max_tokens``; ``additionalModelRequestFields`` (``thinking``,
  ``output_config``, ...) are Claude request fields and are merged as they are.

Image and document bytes are not decoded: their ``source`` is kept as sent (the token count of an image is an
approximation either way).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, sdk_ordered


def _marker(cache_point: Mapping[str, Any]) -> dict[str, Any]:
    marker: dict[str, Any] = {"type": "ephemeral"}
    if "ttl" in cache_point:
        marker["ttl"] = cache_point["ttl"]
    return marker


def _content(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    if "text" in block:
        return {"type": "text", "text": block["text"]}
    if "toolUse" in block:
        use = block["toolUse"]
        return {"type": "tool_use", "id": use.get("toolUseId"), "name": use.get("name"), "input": use.get("input", {})}
    if "toolResult" in block:
        result = block["toolResult"]
        parts = []
        for k, part in enumerate(result.get("content") or []):
            if isinstance(part, Mapping) and "text" in part:
                parts.append({"type": "text", "text": part["text"]})
            elif isinstance(part, Mapping) and "json" in part:
                parts.append({"type": "text", "text": json.dumps(part["json"], separators=(",", ":"))})
            else:
                parts.append(_content(part, f"{path}.toolResult.content[{k}]"))
        out = {"type": "tool_result", "tool_use_id": result.get("toolUseId"), "content": parts}
        if result.get("status") == "error":
            out["is_error"] = True
        return out
    if "reasoningContent" in block:
        reasoning = block["reasoningContent"].get("reasoningText") or {}
        return {"type": "thinking", "thinking": reasoning.get("text", ""), "signature": reasoning.get("signature", "")}
    for kind in ("image", "document"):
        if kind in block:
            return {"type": kind, "source": block[kind]}
    raise ValueError(f"{path}: no Claude Messages counterpart for a {sorted(block)} block")


def _blocks(blocks: list[Any], path: str, convert: Callable[[Mapping[str, Any], str], dict[str, Any]]) -> list[dict[str, Any]]:
    if not isinstance(blocks, list):
        raise ValueError(f"{path}: Converse takes a list of content blocks ([{{\"text\": \"...\"}}]), "
                         f"not {type(blocks).__name__}")
    out: list[dict[str, Any]] = []
    for j, block in enumerate(blocks):
        if "cachePoint" in block:
            if not out:
                raise ValueError(f"{path}[{j}]: a cachePoint must follow the content it caches")
            out[-1]["cache_control"] = _marker(block["cachePoint"])
        else:
            out.append(convert(block, f"{path}[{j}]"))
    return out


def _tool(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    spec = block.get("toolSpec")
    if not isinstance(spec, Mapping):
        raise ValueError(f"{path}: only toolSpec tools have a Claude Messages counterpart")
    tool: dict[str, Any] = {"name": spec.get("name")}
    if "description" in spec:
        tool["description"] = spec["description"]
    tool["input_schema"] = (spec.get("inputSchema") or {}).get("json", {"type": "object"})
    return tool


def _tool_choice(choice: Mapping[str, Any]) -> dict[str, Any]:
    if "tool" in choice:
        return {"type": "tool", "name": choice["tool"].get("name")}
    return {"type": "any" if "any" in choice else "auto"}


def converse_to_anthropic(body: Mapping[str, Any], model: str | None = None) -> dict[str, Any]:
    """The Claude Messages body of a Converse body (a body that passed
    :func:`promptcache.trace.shape.check_body` for ``bedrock.converse``), in the Anthropic SDK's key order.

    Raises:
        ValueError: a block with no Messages counterpart, or a cachePoint with nothing before it; the message
            names its path (``messages[2].content[0]``).
    """
    inference = body.get("inferenceConfig") or {}
    out: dict[str, Any] = {
        "max_tokens": inference.get("maxTokens", 4096),
        "messages": [{"role": m["role"], "content": _blocks(m["content"], f"messages[{i}].content", _content)}
                     for i, m in enumerate(body["messages"])],
        "model": model or body.get("modelId"),
    }
    extra = dict(body.get("additionalModelRequestFields") or {})
    if body.get("system"):
        out["system"] = _blocks(body["system"], "system", _content)
    tool_config = body.get("toolConfig") or {}
    if tool_config.get("tools"):
        out["tools"] = _blocks(tool_config["tools"], "toolConfig.tools", _tool)
    if isinstance(tool_config.get("toolChoice"), Mapping):
        out["tool_choice"] = _tool_choice(tool_config["toolChoice"])
    for key, value in extra.items():
        out.setdefault(key, value)
    return sdk_ordered(ANTHROPIC_MESSAGES, out)
