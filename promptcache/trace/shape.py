"""Validity checks of request bodies, as the traces README's validator list states them.

Anthropic bodies: only known keys, in SDK order; ``system`` a non-empty string
or non-empty text blocks, no empty text block anywhere; tool names valid and
unique with object ``input_schema``s; roles alternate, starting and ending
with ``user``; every ``tool_use`` id unique and answered in the very next user
turn by exactly one ``tool_result`` (results first in that turn), no orphaned
``tool_result``; ``tool_use`` inputs valid against the tool's schema (when
``jsonschema`` is installed); ``cache_control`` well formed, at most 4
breakpoints including the top-level one, no ``1h`` marker after a ``5m`` one.

OpenAI Chat bodies: only known keys, in SDK order; valid unique tool names;
no two user or two assistant messages in a row; every assistant
``tool_calls`` message followed by exactly one ``tool`` message per call,
matched by ``tool_call_id``, before anything else; unique call ids, known tool
names, ``arguments`` that parse as a JSON object valid against the tool's
``parameters``; the last message ``user`` or ``tool``.

The checks generalise the sample validator (``make_traces.py``): model names,
id formats and request counts of the sample files are not imposed.

Two pieces are public for the local server, which checks live requests with
them: :func:`tool_issues` (tool definitions, without the trace-only key-set
strictness) and :func:`cache_control_issue` (one marker's shape).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, OPENAI_CHAT, SDK_KEYS
from promptcache.providers.profiles import provider_rules

try:  # optional (the `dev` extra): tool inputs against their JSON schemas
    import jsonschema as _jsonschema
except ImportError:  # pragma: no cover - exercised only without the dev extra
    _jsonschema = None

MAX_BREAKPOINTS = int(provider_rules("anthropic")["max_breakpoints"])
"""Anthropic's per-request breakpoint limit, read from providers.toml."""

_ANTHROPIC_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_OPENAI_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


@dataclasses.dataclass(frozen=True)
class TraceIssue:
    """One problem found in a trace or body.

    Attributes:
        message: what is wrong and, where useful, what to do.
        line: 1-based line of the trace file, if known.
        path: where in the record, e.g. ``body.messages[3].content[0]``.
    """

    message: str
    line: int | None = None
    path: str = ""

    def __str__(self) -> str:
        where = ":".join(part for part in (f"line {self.line}" if self.line else "", self.path) if part)
        return f"{where}: {self.message}" if where else self.message


class _Checker:
    def __init__(self) -> None:
        self.issues: list[TraceIssue] = []

    def need(self, cond: Any, path: str, message: str) -> bool:
        """Record ``message`` at ``path`` unless ``cond`` holds; returns ``bool(cond)``."""
        if not cond:
            self.issues.append(TraceIssue(message, path=path))
        return bool(cond)

    def keys(self, api: str, body: Mapping[str, Any]) -> None:
        """Only known top-level keys, in the SDK's order."""
        known = SDK_KEYS[api]
        unknown = [k for k in body if k not in known]
        self.need(not unknown, "body", f"unknown key(s) {unknown} for {api}")
        present = [k for k in body if k in known]
        self.need(present == [k for k in known if k in body], "body",
                  f"keys not in SDK order: {list(body)}; the SDK sends {[k for k in known if k in body]}")

    def schema(self, instance: Any, schema: Any, path: str) -> None:
        """``instance`` against a JSON schema (skipped without ``jsonschema``)."""
        if _jsonschema is None or not isinstance(schema, dict):
            return
        try:
            _jsonschema.validate(instance, schema)
        except _jsonschema.ValidationError as exc:
            self.need(False, path, f"arguments do not match the tool schema: {exc.message}")
        except _jsonschema.SchemaError as exc:
            self.need(False, path, f"the tool schema itself is invalid: {exc.message}")


