"""OpenAI Responses bodies (``POST /v1/responses``), at the three levels of :mod:`promptcache.trace.shape`.

Source: the type definitions of the installed ``openai`` 3.57 SDK, under
``openai/types/responses/``: ``response_create_params.py`` (the body:
``input`` a string or a list of items, ``instructions``, ``tools``,
``previous_response_id``), ``response_input_item_param.py``,
``easy_input_message_param.py`` and ``response_output_message_param.py``
(input items: messages with or without ``"type": "message"``,
``function_call``, ``function_call_output``, ``reasoning``, and the built-in
tools' items), ``response_input_text_param.py`` / ``response_input_image_param.py`` /
``response_input_file_param.py`` / ``response_output_text_param.py`` (content
parts), ``function_tool_param.py`` (the flat function tool ``{"type":
"function", "name", "description", "parameters", "strict"}``).

Levels (each includes the one before):

- ``STRUCTURE``: ``input`` present, a string or a list of objects; a message
  has a role of ``user``, ``assistant``, ``system`` or ``developer`` and a
  string or list ``content`` of typed parts; ``function_call`` has string
  ``call_id``, ``name`` and ``arguments``; ``function_call_output`` a string or
  list ``output``; ``instructions`` a string.
- ``API``: item and part types the API knows, parts allowed for the role
  (assistant: ``output_text`` / ``refusal``; the others: ``input_*``), function
  tools with valid unique names and object schemas, and call pairing: every
  ``function_call_output`` answers an earlier ``function_call`` ("No tool call
  found for function call output with call_id ...", unless
  ``previous_response_id`` may hold the call) and every ``function_call`` is
  answered later in the input ("No tool output found for function call ...").
- ``TRACE``: only known keys in the SDK's order (:data:`~promptcache.providers.apis.OPENAI_RESPONSES_KEYS`),
  a model, non-empty texts, known item keys, unique call ids, arguments that parse
  as a JSON object valid against the tool's schema, and a last item that is a user
  message or a ``function_call_output``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptcache.trace.shape.walk import OPENAI_TOOL_NAME, Level, Walk, json_kind

ROLES = ("user", "assistant", "system", "developer")
ITEM_TYPES = (
    "message", "function_call", "function_call_output", "reasoning", "item_reference", "file_search_call",
    "computer_call", "computer_call_output", "web_search_call", "tool_search_call", "tool_search_output",
    "additional_tools", "configuration_update", "compaction", "compaction_trigger", "image_generation_call",
    "code_interpreter_call", "local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output",
    "apply_patch_call", "apply_patch_call_output", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
    "mcp_call", "custom_tool_call", "custom_tool_call_output", "program", "program_output",
)
"""Input item types of ``ResponseInputItemParam`` (openai 3.57, ``response_input_item_param.py``)."""
INPUT_PARTS = ("input_text", "input_image", "input_file")
OUTPUT_PARTS = ("output_text", "refusal")
_MESSAGE_KEYS = {"type", "role", "content", "id", "status", "phase"}
_CALL_KEYS = {"type", "call_id", "name", "arguments", "id", "status", "namespace", "caller"}
_OUTPUT_KEYS = {"type", "call_id", "output", "id", "status", "caller", "name", "namespace"}
_TOOL_KEYS = {"type", "name", "description", "parameters", "strict", "defer_loading", "output_schema",
              "allowed_callers", "async"}
_TOOL = "{'type': 'function', 'name': ..., 'description': ..., 'parameters': {...}, 'strict': false}"
_MESSAGE = "A message is {'role': 'user', 'content': '...'} (content: a string or a list of input_text parts)."


def item_type(item: Mapping[str, Any]) -> Any:
    """The type of an input item: its ``type``, or ``"message"`` for an easy input message (a ``role``, no type)."""
    return item.get("type", "message" if "role" in item else None)


def responses_tools(w: Walk, tools: Any, path: str = "body.tools") -> dict[str, Any]:
    """Responses tool definitions; ``{name: parameters}`` of the function tools (built-in tools need only a type).

    A Chat Completions tool (``{"type": "function", "function": {...}}``) lacks the flat ``name``: the
    API's "Missing required parameter: 'tools[0].name'."
    """
    schemas: dict[str, Any] = {}
    if not w.need(isinstance(tools, list), Level.STRUCTURE, path, "tools must be a list of tool definitions"):
        return schemas
    for k, tool in enumerate(tools):
        tpath = f"{path}[{k}]"
        if not w.need(isinstance(tool, Mapping), Level.STRUCTURE, tpath,
                      f"a tool must be an object {_TOOL}, not {json_kind(tool)}"):
            continue
        if not w.field(tool, "type", str, tpath, "a string", "a tool needs a string 'type'", f"A function tool is {_TOOL}.",
                       level=Level.API) or tool["type"] != "function":
            continue
        hint = f"A Responses function tool is flat: {_TOOL}." + (
            " This one is in the Chat Completions shape ({'type': 'function', 'function': {...}})."
            if "function" in tool else "")
        if not w.field(tool, "name", str, tpath, "a string", "a function tool needs a string 'name'", hint,
                       level=Level.API):
            continue
        name = tool["name"]
        if not w.need(OPENAI_TOOL_NAME.match(name), Level.API, f"{tpath}.name",
                      f"tool name {name!r} must match {OPENAI_TOOL_NAME.pattern}"):
            continue
        w.need(name not in schemas, Level.API, tpath, f"duplicate tool name {name!r}")
        params = tool.get("parameters")
        w.need(params is None or isinstance(params, dict) and params.get("type") == "object", Level.API,
               f"{tpath}.parameters", f"parameters of {name!r} must be an object schema (or null)")
        extra = sorted(set(tool) - _TOOL_KEYS)
        w.need(not extra, Level.TRACE, tpath, f"unknown function tool key(s) {extra}; a tool is {_TOOL}")
        schemas[name] = params if params is not None else {"type": "object"}
    return schemas


def _part(w: Walk, part: Any, path: str, role: str) -> None:
    if not w.need(isinstance(part, Mapping), Level.STRUCTURE, path, f"a content part must be an object, not "
                  f"{json_kind(part)}", kind="type", expected="an object such as {'type': 'input_text', 'text': '...'}",
                  got=json_kind(part)):
        return
    if not w.field(part, "type", str, path, "a string", "a content part needs a string 'type'",
                   "Give each content part a type ('input_text', 'input_image', 'output_text', ...)."):
        return
    kind = part["type"]
    allowed = OUTPUT_PARTS if role == "assistant" else INPUT_PARTS
    if not w.need(kind in allowed, Level.API, f"{path}.type", f"Invalid value: '{kind}'. Supported values for "
                  f"{role} content are: {', '.join(repr(a) for a in allowed)}."):
        return
    if kind in ("input_text", "output_text"):
        if w.field(part, "text", str, path, "a string", f"an {kind} part needs a string 'text'",
                   f"A text part is {{'type': '{kind}', 'text': '...'}}."):
            w.need(part["text"].strip(), Level.TRACE, path, "empty text")
    elif kind == "refusal":
        w.field(part, "refusal", str, path, "a string", "a refusal part needs a string 'refusal'")
    elif kind == "input_image":
        w.need(isinstance(part.get("image_url"), str) or isinstance(part.get("file_id"), str), Level.API,
               f"{path}.image_url", "an input_image part needs an image_url (https://... or data:...) or a file_id",
               kind="missing")
    else:
        w.need(any(isinstance(part.get(k), str) for k in ("file_data", "file_id", "file_url")), Level.API,
               f"{path}.file_data", "an input_file part needs file_data, file_id or file_url", kind="missing")


def _message(w: Walk, item: Mapping[str, Any], path: str) -> None:
    role = item.get("role")
    if not w.need(role in ROLES, Level.STRUCTURE, f"{path}.role", f"must be one of {', '.join(ROLES)}, not {role!r}"):
        return
    w.need(set(item) <= _MESSAGE_KEYS, Level.TRACE, path, f"unknown message keys {sorted(set(item) - _MESSAGE_KEYS)}")
    content = item.get("content")
    if content is None:
        w.need(False, Level.STRUCTURE, f"{path}.content", "content is required", kind="missing", hint=_MESSAGE)
        return
    if not w.need(isinstance(content, str | list), Level.STRUCTURE, f"{path}.content",
                  f"content must be a string or a list of parts, not {json_kind(content)}", kind="type",
                  expected="one of a string or array of objects", got=json_kind(content)):
        return
    if isinstance(content, str):
        w.need(content.strip(), Level.TRACE, path, f"empty {role} content")
        return
    w.need(content, Level.TRACE, path, f"empty {role} content")
    for j, part in enumerate(content):
        _part(w, part, f"{path}.content[{j}]", role)


def _call(w: Walk, item: Mapping[str, Any], path: str, schemas: Mapping[str, Any], seen: set[str]) -> str | None:
    """Check a ``function_call`` item; its call id (None when it has none)."""
    hint = "A function call item is {'type': 'function_call', 'call_id': ..., 'name': ..., 'arguments': '{...}'}."
    has_id = w.field(item, "call_id", str, path, "a string", "a function_call needs a string 'call_id'", hint)
    named = w.field(item, "name", str, path, "a string", "a function_call needs a string 'name'", hint)
    if not w.field(item, "arguments", str, path, "a string", "a function_call needs string 'arguments'",
                   "Send the arguments as a JSON-encoded string, e.g. json.dumps(arguments)."):
        return item.get("call_id") if has_id else None
    w.need(set(item) <= _CALL_KEYS, Level.TRACE, path, f"unknown function_call keys {sorted(set(item) - _CALL_KEYS)}")
    w.need(has_id and item["call_id"] not in seen, Level.TRACE, path, f"duplicate or bad call_id {item.get('call_id')!r}")
    if named and w.need(item["name"] in schemas, Level.TRACE, path, f"function_call names unknown tool {item['name']!r}"):
        w.json_arguments(item["arguments"], schemas[item["name"]], path, f"{path}.arguments")
    return item["call_id"] if has_id else None


def _output(w: Walk, item: Mapping[str, Any], path: str) -> str | None:
    """Check a ``function_call_output`` item; the call id it answers."""
    has_id = w.field(item, "call_id", str, path, "a string", "a function_call_output needs a string 'call_id'",
                     "It answers the function_call with that call_id.", level=Level.API)
    output = item.get("output")
    if output is None:
        w.need(False, Level.STRUCTURE, f"{path}.output", "output is required", kind="missing",
               hint="Send the tool result as a string, e.g. json.dumps(result).")
    elif w.need(isinstance(output, str | list), Level.STRUCTURE, f"{path}.output", "output must be a string or a list "
                f"of parts, not {json_kind(output)}", kind="type", expected="one of a string or array of objects",
                got=json_kind(output)):
        w.need(output.strip() if isinstance(output, str) else output, Level.TRACE, path, "empty function_call_output")
        for j, part in enumerate(output if isinstance(output, list) else []):
            _part(w, part, f"{path}.output[{j}]", "tool")
    w.need(set(item) <= _OUTPUT_KEYS, Level.TRACE, path,
           f"unknown function_call_output keys {sorted(set(item) - _OUTPUT_KEYS)}")
    return item["call_id"] if has_id else None


def walk_responses(w: Walk, body: Mapping[str, Any], model_given: bool) -> None:
    """Check an OpenAI Responses body into ``w``: top-level keys, ``input``, ``instructions``, tools, items, pairing."""
    w.keys(body)
    data = body.get("input")
    if w.need(data is not None, Level.STRUCTURE, "body.input", "missing: a Responses body needs input (a string "
              "or a list of input items)", kind="missing"):
        w.need(isinstance(data, str | list), Level.STRUCTURE, "body.input", f"input must be a string or a list of "
               f"input items, not {json_kind(data)}", kind="type", expected="one of a string or array of input items",
               got=json_kind(data))
    w.model(body, model_given)
    for key in ("instructions", "previous_response_id"):
        if body.get(key) is not None:
            w.need(isinstance(body[key], str), Level.STRUCTURE, f"body.{key}", f"{key} must be a string", kind="type",
                   expected="a string", got=json_kind(body[key]))
    schemas = responses_tools(w, body["tools"]) if body.get("tools") is not None else {}
    if "tool_choice" in body or "parallel_tool_calls" in body:
        w.need(body.get("tools"), Level.TRACE, "body", "tool_choice / parallel_tool_calls without tools")
    if isinstance(data, str):
        w.need(data.strip(), Level.TRACE, "body.input", "empty input")
        return
    if not isinstance(data, list):
        return
    w.need(data, Level.TRACE, "body.input", "empty input")
    calls: dict[str, str] = {}  # call id -> path of its function_call, until answered
    seen: set[str] = set()
    for k, item in enumerate(data):
        path = f"body.input[{k}]"
        if not w.need(isinstance(item, Mapping), Level.STRUCTURE, path, f"an input item must be an object, not "
                      f"{json_kind(item)}", kind="type", expected="an object such as {'role': 'user', 'content': "
                      "'...'}", got=json_kind(item)):
            continue
        kind = item_type(item)
        if not w.need(isinstance(kind, str), Level.STRUCTURE, path, "an input item needs a 'type' (or a 'role', for a "
                      "message)", kind="missing", hint=_MESSAGE) or \
                not w.need(kind in ITEM_TYPES, Level.API, f"{path}.type", f"Invalid value: '{kind}'. Supported "
                           f"values are: {', '.join(repr(t) for t in ITEM_TYPES[:4])}, ..."):
            continue
        if kind == "message":
            _message(w, item, path)
        elif kind == "function_call":
            call_id = _call(w, item, path, schemas, seen)
            if call_id is not None:
                seen.add(call_id)
                calls[call_id] = path
        elif kind == "function_call_output":
            call_id = _output(w, item, path)
            if call_id is not None:
                w.need(call_id in seen or body.get("previous_response_id"), Level.API, path,
                       f"No tool call found for function call output with call_id {call_id}.")
                calls.pop(call_id, None)
        elif kind == "reasoning":
            w.need(isinstance(item.get("summary"), list), Level.API, f"{path}.summary", "a reasoning item needs a "
                   "'summary' list (it may be empty)", kind="missing")
    for call_id, path in calls.items():
        w.need(False, Level.API, path, f"No tool output found for function call {call_id}.")
    if data and isinstance(data[-1], Mapping):
        last = data[-1]
        w.need(item_type(last) == "function_call_output" or last.get("role") == "user", Level.TRACE,
               f"body.input[{len(data) - 1}]", "the last input item must be a user message or a function_call_output")
