"""Decompose a request body into provider render order: layers, block paths, tokens, fingerprints.

The miss classifier (:mod:`promptcache.misses.guard`) compares requests token by
token and must say *where* two requests part: which layer of the prompt model
(``tools, system, documents, examples, history, turn``; architecture doc, "The
prompt model") and which block of the body (``system[0].text``,
``messages[0].content[0].text``, ``tools[3]``). This module renders a body of
either API with the local engine's ChatML template
(:func:`promptcache.tokens.chatml.encode_chatml`, so counts agree with the engine;
the whole prompt is tokenised, never per piece) and keeps, for every rendered
piece, its byte span, source path and layer.

Render order is the providers': tools first, then the system prompt, then the
messages. Anthropic bodies are rendered through
:func:`promptcache.convert.anthropic_to_openai` (``keep`` shape; the
``cache_control`` markers are not content and are dropped); OpenAI Responses
bodies through their Chat view (:func:`promptcache.convert.responses_to_chat`),
with every path mapped back to the Responses body (``instructions``,
``input[2].content``, ``tools[1]``; layer hints name paths of the Chat view,
``messages[0]`` being the instructions). OpenAI's
``response_format`` schema is also part of the provider prefix (ahead of the
system message) but not of the ChatML rendering; it is kept as a parameter the
classifier compares first.

Layer rules for raw bodies (a :class:`~promptcache.prompt.model.Prompt` passes exact ``layers`` hints,
:meth:`~promptcache.prompt.model.Prompt.layer_hints`, for both APIs: the OpenAI system message, one string
holding the system, documents and examples sections, is split at their character spans):

- ``tools``: every tool definition (and OpenAI ``response_format``).
- ``system``: Anthropic ``system`` as a string, or its block 0; OpenAI's first
  leading ``system``/``developer`` message.
- ``documents``: Anthropic system blocks 1.. ; further leading OpenAI system
  messages. (Documents joined into one OpenAI system string stay ``system``.)
- ``examples``: only through hints (few-shot pairs look like history).
- ``turn``: the messages after the last assistant message (the new user
  message, or the tool results an agent sends back); with no assistant
  message, the last message.
- ``history``: the conversation messages before the turn.
"""

from __future__ import annotations

import array
import bisect
import collections
import dataclasses
import hashlib
import json
import re
import threading
from collections.abc import Mapping
from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES, check_api
from promptcache.tokens.chatml import IM_START_ID, chatml_encoding, chatml_segments, encode_chatml
from promptcache.convert import anthropic_to_openai, responses_to_chat
from promptcache.prompt.model import LAYERS
from promptcache.prompt.normalize import comparable_text

PARAM_KEYS = {
    ANTHROPIC_MESSAGES: (("model", ("model",)), ("tool_choice", ("tool_choice",)), ("thinking", ("thinking",)),
                         ("effort", ("output_config", "effort")), ("speed", ("speed",))),
    OPENAI_CHAT: (("model", ("model",)), ("tool_choice", ("tool_choice",)), ("effort", ("reasoning_effort",))),
    OPENAI_RESPONSES: (("model", ("model",)), ("tool_choice", ("tool_choice",)), ("effort", ("reasoning", "effort"))),
}
"""Request parameters that change the cache without changing the rendered text (params_changed)."""

_PATH_TOKEN = re.compile(r"([A-Za-z_]+)|\[(\d+)\]")


@dataclasses.dataclass(frozen=True, slots=True)
class Piece:
    """One rendered piece of a request.

    Attributes:
        layer: one of :data:`LAYERS`.
        path: the source in the body (``tools[3]``, ``system[0].text``,
            ``messages[2].content[1].text``, ``messages[4].tool_calls[0]``);
            template framing carries its message's path (``messages[2]``) or ``tools``.
        start, end: byte offsets in :attr:`Rendering.data`.
        framing: True for template text (role headers, separators, wrappers).
    """

    layer: str
    path: str
    start: int
    end: int
    framing: bool


