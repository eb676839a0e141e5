"""OpenAI Chat Completions bodies (OpenAI API reference, "Chat Completions")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptcache.trace.shape.walk import Level, Walk, json_kind, openai_tools, pairing

ROLES = ("system", "developer", "user", "assistant", "tool")
_KEYS = {"system": {"role", "content", "name"}, "developer": {"role", "content", "name"},
         "user": {"role", "content", "name"}, "tool": {"role", "tool_call_id", "content"},
         "assistant": {"role", "content", "tool_calls", "name", "refusal", "audio"}}
_CALL = "A tool call is {'id': ..., 'type': 'function', 'function': {'name': ..., 'arguments': '{...}'}}."
_CALL_NEEDS = "a tool call needs a 'function' object with string 'name' and 'arguments'"


def _text_ok(content: Any) -> bool:
    if isinstance(content, str):
        return bool(content.strip())
    return isinstance(content, list) and bool(content) and all(isinstance(p, dict) and "type" in p for p in content)


def _content(w: Walk, message: Mapping[str, Any], path: str, role: str) -> None:
    content = message.get("content")
    if content is None:
        hint = ("An assistant message needs 'content' unless it has 'tool_calls'." if role == "assistant"
                else "Send the message text as a string (or a list of content parts).")
        w.need(role == "assistant" and message.get("tool_calls"), Level.API, f"{path}.content", "content is required",
               kind="missing", hint=hint)
        return
    if not w.need(isinstance(content, str | list), Level.STRUCTURE, f"{path}.content",
                  f"content must be a string or a list of blocks, not {json_kind(content)}", kind="type",
                  expected="one of a string or array of objects", got=json_kind(content)):
        return
    for j, part in enumerate(content if isinstance(content, list) else []):
        ppath = f"{path}.content[{j}]"
        if not w.need(isinstance(part, Mapping), Level.STRUCTURE, ppath,
                      f"a content block must be an object, not {json_kind(part)}", kind="type",
                      expected="an object such as {'type': 'text', 'text': '...'}", got=json_kind(part)):
            continue
        if not w.field(part, "type", str, ppath, "a string", "a content block needs a string 'type'",
                       "Give each content part a type ('text', 'image_url', ...)."):
            continue
        if part["type"] == "text":
            w.field(part, "text", str, ppath, "a string", "a text block needs a string 'text'",
                    "A text part is {'type': 'text', 'text': '...'}.")
        elif part["type"] == "image_url":
            url = part.get("image_url")
            w.need(isinstance(url, Mapping) and isinstance(url.get("url"), str), Level.API, f"{ppath}.image_url.url",
                   "an image part needs an image_url with a string url", kind="missing",
                   hint="An image part is {'type': 'image_url', 'image_url': {'url': 'https://... or data:...'}}.")


def _calls(w: Walk, calls: Any, path: str, schemas: Mapping[str, Any], seen: set[Any]) -> list[Any]:
    """Check an assistant message's ``tool_calls``; their ids."""
    if not w.need(isinstance(calls, list), Level.STRUCTURE, f"{path}.tool_calls", f"must be a list, not "
                  f"{json_kind(calls)}", kind="type", expected="an array of tool calls", got=json_kind(calls)):
        return []
    ids = []
    for j, call in enumerate(calls):
        cpath = f"{path}.tool_calls[{j}]"
        if not w.need(isinstance(call, Mapping), Level.STRUCTURE, cpath, _CALL_NEEDS, kind="type",
                      expected="an object", got=json_kind(call), hint=_CALL):
            continue
        has_id = w.field(call, "id", str, cpath, "a string", "a tool call needs a string 'id'", _CALL, level=Level.API)
        w.need(set(call) == {"id", "type", "function"} and call.get("type") == "function", Level.TRACE, cpath,
               "a tool call is {id, type: function, function: {name, arguments}}")
        if not w.field(call, "function", Mapping, cpath, "an object", _CALL_NEEDS, _CALL):
            continue
        fn = call["function"]
        named = w.field(fn, "name", str, f"{cpath}.function", "a string", _CALL_NEEDS, _CALL)
        if not w.field(fn, "arguments", str, f"{cpath}.function", "a string", _CALL_NEEDS,
                       "Send the arguments as a JSON-encoded string, e.g. json.dumps(arguments)."):
            continue
        w.need(has_id and call["id"] not in seen, Level.TRACE, cpath, f"duplicate or bad id {call.get('id')!r}")
        seen.add(call.get("id"))
        ids.append(call.get("id"))
        if named and w.need(fn["name"] in schemas, Level.TRACE, cpath, f"tool call names unknown tool {fn['name']!r}"):
            w.json_arguments(fn["arguments"], schemas[fn["name"]], cpath, f"{cpath}.function.arguments")
    return ids


def walk_openai(w: Walk, body: Mapping[str, Any], messages: list[Any]) -> None:
    """Check an OpenAI Chat Completions body into ``w`` (tools, then the messages in order)."""
    schemas = openai_tools(w, body["tools"]) if body.get("tools") is not None else {}
    if "tool_choice" in body or "parallel_tool_calls" in body:
        w.need(schemas, Level.TRACE, "body", "tool_choice / parallel_tool_calls without tools")
    turns: list[tuple[str, list[Any], list[tuple[str, Any]]]] = []
    seen: set[Any] = set()
    previous = None
    for k, message in enumerate(messages):
        path = f"body.messages[{k}]"
        if not w.need(isinstance(message, Mapping), Level.STRUCTURE, path, f"a message must be an object, not "
                      f"{json_kind(message)}", kind="type", expected="an object with 'role' and 'content'",
                      got=json_kind(message)):
            continue
        role = message.get("role")
        if not w.need(role in ROLES, Level.STRUCTURE, f"{path}.role", f"must be one of {', '.join(ROLES)}, not {role!r}"):
            continue
        w.need(set(message) <= _KEYS[role], Level.TRACE, path, f"unknown {role} message keys {sorted(message)}")
        if "name" in message:
            w.need(isinstance(message["name"], str), Level.API, f"{path}.name", "name must be a string", kind="type",
                   expected="a string", got=json_kind(message["name"]))
        _content(w, message, path, role)
        if role == "tool":
            w.need(set(message) == _KEYS["tool"], Level.TRACE, path, "a tool message has role, tool_call_id, content")
            w.need(_text_ok(message.get("content")), Level.TRACE, path, "empty tool content")
            if previous != "tool":
                turns.append((path, [], []))
            turns[-1][2].append((path, message.get("tool_call_id")))
        else:
            w.need(role not in ("user", "assistant") or previous != role, Level.TRACE, path,
                   f"two {role} messages in a row")
            calls = message.get("tool_calls") if role == "assistant" else None
            w.need(calls or _text_ok(message.get("content")), Level.TRACE, path, f"empty {role} content")
            turns.append((path, _calls(w, calls, path, schemas, seen) if calls is not None else [], []))
        previous = role
    pairing(w, turns)
    if messages:
        last = messages[-1]
        w.need(isinstance(last, Mapping) and last.get("role") in ("user", "tool"), Level.TRACE,
               f"body.messages[{len(messages) - 1}]", "the last message must be user or tool")
