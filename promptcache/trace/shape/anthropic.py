"""Anthropic Messages bodies (Anthropic docs, "Messages" and "Prompt caching")."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from promptcache.providers.profiles import provider_rules
from promptcache.trace.shape.walk import Level, Walk, anthropic_tools, cache_control_issue, dotted, json_kind, pairing

MAX_BREAKPOINTS = int(provider_rules("anthropic")["max_breakpoints"])
"""Anthropic's per-request breakpoint limit, the top-level ``cache_control`` included (providers.toml)."""
BLOCK_TYPES = ("text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking", "search_result")
_TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
MID_CONVERSATION_SYSTEM = re.compile(r"^(?:[\w.-]+/)?claude-(?:opus-(?:4-(?:8|9)|[5-9])|fable-[5-9]|mythos-[5-9])")
"""Models that take ``{"role": "system"}`` messages inside ``messages`` (mid-conversation system messages): Opus 4.8
and later, Fable 5, Mythos 5, Opus 5; not Sonnet 5 (Claude docs "Prompt caching" [A-PC], as summarised by
shared/research/provider-audit-2026-12.md, section 2.1, row "Mid-conversation system messages")."""


def takes_system_messages(model: Any) -> bool:
    """True when ``model`` accepts mid-conversation ``system`` messages (:data:`MID_CONVERSATION_SYSTEM`)."""
    return isinstance(model, str) and bool(MID_CONVERSATION_SYSTEM.match(model.strip().lower()))


class Markers:
    """The ``cache_control`` markers in render order (tools, system, message blocks, the top-level one):
    each well formed, no ``1h`` after a ``5m`` (Anthropic docs, "Mixing different TTLs"), at most 4."""

    def __init__(self, w: Walk) -> None:
        self.w, self.count, self.first_5m = w, 0, ""

    def __call__(self, holder: Mapping[str, Any], path: str) -> None:
        cc = holder.get("cache_control")
        if cc is None:
            return
        path = f"{path}.cache_control"
        issue = cache_control_issue(cc)
        self.count += 1
        if not self.w.need(issue is None, Level.API, path, issue or ""):
            return
        ttl = cc.get("ttl", "5m")
        self.w.need(not (ttl == "1h" and self.first_5m), Level.API, path, (
            f"a ttl='1h' breakpoint follows a ttl='5m' one at {dotted(self.first_5m)}; cache_control blocks with a "
            "longer TTL must come before shorter ones (put the 1h markers on the earlier, more stable blocks)"))
        if ttl == "5m" and not self.first_5m:
            self.first_5m = path


