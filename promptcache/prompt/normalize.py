"""The one canonical form of every stable prompt layer: text, tool JSON and tool order.

Prompt caches match exact tokens (provider-cache-rules.md, "Common ground"), so
two byte forms of the same words are two cache entries. Every text of a stable
layer (system instructions, documents, few-shot examples, tool descriptions)
goes through :func:`normalize_text`, which applies, in this order:

1. remove the BOM and zero-width characters (U+FEFF, U+200B, U+200C, U+200D, U+2060);
2. Unicode NFC;
3. CRLF and lone CR to LF;
4. strip trailing whitespace from every line (Unicode whitespace, so U+00A0 too);
5. dedent: remove the indentation common to all non-blank lines (``textwrap.dedent``);
6. drop blank lines at the start and the end;
7. collapse runs of blank lines to one, so sections are separated by exactly
   :data:`SECTION_SEPARATOR` (``"\\n\\n"``).

Sections (the system instructions, each document, the examples block) are
joined with :data:`SECTION_SEPARATOR`, the separator the converter and the
ChatML template use (:data:`promptcache.convert.SEPARATOR`).

Tools are canonical JSON: every object's keys sorted, at every depth (the SDKs
serialise with ``separators=(",", ":")``, so the bytes are fixed too), and
ordered deterministically: by name, or in the frozen registration order of a
:class:`ToolSet`, whatever order the application added them in. The
``description`` and ``title`` strings inside a tool's schema are prose like the
tool's own description (often triple-quoted, indented, CRLF from another
platform), so they get :func:`normalize_text` too; the schema's data values
(``default``, ``const``, ``enum``, ``examples``), property names and every
other string are content and stay byte for byte.
"""

from __future__ import annotations

import functools
import json
import math
import re
import textwrap
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from promptcache.convert import SEPARATOR
from promptcache.errors import PromptError

__all__ = ["SECTION_SEPARATOR", "ToolSet", "ToolSpec", "canonical_json_text", "canonical_json_value", "comparable_json",
           "comparable_text",
           "join_sections", "normalize_text", "order_tools", "schema_texts", "tool_spec"]

SECTION_SEPARATOR = SEPARATOR
"""``"\\n\\n"``: joins the sections of a layer and the layers rendered into one string."""

_INVISIBLE = dict.fromkeys(map(ord, "\ufeff\u200b\u200c\u200d\u2060"))
_BLANK_RUNS = re.compile(r"\n{3,}")
_WHITESPACE = re.compile(r"\s+")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_EMPTY_SCHEMA: Mapping[str, Any] = {"properties": {}, "type": "object"}


@functools.lru_cache(maxsize=1024)
def normalize_text(text: str) -> str:
    """The canonical form of a stable layer's text (the steps of the module docstring).

    Idempotent: ``normalize_text(normalize_text(t)) == normalize_text(t)``.
    Memoised (LRU of 1,024 texts), so a 20k-token document costs one dict
    lookup per request after the first.

    Raises:
        TypeError: ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"prompt text must be a string, not {type(text).__name__}")
    text = unicodedata.normalize("NFC", text.translate(_INVISIBLE))
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = textwrap.dedent(text).strip("\n")
    return _BLANK_RUNS.sub("\n\n", text)


def join_sections(sections: Iterable[str]) -> str:
    """Non-empty sections joined with :data:`SECTION_SEPARATOR` (each is expected normalised)."""
    return SECTION_SEPARATOR.join(s for s in sections if s)


def canonical_json_value(value: Any, where: str = "value") -> Any:
    """A copy of ``value`` with every object's keys sorted, checked to be plain JSON.

    Tuples become lists. ``where`` names the value in error messages.

    Raises:
        PromptError: a value that JSON cannot represent (a set, a datetime, a
            non-string key, NaN), naming its path, e.g.
            ``tools[1] 'search'.input_schema.properties.since.default``.
    """
    if isinstance(value, str | bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PromptError(where, f"{value!r} is not valid JSON", "use a finite number or a string")
        return value
    if isinstance(value, Mapping):
        out = {}
        for key in sorted(value, key=lambda k: (not isinstance(k, str), str(k))):
            if not isinstance(key, str):
                raise PromptError(f"{where}", f"key {key!r} is a {type(key).__name__}; JSON object keys are strings",
                                  "use string keys")
            out[key] = canonical_json_value(value[key], f"{where}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [canonical_json_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise PromptError(where, f"a {type(value).__name__} is not JSON-serialisable",
                      "use only dicts, lists, strings, numbers, booleans and None")


def canonical_json_text(value: Any) -> str:
    """``value`` as canonical JSON text: sorted keys, ``(",", ":")`` separators, non-ASCII kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def comparable_json(value: Any) -> Any:
    """``value`` for key-order-blind comparison (the miss classifier): JSON strings holding an object or array
    (tool-call ``arguments``) parsed, ``cache_control`` markers dropped (they are not content)."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return comparable_json(json.loads(value))
        except ValueError:
            return value
    if isinstance(value, Mapping):
        return {k: comparable_json(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [comparable_json(v) for v in value]
    return value


def comparable_text(text: str) -> str:
    """A text for comparison: :func:`canonical_json_text` of :func:`comparable_json` when it is JSON, else its
    whitespace runs collapsed to one space (equal forms: a key-order or whitespace-only difference)."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return canonical_json_text(comparable_json(json.loads(stripped)))
        except ValueError:
            pass
    return _WHITESPACE.sub(" ", stripped)


