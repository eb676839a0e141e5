"""Amazon Bedrock Converse request bodies (``api: "bedrock.converse"``), as the Converse API reference shapes them.

A trace body is the Converse request with its ``modelId`` (a URI parameter on the wire, the first keyword of the
AWS SDKs' ``converse(...)``): ``messages`` of ``{"role": "user" | "assistant", "content": [ContentBlock]}``,
``system`` ``[SystemContentBlock]``, ``toolConfig`` ``{"tools": [Tool], "toolChoice"}``, ``inferenceConfig``,
``additionalModelRequestFields``. Every block is an object with exactly one member (a union):
``text``, ``image``, ``document``, ``toolUse``, ``toolResult``, ``reasoningContent``, ``cachePoint``, ...
Sources: docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html, API_runtime_ContentBlock.html,
API_runtime_CachePointBlock.html (``{"type": "default", "ttl": "5m" | "1h"}``; read 2026-12-02 through the docs
search corpus).

Levels (:class:`~promptcache.trace.shape.walk.Level`): ``STRUCTURE`` checks what rendering needs (lists of
one-member objects of the kinds above, ``modelId``); ``API`` checks the ``cachePoint`` members; ``TRACE`` the
known top-level keys in the reference's order. Claude API fields in a Converse body (``cache_control``,
``max_tokens``, ``tools``, ``anthropic_version``, ``type`` members, a string ``content``...) are well-formed JSON
the Bedrock API refuses: the simulator reports them as refused (:func:`claude_api_fields`), not as malformed input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptcache.trace.shape.walk import Level, Walk, json_kind

CONTENT_KINDS = ("text", "image", "document", "video", "audio", "toolUse", "toolResult", "guardContent",
                 "reasoningContent", "citationsContent", "searchResult", "cachePoint")
SYSTEM_KINDS = ("text", "guardContent", "cachePoint")
TOOL_KINDS = ("toolSpec", "systemTool", "cachePoint")
CACHE_POINT_TTLS = ("5m", "1h")

CLAUDE_API_FIELDS = {
    "cache_control": "a Converse request marks a cache breakpoint with a block {\"cachePoint\": {\"type\": "
                     "\"default\"}} placed after the content to cache (in system, messages or toolConfig.tools)",
    "max_tokens": "use inferenceConfig.maxTokens",
    "model": "use modelId",
    "tools": "use toolConfig.tools with toolSpec entries",
    "tool_choice": "use toolConfig.toolChoice",
    "thinking": "pass it in additionalModelRequestFields",
    "output_config": "pass it in additionalModelRequestFields",
    "stop_sequences": "use inferenceConfig.stopSequences",
    "temperature": "use inferenceConfig.temperature",
    "top_p": "use inferenceConfig.topP",
    "metadata": "use requestMetadata",
    "anthropic_version": "it belongs to an InvokeModel body in the Claude Messages format (record that request "
                         "as anthropic.messages); a Converse request has no version field",
}
"""Claude Messages API fields a Converse body does not take, with what to use instead (the Converse reference)."""


BLOCK_TYPE = ("a Converse block is an object with exactly one member naming its kind ({\"text\": \"...\"}, "
              "{\"image\": {...}}, {\"cachePoint\": {\"type\": \"default\"}}), without a \"type\" member")
STRING_CONTENT = "Converse takes a list of content blocks ([{\"text\": \"...\"}]), not a string"


def claude_api_fields(body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(path, what to use instead)`` of each Claude Messages API shape in a Converse body, in body order: top-level
    keys of :data:`CLAUDE_API_FIELDS` (``anthropic_version`` too), a message ``content`` or ``system`` given as a
    string, and ``type`` / ``cache_control`` members inside system, message and tool blocks (the Converse
    reference: blocks are one-member unions; unknown members are refused with a ValidationException)."""
    found = [(key, CLAUDE_API_FIELDS[key]) for key in body if key in CLAUDE_API_FIELDS]
    places = [("system", body.get("system"))]
    places += [(f"messages[{i}].content", m.get("content")) for i, m in enumerate(body.get("messages") or [])
               if isinstance(m, Mapping)]
    tool_config = body.get("toolConfig")
    if isinstance(tool_config, Mapping):
        places.append(("toolConfig.tools", tool_config.get("tools")))
    for where, blocks in places:
        if isinstance(blocks, str):
            found.append((where, STRING_CONTENT))
        for j, block in enumerate(blocks if isinstance(blocks, list) else []):
            if isinstance(block, Mapping) and "type" in block:
                found.append((f"{where}[{j}].type", BLOCK_TYPE))
            if isinstance(block, Mapping) and "cache_control" in block:
                found.append((f"{where}[{j}].cache_control", CLAUDE_API_FIELDS["cache_control"]))
    return found


