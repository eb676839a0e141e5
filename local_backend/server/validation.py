"""Request-body checks of the server: each problem becomes a provider-shaped 400 naming the field and the fix.

OpenAI chat (``/v1/chat/completions``, ``/tokenize``): messages (roles,
required ``content``, content parts, ``tool_calls`` with string
``arguments``, tool messages answering the calls) and tool definitions.
Messages follow the OpenAI API's wording: "Missing required parameter:
'messages[0].content'.", "Invalid type for '...': expected ..., but got ...
instead.", with ``param`` set to the field.

Anthropic Messages (``/v1/messages``, ``/v1/messages/count_tokens``): turns,
content blocks by type (a ``text`` block needs a string ``text``, a
``tool_use`` an ``id``, ``name`` and object ``input``, ...), ``system``, tool
definitions, ``cache_control`` markers (``{"type": "ephemeral"}``, optional
``ttl``), every ``tool_use`` answered by a ``tool_result`` in the very next
turn and every ``tool_result`` answering one. Paths use the Messages API's
dotted form (``messages.0.content.1.text``).

Tool definitions and ``cache_control`` shapes are checked by
:mod:`promptcache.trace.shape`, the same code that validates trace files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from local_backend.server.errors import APIError, bad_request
from promptcache.providers.apis import ANTHROPIC_MESSAGES, OPENAI_CHAT
from promptcache.trace.shape import cache_control_issue, tool_issues

OPENAI_ROLES = ("system", "developer", "user", "assistant", "tool")
ANTHROPIC_BLOCKS = ("text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking",
                    "search_result")


def json_kind(value: Any) -> str:
    """``value``'s JSON type in words (``"an integer"``, ``"an object"``, ...), for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def _missing(path: str, hint: str) -> APIError:
    return bad_request(f"Missing required parameter: '{path}'. {hint}", param=path)


def _invalid(path: str, expected: str, value: Any, hint: str = "") -> APIError:
    message = f"Invalid type for '{path}': expected {expected}, but got {json_kind(value)} instead."
    return bad_request(f"{message} {hint}".rstrip(), param=path)


def _first_tool_issue(api: str, tools: Any, param: str = "tools") -> None:
    if tools is None:
        return
    issues = tool_issues(api, tools, "tools")
    if issues:
        issue = issues[0]
        path = _dotted(issue.path) if api == ANTHROPIC_MESSAGES else issue.path
        raise bad_request(f"{path}: {issue.message}", param=issue.path if api == OPENAI_CHAT else None)


# --- OpenAI -----------------------------------------------------------------------------------------

def check_openai_tools(tools: Any) -> None:
    """Validate OpenAI ``tools`` (None allowed).

    Raises:
        APIError: 400 naming the first bad tool (``param`` ``tools[k]``).
    """
    _first_tool_issue(OPENAI_CHAT, tools)


def _check_openai_content(message: Mapping[str, Any], path: str, role: str) -> None:
    content = message.get("content")
    if content is None:
        if role == "assistant" and message.get("tool_calls"):
            return
        hint = ("An assistant message needs 'content' unless it has 'tool_calls'." if role == "assistant"
                else "Send the message text as a string (or a list of content parts).")
        raise _missing(f"{path}.content", hint)
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _invalid(f"{path}.content", "one of a string or array of objects", content)
    for j, part in enumerate(content):
        ppath = f"{path}.content[{j}]"
        if not isinstance(part, Mapping):
            raise _invalid(ppath, "an object such as {'type': 'text', 'text': '...'}", part)
        kind = part.get("type")
        if not isinstance(kind, str):
            raise _missing(f"{ppath}.type", "Give each content part a type ('text', 'image_url', ...).")
        if kind == "text" and not isinstance(part.get("text"), str):
            raise (_missing(f"{ppath}.text", "A text part is {'type': 'text', 'text': '...'}.") if "text" not in part
                   else _invalid(f"{ppath}.text", "a string", part["text"]))
        if kind == "image_url" and not (isinstance(part.get("image_url"), Mapping)
                                        and isinstance(part["image_url"].get("url"), str)):
            raise _missing(f"{ppath}.image_url.url", "An image part is {'type': 'image_url', 'image_url': "
                                                     "{'url': 'https://... or data:...'}}.")