@dataclasses.dataclass(frozen=True)
class LayerFingerprint:
    """Hashes of one layer: ``exact`` over its rendered bytes, ``canonical`` after
    whitespace normalisation (text) and key sorting (JSON); equal canonical but
    different exact fingerprints mean a whitespace-only or key-order change."""

    layer: str
    exact: str
    canonical: str
    pieces: int


@dataclasses.dataclass
class Rendering:
    """A request rendered with ChatML, with every piece attributed.

    Attributes:
        api, body: the request.
        tokens: ChatML token ids of the prompt (no generation prompt), a list (an
            ``array('I')`` in the compact form); its length is the prompt length in tokens.
        data: the rendered prompt as UTF-8 bytes (``decode(tokens)``).
        pieces: attributed pieces in order, covering ``data`` exactly.
        params: the values of :data:`PARAM_KEYS` (missing ones absent).
        cache_key: OpenAI ``prompt_cache_key`` (``None`` when unset / Anthropic).
        response_format: OpenAI ``response_format`` (``None`` when unset).
        messages_start_token: token index where the conversation messages begin (after the tools
            and the system prompt): where Anthropic's ``messages`` invalidation level starts.
        message_keys: one hash per conversation message (history and turn, in
            order) of its rendered bytes; a request continues another's
            conversation when the other's keys are a prefix of its own.
        message_paths: the body path (``messages[i]``) of each of those messages.
        compacted: True for the storage form made by :meth:`compact` (``tokens`` an
            ``array('I')``, ``data`` empty); :meth:`expand` gives the working form back.
    """

    api: str
    body: Mapping[str, Any]
    tokens: list[int]
    data: bytes
    pieces: list[Piece]
    params: dict[str, Any]
    cache_key: str | None
    response_format: Any
    messages_start_token: int
    message_keys: tuple[int, ...] = ()
    message_paths: tuple[str, ...] = ()
    compacted: bool = False
    _starts: list[int] = dataclasses.field(default_factory=list, repr=False)
    _other_form: Rendering | None = dataclasses.field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._starts = [p.start for p in self.pieces]

    def compact(self) -> Rendering:
        """The storage form of this rendering, for keeping many of them (the prefix guard, the memo).

        ``tokens`` become an ``array('I')`` (4 bytes per token instead of a list's
        ~36: a pointer plus an int object) and ``data`` is dropped: it is
        ``decode(tokens)``, restored by :meth:`expand`. A 30k-token request then
        takes ~0.15 MB instead of ~1.4 MB (``bench/guard_speed.py --memory``).
        Pieces, params and message keys are kept as they are.
        """
        if self.compacted:
            return self
        if self._other_form is None:  # made once: the memo and the guard share one copy
            self._other_form = dataclasses.replace(self, tokens=array.array("I", self.tokens), data=b"",
                                                   compacted=True, _other_form=None)
        return self._other_form

    def expand(self) -> Rendering:
        """The working form of a :meth:`compact` rendering: ``tokens`` a list, ``data`` decoded (~1 ms for 30k tokens)."""
        if not self.compacted:
            return self
        tokens = self.tokens.tolist()
        full = dataclasses.replace(self, tokens=tokens, data=chatml_encoding().decode_bytes(tokens), compacted=False,
                                   _other_form=None)
        full._other_form = self  # not the other way round: the compact form must not keep the full one alive
        return full

    @property
    def model(self) -> str | None:
        """The request's ``model``."""
        return self.params.get("model")

    def piece_at(self, byte: int) -> Piece:
        """The piece containing byte offset ``byte`` (the last piece for the end offset)."""
        index = bisect.bisect_right(self._starts, byte) - 1
        return self.pieces[max(0, min(index, len(self.pieces) - 1))]

    def byte_offset(self, token_index: int) -> int:
        """Byte offset in :attr:`data` where token ``token_index`` starts."""
        return len(chatml_encoding().decode_bytes(self.tokens[:token_index]))

    def piece_text(self, path: str) -> str | None:
        """The rendered text of the (non-framing) piece with ``path``, or None."""
        texts = [self.data[p.start:p.end] for p in self.pieces if p.path == path and not p.framing]
        return b"".join(texts).decode("utf-8", "replace") if texts else None

    def value(self, path: str) -> Any:
        """The body value at ``path`` (e.g. ``messages[1].content[0]``), or None when absent."""
        return resolve_path(self.body, path)

    def fingerprints(self) -> dict[str, LayerFingerprint]:
        """One :class:`LayerFingerprint` per layer present, in layer order."""
        grouped: dict[str, list[Piece]] = collections.defaultdict(list)
        for piece in self.pieces:
            if not piece.framing:
                grouped[piece.layer].append(piece)
        out = {}
        for layer in LAYERS:
            pieces = grouped.get(layer)
            if not pieces:
                continue
            exact, canonical = hashlib.sha256(), hashlib.sha256()
            for piece in pieces:
                raw = self.data[piece.start:piece.end]
                exact.update(raw + b"\x00")
                canonical.update(comparable_text(raw.decode("utf-8", "replace")).encode() + b"\x00")
            if layer == "tools" and self.response_format is not None:
                canonical.update(comparable_text(json.dumps(self.response_format)).encode())
                exact.update(json.dumps(self.response_format, ensure_ascii=False).encode())
            out[layer] = LayerFingerprint(layer, exact.hexdigest()[:16], canonical.hexdigest()[:16], len(pieces))
        return out