def _union(w: Walk, block: Any, kinds: tuple[str, ...], path: str) -> str | None:
    """The member name of a one-member union object, else None (with a ``STRUCTURE`` issue)."""
    if not w.need(isinstance(block, Mapping), Level.STRUCTURE, path, f"must be an object, not {json_kind(block)}"):
        return None
    members = [key for key in block if key in kinds]
    if not w.need(len(members) == 1, Level.STRUCTURE, path,
                  f"must have exactly one of {', '.join(kinds)}; got {sorted(block) or 'no member'}"):
        return None
    return members[0]


def _cache_point(w: Walk, value: Any, path: str) -> None:
    ok = isinstance(value, Mapping) and value.get("type") == "default"
    w.need(ok, Level.API, path, "cachePoint must be {\"type\": \"default\"} (optional \"ttl\": \"5m\" or \"1h\")")
    if isinstance(value, Mapping) and "ttl" in value:
        w.need(value["ttl"] in CACHE_POINT_TTLS, Level.API, f"{path}.ttl",
               f"must be one of {', '.join(CACHE_POINT_TTLS)}, not {value['ttl']!r}")


def _blocks(w: Walk, blocks: Any, kinds: tuple[str, ...], path: str, required: bool) -> None:
    if blocks is None and not required:
        return
    if isinstance(blocks, str) and blocks and not path.endswith("tools"):
        # Claude Messages shape: well-formed, refused by the API (the simulator says so), not malformed input
        w.need(False, Level.API, path, STRING_CONTENT)
        return
    shown = json_kind(blocks) if not isinstance(blocks, list) else "empty"
    if not w.need(isinstance(blocks, list) and (blocks or not required), Level.STRUCTURE, path,
                  f"must be a {'non-empty ' if required else ''}list of blocks, not {shown}"):
        return
    for j, block in enumerate(blocks):
        kind = _union(w, block, kinds, f"{path}[{j}]")
        if kind == "cachePoint":
            _cache_point(w, block[kind], f"{path}[{j}].cachePoint")
        elif kind == "text":
            w.need(isinstance(block["text"], str), Level.STRUCTURE, f"{path}[{j}].text",
                   f"must be a string, not {json_kind(block['text'])}")


def walk_bedrock(w: Walk, body: Mapping[str, Any], model_given: bool) -> None:
    """Record the issues of a Converse body on ``w`` (see the module docstring for the levels)."""
    w.keys(body)
    model = body.get("modelId")
    w.need(isinstance(model, str) and model or (model is None and model_given), Level.STRUCTURE, "body.modelId",
           "missing (pass --model)" if model is None else f"must be a model id string, not {model!r}")
    messages = body.get("messages")
    shown = json_kind(messages) if not isinstance(messages, list) else "empty"
    if not w.need(isinstance(messages, list) and messages, Level.STRUCTURE, "body.messages",
                  f"must be a non-empty list of messages, not {shown}"):
        return
    for i, message in enumerate(messages):
        path = f"body.messages[{i}]"
        if not w.need(isinstance(message, Mapping), Level.STRUCTURE, path, "must be an object"):
            continue
        w.need(message.get("role") in ("user", "assistant"), Level.STRUCTURE, f"{path}.role",
               f"must be 'user' or 'assistant', not {message.get('role')!r}")
        _blocks(w, message.get("content"), CONTENT_KINDS, f"{path}.content", required=True)
    _blocks(w, body.get("system"), SYSTEM_KINDS, "body.system", required=False)
    tool_config = body.get("toolConfig")
    if tool_config is not None and w.need(isinstance(tool_config, Mapping), Level.STRUCTURE, "body.toolConfig",
                                          "must be an object"):
        _blocks(w, tool_config.get("tools"), TOOL_KINDS, "body.toolConfig.tools", required=True)