def _check_tool_calls(calls: Any, path: str) -> set[str]:
    """Validate an assistant message's ``tool_calls``; their ids."""
    if not isinstance(calls, list):
        raise _invalid(f"{path}.tool_calls", "an array of tool calls", calls)
    ids: set[str] = set()
    for j, call in enumerate(calls):
        cpath = f"{path}.tool_calls[{j}]"
        shape = "A tool call is {'id': ..., 'type': 'function', 'function': {'name': ..., 'arguments': '{...}'}}."
        if not isinstance(call, Mapping):
            raise _invalid(cpath, "an object", call, shape)
        if not isinstance(call.get("id"), str) or not call["id"]:
            raise _missing(f"{cpath}.id", shape) if "id" not in call else _invalid(f"{cpath}.id", "a string", call["id"])
        function = call.get("function")
        if not isinstance(function, Mapping):
            raise _missing(f"{cpath}.function", shape) if function is None else _invalid(
                f"{cpath}.function", "an object", function, shape)
        if not isinstance(function.get("name"), str):
            raise _missing(f"{cpath}.function.name", shape)
        if not isinstance(function.get("arguments"), str):
            raise _missing(f"{cpath}.function.arguments", shape) if "arguments" not in function else _invalid(
                f"{cpath}.function.arguments", "a string", function["arguments"],
                "Send the arguments as a JSON-encoded string, e.g. json.dumps(arguments).")
        ids.add(call["id"])
    return ids


def check_openai_messages(messages: Any) -> list[dict[str, Any]]:
    """Validate OpenAI chat ``messages`` the way the OpenAI API does; returns them.

    Raises:
        APIError: 400 for a missing or empty list, an unknown role, a missing
            or mistyped ``content`` / content part / ``name``, a malformed
            ``tool_calls`` entry (``arguments`` must be a string), a ``tool``
            message that answers no earlier call, or calls left unanswered
            before the next message.
    """
    if messages is None:
        raise bad_request("messages: field required; send a list of chat messages", param="messages")
    if not isinstance(messages, list) or not messages:
        raise bad_request("messages: must be a non-empty list of chat messages", param="messages")
    pending: set[str] = set()
    for i, message in enumerate(messages):
        path = f"messages[{i}]"
        if not isinstance(message, Mapping):
            raise _invalid(path, "an object with 'role' and 'content'", message)
        role = message.get("role")
        if role not in OPENAI_ROLES:
            raise bad_request(f"{path}.role: {role!r} is not one of {', '.join(OPENAI_ROLES)}", param=f"{path}.role")
        if "name" in message and not isinstance(message["name"], str):
            raise _invalid(f"{path}.name", "a string", message["name"])
        _check_openai_content(message, path, role)
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                raise bad_request(f"{path}: messages with role 'tool' must be a response to a preceding message "
                                  f"with 'tool_calls' (no pending call with id {call_id!r})", param=path)
            pending.discard(call_id)
            continue
        if pending:
            raise bad_request(f"{path}: an assistant message with 'tool_calls' must be followed by tool messages "
                              f"responding to each 'tool_call_id'; unanswered: {', '.join(sorted(pending))}",
                              param=path)
        if role == "assistant" and message.get("tool_calls") is not None:
            pending = _check_tool_calls(message["tool_calls"], path)
    if pending:
        raise bad_request("the last assistant message's 'tool_calls' need tool messages responding to each "
                          f"'tool_call_id'; unanswered: {', '.join(sorted(pending))}", param="messages")
    return messages


# --- Anthropic --------------------------------------------------------------------------------------

def _dotted(path: str) -> str:
    """``messages[0].content[1]`` -> ``messages.0.content.1`` (the Messages API's error paths)."""
    return re.sub(r"\[(\d+)\]", r".\1", path)