class _Body:
    def __init__(self, w: Walk) -> None:
        self.w, self.mark = w, Markers(w)
        self.schemas: dict[str, Any] = {}
        self.seen: set[str] = set()
        self.model: Any = None  # the body's model: whether mid-conversation system messages are taken

    def block(self, block: Any, path: str, role: str) -> None:
        w = self.w
        if not w.need(isinstance(block, Mapping), Level.STRUCTURE, path,
                      f"a content block must be an object, not {json_kind(block)}"):
            return
        kind = block.get("type")
        if not w.need(isinstance(kind, str), Level.STRUCTURE, path, "a content block needs a string 'type'") or \
                not w.need(kind in BLOCK_TYPES, Level.API, f"{path}.type",
                           f"{kind!r} is not a content block type; use one of {', '.join(BLOCK_TYPES)}"):
            return
        if kind == "text":
            if w.field(block, "text", str, path, "a string", "a text block needs a string 'text'",
                       "A text block is {'type': 'text', 'text': '...'}."):
                w.need(block["text"].strip(), Level.TRACE, path, "empty text block")
        elif kind == "tool_use":
            self.tool_use(block, path, role)
        elif kind == "tool_result":
            self.tool_result(block, path, role)
        elif kind in ("image", "document"):
            w.field(block, "source", Mapping, path, "an object", f"{kind} block without a source",
                    f"An {kind} block needs a source, e.g. {{'type': 'base64', 'media_type': ..., 'data': ...}} or "
                    "{'type': 'url', 'url': ...}.", level=Level.API)
        elif kind in ("thinking", "redacted_thinking"):
            w.need(role == "assistant", Level.API, path, f"{kind} blocks belong in assistant turns")
            w.need("cache_control" not in block, Level.TRACE, path, "cache_control on a thinking block")
        self.mark(block, path)

    def tool_use(self, block: Mapping[str, Any], path: str, role: str) -> None:
        w, shape = self.w, "A tool_use block is {'type': 'tool_use', 'id': ..., 'name': ..., 'input': {...}}."
        w.need(role == "assistant", Level.API, path, "tool_use blocks belong in assistant turns")
        named = all([w.field(block, "id", str, path, "a string", "a tool_use block needs a string 'id'", shape),
                     w.field(block, "name", str, path, "a string", "a tool_use block needs a string 'name'", shape)])
        if w.field(block, "input", Mapping, path, "an object", "must be an object", shape) and named:
            w.need(_TOOL_ID.match(block["id"]), Level.TRACE, path, f"tool_use id {block['id']!r}")
            w.need(block["id"] not in self.seen, Level.TRACE, path, f"duplicate tool_use id {block['id']!r}")
            self.seen.add(block["id"])
            if w.need(block["name"] in self.schemas, Level.TRACE, path, f"tool_use names unknown tool {block['name']!r}"):
                w.schema(block["input"], self.schemas[block["name"]], f"{path}.input")

    def tool_result(self, block: Mapping[str, Any], path: str, role: str) -> None:
        w, shape = self.w, "A tool_result block is {'type': 'tool_result', 'tool_use_id': ..., 'content': '...'}."
        w.need(role == "user", Level.API, path, "tool_result blocks belong in user turns")
        w.field(block, "tool_use_id", str, path, "a string", "a tool_result block needs a string 'tool_use_id'", shape)
        content = block.get("content")
        if w.need(content is None or isinstance(content, str | list), Level.STRUCTURE, f"{path}.content",
                  f"must be a string or a list of blocks, not {json_kind(content)}", kind="type",
                  expected="a string or a list of blocks", got=json_kind(content), hint=shape):
            w.need(content is None or content, Level.TRACE, path, "empty tool_result content")
            for j, inner in enumerate(content if isinstance(content, list) else []):
                self.block(inner, f"{path}.content[{j}]", "user")

    def system(self, system: Any) -> None:
        w = self.w
        if system is None or isinstance(system, str):
            w.need(system is None or system.strip(), Level.TRACE, "body.system", "empty system")
            return
        if not w.need(isinstance(system, list) and (system or w.level < Level.TRACE), Level.STRUCTURE, "body.system",
                      "system must be a string or a list of text blocks", kind="type",
                      expected="a string or a list of text blocks", got=json_kind(system)):
            return
        for j, block in enumerate(system):
            path = f"body.system[{j}]"
            if w.need(isinstance(block, Mapping) and block.get("type") == "text", Level.STRUCTURE, path,
                      "system blocks must be text blocks {'type': 'text', 'text': '...'}"):
                if w.field(block, "text", str, path, "a string", "a text block needs a string 'text'"):
                    w.need(block["text"].strip(), Level.TRACE, path, "system blocks must be non-empty text blocks")
                self.mark(block, path)

    def messages(self, messages: list[Any]) -> list[tuple[str, list[Any], list[tuple[str, Any]]]]:
        """Check every message; the turns for :func:`pairing` (consecutive turns of one role combined, as the API does)."""
        w, turns, roles = self.w, [], []
        for i, message in enumerate(messages):
            path = f"body.messages[{i}]"
            if not w.need(isinstance(message, Mapping), Level.STRUCTURE, path,
                          f"a message must be an object, not {json_kind(message)}"):
                continue
            role = message.get("role")
            if not w.need(role in ("user", "assistant") or (role == "system" and i > 0), Level.STRUCTURE, f"{path}.role",
                          f"must be one of user, assistant, not {role!r}",
                          hint="Put system text in the top-level 'system' field."):
                continue
            if role == "system" and not w.need(
                    takes_system_messages(self.model), Level.API, f"{path}.role",
                    "must be one of user, assistant, not 'system': mid-conversation system messages are taken by "
                    f"Opus 4.8+, Opus 5, Fable 5 and Mythos 5, not {self.model!r}",
                    hint="Put system text in the top-level 'system' field."):
                continue
            w.need(set(message) == {"role", "content"}, Level.TRACE, path,
                   "a message must have exactly the keys role and content")
            w.need(not roles or roles[-1] != role, Level.TRACE, path, f"two {role} messages in a row; roles must alternate")
            content = message.get("content")
            if not w.need(isinstance(content, str | list), Level.STRUCTURE, f"{path}.content",
                          f"content must be a string or a list of blocks, not {json_kind(content)}",
                          kind="missing" if content is None else "type", expected="a string or a list of content "
                          "blocks", got=json_kind(content), hint="Send a string or a list of content blocks."):
                continue
            w.need(content.strip() if isinstance(content, str) else content, Level.TRACE, path, "empty content")
            blocks = content if isinstance(content, list) else []
            for j, block in enumerate(blocks):
                self.block(block, f"{path}.content[{j}]", role)
            kinds = [b.get("type") if isinstance(b, Mapping) else None for b in blocks]
            w.need(kinds[:kinds.count("tool_result")] == ["tool_result"] * kinds.count("tool_result"), Level.TRACE,
                   path, "tool_result blocks must come first in the user turn")
            calls = [b.get("id") for b, k in zip(blocks, kinds) if k == "tool_use"]
            results = [(f"{path}.content[{j}]", b.get("tool_use_id")) for j, (b, k) in enumerate(zip(blocks, kinds))
                       if k == "tool_result"]
            if roles and roles[-1] == role:
                turns[-1][1].extend(calls)
                turns[-1][2].extend(results)
            else:
                turns.append((path, calls, results))
            roles.append(role)
        return turns


def walk_anthropic(w: Walk, body: Mapping[str, Any], messages: list[Any]) -> None:
    """Check an Anthropic Messages body into ``w`` (render order: tools, system, messages, top-level marker)."""
    max_tokens = body.get("max_tokens")
    w.need(isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens > 0, Level.TRACE,
           "body.max_tokens", "max_tokens must be a positive integer")
    check = _Body(w)
    check.model = body.get("model")
    if body.get("tools") is not None:
        check.schemas = anthropic_tools(w, body["tools"], "body.tools", check.mark)
    check.system(body.get("system"))
    if messages:
        w.need(isinstance(messages[0], Mapping) and messages[0].get("role") == "user", Level.TRACE,
               "body.messages[0]", "the first message must be a user message")
        w.need(isinstance(messages[-1], Mapping) and messages[-1].get("role") == "user", Level.TRACE,
               f"body.messages[{len(messages) - 1}]", "the last message must be a user message")
    pairing(w, check.messages(messages))
    check.mark(body, "body")  # automatic caching: the breakpoint on the last block, so last in order
    w.need(check.mark.count <= MAX_BREAKPOINTS, Level.API, "body",
           f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {check.mark.count}.")
