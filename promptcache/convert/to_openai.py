"""Anthropic Messages body -> OpenAI Chat Completions body (see :mod:`promptcache.convert`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from promptcache.providers.apis import OPENAI_CHAT
from promptcache.convert._result import A_CHOICE, A_PASS, SEPARATOR, ConversionResult, Run, map_keys

_TOOL_KEYS = {"name": "name", "description": "description", "input_schema": "parameters", "strict": "strict"}


def _a_tool_to_o(tool: Mapping[str, Any], k: int, run: Run) -> dict[str, Any]:
    if not isinstance(tool, Mapping):
        raise ValueError(f"tools[{k}]: a tool must be an object")
    if tool.get("type") not in (None, "custom"):
        raise ValueError(f"tools[{k}]: server tool {tool.get('type')!r} has no OpenAI Chat Completions counterpart")
    if "name" not in tool:
        raise ValueError(f"tools[{k}]: the tool has no name")
    fn = map_keys(tool, _TOOL_KEYS, f"tools[{k}]", run, skip=("type",))
    type_last = list(tool)[-1] == "type"
    return {"function": fn, "type": "function"} if type_last else {"type": "function", "function": fn}


def _a_image_to_o(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    source = block.get("source") or {}
    if source.get("type") == "base64":
        return {"type": "image_url", "image_url": {"url": f"data:{source['media_type']};base64,{source['data']}"}}
    if source.get("type") == "url":
        return {"type": "image_url", "image_url": {"url": source["url"]}}
    raise ValueError(f"{path}: image source {source.get('type')!r} cannot be converted (use base64 or url)")


def _a_document_to_o(block: Mapping[str, Any], path: str, run: Run) -> dict[str, Any]:
    source = block.get("source") or {}
    if source.get("type") != "base64" or source.get("media_type") != "application/pdf":
        raise ValueError(f"{path}: only base64 PDF documents convert to OpenAI file parts")
    file: dict[str, Any] = {}
    if "title" in block:
        file["filename"] = block["title"]
    file["file_data"] = f"data:application/pdf;base64,{source['data']}"
    for key in block:
        if key not in ("type", "source", "title"):
            run.dropped[f"{path}.{key}"] = block[key]
    return {"type": "file", "file": file}


def _a_parts(blocks: list[tuple[str, Mapping[str, Any]]], shape: str, run: Run) -> tuple[Any, tuple[str, ...]]:
    """(path, block) text/image/document blocks -> an OpenAI content value and its source paths."""
    parts: list[dict[str, Any]] = []
    paths: list[str] = []
    for path, block in blocks:
        if "cache_control" in block:
            run.dropped[f"{path}.cache_control"] = block["cache_control"]
        kind = block.get("type")
        if kind == "text":
            parts.append({"type": "text", "text": block["text"]})
            paths.append(f"{path}.text")
            if "citations" in block:
                run.dropped[f"{path}.citations"] = block["citations"]
        elif kind == "image":
            parts.append(_a_image_to_o(block, path))
            paths.append(path)
        elif kind == "document":
            parts.append(_a_document_to_o(block, path, run))
            paths.append(path)
        else:
            raise ValueError(f"{path}: {kind!r} block cannot be converted to an OpenAI content part")
    if shape == "flat" and all(p["type"] == "text" for p in parts):
        return SEPARATOR.join(p["text"] for p in parts), tuple(paths)
    return parts, tuple(paths)


def _content_blocks(content: Any, path: str) -> list[tuple[str, Mapping[str, Any]]]:
    if not isinstance(content, list) or not all(isinstance(b, Mapping) for b in content):
        raise ValueError(f"{path}: content must be a string or a list of blocks")
    return [(f"{path}[{j}]", block) for j, block in enumerate(content)]


def _a_tool_result_to_o(block: Mapping[str, Any], path: str, shape: str, run: Run) -> dict[str, Any]:
    for key in ("cache_control", "is_error"):
        if key in block:
            run.dropped[f"{path}.{key}"] = block[key]
    content = block.get("content", "")
    if isinstance(content, list):
        blocks = _content_blocks(content, f"{path}.content")
        if any(b.get("type") != "text" for _, b in blocks):
            raise ValueError(f"{path}: a tool_result with images or documents has no OpenAI tool-message counterpart")
        content, _ = _a_parts(blocks, shape, run)
    run.sources.append((f"{path}.content",))
    return {"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": content}


def _a_message_to_o(message: Mapping[str, Any], i: int, shape: str, run: Run) -> list[dict[str, Any]]:
    path = f"messages[{i}]"
    if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant", "system") or \
            (i == 0 and message.get("role") == "system"):
        raise ValueError(f"{path}: Anthropic messages need role 'user' or 'assistant' (or 'system' mid-conversation)")
    role, content = message["role"], message.get("content")
    if isinstance(content, str):
        run.sources.append((f"{path}.content",))
        return [{"role": role, "content": content}]
    blocks = _content_blocks(content, f"{path}.content")
    out: list[dict[str, Any]] = []
    if role == "system":  # a mid-conversation system message (Opus 4.8+, Opus 5, Fable 5, Mythos 5): text only
        if any(b.get("type") != "text" for _, b in blocks):
            raise ValueError(f"{path}: a system message takes text blocks only")
        value, paths = _a_parts(blocks, shape, run)
        run.sources.append(paths)
        return [{"role": "system", "content": value}]
    if role == "user":
        results = [(p, b) for p, b in blocks if b.get("type") == "tool_result"]
        rest = [(p, b) for p, b in blocks if b.get("type") != "tool_result"]
        if results and blocks[: len(results)] != results:
            raise ValueError(f"{path}: tool_result blocks must come first in the user turn "
                             f"(OpenAI needs tool messages right after the assistant turn)")
        out.extend(_a_tool_result_to_o(b, p, shape, run) for p, b in results)
        if rest:
            value, paths = _a_parts(rest, "flat" if results else shape, run)
            run.sources.append(paths)
            out.append({"role": "user", "content": value})
        return out
    texts, calls, call_paths = [], [], []
    for p, block in blocks:
        kind = block.get("type")
        if kind == "text":
            if calls:
                run.notes.append(f"{p}: text after a tool_use is rendered before the tool calls in OpenAI's shape")
            texts.append((p, block))
        elif kind == "tool_use":
            if "cache_control" in block:
                run.dropped[f"{p}.cache_control"] = block["cache_control"]
            arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
            calls.append({"id": block.get("id"), "type": "function",
                          "function": {"name": block.get("name"), "arguments": arguments}})
            call_paths.append(p)
        elif kind in ("thinking", "redacted_thinking"):
            run.dropped[p] = block
        else:
            raise ValueError(f"{p}: {kind!r} block in an assistant turn cannot be converted")
    value: Any = None
    paths: tuple[str, ...] = ()
    if texts:
        value, paths = _a_parts(texts, shape, run)
    elif not calls:
        raise ValueError(f"{path}: the assistant turn has no text or tool_use block left to convert")
    run.sources.append(paths + tuple(call_paths))
    converted: dict[str, Any] = {"role": "assistant", "content": value}
    if calls:
        converted["tool_calls"] = calls
    return [converted]


def _a_system_to_o(system: Any, shape: str, run: Run) -> dict[str, Any] | None:
    if system is None or system == []:
        return None
    if isinstance(system, str):
        run.sources.append(("system",))
        return {"role": "system", "content": system}
    blocks = _content_blocks(system, "system")
    for p, block in blocks:
        if block.get("type") != "text":
            raise ValueError(f"{p}: system blocks must be text blocks")
    value, paths = _a_parts(blocks, shape, run)
    run.sources.append(paths)
    return {"role": "system", "content": value}


def _a_params_to_o(body: Mapping[str, Any], out: dict[str, Any], run: Run) -> None:
    for key, value in body.items():
        if key in ("messages", "model", "system", "tools"):
            continue
        if key == "max_tokens":
            out["max_completion_tokens"] = value
        elif key in A_PASS:
            out[key] = value
        elif key == "stop_sequences":
            out["stop"] = run.val(value)
        elif key == "tool_choice":
            choice = value.get("type") if isinstance(value, Mapping) else None
            if choice == "tool":
                out["tool_choice"] = {"type": "function", "function": {"name": value.get("name")}}
            elif choice in A_CHOICE:
                out["tool_choice"] = A_CHOICE[choice]
            else:
                raise ValueError(f"tool_choice: {value!r} cannot be converted")
            if "disable_parallel_tool_use" in value:
                out["parallel_tool_calls"] = not value["disable_parallel_tool_use"]
        elif key == "output_config" and isinstance(value, Mapping):
            for sub, setting in value.items():
                if sub == "effort":
                    out["reasoning_effort"] = setting
                elif sub == "format" and isinstance(setting, Mapping) and setting.get("type") == "json_schema":
                    out["response_format"] = {"type": "json_schema",
                                              "json_schema": {"name": "output", "schema": run.val(setting.get("schema"))}}
                    run.notes.append("output_config.format: the OpenAI json_schema needs a name; 'output' is used")
                else:
                    run.dropped[f"output_config.{sub}"] = setting
        else:
            run.dropped[key] = value


def anthropic_to_openai(body: Mapping[str, Any], *, shape: Literal["flat", "keep"] = "flat",
                        extra_params: Mapping[str, Any] | None = None, copy: bool = True) -> ConversionResult:
    """Convert an Anthropic Messages body to an OpenAI Chat Completions body.

    Args:
        body: the Anthropic request body (not modified).
        shape: ``flat`` joins text blocks (and system blocks) with ``"\\n\\n"``
            into strings; ``keep`` keeps lists as lists of content parts.
        extra_params: OpenAI-only parameters to add (e.g. ``prompt_cache_key``).
        copy: deep-copy values into the result (``False`` shares them; read-only use).

    Returns:
        A :class:`ConversionResult` whose body has the OpenAI SDK's key order.

    Raises:
        ValueError: naming the message index / path of what cannot be converted
            (server tools, images inside tool results, a tool_result after text, ...).
    """
    if shape not in ("flat", "keep"):
        raise ValueError(f"shape must be 'flat' or 'keep', not {shape!r}")
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
        raise ValueError("an Anthropic body needs a 'messages' list")
    run = Run(copy)
    out: dict[str, Any] = {"model": body.get("model")}
    messages: list[dict[str, Any]] = []
    system = _a_system_to_o(body.get("system"), shape, run)
    if system is not None:
        messages.append(system)
    for i, message in enumerate(body["messages"]):
        messages.extend(_a_message_to_o(message, i, shape, run))
    out["messages"] = run.val(messages) if run.copy else messages
    if "cache_control" in body:
        run.dropped["cache_control"] = body["cache_control"]
    if body.get("tools") is not None:
        out["tools"] = [_a_tool_to_o(tool, k, run) for k, tool in enumerate(body["tools"])]
    _a_params_to_o({k: v for k, v in body.items() if k != "cache_control"}, out, run)
    return run.result(OPENAI_CHAT, out, extra_params)