def resolve_path(body: Any, path: str) -> Any:
    """The value at a block path such as ``messages[3].content[0].text`` (None when absent)."""
    node = body
    for name, index in _PATH_TOKEN.findall(path):
        try:
            node = node[name] if name else node[int(index)]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _message_path(sources: tuple[str, ...], fallback: str) -> str:
    if not sources:
        return fallback
    match = re.match(r"^(messages\[\d+\]|system)", sources[0])
    return match.group(1) if match else fallback


def _layer_for(path: str, roles: list[str], turn_start: int, leading: int, api: str,
               hints: list[tuple[str, str]]) -> str:
    for prefix, layer in hints:
        if path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "["):
            return layer
    if path.startswith("tools"):
        return "tools"
    if path.startswith("system"):
        match = re.match(r"^system\[(\d+)\]", path)
        return "documents" if match and int(match.group(1)) > 0 else "system"
    match = re.match(r"^messages\[(\d+)\]", path)
    index = int(match.group(1)) if match else 0
    if api == OPENAI_CHAT and index < leading:
        return "system" if index == 0 else "documents"
    return "turn" if index >= turn_start else "history"


def _turn_start(roles: list[str], first: int) -> int:
    assistants = [i for i, role in enumerate(roles) if role == "assistant" and i >= first]
    return assistants[-1] + 1 if assistants else max(first, len(roles) - 1)


def _spans(text: str, spans: tuple[tuple[str, int], ...]) -> list[tuple[str, int]]:
    """``(layer, bytes)`` runs of ``text`` cut at the character ends of ``spans`` (the rest: the last layer)."""
    out, start = [], 0
    for layer, end in spans:
        out.append((layer, len(text[start:end].encode("utf-8"))))
        start = max(start, end)
    out[-1] = (out[-1][0], out[-1][1] + len(text[start:].encode("utf-8")))
    return out


