"""The walk shared by both APIs: levels, the issue record, tool definitions, tool-call pairing."""

from __future__ import annotations

import dataclasses
import enum
import json
import re
from collections.abc import Mapping
from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, SDK_KEYS

try:  # optional (the `dev` extra): tool inputs against their JSON schemas
    import jsonschema as _jsonschema
except ImportError:  # pragma: no cover - exercised only without the dev extra
    _jsonschema = None

_TOOL_NAME = {ANTHROPIC_MESSAGES: re.compile(r"^[a-zA-Z0-9_-]{1,128}$"), "openai.chat": re.compile(r"^[a-zA-Z0-9_-]{1,64}$")}
OPENAI_TOOL_NAME = _TOOL_NAME["openai.chat"]
"""Function names both OpenAI APIs accept (Chat Completions and Responses)."""
_OPENAI_TOOL = "{'type': 'function', 'function': {'name': ..., 'parameters': {...}}}"


class Level(enum.IntEnum):
    """How much of a body is checked; each level includes the ones before (see :mod:`promptcache.trace.shape`)."""

    STRUCTURE = 0
    API = 1
    TRACE = 2


def json_kind(value: Any) -> str:
    """``value``'s JSON type in words (``"an integer"``, ``"an object"``, ...), for error messages."""
    kinds = ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
             (Mapping, "an object"), (list, "an array"))
    return "null" if value is None else next((word for kind, word in kinds if isinstance(value, kind)),
                                             type(value).__name__)


@dataclasses.dataclass(frozen=True)
class TraceIssue:
    """One problem found in a trace or body.

    Attributes:
        message: what is wrong and, where useful, what to do.
        line: 1-based line of the trace file, if known.
        path: where in the record, e.g. ``body.messages[3].content[0]``.
        kind: ``"missing"`` (a required field is absent), ``"type"`` (a field of the wrong JSON type: ``expected``
            names the right one, ``got`` the one given) or ``""``; with ``hint`` they word the provider's 400.
    """

    message: str
    line: int | None = None
    path: str = ""
    kind: str = ""
    expected: str = ""
    got: str = ""
    hint: str = ""

    def __str__(self) -> str:
        where = ":".join(part for part in (f"line {self.line}" if self.line else "", self.path) if part)
        return f"{where}: {self.message}" if where else self.message

    def provider_message(self, api: str) -> tuple[str, str | None]:
        """``(message, param)`` of the 400 the provider of ``api`` answers.

        OpenAI (API reference, "Error codes"): "Missing required parameter: 'messages[0].content'.",
        "Invalid type for '...': expected ..., but got ... instead.", ``param`` the field. Anthropic: the
        Messages API's dotted paths, "messages.0.content: Field required.", "...: Input should be ..., not ...".
        """
        path = self.path.removeprefix("body").removeprefix(".")
        hint = f" {self.hint}" if self.hint else ""
        if api == ANTHROPIC_MESSAGES:
            where = dotted(path)
            if self.kind == "missing":
                return f"{where}: Field required{'.' + hint if hint else ''}", None
            if self.kind == "type":
                expected = "a valid string" if self.expected == "a string" else self.expected
                return f"{where}: Input should be {expected}, not {self.got}.{hint}", None
            return (f"{where}: {self._sentence()}" if where else self._sentence()), None
        if self.kind == "missing":
            return f"Missing required parameter: '{path}'.{hint}", path
        if self.kind == "type":
            return f"Invalid type for '{path}': expected {self.expected}, but got {self.got} instead.{hint}", path
        return (f"{path}: {self._sentence()}" if path else self._sentence()), path or None

    def _sentence(self) -> str:
        """The message with the hint after it (a full stop between them)."""
        if not self.hint:
            return self.message
        return f"{self.message}{'' if self.message.endswith('.') else '.'} {self.hint}"


def dotted(path: str) -> str:
    """``messages[0].content[1]`` -> ``messages.0.content.1`` (the Messages API's error paths)."""
    return re.sub(r"\[(\d+)\]", r".\1", path.removeprefix("body."))


class Stop(Exception):
    """Ends a walk at its first issue."""


