"""OpenAI Responses body -> OpenAI Chat Completions body: the canonical view promptcache reads Responses through.

The guard, ``simulate``, ``verify``, ``diff``, the local server and the chat
template all handle Chat Completions bodies; an ``openai.responses`` body is
translated once, here, instead of each code path learning the Responses shape.
Source of the Responses side: the ``openai`` 3.57 SDK's type definitions
(``openai/types/responses/response_create_params.py``,
``response_input_item_param.py``, ``easy_input_message_param.py``,
``response_output_message_param.py``, ``function_tool_param.py``).

Mapping (R = Responses, C = Chat Completions), order kept, key order kept:

- ``instructions`` -> a leading ``system`` message (the API inserts it as a
  system or developer message; ``system`` renders as the Chat app's system
  prompt does, so the same prompt sent through either API renders identically);
  a string ``input`` -> one ``user`` message.
- message items (with or without ``"type": "message"``) -> messages of the same
  role; ``input_text`` / ``output_text`` parts -> ``text`` parts
  (``prompt_cache_breakpoint`` kept), ``input_image`` -> ``image_url``,
  ``input_file`` -> ``file``, ``refusal`` -> ``refusal``; a string content stays a string.
- ``function_call`` items -> ``tool_calls`` of the assistant message they follow
  (a new assistant message when none does); ``function_call_output`` -> a
  ``tool`` message; ``reasoning`` items are dropped (not rendered).
- flat function tools ``{"type", "name", "description", "parameters", "strict"}``
  -> ``{"type": "function", "function": {...}}`` (``"type"`` last when it was last);
  built-in tools (``web_search``, ``file_search``, ...) are dropped.
- ``max_output_tokens`` -> ``max_completion_tokens``, ``reasoning.effort`` ->
  ``reasoning_effort``, ``text.verbosity`` -> ``verbosity``, ``text.format`` ->
  ``response_format``, ``tool_choice`` function -> the Chat form; ``temperature``,
  ``top_p``, ``stream``, ``service_tier``, ``parallel_tool_calls``, ``store``,
  ``metadata``, the ``prompt_cache_*`` keys, ``safety_identifier``, ``user`` as they are.
- ``previous_response_id`` and ``conversation`` name server-side state: the
  chained prefix is not in the body, so they are dropped with a note; resolve a
  trace's chains first (:mod:`promptcache.trace.chain`).

Everything dropped is in :attr:`ConversionResult.dropped` (R path -> value),
except items' ``id`` and ``status`` (item metadata, not prompt content).
The path map: :attr:`ConversionResult.sources` (per C message, the R paths of
its parts: ``instructions``, ``input``, ``input[2].content``,
``input[2].content[0].text``, ``input[3]`` for a call, ``input[4].output``) and
:attr:`ConversionResult.tool_sources`; :meth:`ConversionResult.source_path`
turns a divergence found at ``messages[3].content`` into ``input[2].content``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptcache.convert._result import ConversionResult, Run
from promptcache.providers.apis import OPENAI_CHAT

__all__ = ["responses_to_chat"]

_PASS = ("stream", "service_tier", "temperature", "top_p", "parallel_tool_calls", "prompt_cache_key",
         "prompt_cache_options", "prompt_cache_retention", "metadata", "store", "safety_identifier", "user",
         "moderation")
_STATE = {"previous_response_id": "the earlier response's input and output", "conversation": "the conversation's items"}
_RENDERED = ("message", "function_call", "function_call_output", "reasoning")


def _part(part: Any, path: str, run: Run) -> tuple[dict[str, Any], str]:
    """One R content part -> (C part, its source path)."""
    kind = part.get("type") if isinstance(part, Mapping) else None
    if kind in ("input_text", "output_text"):
        out = {"type": "text", "text": part.get("text")}
        if "prompt_cache_breakpoint" in part:
            out["prompt_cache_breakpoint"] = run.val(part["prompt_cache_breakpoint"])
        for key in part:
            if key not in ("type", "text", "prompt_cache_breakpoint") and part[key] not in (None, []):
                run.dropped[f"{path}.{key}"] = part[key]
        return out, f"{path}.text"
    if kind == "refusal":
        return {"type": "refusal", "refusal": part.get("refusal")}, path
    if kind == "input_image":
        if not isinstance(part.get("image_url"), str):
            raise ValueError(f"{path}: an input_image by file_id has no Chat Completions counterpart (send image_url)")
        image: dict[str, Any] = {"url": part["image_url"]}
        if part.get("detail") is not None:
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}, path
    if kind == "input_file":
        file = {key: part[key] for key in ("filename", "file_data", "file_id") if isinstance(part.get(key), str)}
        if "file_url" in part or not file.keys() - {"filename"}:
            raise ValueError(f"{path}: an input_file needs file_data or file_id to convert (file_url has no "
                             "Chat Completions counterpart)")
        return {"type": "file", "file": file}, path
    raise ValueError(f"{path}: content part type {kind!r} cannot be converted to a Chat Completions part")


def _content(content: Any, path: str, run: Run) -> tuple[Any, tuple[str, ...]]:
    if isinstance(content, str):
        return content, (path,)
    if not isinstance(content, list):
        raise ValueError(f"{path}: content must be a string or a list of parts")
    parts = [_part(p, f"{path}[{j}]", run) for j, p in enumerate(content)]
    return [p for p, _ in parts], tuple(s for _, s in parts)


def _tool(tool: Any, k: int, run: Run) -> dict[str, Any] | None:
    if not isinstance(tool, Mapping):
        raise ValueError(f"tools[{k}]: a tool must be an object")
    if tool.get("type") != "function":
        run.dropped[f"tools[{k}]"] = tool
        run.notes.append(f"tools[{k}]: built-in tool {tool.get('type')!r} has no Chat Completions counterpart; dropped")
        return None
    if not isinstance(tool.get("name"), str):
        raise ValueError(f"tools[{k}]: a function tool needs a 'name'")
    fn: dict[str, Any] = {}
    for key, value in tool.items():
        if key in ("name", "description", "parameters", "strict"):
            fn[key] = run.val(value)
        elif key != "type":
            run.dropped[f"tools[{k}].{key}"] = value
    return {"function": fn, "type": "function"} if list(tool)[-1] == "type" else {"type": "function", "function": fn}


def _items(body: Mapping[str, Any], run: Run) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        messages.append({"role": "system", "content": instructions})
        run.sources.append(("instructions",))
    data = body.get("input")
    if isinstance(data, str):
        messages.append({"role": "user", "content": data})
        run.sources.append(("input",))
        return messages
    if not isinstance(data, list):
        raise ValueError("input: a Responses body needs input (a string or a list of items)")
    for k, item in enumerate(data):
        path = f"input[{k}]"
        kind = item.get("type", "message" if "role" in item else None) if isinstance(item, Mapping) else None
        if kind not in _RENDERED:
            what = ("an item_reference names an item stored at OpenAI; its content is not in the body"
                    if kind == "item_reference" else f"{kind!r} items have no Chat Completions counterpart "
                    "(promptcache renders messages, function calls and their outputs)")
            raise ValueError(f"{path}: {what}")
        if kind == "reasoning":
            run.dropped[path] = item
            continue
        if kind == "function_call":
            call = {"id": item.get("call_id"), "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments")}}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
                run.sources[-1] += (path,)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
                run.sources.append((path,))
            continue
        if kind == "function_call_output":
            output = item.get("output")
            content, paths = _content(output, f"{path}.output", run)
            if isinstance(content, list) and any(p["type"] != "text" for p in content):
                raise ValueError(f"{path}.output: a function_call_output with images or files has no Chat "
                                 "Completions tool-message counterpart")
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": content})
            run.sources.append(paths)
            continue
        content, paths = _content(item.get("content"), f"{path}.content", run)
        if item.get("phase") is not None:  # an item's id and status are not prompt content
            run.dropped[f"{path}.phase"] = item["phase"]
        messages.append({"role": item.get("role"), "content": content})
        run.sources.append(paths)
    return messages


def _params(body: Mapping[str, Any], out: dict[str, Any], run: Run) -> None:
    for key, value in body.items():
        if key in ("model", "input", "instructions", "tools"):
            continue
        if key in _PASS:
            out[key] = run.val(value)
        elif key == "max_output_tokens":
            out["max_completion_tokens"] = value
        elif key in ("reasoning", "text") and isinstance(value, Mapping):
            for sub, setting in value.items():
                if key == "reasoning" and sub == "effort":
                    out["reasoning_effort"] = setting
                elif key == "text" and sub == "verbosity":
                    out["verbosity"] = setting
                elif key == "text" and sub == "format" and isinstance(setting, Mapping):
                    out["response_format"] = _format(setting, run)
                elif setting is not None:
                    run.dropped[f"{key}.{sub}"] = setting
        elif key == "tool_choice":
            if isinstance(value, str):
                out["tool_choice"] = value
            elif isinstance(value, Mapping) and value.get("type") == "function":
                out["tool_choice"] = {"type": "function", "function": {"name": value.get("name")}}
            else:
                run.dropped[key] = value
        elif key in _STATE and value is not None:
            run.dropped[key] = value
            run.notes.append(f"{key}: {_STATE[key]} are not in this body; the chained prefix is unknown "
                             "(resolve the chain first: promptcache.trace.chain)")
        elif value is not None:
            run.dropped[key] = value


def _format(fmt: Mapping[str, Any], run: Run) -> dict[str, Any]:
    """``text.format`` -> ``response_format`` (json_schema's name/schema/strict/description move into ``json_schema``)."""
    if fmt.get("type") != "json_schema":
        return dict(fmt)
    return {"type": "json_schema", "json_schema": {k: run.val(v) for k, v in fmt.items() if k != "type"}}


def responses_to_chat(body: Mapping[str, Any], *, extra_params: Mapping[str, Any] | None = None,
                      copy: bool = True) -> ConversionResult:
    """The Chat Completions view of an OpenAI Responses body (see the module docstring for the mapping).

    Args:
        body: the Responses request body (not modified).
        extra_params: Chat-only parameters to add.
        copy: deep-copy values into the result (``False`` shares them; read-only use).

    Returns:
        A :class:`ConversionResult` whose body has the Chat SDK's key order, with the path map back to
        the Responses body (``sources``, ``tool_sources``, :meth:`~ConversionResult.source_path`).

    Raises:
        ValueError: naming the Responses path of what has no Chat counterpart (a built-in tool's call or
            output item, an ``item_reference``, an image by ``file_id``, an image in a function output).
    """
    if not isinstance(body, Mapping):
        raise ValueError("a Responses body must be an object")
    run = Run(copy)
    out: dict[str, Any] = {"model": body.get("model")}
    messages = _items(body, run)
    out["messages"] = run.val(messages) if run.copy else messages
    tool_sources: list[str] = []
    if body.get("tools") is not None:
        if not isinstance(body["tools"], list):
            raise ValueError("tools: must be a list of tool definitions")
        tools = []
        for k, tool in enumerate(body["tools"]):
            converted = _tool(tool, k, run)
            if converted is not None:
                tools.append(converted)
                tool_sources.append(f"tools[{k}]")
        out["tools"] = tools
    _params(body, out, run)
    return run.result(OPENAI_CHAT, out, extra_params, tool_sources=tuple(tool_sources))