def _field(block: Mapping[str, Any], key: str, kind: type | tuple[type, ...], path: str, what: str, shape: str) -> None:
    if key not in block:
        raise bad_request(f"{path}.{key}: Field required. {shape}")
    if not isinstance(block[key], kind) or isinstance(block[key], bool):
        raise bad_request(f"{path}.{key}: Input should be {what}, not {json_kind(block[key])}. {shape}")


def _check_cache_control(holder: Mapping[str, Any], path: str = "") -> None:
    if "cache_control" in holder and holder["cache_control"] is not None:
        issue = cache_control_issue(holder["cache_control"])
        if issue is not None:
            raise bad_request(f"{path + '.' if path else ''}cache_control: {issue}")


def _check_block(block: Any, path: str, role: str) -> None:
    if not isinstance(block, Mapping):
        raise bad_request(f"{path}: Input should be an object (a content block), not {json_kind(block)}")
    kind = block.get("type")
    if kind not in ANTHROPIC_BLOCKS:
        raise bad_request(f"{path}.type: {kind!r} is not a content block type; use one of "
                          f"{', '.join(ANTHROPIC_BLOCKS)}")
    if kind == "text":
        _field(block, "text", str, path, "a valid string", "A text block is {'type': 'text', 'text': '...'}.")
    elif kind in ("image", "document"):
        _field(block, "source", Mapping, path, "an object", f"An {kind} block needs a source, e.g. "
               "{'type': 'base64', 'media_type': ..., 'data': ...} or {'type': 'url', 'url': ...}.")
    elif kind == "tool_use":
        shape = "A tool_use block is {'type': 'tool_use', 'id': ..., 'name': ..., 'input': {...}}."
        if role != "assistant":
            raise bad_request(f"{path}: tool_use blocks belong in assistant turns")
        _field(block, "id", str, path, "a valid string", shape)
        _field(block, "name", str, path, "a valid string", shape)
        _field(block, "input", Mapping, path, "an object", shape)
    elif kind == "tool_result":
        shape = "A tool_result block is {'type': 'tool_result', 'tool_use_id': ..., 'content': '...'}."
        if role != "user":
            raise bad_request(f"{path}: tool_result blocks belong in user turns")
        _field(block, "tool_use_id", str, path, "a valid string", shape)
        content = block.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise bad_request(f"{path}.content: Input should be a string or a list of blocks, not "
                              f"{json_kind(content)}. {shape}")
        for j, inner in enumerate(content if isinstance(content, list) else []):
            _check_block(inner, f"{path}.content.{j}", "user")
    elif kind in ("thinking", "redacted_thinking") and role != "assistant":
        raise bad_request(f"{path}: {kind} blocks belong in assistant turns")
    _check_cache_control(block, path)


def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise bad_request(f"system: Input should be a string or a list of text blocks, not {json_kind(system)}")
    for j, block in enumerate(system):
        path = f"system.{j}"
        if not isinstance(block, Mapping) or block.get("type") != "text":
            raise bad_request(f"{path}: system blocks must be text blocks {{'type': 'text', 'text': '...'}}")
        _check_block(block, path, "system")