def _responses(body: Mapping[str, Any], hints: list[tuple[str, str]],
               spans: Mapping[str, tuple[tuple[str, int], ...]]) -> Rendering:
    """A Responses body rendered as its Chat view (:func:`promptcache.convert.responses_to_chat`), every piece
    path mapped back to the Responses body (``instructions``, ``input[2].content``, ``tools[1]``)."""
    view = responses_to_chat(body, copy=False)
    chat = _render(OPENAI_CHAT, view.body, hints, spans)
    params = {name: value for name, keys in PARAM_KEYS[OPENAI_RESPONSES]
              if (value := resolve_path(body, ".".join(keys))) is not None}
    return dataclasses.replace(chat, api=OPENAI_RESPONSES, body=body, params=params,
                               pieces=[dataclasses.replace(p, path=view.source_path(p.path)) for p in chat.pieces],
                               message_paths=tuple(view.source_path(path) for path in chat.message_paths))


def _render(api: str, body: Mapping[str, Any], hints: list[tuple[str, str]],
            spans: Mapping[str, tuple[tuple[str, int], ...]]) -> Rendering:
    if api == OPENAI_RESPONSES:
        return _responses(body, hints, spans)
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
        raise ValueError("a request body needs a 'messages' list")
    if api == ANTHROPIC_MESSAGES:
        converted = anthropic_to_openai(body, shape="keep", copy=False)
        messages, tools = converted.body["messages"], converted.body.get("tools")
        sources = list(converted.sources)
        has_system = body.get("system") not in (None, [])
        source_messages = body["messages"]
        roles = [m.get("role", "") for m in source_messages if isinstance(m, Mapping)]
        leading = 0
    else:
        messages, tools = body["messages"], body.get("tools")
        sources = []
        for k, message in enumerate(messages):
            content = message.get("content") if isinstance(message, Mapping) else None
            parts = [f"messages[{k}].content"] if isinstance(content, str) else [
                f"messages[{k}].content[{j}]" + (".text" if isinstance(p, Mapping) and p.get("type") == "text" else "")
                for j, p in enumerate(content or [])]
            calls = (message.get("tool_calls") or []) if isinstance(message, Mapping) else []
            sources.append(tuple(parts) + tuple(f"messages[{k}].tool_calls[{j}]" for j in range(len(calls))))
        has_system = False
        roles = [m.get("role", "") for m in messages if isinstance(m, Mapping)]
        leading = 0
        while leading < len(roles) and roles[leading] in ("system", "developer"):
            leading += 1
    turn_start = _turn_start(roles, leading)
    tokens = encode_chatml(messages, tools, add_generation_prompt=False)
    segments = chatml_segments(messages, tools, add_generation_prompt=False)
    pieces: list[Piece] = []
    offset = 0
    for segment in segments:
        size = len(segment.text.encode("utf-8"))
        if segment.message is None:
            path, framing = (segment.part or "tools"), segment.part is None
        else:
            k = segment.message
            source = sources[k] if k < len(sources) else ()
            fallback = "system" if (api == ANTHROPIC_MESSAGES and has_system and k == 0) else f"messages[{k}]"
            if segment.part is None:
                path, framing = _message_path(source, fallback), True
            else:
                path, framing = _part_path(segment.part, messages[k], source, fallback), False
        if not framing and path in spans:  # one string holding several layers (the OpenAI system message)
            for layer, run in _spans(segment.text, spans[path]):
                if run:
                    pieces.append(Piece(layer, path, offset, offset + run, framing))
                offset += run
            continue
        layer = _layer_for(path, roles, turn_start, leading, api, hints)
        if size:
            pieces.append(Piece(layer, path, offset, offset + size, framing))
        offset += size
    data = "".join(s.text for s in segments).encode("utf-8")
    params = {}
    for name, keys in PARAM_KEYS[api]:
        value = resolve_path(body, ".".join(keys))
        if value is not None:
            params[name] = value
    grouped: dict[str, list[bytes]] = {}
    for piece in pieces:
        index = re.match(r"^messages\[(\d+)\]", piece.path)
        if index and int(index.group(1)) >= leading and piece.layer in ("examples", "history", "turn"):
            grouped.setdefault(index.group(0), []).append(data[piece.start:piece.end])
    message_keys = tuple(hash(b"".join(chunks)) for chunks in grouped.values())
    message_paths = tuple(grouped)
    starts = [i for i, t in enumerate(tokens) if t == IM_START_ID]
    skip = (1 if tools else 0) + (leading if api == OPENAI_CHAT else int(has_system))
    messages_start = starts[skip] if skip < len(starts) else len(tokens)
    return Rendering(api, body, tokens, data, pieces, params,
                     body.get("prompt_cache_key") if api == OPENAI_CHAT else None,
                     body.get("response_format") if api == OPENAI_CHAT else None, messages_start, message_keys, message_paths)