class Walk:
    """Collects the issues of one body at one level (``first``: raise :class:`Stop` at the first)."""

    def __init__(self, api: str, level: Level, first: bool = False) -> None:
        self.api, self.level, self.first = api, level, first
        self.issues: list[TraceIssue] = []

    def need(self, ok: Any, level: Level, path: str, message: str, **fields: str) -> bool:
        """Record ``message`` at ``path`` unless ``ok`` or the check is above the walk's level; ``bool(ok)``."""
        if not ok and level <= self.level:
            self.issues.append(TraceIssue(message, path=path, **fields))
            if self.first:
                raise Stop
        return bool(ok)

    def field(self, holder: Mapping[str, Any], key: str, kind: type | tuple[type, ...], path: str, expected: str,
              message: str, hint: str = "", level: Level = Level.STRUCTURE) -> bool:
        """``holder[key]`` present and of ``kind`` (a bool is no number): a "missing" or "type" issue otherwise."""
        if holder.get(key) is None:
            return self.need(False, level, f"{path}.{key}", message, kind="missing", hint=hint)
        value = holder[key]
        ok = isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)
        return self.need(ok, level, f"{path}.{key}", message, kind="type", expected=expected, got=json_kind(value),
                         hint=hint)

    def schema(self, instance: Any, schema: Any, path: str) -> None:
        """``instance`` against a JSON schema (``TRACE`` level; skipped without ``jsonschema``)."""
        if _jsonschema is None or not isinstance(schema, dict) or self.level < Level.TRACE:
            return
        try:
            _jsonschema.validate(instance, schema)
        except _jsonschema.ValidationError as exc:
            self.need(False, Level.TRACE, path, f"arguments do not match the tool schema: {exc.message}")
        except _jsonschema.SchemaError as exc:
            self.need(False, Level.TRACE, path, f"the tool schema itself is invalid: {exc.message}")

    def json_arguments(self, text: str, schema: Any, path: str, arguments_path: str) -> None:
        """A tool call's JSON-encoded ``arguments`` (``TRACE`` level): a JSON object matching ``schema``."""
        try:
            args = json.loads(text)
        except ValueError:
            self.need(False, Level.TRACE, path, "arguments are not a JSON string")
            return
        if self.need(isinstance(args, dict), Level.TRACE, path, "arguments must be a JSON object"):
            self.schema(args, schema, arguments_path)

    def keys(self, body: Mapping[str, Any]) -> None:
        """Top-level keys (``TRACE``): known, in the SDK's order."""
        known = SDK_KEYS[self.api]
        unknown = [k for k in body if k not in known]
        self.need(not unknown, Level.TRACE, "body", f"unknown key(s) {unknown} for {self.api}")
        present = [k for k in body if k in known]
        self.need(present == [k for k in known if k in body], Level.TRACE, "body",
                  f"keys not in SDK order: {list(body)}; the SDK sends {[k for k in known if k in body]}")

    def model(self, body: Mapping[str, Any], model_given: bool) -> None:
        """``model``: a model id string (``STRUCTURE``), unless ``model_given``."""
        model = body.get("model")
        self.need(isinstance(model, str) and model or (model is None and model_given), Level.STRUCTURE, "body.model",
                  "missing (pass --model)" if model is None else f"must be a model id string, not {model!r}")

    def head(self, body: Mapping[str, Any], model_given: bool) -> list[Any]:
        """:meth:`keys`, ``messages`` and :meth:`model`; the ``messages`` list (empty when it is missing or not
        a non-empty list)."""
        self.keys(body)
        messages = body.get("messages")
        if self.need(messages is not None, Level.STRUCTURE, "body.messages",
                     "missing: a request body needs a non-empty list of messages", kind="missing"):
            shown = json_kind(messages) if not isinstance(messages, list) else "empty"
            self.need(isinstance(messages, list) and messages, Level.STRUCTURE, "body.messages",
                      f"must be a non-empty list of messages, not {shown}")
        self.model(body, model_given)
        return messages if isinstance(messages, list) else []


def pairing(w: Walk, turns: list[tuple[str, list[Any], list[tuple[str, Any]]]]) -> None:
    """Tool-call pairing of both APIs (``API`` level): each turn's results answer exactly the previous turn's calls.

    ``turns``: ``(path, call ids, [(result path, answered id)])`` in order: Anthropic's user / assistant turns
    (one role in a row combined), OpenAI's messages with the tool messages after a call combined into one turn.
    Wording: the providers' own 400s.
    """
    anthropic = w.api == ANTHROPIC_MESSAGES
    calls: list[Any] = []
    for path, made, results in turns:
        for result_path, call_id in results:
            w.need(call_id in calls, Level.API, result_path, (
                f"unexpected `tool_use_id` found in `tool_result` blocks: {call_id}. Each `tool_result` block must "
                "have a corresponding `tool_use` block in the previous message." if anthropic else
                "messages with role 'tool' must be a response to a preceding message with 'tool_calls' (no pending "
                f"call with id {call_id!r})"))
        answered = {call_id for _, call_id in results}
        open_calls = [str(call_id) for call_id in calls if call_id not in answered]
        w.need(not open_calls, Level.API, path, (
            f"`tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(open_calls)}. "
            "Each `tool_use` block must have a corresponding `tool_result` block in the next message." if anthropic
            else "an assistant message with 'tool_calls' must be followed by tool messages responding to each "
                 f"'tool_call_id'; unanswered: {', '.join(sorted(open_calls))}"))
        calls = made
    w.need(not calls, Level.API, "body.messages", (
        f"`tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(map(str, calls))}: "
        "the last message must answer them" if anthropic else "the last assistant message's 'tool_calls' need tool "
        f"messages responding to each 'tool_call_id'; unanswered: {', '.join(sorted(map(str, calls)))}"))