class ToolSpec:
    """One tool in canonical, provider-neutral form (immutable).

    Attributes:
        name: the tool name (1-64 of ``[a-zA-Z0-9_-]``, valid at both providers).
        description: the normalised description (``""`` when none).
        parameters: the JSON schema of the input, keys sorted at every depth
            (an object schema; ``{"properties": {}, "type": "object"}`` when none was given).
        strict: OpenAI structured-outputs flag, ``None`` when not given.
        json: canonical JSON text of the tool (name, description, parameters,
            strict): its identity for fingerprints and duplicate checks.
    """

    __slots__ = ("name", "description", "parameters", "strict", "json")

    def __init__(self, name: str, description: str, parameters: Mapping[str, Any], strict: bool | None) -> None:
        self.name, self.description, self.parameters, self.strict = name, description, parameters, strict
        self.json = canonical_json_text({"description": description, "name": name, "parameters": parameters,
                                         "strict": strict})

    def as_dict(self, schema_key: str, **extra: Any) -> dict[str, Any]:
        """The tool as a provider dict with sorted keys: ``description`` (if any), ``name``, the schema under
        ``schema_key`` (``input_schema`` / ``parameters``), ``strict`` (if set), then ``extra``."""
        fields = {"name": self.name, schema_key: self.parameters, **extra}
        if self.description:
            fields["description"] = self.description
        if self.strict is not None and "strict" not in fields:
            fields["strict"] = self.strict
        return dict(sorted(fields.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolSpec) and other.json == self.json

    def __hash__(self) -> int:
        return hash(self.json)

    def __repr__(self) -> str:
        return f"ToolSpec(name={self.name!r})"


def _tool_fields(tool: Mapping[str, Any], item: str) -> tuple[Any, Any, Any, Any]:
    """(name, description, schema, strict) of a tool dict in any provider shape."""
    if "cache_control" in tool:
        raise PromptError(item, "tools may not carry cache_control",
                          "remove it: promptcache plans the cache breakpoints (promptcache.prompt.breakpoints)")
    if tool.get("type") == "function" and isinstance(tool.get("function"), Mapping):  # OpenAI chat
        extra = set(tool) - {"type", "function"}
        body: Mapping[str, Any] = tool["function"]
        allowed, schema_key = {"name", "description", "parameters", "strict"}, "parameters"
    elif tool.get("type") == "function":  # OpenAI responses
        extra, body = set(), tool
        allowed, schema_key = {"type", "name", "description", "parameters", "strict"}, "parameters"
    elif tool.get("type") in (None, "custom"):  # Anthropic
        extra, body = set(), tool
        allowed, schema_key = {"type", "name", "description", "input_schema", "strict"}, "input_schema"
    else:
        raise PromptError(item, f"tool type {tool.get('type')!r} is not a function tool",
                          "pass function tools in Anthropic ({name, description, input_schema}) or OpenAI "
                          "({type: 'function', function: {...}}) shape")
    extra |= set(body) - allowed
    if extra:
        raise PromptError(item, f"unknown key(s) {sorted(extra)}",
                          f"a tool has {', '.join(sorted(allowed - {'type'}))}")
    return body.get("name"), body.get("description"), body.get(schema_key), body.get("strict")


_SPECS: dict[str, ToolSpec] = {}
_SPECS_MAX = 4096


def tool_spec(tool: Mapping[str, Any] | ToolSpec, index: int = 0) -> ToolSpec:
    """Parse a tool dict in Anthropic, OpenAI Chat or OpenAI Responses shape into a :class:`ToolSpec`.

    Memoised by the dict's ``repr`` (exact for plain JSON data: key order,
    types and values all show in it), so an app that passes the same tool
    dicts on every request canonicalises each once per process.

    Raises:
        PromptError: naming ``tools[index]`` (and the tool's name when it has
            one): not an object, no name or an invalid one, a schema that is not
            a JSON object or not JSON-serialisable, unknown keys, ``cache_control``.
    """
    if isinstance(tool, ToolSpec):
        return tool
    key = repr(tool) if type(tool) is dict else None
    found = _SPECS.get(key) if key is not None else None
    if found is not None:
        return found
    spec = _parse_tool(tool, index)
    if key is not None:
        if len(_SPECS) >= _SPECS_MAX:
            _SPECS.clear()
        _SPECS[key] = spec
    return spec


def _parse_tool(tool: Any, index: int) -> ToolSpec:
    item = f"tools[{index}]"
    if not isinstance(tool, Mapping):
        raise PromptError(item, f"a tool must be a dict, not {type(tool).__name__}", "pass a tool definition dict")
    name, description, schema, strict = _tool_fields(tool, item)
    if not isinstance(name, str) or not name:
        raise PromptError(item, "the tool has no name", "give every tool a 'name' (1-64 of a-z A-Z 0-9 _ -)")
    item = f"{item} {name!r}"
    if not _TOOL_NAME.match(name):
        raise PromptError(item, "invalid tool name", "use 1-64 characters of a-z A-Z 0-9 _ - (valid at every provider)")
    if description is not None and not isinstance(description, str):
        raise PromptError(f"{item}.description", "must be a string", "pass the description as text")
    if strict is not None and not isinstance(strict, bool):
        raise PromptError(f"{item}.strict", "must be a boolean", "pass strict=True or False")
    if schema is None:
        schema = _EMPTY_SCHEMA
    if not isinstance(schema, Mapping):
        raise PromptError(f"{item}.input_schema", f"the schema must be a JSON object, not {type(schema).__name__}",
                          "pass a JSON schema dict such as {'type': 'object', 'properties': {...}}")
    parameters = schema_texts(canonical_json_value(schema, f"{item}.input_schema"))
    return ToolSpec(name, normalize_text(description or ""), parameters, strict)


_SCHEMA_PROSE = ("description", "title")
_SCHEMA_DATA = frozenset({"default", "const", "enum", "examples", "example"})


def schema_texts(schema: Any) -> Any:
    """A JSON schema with its ``description`` / ``title`` strings normalised (:func:`normalize_text`), at every
    depth; data keywords (``default``, ``const``, ``enum``, ``examples``) are left as they are."""
    if isinstance(schema, dict):
        return {key: normalize_text(value) if key in _SCHEMA_PROSE and isinstance(value, str)
                else value if key in _SCHEMA_DATA else schema_texts(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [schema_texts(value) for value in schema]
    return schema


class ToolSet:
    """Tools in a frozen registration order (instead of the default order by name).

    The order is fixed when the set is created; a builder given a ``ToolSet``
    renders its tools in that order on every request. Build it once (at import
    time), not per request.

    Raises:
        PromptError: as :func:`tool_spec`, or two tools with one name.
    """

    __slots__ = ("specs",)

    def __init__(self, tools: Iterable[Mapping[str, Any] | ToolSpec]) -> None:
        specs = tuple(tool_spec(t, i) for i, t in enumerate(tools))
        check_unique(specs)
        self.specs = specs

    def __iter__(self):  # noqa: ANN204 - iterator of ToolSpec
        return iter(self.specs)

    def __len__(self) -> int:
        return len(self.specs)


def check_unique(specs: Sequence[ToolSpec], offset: int = 0) -> None:
    """Raise :class:`PromptError` naming both positions when two tools share a name."""
    seen: dict[str, int] = {}
    for i, spec in enumerate(specs):
        if spec.name in seen:
            raise PromptError(f"tools[{offset + i}] {spec.name!r}",
                              f"duplicate tool name (also tools[{offset + seen[spec.name]}])",
                              "give every tool a unique name, or drop the duplicate")
        seen[spec.name] = i


def order_tools(specs: Sequence[ToolSpec], order: str = "name") -> tuple[ToolSpec, ...]:
    """Tools in deterministic order: ``"name"`` sorts by name; ``"registered"`` keeps the given order.

    Raises:
        ValueError: an unknown ``order``.
    """
    if order == "name":
        return tuple(sorted(specs, key=lambda s: s.name))
    if order == "registered":
        return tuple(specs)
    raise ValueError(f"unknown tool order {order!r}; use 'name' or 'registered' (or pass a ToolSet)")