def cache_control_issue(cc: Any) -> str | None:
    """Why ``cc`` is not a well-formed Anthropic ``cache_control`` marker; None when it is.

    Well formed: ``{"type": "ephemeral"}`` with an optional ``"ttl"`` of ``"5m"`` or ``"1h"``, nothing else
    (Anthropic docs, "Prompt caching").
    """
    if isinstance(cc, Mapping) and cc.get("type") == "ephemeral" and set(cc) <= {"type", "ttl"} \
            and cc.get("ttl", "5m") in ("5m", "1h"):
        return None
    return f"bad cache_control {cc!r}; use {{'type': 'ephemeral'}} with optional ttl '5m' or '1h'"


class _CacheControl:
    """Counts breakpoints in render order and checks TTL ordering."""

    def __init__(self, check: _Checker) -> None:
        self.check, self.count, self.seen_5m = check, 0, False

    def mark(self, cc: Any, path: str) -> None:
        """Count one breakpoint and check its shape and TTL order."""
        issue = cache_control_issue(cc)
        ok = self.check.need(issue is None, path, issue or "")
        self.count += 1
        if ok:
            ttl = cc.get("ttl", "5m")
            self.check.need(not (ttl == "1h" and self.seen_5m), path, "a 1h cache_control marker follows a 5m one")
            self.seen_5m = self.seen_5m or ttl == "5m"


def _anthropic_tools(c: _Checker, tools: Any, path: str, cc: _CacheControl | None = None) -> dict[str, Any]:
    """Check Anthropic tool definitions; ``{name: input_schema}`` (None for server tools)."""
    schemas: dict[str, Any] = {}
    if not c.need(isinstance(tools, list), path, "tools must be a list of tool definitions"):
        return schemas
    for k, tool in enumerate(tools):
        tpath = f"{path}[{k}]"
        if not c.need(isinstance(tool, dict), tpath, f"a tool must be an object with 'name' and 'input_schema', "
                                                     f"not {type(tool).__name__}"):
            continue
        if tool.get("type") not in (None, "custom"):  # server tools (web search, bash, ...) carry no schema
            schemas.setdefault(str(tool.get("name")), None)
        elif c.need(isinstance(tool.get("name"), str) and _ANTHROPIC_TOOL_NAME.match(tool["name"]), tpath,
                    f"tool name {tool.get('name')!r} must match {_ANTHROPIC_TOOL_NAME.pattern}"):
            c.need(tool["name"] not in schemas, tpath, f"duplicate tool name {tool['name']!r}")
            if c.need("input_schema" in tool, tpath, f"input_schema of {tool['name']!r} is required: a JSON schema "
                                                     "object such as {'type': 'object', 'properties': {}}"):
                c.need(isinstance(tool["input_schema"], dict) and tool["input_schema"].get("type") == "object",
                       tpath, f"input_schema of {tool['name']!r} must be an object schema")
            schemas[tool["name"]] = tool.get("input_schema")
        if "cache_control" in tool and cc is not None:
            cc.mark(tool["cache_control"], tpath + ".cache_control")
    return schemas


def _openai_tools(c: _Checker, tools: Any, path: str, exact_keys: bool) -> dict[str, Any]:
    """Check OpenAI tool definitions; ``{name: parameters}``. ``exact_keys``: no keys beyond the SDK's."""
    schemas: dict[str, Any] = {}
    if not c.need(isinstance(tools, list), path, "tools must be a list of tool definitions"):
        return schemas
    shape = "{'type': 'function', 'function': {'name': ..., 'parameters': {...}}}"
    for k, tool in enumerate(tools):
        tpath = f"{path}[{k}]"
        if not c.need(isinstance(tool, dict), tpath, f"a tool must be an object {shape}, not {type(tool).__name__}"):
            continue
        if not (c.need(tool.get("type") == "function", tpath, f"type must be 'function' (got {tool.get('type')!r}); "
                                                              f"a tool is {shape}")
                and c.need(isinstance(tool.get("function"), dict), tpath,
                           f"'function' is required: an object with 'name' and optional 'description' and "
                           f"'parameters' (got {tool.get('function')!r})")):
            continue
        fn = tool["function"]
        if exact_keys:
            extra = sorted(set(tool) - {"type", "function"})
            c.need(not extra, tpath, f"unknown tool key(s) {extra}; a tool is {shape}")
            extra = sorted(set(fn) - {"name", "description", "parameters", "strict"})
            c.need(not extra, tpath, f"unknown function key(s) {extra}; the SDK sends name, description, "
                                     "parameters and strict")
        if c.need(isinstance(fn.get("name"), str) and _OPENAI_TOOL_NAME.match(fn["name"]), tpath,
                  f"tool name {fn.get('name')!r} must match {_OPENAI_TOOL_NAME.pattern}"):
            c.need(fn["name"] not in schemas, tpath, f"duplicate tool name {fn['name']!r}")
            params = fn.get("parameters", {"type": "object"})
            c.need(isinstance(params, dict) and params.get("type") == "object", tpath,
                   f"parameters of {fn['name']!r} must be an object schema")
            schemas[fn["name"]] = params
    return schemas