def check_anthropic_body(body: Mapping[str, Any]) -> None:
    """Validate an Anthropic Messages body's ``messages``, ``system``, ``tools`` and ``cache_control`` markers.

    Consecutive turns of one role are allowed (the API combines them).

    Raises:
        APIError: 400 for a missing or empty ``messages``; a role other than
            user / assistant; content that is neither a string nor a list of
            blocks; a block missing a required field or holding the wrong type
            (the message names the block path); an unknown block type; a
            malformed tool definition or ``cache_control``; a ``tool_use`` not
            answered by a ``tool_result`` in the next turn; a ``tool_result``
            whose ``tool_use_id`` is not a ``tool_use`` of the previous turn.
    """
    messages = body.get("messages")
    if messages is None:
        raise bad_request("messages: Field required")
    if not isinstance(messages, list) or not messages:
        raise bad_request("messages: must be a non-empty list of turns")
    _check_system(body.get("system"))
    _first_tool_issue(ANTHROPIC_MESSAGES, body.get("tools"))
    _check_cache_control(body)
    turns: list[tuple[str, str, list[tuple[str, Mapping[str, Any]]]]] = []  # same-role neighbours merged
    for i, message in enumerate(messages):
        path = f"messages.{i}"
        if not isinstance(message, Mapping):
            raise bad_request(f"{path}: a message must be an object with 'role' and 'content'")
        role, content = message.get("role"), message.get("content")
        if role not in ("user", "assistant"):
            raise bad_request(f"{path}.role: Input should be 'user' or 'assistant' (got {role!r}); "
                              "put system text in the top-level 'system' field")
        if "content" not in message:
            raise bad_request(f"{path}.content: Field required. Send a string or a list of content blocks.")
        if not isinstance(content, (str, list)):
            raise bad_request(f"{path}.content: expected a string or a list of content blocks, not {json_kind(content)}")
        blocks = [(f"{path}.content.{j}", block) for j, block in enumerate(content if isinstance(content, list) else [])]
        for bpath, block in blocks:
            _check_block(block, bpath, role)
        if turns and turns[-1][0] == role:
            turns[-1][2].extend(blocks)
        else:
            turns.append((role, path, blocks))
    _check_tool_pairing(turns)
    _check_ttl_order(body)


def _markers(body: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(path of the marker, marker) for every ``cache_control`` in Anthropic's render order: tools, system,
    message blocks, then the top-level one: the markers :func:`local_backend.chat_template.breakpoint_cuts`
    counts as breakpoints and :mod:`promptcache.trace.shape` checks in traces."""
    holders: list[tuple[str, Any]] = [(f"tools.{k}", tool) for k, tool in enumerate(body.get("tools") or [])]
    system = body.get("system")
    holders += [(f"system.{j}", block) for j, block in enumerate(system if isinstance(system, list) else [])]
    for i, message in enumerate(body["messages"]):
        content = message.get("content")
        for j, block in enumerate(content if isinstance(content, list) else []):
            holders.append((f"messages.{i}.content.{j}", block))
    for path, holder in holders:
        if isinstance(holder, Mapping) and isinstance(holder.get("cache_control"), Mapping):
            yield f"{path}.cache_control", holder["cache_control"]
    if isinstance(body.get("cache_control"), Mapping):  # automatic caching: the last block, so last in order
        yield "cache_control", body["cache_control"]


def _check_ttl_order(body: Mapping[str, Any]) -> None:
    """A ``1h`` marker may not follow a ``5m`` one in render order.

    Anthropic docs, "Prompt caching", "Mixing different TTLs": cache entries with a
    longer TTL must appear before shorter ones; the API answers 400 otherwise.
    """
    first_5m = None
    for path, cc in _markers(body):
        ttl = cc.get("ttl", "5m")
        if ttl == "5m" and first_5m is None:
            first_5m = path
        elif ttl == "1h" and first_5m is not None:
            raise bad_request(f"{path}: a ttl='1h' breakpoint follows a ttl='5m' one at {first_5m}; "
                              "cache_control blocks with a longer TTL must come before shorter ones "
                              "(put the 1h markers on the earlier, more stable blocks)")


def _check_tool_pairing(turns: list[tuple[str, str, list[tuple[str, Mapping[str, Any]]]]]) -> None:
    """Every ``tool_use`` answered in the very next turn; every ``tool_result`` answering the previous turn.

    ``turns``: (role, path of the turn's first message, (block path, block) pairs).
    """
    open_uses: list[str] = []
    for role, turn_path, blocks in turns:
        results = [block.get("tool_use_id") for _, block in blocks if block.get("type") == "tool_result"]
        for path, block in blocks:
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in open_uses:
                raise bad_request(f"{path}: unexpected `tool_use_id` found in `tool_result` blocks: "
                                  f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                                  "`tool_use` block in the previous message.")
        unanswered = [use for use in open_uses if use not in results]
        if unanswered:
            raise bad_request(f"{turn_path}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                              f"{', '.join(unanswered)}. Each `tool_use` block must have a corresponding "
                              "`tool_result` block in the next message.")
        open_uses = [block["id"] for _, block in blocks if block.get("type") == "tool_use"] if role == "assistant" \
            else []