def _part_path(part: str, message: Mapping[str, Any], source: tuple[str, ...], fallback: str) -> str:
    """Map a ChatML part name (``content[j]``, ``tool_calls[j]``) to the source path."""
    content = message.get("content")
    n_content = 1 if isinstance(content, str) else len(content or [])
    match = re.match(r"^(content|tool_calls)(?:\[(\d+)\])?$", part)
    if not match:
        return fallback
    index = int(match.group(2) or 0) + (n_content if match.group(1) == "tool_calls" else 0)
    if match.group(1) == "content" and isinstance(content, str) and len(source) > 1:
        return _message_path(source, fallback)  # several source blocks joined into one string
    return source[index] if index < len(source) else fallback


_cache: collections.OrderedDict[tuple[Any, ...], Rendering] = collections.OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 128


def decompose(body: Mapping[str, Any], api: str, *, layers: Mapping[str, Any] | None = None) -> Rendering:
    """Render ``body`` and attribute every piece to a layer and a block path (memoised).

    Args:
        body: a request body of ``api``.
        api: ``anthropic.messages``, ``openai.chat`` or ``openai.responses``.
        layers: optional hints, block path prefix -> layer (a Prompt knows that
            ``system[2]`` holds the examples), or block path -> ``((layer, end
            character), ...)`` for one string holding several layers (the OpenAI
            system message: ``(("system", 120), ("documents", 4000), ...)``, the
            rest of the string in the last layer); they win over the raw-body
            rules of the module docstring.

    Returns:
        A :class:`Rendering` (working form). The same body (same bytes, key order
        included) is tokenised once per process while it is among the last 128
        bodies (the memo keeps their compact form, :meth:`Rendering.compact`, and
        expands a hit).

    Raises:
        ValueError: unknown api, a body without ``messages``, a hint naming an
            unknown layer, or what :func:`promptcache.convert.anthropic_to_openai` raises.
    """
    check_api(api)
    spans = {path: tuple(value) for path, value in (layers or {}).items() if not isinstance(value, str)}
    hints = sorted(((path, value) for path, value in (layers or {}).items() if isinstance(value, str)),
                   key=lambda item: -len(item[0]))
    named = [layer for _, layer in hints] + [layer for value in spans.values() for layer, _ in value]
    for layer in named:
        if layer not in LAYERS:
            raise ValueError(f"unknown layer {layer!r} in layers hints; use one of {', '.join(LAYERS)}")
    key = (api, hashlib.blake2b(json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str)
                                .encode("utf-8"), digest_size=16).hexdigest(), tuple(hints), tuple(spans.items()))
    with _cache_lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
    if found is not None:
        return found.expand()
    rendering = _render(api, body, hints, spans)
    with _cache_lock:
        _cache[key] = rendering.compact()
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return rendering


def clear_cache() -> None:
    """Forget every memoised rendering (benchmarks measure cold tokenisation with it)."""
    with _cache_lock:
        _cache.clear()


def layer_fingerprints(body: Mapping[str, Any], api: str, *,
                       layers: Mapping[str, Any] | None = None) -> dict[str, LayerFingerprint]:
    """Per-layer fingerprints of a request (see :meth:`Rendering.fingerprints`)."""
    return decompose(body, api, layers=layers).fingerprints()