def cache_control_issue(cc: Any) -> str | None:
    """Why ``cc`` is not a well-formed Anthropic ``cache_control`` marker; None when it is.

    Well formed: ``{"type": "ephemeral"}`` with an optional ``"ttl"`` of ``"5m"`` or ``"1h"``, nothing else
    (Anthropic docs, "Prompt caching").
    """
    if isinstance(cc, Mapping) and cc.get("type") == "ephemeral" and set(cc) <= {"type", "ttl"} \
            and cc.get("ttl", "5m") in ("5m", "1h"):
        return None
    return f"bad cache_control {cc!r}; use {{'type': 'ephemeral'}} with optional ttl '5m' or '1h'"


def _tool_list(w: Walk, tools: Any, path: str) -> list[Any]:
    if not w.need(isinstance(tools, list), Level.STRUCTURE, path, "tools must be a list of tool definitions"):
        return []
    return tools


def anthropic_tools(w: Walk, tools: Any, path: str = "body.tools", mark: Any = None) -> dict[str, Any]:
    """Anthropic tool definitions; ``{name: input_schema}`` (None for server tools, which carry no schema).
    ``mark(tool, path)`` counts a tool's ``cache_control`` marker."""
    schemas: dict[str, Any] = {}
    pattern = _TOOL_NAME[ANTHROPIC_MESSAGES]
    for k, tool in enumerate(_tool_list(w, tools, path)):
        tpath = f"{path}[{k}]"
        if not w.need(isinstance(tool, Mapping), Level.STRUCTURE, tpath,
                      f"a tool must be an object with 'name' and 'input_schema', not {type(tool).__name__}"):
            continue
        if tool.get("type") not in (None, "custom"):  # server tools (web search, bash, ...)
            schemas.setdefault(str(tool.get("name")), None)
        elif w.need(isinstance(tool.get("name"), str) and pattern.match(tool["name"]), Level.API, tpath,
                    f"tool name {tool.get('name')!r} must match {pattern.pattern}"):
            name = tool["name"]
            w.need(name not in schemas, Level.API, tpath, f"duplicate tool name {name!r}")
            if w.need("input_schema" in tool, Level.API, tpath, f"input_schema of {name!r} is required: a JSON "
                      "schema object such as {'type': 'object', 'properties': {}}"):
                w.need(isinstance(tool["input_schema"], dict) and tool["input_schema"].get("type") == "object",
                       Level.API, tpath, f"input_schema of {name!r} must be an object schema")
            schemas[name] = tool.get("input_schema")
        if mark is not None:
            mark(tool, tpath)
    return schemas


def openai_tools(w: Walk, tools: Any, path: str = "body.tools") -> dict[str, Any]:
    """OpenAI tool definitions ({``type: function``, ``function``: {name, parameters}}); ``{name: parameters}``.
    Keys beyond the SDK's are refused at the ``TRACE`` level only."""
    schemas: dict[str, Any] = {}
    pattern = _TOOL_NAME["openai.chat"]
    for k, tool in enumerate(_tool_list(w, tools, path)):
        tpath = f"{path}[{k}]"
        if not w.need(isinstance(tool, Mapping), Level.STRUCTURE, tpath,
                      f"a tool must be an object {_OPENAI_TOOL}, not {type(tool).__name__}"):
            continue
        if not (w.need(tool.get("type") == "function", Level.API, tpath,
                       f"type must be 'function' (got {tool.get('type')!r}); a tool is {_OPENAI_TOOL}")
                and w.need(isinstance(tool.get("function"), dict), Level.API, tpath,
                           "'function' is required: an object with 'name' and optional 'description' and "
                           f"'parameters' (got {tool.get('function')!r})")):
            continue
        fn = tool["function"]
        extra = sorted(set(tool) - {"type", "function"})
        w.need(not extra, Level.TRACE, tpath, f"unknown tool key(s) {extra}; a tool is {_OPENAI_TOOL}")
        extra = sorted(set(fn) - {"name", "description", "parameters", "strict"})
        w.need(not extra, Level.TRACE, tpath, f"unknown function key(s) {extra}; the SDK sends name, description, "
                                              "parameters and strict")
        if w.need(isinstance(fn.get("name"), str) and pattern.match(fn["name"]), Level.API, tpath,
                  f"tool name {fn.get('name')!r} must match {pattern.pattern}"):
            w.need(fn["name"] not in schemas, Level.API, tpath, f"duplicate tool name {fn['name']!r}")
            params = fn.get("parameters", {"type": "object"})
            w.need(isinstance(params, dict) and params.get("type") == "object", Level.API, tpath,
                   f"parameters of {fn['name']!r} must be an object schema")
            schemas[fn["name"]] = params
    return schemas