def tool_issues(api: str, tools: Any, path: str = "tools") -> list[TraceIssue]:
    """Check a request's tool definitions the way the provider's API does (the server uses this).

    Anthropic: each tool an object; custom tools (no ``type`` or ``"custom"``) with a valid, unique
    ``name`` and an object ``input_schema``; well-formed ``cache_control``. OpenAI: each tool
    ``{"type": "function", "function": {"name", "parameters"?}}`` with a valid, unique name and an
    object schema. Extra keys are allowed here (the trace checks of :func:`validate_body` are stricter).

    Returns:
        The issues, each with its ``path`` (e.g. ``tools[0]``); empty when valid.
    """
    checker = _Checker()
    if api == ANTHROPIC_MESSAGES:
        _anthropic_tools(checker, tools, path, _CacheControl(checker))
    elif api == OPENAI_CHAT:
        _openai_tools(checker, tools, path, exact_keys=False)
    else:
        checker.need(False, "api", f"unknown api {api!r}")
    return checker.issues


def _check_anthropic(body: Mapping[str, Any], c: _Checker) -> None:
    c.keys(ANTHROPIC_MESSAGES, body)
    c.need(isinstance(body.get("model"), str) and body["model"], "body.model", "model must be a non-empty string")
    c.need(isinstance(body.get("max_tokens"), int) and not isinstance(body.get("max_tokens"), bool)
           and body["max_tokens"] > 0, "body.max_tokens", "max_tokens must be a positive integer")
    cc = _CacheControl(c)
    schemas = _anthropic_tools(c, body.get("tools") or [], "body.tools", cc)
    system = body.get("system")
    if isinstance(system, str):
        c.need(system.strip(), "body.system", "empty system")
    elif system is not None:
        if c.need(isinstance(system, list) and system, "body.system", "system must be a string or a list of text blocks"):
            for j, block in enumerate(system):
                path = f"body.system[{j}]"
                c.need(isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
                       and block["text"].strip(), path, "system blocks must be non-empty text blocks")
                if isinstance(block, dict) and "cache_control" in block:
                    cc.mark(block["cache_control"], path + ".cache_control")
    messages = body.get("messages")
    if not c.need(isinstance(messages, list) and messages, "body.messages", "messages must be a non-empty list"):
        return
    c.need(isinstance(messages[0], dict) and messages[0].get("role") == "user", "body.messages[0]",
           "the first message must be a user message")
    c.need(isinstance(messages[-1], dict) and messages[-1].get("role") == "user", f"body.messages[{len(messages) - 1}]",
           "the last message must be a user message")
    seen_ids: set[str] = set()
    open_calls: list[str] = []
    previous_role = None
    for i, message in enumerate(messages):
        path = f"body.messages[{i}]"
        if not c.need(isinstance(message, dict) and set(message) == {"role", "content"}, path,
                      "a message must have exactly the keys role and content"):
            continue
        role = message["role"]
        c.need(role in ("user", "assistant"), path, f"role {role!r} (Anthropic messages are user or assistant)")
        c.need(role != previous_role, path, f"two {role} messages in a row; roles must alternate")
        previous_role = role
        content = message["content"]
        if isinstance(content, str):
            c.need(content.strip(), path, "empty content")
            blocks: list[Any] = []
        else:
            c.need(isinstance(content, list) and content, path, "content must be a string or a non-empty list of blocks")
            blocks = content if isinstance(content, list) else []
        results: list[str] = []
        uses: list[str] = []
        for j, block in enumerate(blocks):
            bpath = f"{path}.content[{j}]"
            if not c.need(isinstance(block, dict), bpath, "a content block must be an object"):
                continue
            kind = block.get("type")
            if "cache_control" in block:
                c.need(kind not in ("thinking", "redacted_thinking"), bpath, "cache_control on a thinking block")
                cc.mark(block["cache_control"], bpath + ".cache_control")
            if kind == "text":
                c.need(isinstance(block.get("text"), str) and block["text"].strip(), bpath, "empty text block")
            elif kind == "tool_use":
                c.need(role == "assistant", bpath, "tool_use outside an assistant turn")
                tool_id, name = block.get("id"), block.get("name")
                c.need(isinstance(tool_id, str) and _TOOL_ID.match(tool_id), bpath, f"tool_use id {tool_id!r}")
                c.need(tool_id not in seen_ids, bpath, f"duplicate tool_use id {tool_id!r}")
                seen_ids.add(tool_id)
                if c.need(name in schemas, bpath, f"tool_use names unknown tool {name!r}") and \
                        c.need(isinstance(block.get("input"), dict), bpath, "tool_use input must be an object"):
                    c.schema(block["input"], schemas[name], bpath + ".input")
                uses.append(tool_id)
            elif kind == "tool_result":
                c.need(role == "user", bpath, "tool_result outside a user turn")
                c.need(all(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks[:j]), bpath,
                       "tool_result blocks must come first in the user turn")
                result = block.get("content")
                c.need(result is None or (isinstance(result, str | list) and result), bpath, "empty tool_result content")
                results.append(block.get("tool_use_id"))
            elif kind in ("image", "document", "search_result"):
                c.need(isinstance(block.get("source"), dict) or kind == "search_result", bpath, f"{kind} block without a source")
            elif kind in ("thinking", "redacted_thinking"):
                c.need(role == "assistant", bpath, f"{kind} outside an assistant turn")
            else:
                c.need(False, bpath, f"unsupported content block type {kind!r}")
        if role == "user":
            c.need(sorted(map(str, results)) == sorted(open_calls) and len(set(results)) == len(results), path,
                   f"tool_result ids {results} do not answer the previous turn's tool_use ids {open_calls}")
            open_calls = []
        else:
            c.need(not open_calls, path, f"tool_use ids {open_calls} are not answered")
            open_calls = uses
    c.need(not open_calls, "body.messages", f"unanswered tool_use ids at the end: {open_calls}")
    if "cache_control" in body:  # automatic caching: one breakpoint at the last cacheable block, last in order
        cc.mark(body["cache_control"], "body.cache_control")
    c.need(cc.count <= MAX_BREAKPOINTS, "body", f"{cc.count} cache breakpoints (at most {MAX_BREAKPOINTS}, "
           f"the top-level cache_control included)")


