"""OpenAI Chat Completions body -> OpenAI Responses body (``promptcache convert --to openai.responses``).

The inverse of :mod:`promptcache.convert.from_responses`, for traces moved to
the Responses API. Target shapes: the ``openai`` 3.57 SDK's
``openai/types/responses/response_create_params.py``,
``easy_input_message_param.py``, ``response_input_item_param.py`` and
``function_tool_param.py``.

- The first message, when it is ``system`` or ``developer``, -> ``instructions``
  (text parts joined with ``"\\n\\n"``); later system/developer messages stay input messages.
- user/system/developer messages -> ``{"role", "content"}`` items (``text`` ->
  ``input_text``, ``image_url`` -> ``input_image`` with ``detail`` ``"auto"`` when
  unset (the SDK requires it), ``file`` -> ``input_file``); assistant messages
  -> ``{"role": "assistant", "content"}`` (parts -> ``output_text``) followed by one
  ``function_call`` item per tool call; ``tool`` messages -> ``function_call_output``.
- function tools -> flat ``{"type": "function", "name", "description",
  "parameters", "strict"}``; ``strict: false`` is added when the Chat tool has
  none (Chat's default; the Responses API's is strict).
- ``max_completion_tokens`` / ``max_tokens`` -> ``max_output_tokens``,
  ``reasoning_effort`` -> ``reasoning.effort``, ``verbosity`` -> ``text.verbosity``,
  ``response_format`` -> ``text.format``, ``tool_choice`` function -> the flat form.
- Dropped (reported): ``stop``, ``n``, ``seed``, penalties, ``logit_bias``,
  ``logprobs``, ``audio``, ``modalities``, ``prediction``, ``stream_options``,
  ``functions``, ``web_search_options``, message ``name`` / ``refusal``, non-function tools.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptcache.convert._result import SEPARATOR, ConversionResult, Run
from promptcache.providers.apis import OPENAI_RESPONSES

__all__ = ["chat_to_responses"]

_PASS = ("stream", "service_tier", "temperature", "top_p", "parallel_tool_calls", "prompt_cache_key",
         "prompt_cache_options", "prompt_cache_retention", "metadata", "store", "safety_identifier", "user",
         "top_logprobs", "moderation")


def _part(part: Any, path: str, assistant: bool) -> dict[str, Any]:
    if isinstance(part, str):
        part = {"type": "text", "text": part}
    kind = part.get("type") if isinstance(part, Mapping) else None
    if kind == "text":
        out = {"type": "output_text" if assistant else "input_text", "text": part.get("text")}
        if "prompt_cache_breakpoint" in part and not assistant:
            out["prompt_cache_breakpoint"] = part["prompt_cache_breakpoint"]
        return out
    if kind == "refusal" and assistant:
        return {"type": "refusal", "refusal": part.get("refusal")}
    if kind == "image_url" and not assistant:
        image = part.get("image_url") or {}
        return {"type": "input_image", "image_url": image.get("url"), "detail": image.get("detail") or "auto"}
    if kind == "file" and not assistant:
        return {"type": "input_file", **dict(part.get("file") or {})}
    raise ValueError(f"{path}: content part type {kind!r} cannot be converted to a Responses part")


def _content(content: Any, path: str, assistant: bool) -> Any:
    if isinstance(content, str) or content is None:
        return content
    if not isinstance(content, list):
        raise ValueError(f"{path}: content must be a string or a list of parts")
    return [_part(p, f"{path}[{j}]", assistant) for j, p in enumerate(content)]


def _text(content: Any, path: str, run: Run) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    if not parts or any(not isinstance(p, Mapping) or p.get("type") != "text" for p in parts):
        raise ValueError(f"{path}: instructions must be text")
    run.notes.append(f"{path}: text parts joined with {SEPARATOR!r} into instructions")
    return SEPARATOR.join(str(p.get("text", "")) for p in parts)


def _items(messages: list[Any], run: Run) -> tuple[str | None, list[dict[str, Any]]]:
    instructions = None
    items: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        path = f"messages[{i}]"
        if not isinstance(message, Mapping):
            raise ValueError(f"{path}: a message must be an object")
        role = message.get("role")
        for key in ("name", "refusal", "audio"):
            if message.get(key) is not None:
                run.dropped[f"{path}.{key}"] = message[key]
        if i == 0 and role in ("system", "developer"):
            instructions = _text(message.get("content"), f"{path}.content", run)
            if role == "developer":
                run.notes.append(f"{path}: the developer message became instructions")
            continue
        if role == "tool":
            content = message.get("content")
            output = content if isinstance(content, str) else _content(content, f"{path}.content", False)
            items.append({"type": "function_call_output", "call_id": message.get("tool_call_id"),
                          "output": run.val(output)})
        elif role in ("user", "system", "developer", "assistant"):
            assistant = role == "assistant"
            content = _content(message.get("content"), f"{path}.content", assistant)
            if content not in (None, "", []):
                items.append({"role": role, "content": run.val(content)})
            for j, call in enumerate((message.get("tool_calls") or []) if assistant else []):
                fn = call.get("function") if isinstance(call, Mapping) else None
                if not isinstance(fn, Mapping):
                    raise ValueError(f"{path}.tool_calls[{j}]: only function tool calls convert")
                items.append({"type": "function_call", "call_id": call.get("id"), "name": fn.get("name"),
                              "arguments": fn.get("arguments")})
        else:
            raise ValueError(f"{path}: role {role!r} cannot be converted")
    return instructions, items


def _tool(tool: Any, k: int, run: Run) -> dict[str, Any] | None:
    if not isinstance(tool, Mapping) or tool.get("type") != "function" or not isinstance(tool.get("function"), Mapping):
        run.dropped[f"tools[{k}]"] = tool
        return None
    fn = dict(run.val(tool["function"]))
    fn.setdefault("strict", False)
    return {**fn, "type": "function"} if list(tool)[0] == "function" else {"type": "function", **fn}


def _params(body: Mapping[str, Any], out: dict[str, Any], run: Run) -> None:
    text: dict[str, Any] = {}
    for key, value in body.items():
        if key in ("model", "messages", "tools"):
            continue
        if key in _PASS:
            out[key] = run.val(value)
        elif key in ("max_completion_tokens", "max_tokens"):
            if "max_output_tokens" in out:
                run.dropped[key] = value
            else:
                out["max_output_tokens"] = value
        elif key == "reasoning_effort":
            out["reasoning"] = {"effort": value}
        elif key == "verbosity":
            text["verbosity"] = value
        elif key == "response_format" and isinstance(value, Mapping):
            schema = value.get("json_schema") if value.get("type") == "json_schema" else None
            text["format"] = {"type": "json_schema", **run.val(schema)} if isinstance(schema, Mapping) else dict(value)
        elif key == "tool_choice":
            if isinstance(value, Mapping) and value.get("type") == "function":
                out[key] = {"type": "function", "name": (value.get("function") or {}).get("name")}
            elif isinstance(value, str):
                out[key] = value
            else:
                run.dropped[key] = value
        elif value is not None:
            run.dropped[key] = value
    if text:
        out["text"] = text


def chat_to_responses(body: Mapping[str, Any], *, extra_params: Mapping[str, Any] | None = None,
                      copy: bool = True) -> ConversionResult:
    """Convert an OpenAI Chat Completions body to an OpenAI Responses body (see the module docstring).

    Returns:
        A :class:`ConversionResult` whose body has the Responses SDK's key order (``sources`` is empty).

    Raises:
        ValueError: naming the message path of what cannot be converted (audio parts, a non-function tool
            call, instructions that are not text).
    """
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
        raise ValueError("an OpenAI chat body needs a 'messages' list")
    run = Run(copy)
    out: dict[str, Any] = {"model": body.get("model")}
    instructions, items = _items(body["messages"], run)
    out["input"] = items
    if instructions is not None:
        out["instructions"] = instructions
    if body.get("tools") is not None:
        out["tools"] = [t for t in (_tool(tool, k, run) for k, tool in enumerate(body["tools"])) if t is not None]
        unset = [k for k, tool in enumerate(body["tools"]) if isinstance(tool, Mapping)
                 and isinstance(tool.get("function"), Mapping) and "strict" not in tool["function"]]
        if unset:
            run.notes.append(f"tools: strict: false added to {len(unset)} function tool{'s' if len(unset) > 1 else ''} "
                             "without one (Chat's default; the Responses API's is strict)")
    _params(body, out, run)
    return run.result(OPENAI_RESPONSES, out, extra_params)
