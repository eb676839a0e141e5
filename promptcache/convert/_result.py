"""The result type and bookkeeping shared by both conversion directions."""

from __future__ import annotations

import copy as _copy
import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from promptcache.providers.apis import sdk_ordered
from promptcache.tokens.chatml import TEXT_PART_SEPARATOR

SEPARATOR = TEXT_PART_SEPARATOR
"""The canonical separator ("\\n\\n") joining system blocks / text blocks into one OpenAI string."""

A_CHOICE = {"auto": "auto", "any": "required", "none": "none"}
"""Anthropic tool_choice type -> OpenAI tool_choice string."""
O_CHOICE = {v: k for k, v in A_CHOICE.items()}
A_PASS = ("temperature", "top_p", "stream")
"""Parameters with the same name and meaning in both APIs."""
_TOOL_PATH = re.compile(r"^tools\[(\d+)\]")
_MESSAGE_PART = re.compile(r"^messages\[(\d+)\](?:\.(content|tool_calls)(?:\[(\d+)\])?)?")
_ITEM = re.compile(r"^(?:input\[\d+\]|messages\[\d+\]|instructions|input|system)")


@dataclasses.dataclass(frozen=True)
class ConversionResult:
    """A converted body and what the conversion could not carry.

    Attributes:
        body: the converted request body, keys in the target SDK's order.
        dropped: source path -> value, for everything without a counterpart
            (``cache_control`` markers, provider-only parameters, thinking blocks).
        notes: changes that lose nothing essential but alter bytes (a default
            ``max_tokens``, a ``developer`` role read as ``system``, ...).
        sources: for the system prompt (when present) and then each output
            message, the source paths of its rendered parts in order (text
            parts / blocks first, then tool calls); the prefix guard maps
            token offsets back to source blocks with it.
        tool_sources: the source path of each output tool, when the conversion dropped some
            (empty: ``tools[k]`` comes from ``tools[k]``).
    """

    body: dict[str, Any]
    dropped: Mapping[str, Any]
    notes: tuple[str, ...]
    sources: tuple[tuple[str, ...], ...]
    tool_sources: tuple[str, ...] = ()

    def source_path(self, path: str) -> str:
        """The source path of a path in the converted body: ``messages[3].content`` -> ``input[2].content``,
        ``messages[0]`` -> ``instructions``, ``messages[4].tool_calls[1]`` -> ``input[6]``, ``tools[1]`` ->
        ``tools[2]`` (for a Responses body converted to Chat; any conversion that fills :attr:`sources`).
        A path the map does not cover is returned unchanged."""
        tool = _TOOL_PATH.match(path)
        if tool:
            k = int(tool.group(1))
            return self.tool_sources[k] + path[tool.end():] if k < len(self.tool_sources) else path
        found = _MESSAGE_PART.match(path)
        if not found:
            return path
        i = int(found.group(1))
        messages = self.body.get("messages") or []
        sources = self.sources[i] if i < len(self.sources) else ()
        if not sources or i >= len(messages):
            return path
        kind, j = found.group(2), found.group(3)
        if kind is None:  # the message itself (template framing)
            item = _ITEM.match(sources[0])
            return item.group(0) if item else sources[0]
        content = messages[i].get("content")
        if kind == "content":
            index = int(j or 0)
        else:  # tool calls follow the content parts in ``sources``
            index = int(j or 0) + (1 if isinstance(content, str) else len(content or []))
        return sources[index] if index < len(sources) else path

    def dropped_labels(self) -> list[str]:
        """What was dropped, in words for a summary, one label per dropped path in order: its last key
        (``prompt_cache_key``, ``cache_control``), or for a whole Responses input item or tool its type
        (``reasoning items``, ``web_search tools``)."""
        labels = []
        for path, value in self.dropped.items():
            whole = path.split("[")[0] if path.endswith("]") and "." not in path else None
            if whole in ("input", "tools") and isinstance(value, Mapping) and isinstance(value.get("type"), str):
                labels.append(f"{value['type']} {'items' if whole == 'input' else 'tools'}")
            else:
                labels.append(path.rsplit(".", 1)[-1].split("[")[0])
        return labels

    @property
    def dropped_params(self) -> dict[str, Any]:
        """The dropped top-level parameters (pass them back as ``extra_params`` for an exact round trip)."""
        return {k: v for k, v in self.dropped.items() if "." not in k and "[" not in k}


class Run:
    """Bookkeeping of one conversion: what was dropped, notes, source paths."""

    def __init__(self, copy: bool) -> None:
        self.dropped: dict[str, Any] = {}
        self.notes: list[str] = []
        self.sources: list[tuple[str, ...]] = []
        self.copy = copy

    def val(self, value: Any) -> Any:
        """``value`` deep-copied when the conversion copies."""
        return _copy.deepcopy(value) if self.copy else value

    def result(self, api: str, body: dict[str, Any], extra: Mapping[str, Any] | None,
               tool_sources: tuple[str, ...] = ()) -> ConversionResult:
        """The result, with ``extra`` parameters added and keys in the SDK order of ``api``."""
        if extra:
            body.update((k, self.val(v)) for k, v in extra.items() if k not in body)
        return ConversionResult(sdk_ordered(api, body), self.dropped, tuple(self.notes), tuple(self.sources),
                                tool_sources)


def map_keys(source: Mapping[str, Any], renames: Mapping[str, str], path: str, run: Run,
             skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Copy ``source`` key by key in its own order (key order is content), renaming per ``renames``;
    keys neither renamed nor in ``skip`` are dropped and reported under ``path``."""
    out: dict[str, Any] = {}
    for key, value in source.items():
        if key in renames:
            out[renames[key]] = run.val(value)
        elif key not in skip:
            run.dropped[f"{path}.{key}"] = value
    return out