def _text_content_ok(content: Any) -> bool:
    if isinstance(content, str):
        return bool(content.strip())
    return isinstance(content, list) and bool(content) and all(isinstance(p, dict) and "type" in p for p in content)


def _check_openai(body: Mapping[str, Any], c: _Checker) -> None:
    c.keys(OPENAI_CHAT, body)
    c.need(isinstance(body.get("model"), str) and body["model"], "body.model", "model must be a non-empty string")
    schemas = _openai_tools(c, body.get("tools") or [], "body.tools", exact_keys=True)
    if "tool_choice" in body or "parallel_tool_calls" in body:
        c.need(schemas, "body", "tool_choice / parallel_tool_calls without tools")
    messages = body.get("messages")
    if not c.need(isinstance(messages, list) and messages, "body.messages", "messages must be a non-empty list"):
        return
    seen_ids: set[str] = set()
    open_calls: list[str] = []
    previous = None
    for k, message in enumerate(messages):
        path = f"body.messages[{k}]"
        if not c.need(isinstance(message, dict), path, "a message must be an object"):
            continue
        role = message.get("role")
        if role == "tool":
            c.need(set(message) == {"role", "tool_call_id", "content"}, path, "a tool message has role, tool_call_id, content")
            c.need(message.get("tool_call_id") in open_calls, path,
                   f"tool_call_id {message.get('tool_call_id')!r} does not answer an open call of the previous assistant")
            c.need(_text_content_ok(message.get("content")), path, "empty tool content")
            if message.get("tool_call_id") in open_calls:
                open_calls.remove(message["tool_call_id"])
            previous = "tool"
            continue
        c.need(not open_calls, path, f"tool calls {open_calls} are not answered before this {role} message")
        open_calls = []
        if role in ("system", "developer"):
            c.need(set(message) <= {"role", "content", "name"} and _text_content_ok(message.get("content")), path,
                   f"a {role} message needs non-empty content")
        elif role == "user":
            c.need(set(message) <= {"role", "content", "name"}, path, f"unknown user message keys {sorted(message)}")
            c.need(_text_content_ok(message.get("content")), path, "empty user content")
            c.need(previous != "user", path, "two user messages in a row")
        elif role == "assistant":
            c.need(set(message) <= {"role", "content", "tool_calls", "name", "refusal", "audio"}, path,
                   f"unknown assistant message keys {sorted(message)}")
            c.need(previous != "assistant", path, "two assistant messages in a row")
            calls = message.get("tool_calls") or []
            if not calls:
                c.need(_text_content_ok(message.get("content")), path, "empty assistant content")
            for j, call in enumerate(calls):
                cpath = f"{path}.tool_calls[{j}]"
                if not c.need(isinstance(call, dict) and set(call) == {"id", "type", "function"}
                              and call["type"] == "function" and isinstance(call["function"], dict), cpath,
                              "a tool call is {id, type: function, function: {name, arguments}}"):
                    continue
                c.need(isinstance(call["id"], str) and call["id"] not in seen_ids, cpath, f"duplicate or bad id {call['id']!r}")
                seen_ids.add(call["id"])
                fn = call["function"]
                name = fn.get("name")
                c.need(name in schemas, cpath, f"tool call names unknown tool {name!r}")
                try:
                    args = json.loads(fn.get("arguments"))
                except (TypeError, ValueError):
                    c.need(False, cpath, "arguments are not a JSON string")
                else:
                    if c.need(isinstance(args, dict), cpath, "arguments must be a JSON object") and name in schemas:
                        c.schema(args, schemas[name], cpath + ".function.arguments")
                open_calls.append(call["id"])
        else:
            c.need(False, path, f"unexpected role {role!r}")
        previous = role
    c.need(not open_calls, "body.messages", f"unanswered tool calls at the end: {open_calls}")
    last = messages[-1]
    c.need(isinstance(last, dict) and last.get("role") in ("user", "tool"), f"body.messages[{len(messages) - 1}]",
           "the last message must be user or tool")


def validate_body(api: str, body: Any) -> list[TraceIssue]:
    """Check one request body of ``api`` (see the module docstring for the list).

    Returns:
        The issues found, with ``path`` set (``line`` unset); empty when valid.
        Never raises for bad input; an unknown ``api`` is itself an issue.
    """
    checker = _Checker()
    if not isinstance(body, Mapping):
        return [TraceIssue("body must be a JSON object", path="body")]
    if api == ANTHROPIC_MESSAGES:
        _check_anthropic(body, checker)
    elif api == OPENAI_CHAT:
        _check_openai(body, checker)
    else:
        checker.need(False, "api", f"unknown api {api!r}")
    return checker.issues
