"""OpenAI Chat Completions body -> Anthropic Messages body (see :mod:`promptcache.convert`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from promptcache.providers.apis import ANTHROPIC_MESSAGES
from promptcache.convert._result import A_PASS, O_CHOICE, ConversionResult, Run, map_keys

_TOOL_KEYS = {"name": "name", "description": "description", "parameters": "input_schema", "strict": "strict"}


def _o_part_to_a(part: Any, path: str, run: Run) -> dict[str, Any]:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    kind = part.get("type") if isinstance(part, Mapping) else None
    if kind == "text":
        if "prompt_cache_breakpoint" in part:
            run.dropped[f"{path}.prompt_cache_breakpoint"] = part["prompt_cache_breakpoint"]
        return {"type": "text", "text": part.get("text", "")}
    if kind == "image_url":
        image = part.get("image_url") or {}
        url = image.get("url", "")
        if "detail" in image:
            run.dropped[f"{path}.image_url.detail"] = image["detail"]
        if url.startswith("data:") and ";base64," in url:
            media_type, data = url[5:].split(";base64,", 1)
            return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
        return {"type": "image", "source": {"type": "url", "url": url}}
    if kind == "file":
        file = part.get("file") or {}
        data = file.get("file_data", "")
        prefix = "data:application/pdf;base64,"
        if not data.startswith(prefix):
            raise ValueError(f"{path}: only inline base64 PDF files convert to Anthropic documents")
        block: dict[str, Any] = {"type": "document",
                                 "source": {"type": "base64", "media_type": "application/pdf", "data": data[len(prefix):]}}
        if "filename" in file:
            block["title"] = file["filename"]
        return block
    raise ValueError(f"{path}: content part type {kind!r} cannot be converted to an Anthropic block")


def _o_content_to_a(content: Any, path: str, shape: str, run: Run) -> tuple[Any, tuple[str, ...]]:
    if isinstance(content, str):
        if shape == "keep":
            return content, (path,)
        return [{"type": "text", "text": content}], (path,)
    if not isinstance(content, list) or not content:
        raise ValueError(f"{path}: content must be a string or a non-empty list of parts")
    return ([_o_part_to_a(p, f"{path}[{j}]", run) for j, p in enumerate(content)],
            tuple(f"{path}[{j}]" for j in range(len(content))))


def _o_tool_to_a(tool: Mapping[str, Any], k: int, run: Run) -> dict[str, Any]:
    if not isinstance(tool, Mapping) or tool.get("type") != "function" or not isinstance(tool.get("function"), Mapping):
        raise ValueError(f"tools[{k}]: only function tools convert to Anthropic tools")
    fn = tool["function"]
    if "name" not in fn:
        raise ValueError(f"tools[{k}]: the function has no name")
    out = map_keys(fn, _TOOL_KEYS, f"tools[{k}].function", run)
    if "input_schema" not in out:
        out["input_schema"] = {"type": "object", "properties": {}}
        run.notes.append(f"tools[{k}]: no parameters; an empty object schema is used")
    if list(tool)[0] == "function":
        out["type"] = "custom"  # carries the wrapper order {"function", "type"} (see the module docstring)
    return out


def _o_call_to_a(call: Mapping[str, Any], path: str, run: Run) -> dict[str, Any]:
    fn = call.get("function") or {}
    arguments = fn.get("arguments")
    try:
        parsed = json.loads(arguments) if arguments not in (None, "") else {}
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: arguments are not JSON ({exc}); Anthropic tool_use input must be an object") from exc
    if not isinstance(parsed, dict):
        raise ValueError(f"{path}: arguments must be a JSON object for an Anthropic tool_use input")
    if arguments and json.dumps(parsed, ensure_ascii=False) != arguments:
        run.notes.append(f"{path}.function.arguments: re-serialised with default separators on the way back")
    return {"type": "tool_use", "id": call.get("id"), "name": fn.get("name"), "input": parsed}


def _o_system_to_a(system: list[tuple[int, Mapping[str, Any]]], shape: str, run: Run) -> Any:
    blocks: list[dict[str, Any]] = []
    paths: list[str] = []
    for k, message in system:
        if message.get("role") == "developer":
            run.notes.append(f"messages[{k}]: developer role read as system")
        if shape == "keep" and len(system) == 1 and isinstance(message.get("content"), str):
            run.sources.append((f"messages[{k}].content",))
            return message["content"]
        value, part_paths = _o_content_to_a(message.get("content"), f"messages[{k}].content", "blocks", run)
        if any(b["type"] != "text" for b in value):
            raise ValueError(f"messages[{k}]: Anthropic system blocks must be text")
        blocks.extend(value)
        paths.extend(part_paths)
    run.sources.append(tuple(paths))
    return blocks


def _o_params_to_a(body: Mapping[str, Any], out: dict[str, Any], default_max_tokens: int, run: Run) -> None:
    if "max_completion_tokens" in body:
        out["max_tokens"] = body["max_completion_tokens"]
        if "max_tokens" in body:
            run.dropped["max_tokens"] = body["max_tokens"]
    elif "max_tokens" in body:
        out["max_tokens"] = body["max_tokens"]
    else:
        out["max_tokens"] = default_max_tokens
        run.notes.append(f"max_tokens: not set in the OpenAI body; {default_max_tokens} used (Anthropic requires it)")
    choice = body.get("tool_choice")
    if choice is not None:
        if isinstance(choice, Mapping) and choice.get("type") == "function":
            out["tool_choice"] = {"type": "tool", "name": (choice.get("function") or {}).get("name")}
        elif choice in O_CHOICE:
            out["tool_choice"] = {"type": O_CHOICE[choice]}
        else:
            raise ValueError(f"tool_choice: {choice!r} cannot be converted")
    if "parallel_tool_calls" in body:
        out.setdefault("tool_choice", {"type": "auto"})
        out["tool_choice"]["disable_parallel_tool_use"] = not body["parallel_tool_calls"]
        if choice is None:
            run.notes.append("parallel_tool_calls without tool_choice: tool_choice {'type': 'auto'} carries it")
    config: dict[str, Any] = {}
    for key, value in body.items():
        if key in ("model", "messages", "tools", "tool_choice", "parallel_tool_calls", "max_completion_tokens", "max_tokens"):
            continue
        if key in A_PASS:
            out[key] = value
        elif key == "stop":
            out["stop_sequences"] = [value] if isinstance(value, str) else run.val(value)
        elif key == "reasoning_effort":
            config["effort"] = value
        elif key == "response_format" and isinstance(value, Mapping) and value.get("type") == "json_schema":
            schema = value.get("json_schema") or {}
            config["format"] = {"type": "json_schema", "schema": run.val(schema.get("schema"))}
            for sub in schema:
                if sub != "schema":
                    run.dropped[f"response_format.json_schema.{sub}"] = schema[sub]
        else:
            run.dropped[key] = value
    if config:
        out["output_config"] = config


def openai_to_anthropic(body: Mapping[str, Any], *, shape: Literal["blocks", "keep"] = "blocks",
                        extra_params: Mapping[str, Any] | None = None, default_max_tokens: int = 4096,
                        copy: bool = True) -> ConversionResult:
    """Convert an OpenAI Chat Completions body to an Anthropic Messages body.

    Args:
        body: the OpenAI request body (not modified).
        shape: ``blocks`` turns string contents (and the system prompt) into
            lists of one text block, the form that can carry ``cache_control``;
            ``keep`` leaves strings as strings.
        extra_params: Anthropic-only parameters to add (e.g. ``cache_control``, ``thinking``).
        default_max_tokens: ``max_tokens`` when the body sets neither
            ``max_completion_tokens`` nor ``max_tokens`` (reported in ``notes``).
        copy: deep-copy values into the result.

    Raises:
        ValueError: naming the message index of what cannot be converted (a
            system message after the conversation started, tool calls whose
            arguments are not a JSON object, audio parts, ...).
    """
    if shape not in ("blocks", "keep"):
        raise ValueError(f"shape must be 'blocks' or 'keep', not {shape!r}")
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
        raise ValueError("an OpenAI chat body needs a 'messages' list")
    run = Run(copy)
    source = body["messages"]
    leading = 0
    while leading < len(source) and isinstance(source[leading], Mapping) \
            and source[leading].get("role") in ("system", "developer"):
        leading += 1
    out: dict[str, Any] = {"model": body.get("model")}
    system = _o_system_to_a(list(enumerate(source[:leading])), shape, run) if leading else None
    messages: list[dict[str, Any]] = []
    k = leading
    while k < len(source):
        message = source[k]
        path = f"messages[{k}]"
        role = message.get("role") if isinstance(message, Mapping) else None
        for key in ("name", "refusal"):
            if isinstance(message, Mapping) and message.get(key) is not None:
                run.dropped[f"{path}.{key}"] = message[key]
        if role == "tool":
            blocks, paths = [], []
            while k < len(source) and source[k].get("role") == "tool":
                tool_message = source[k]
                content, _ = _o_content_to_a(tool_message.get("content"), f"messages[{k}].content", "keep", run)
                blocks.append({"type": "tool_result", "tool_use_id": tool_message.get("tool_call_id"), "content": content})
                paths.append(f"messages[{k}].content")
                k += 1
            if k < len(source) and source[k].get("role") == "user":
                more, more_paths = _o_content_to_a(source[k].get("content"), f"messages[{k}].content", "blocks", run)
                blocks.extend(more)
                paths.extend(more_paths)
                k += 1
            run.sources.append(tuple(paths))
            messages.append({"role": "user", "content": blocks})
            continue
        if role == "user":
            content, paths = _o_content_to_a(message.get("content"), f"{path}.content", shape, run)
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            text = message.get("content")
            if calls or shape == "blocks" or not isinstance(text, str):
                content, paths = ([], ()) if text in (None, "", []) else \
                    _o_content_to_a(text, f"{path}.content", "blocks", run)
                content = list(content)
                content.extend(_o_call_to_a(c, f"{path}.tool_calls[{j}]", run) for j, c in enumerate(calls))
                paths = tuple(paths) + tuple(f"{path}.tool_calls[{j}]" for j in range(len(calls)))
                if not content:
                    raise ValueError(f"{path}: empty assistant message (no content and no tool calls)")
            else:
                content, paths = text, (f"{path}.content",)
        elif role in ("system", "developer"):
            raise ValueError(f"{path}: a {role} message after the conversation started has no Anthropic "
                             f"counterpart; move it to the start of the messages")
        else:
            raise ValueError(f"{path}: role {role!r} cannot be converted")
        run.sources.append(tuple(paths))
        messages.append({"role": role, "content": content})
        k += 1
    if messages and messages[0]["role"] != "user":
        run.notes.append(f"messages[{leading}]: the conversation starts with an {messages[0]['role']} message; "
                         f"Anthropic expects a user message first")
    out["messages"] = messages
    if system is not None:
        out["system"] = system
    if body.get("tools") is not None:
        out["tools"] = [_o_tool_to_a(tool, k, run) for k, tool in enumerate(body["tools"])]
    _o_params_to_a(body, out, default_max_tokens, run)
    return run.result(ANTHROPIC_MESSAGES, out, extra_params)
