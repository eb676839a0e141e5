"""The one miss-cause classifier: why a request stops sharing a prefix with earlier ones.

Architecture doc, "Miss causes": the runtime guard, ``promptcache diff``,
``verify`` and ``simulate`` all reuse this module. For a request it finds the
earlier request (any session) sharing the longest token prefix, and reports
the first divergence: layer, block path, token offset, common-prefix tokens, a
short character diff, and the cause class.

Candidates: requests with a different model or OpenAI ``prompt_cache_key``
never share a provider cache entry, so a request is compared with earlier
requests of its own (model, cache key) group; only when that group is empty
(the first request of a tenant or model) is it compared with any earlier
request, and the result is then ``other_cache_key`` (expected) or
``params_changed`` (model).

Causes (:class:`MissCause`), checked in provider render order:

1. ``params_changed``: model differs; or ``tool_choice`` / ``thinking`` /
   ``effort`` differ while the text prefix reaches the messages (Anthropic
   invalidates the messages level on these; provider-cache-rules.md).
2. OpenAI ``response_format`` differs: ``json_key_order`` when equal in
   canonical form, else ``tools_changed`` (the schema is prefix content).
3. Divergence in ``tools``: ``json_key_order`` when the tool lists are equal
   in canonical form (same tools, same order, only key order differs),
   otherwise ``tools_changed`` (detail: reordered / schema changed / added /
   removed; "reordered" says when the set is canonically equal, as in a
   shuffled set- or map-backed tool registry).
4. Divergence in the ``turn`` (or the new request only appends): the benign
   ``new_turn`` — unless a long identical part follows the divergence
   (``static_after_divergence`` >= the model's minimum cacheable tokens), then
   it is reported as unexpected with the hint "put variable content last".
5. A history divergence from another conversation's request is re-checked
   against this conversation's own latest earlier request (its messages are
   a prefix of this one's); when that one parts earlier (tools, system,
   documents, examples, model), its cause is reported instead.
6. Elsewhere, on the diverging block against the same block of the earlier
   request: ``whitespace_only`` (equal after collapsing whitespace),
   ``volatile_value`` (the divergence falls inside a timestamp / id-like value
   in both, :mod:`promptcache.volatile`), ``json_key_order`` (equal as
   canonical JSON), else by layer: ``system_changed``, ``document_changed``,
   ``examples_changed``, ``history_rewritten`` (detail: slid / edited / removed).

``below_minimum``, ``ttl_expired`` and ``evicted`` come from runtime facts the
callers (simulator, engine) know; they attach them with
:meth:`Divergence.with_cause`. Benign classes: ``first_request``, ``new_turn``,
``repeat`` (a prefix of / identical to an earlier request), ``other_cache_key``.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from promptcache.apis import infer_api
from promptcache.decompose import Rendering, canonical_json, canonical_text, decompose
from promptcache.divergence import EXPECTED_CAUSES, HINTS, RUNTIME_CAUSES, Divergence, MissCause
from promptcache.prefix_index import PrefixIndex, common_prefix, common_suffix
from promptcache.volatile import find_volatile, span_at

__all__ = ["EXPECTED_CAUSES", "RUNTIME_CAUSES", "Classifier", "Divergence", "MissCause", "PrefixGuard",
           "classify_requests", "compare_bodies"]

_SNIPPET_BEFORE, _SNIPPET_AFTER, _VOLATILE_WINDOW = 40, 60, 200
_POOL = 32  # recent requests searched for a slid history window


def _snippets(new: Rendering, old: Rendering, byte: int) -> tuple[str, str, int]:
    start = max(new.piece_at(byte).start, byte - _SNIPPET_BEFORE)
    head = new.data[start:byte].decode("utf-8", "ignore")
    tail_new = new.data[byte:byte + _SNIPPET_AFTER].decode("utf-8", "ignore")
    tail_old = old.data[byte:byte + _SNIPPET_AFTER].decode("utf-8", "ignore")
    return head + tail_new, head + tail_old, len(head)


def _first_byte_diff(a: bytes, b: bytes, start: int) -> int:
    limit = min(len(a), len(b))
    i = start
    while i < limit and a[i:i + 64] == b[i:i + 64]:
        i += 64
    while i < limit and a[i] == b[i]:
        i += 1
    return i


def _tool_name(tool: Any) -> str:
    if isinstance(tool, Mapping):
        function = tool.get("function")
        return str(function.get("name") if isinstance(function, Mapping) else tool.get("name"))
    return "?"


def _canonical_dump(value: Any) -> str:
    return json.dumps(canonical_json(value), sort_keys=True, ensure_ascii=False)


def _tools_cause(new: Rendering, old: Rendering) -> tuple[MissCause, str]:
    new_tools, old_tools = list(new.body.get("tools") or []), list(old.body.get("tools") or [])
    new_names, old_names = [_tool_name(t) for t in new_tools], [_tool_name(t) for t in old_tools]
    new_canon = {_tool_name(t): _canonical_dump(t) for t in new_tools}
    old_canon = {_tool_name(t): _canonical_dump(t) for t in old_tools}
    if new_names == old_names and new_canon == old_canon:
        return MissCause.JSON_KEY_ORDER, "same tools in the same order; only the JSON key order differs"
    if sorted(new_names) == sorted(old_names) and new_canon == old_canon:
        return MissCause.TOOLS_CHANGED, ("reordered: the tool set and every schema are equal in canonical form "
                                         "(sorted by name, sorted keys); only the tool order and key order differ")
    added = [n for n in new_names if n not in old_canon]
    removed = [n for n in old_names if n not in new_canon]
    changed = [n for n in new_names if n in old_canon and new_canon[n] != old_canon[n]]
    parts = [f"{label}: {', '.join(names)}" for label, names in
             (("added", added), ("removed", removed), ("schema changed", changed)) if names]
    return MissCause.TOOLS_CHANGED, "; ".join(parts) or "tool order changed"


def _history_detail(new: Rendering, old: Rendering, path: str, pool: Sequence[Rendering]) -> str:
    message = path.split("]")[0] + "]" if path.startswith("messages[") else path
    if message in new.message_paths:
        position = new.message_paths.index(message)
        key = new.message_keys[position]
        for other in (old, *pool):
            if key in other.message_keys[position + 1:]:
                return (f"slid: {message} held a later message of an earlier request "
                        f"(front truncation / sliding window)")
    new_msg, old_msg = new.value(message), old.value(message)
    if isinstance(new_msg, Mapping) and isinstance(old_msg, Mapping) and new_msg.get("role") == old_msg.get("role"):
        return f"edited: {message} was rewritten (summary or edit of an earlier turn)"
    return f"{message} removed, inserted or replaced"


def _volatile_detail(new_text: str, old_text: str, offset: int) -> str | None:
    lo = max(0, offset - _VOLATILE_WINDOW)
    new_span = span_at(find_volatile(new_text[lo:offset + _VOLATILE_WINDOW]), offset - lo)
    old_span = span_at(find_volatile(old_text[lo:offset + _VOLATILE_WINDOW]), offset - lo)
    if new_span is None or old_span is None:
        return None
    return f"{new_span.kind} {new_span.text!r} vs {old_span.text!r}"


class Classifier:
    """Compares renderings; holds the tuning knobs shared by every entry point."""

    def __init__(self, *, static_tail_threshold: int | None = None) -> None:
        """``static_tail_threshold``: tokens of identical tail after a turn divergence that make it
        unexpected; None uses the model's minimum cacheable tokens (providers.toml, 1,024 if unknown)."""
        self.static_tail_threshold = static_tail_threshold

    def _threshold(self, model: str | None) -> int:
        if self.static_tail_threshold is not None:
            return self.static_tail_threshold
        from promptcache.providers import UnknownModelWarning, model_profile

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnknownModelWarning)
                return model_profile(None, model or "").min_cacheable_tokens
        except ValueError:
            return 1024

    def classify(self, new: Rendering, old: Rendering | None, earlier_index: int | None = None,
                 pool: Sequence[Rendering] = ()) -> Divergence:
        """The first divergence of ``new`` from ``old`` (``old=None``: the first request).

        ``pool``: other recent requests, most recent first, searched to tell a
        slid history window from an edited one.
        """
        total = len(new.tokens)
        if old is None:
            return Divergence(MissCause.FIRST_REQUEST.value, True, prompt_tokens=total)
        common = common_prefix(new.tokens, old.tokens)
        base = dict(earlier_index=earlier_index, common_prefix_tokens=common, prompt_tokens=total)
        first_layer = new.pieces[0].layer if new.pieces else None
        if new.model != old.model:
            return self._make(MissCause.PARAMS_CHANGED, layer=first_layer, path="model", token_offset=0,
                              detail=f"model {old.model!r} -> {new.model!r}", **base)
        if new.cache_key != old.cache_key:
            return self._make(MissCause.OTHER_CACHE_KEY, layer=first_layer, path="prompt_cache_key", token_offset=0,
                              detail=f"prompt_cache_key {old.cache_key!r} -> {new.cache_key!r}: separate caches", **base)
        if json.dumps(new.response_format) != json.dumps(old.response_format):
            same = _canonical_dump(new.response_format) == _canonical_dump(old.response_format)
            return self._make(MissCause.JSON_KEY_ORDER if same else MissCause.TOOLS_CHANGED, layer="tools",
                              path="response_format", token_offset=0, detail="response_format schema "
                              + ("key order changed" if same else "changed"), **base)
        changed = sorted(k for k in set(new.params) | set(old.params)
                         if k != "model" and new.params.get(k) != old.params.get(k))
        if changed and common > new.messages_start_token:
            detail = "; ".join(f"{k}: {old.params.get(k)!r} -> {new.params.get(k)!r}" for k in changed)
            return self._make(MissCause.PARAMS_CHANGED, layer=new.piece_at(new.byte_offset(new.messages_start_token)).layer,
                              path=changed[0], token_offset=new.messages_start_token, detail=detail, **base)
        if common >= len(old.tokens):
            if common >= total:
                return self._make(MissCause.REPEAT, token_offset=total, detail="the request is a prefix of (or "
                                  "identical to) the earlier one", **base)
            piece = new.piece_at(len(old.data))
            return self._make(MissCause.NEW_TURN, layer=piece.layer, path=piece.path, token_offset=common,
                              detail="appends to the earlier request", **base)
        byte = _first_byte_diff(new.data, old.data, new.byte_offset(common))
        piece, old_piece = new.piece_at(byte), old.piece_at(byte)
        snippet, earlier_snippet, diff_at = _snippets(new, old, byte)
        static_after = common_suffix(new.tokens, old.tokens, limit=min(total, len(old.tokens)) - common)
        where = dict(layer=piece.layer, path=piece.path, earlier_path=old_piece.path, token_offset=common,
                     static_after_divergence=static_after, snippet=snippet, earlier_snippet=earlier_snippet,
                     diff_at=diff_at, **base)
        if piece.layer == "tools":
            cause, detail = _tools_cause(new, old)
            return self._make(cause, detail=detail, **where)
        if piece.layer == "turn":
            threshold = self._threshold(new.model)
            if static_after >= threshold:
                return self._make(MissCause.NEW_TURN, expected=False, detail=(
                    f"the turn diverges, then {static_after:,} identical tokens follow (>= {threshold:,}, the "
                    f"minimum cacheable prefix): variable content comes before static content"), **where)
            return self._make(MissCause.NEW_TURN, hint="", detail="a new turn", **where)
        cause, detail = self._block_cause(new, old, piece.path, piece.layer, byte, pool)
        return self._make(cause, detail=detail, **where)

    def _block_cause(self, new: Rendering, old: Rendering, path: str, layer: str, byte: int,
                     pool: Sequence[Rendering]) -> tuple[MissCause, str]:
        new_text, old_text = new.piece_text(path), old.piece_text(path)
        if new_text is not None and old_text is not None:
            piece = new.piece_at(byte)
            offset = len(new.data[piece.start:byte].decode("utf-8", "ignore")) if not piece.framing else len(new_text)
            if canonical_text(new_text) == canonical_text(old_text) and \
                    " ".join(new_text.split()) == " ".join(old_text.split()):
                return MissCause.WHITESPACE_ONLY, "equal after whitespace normalisation (re.sub(r'\\s+', ' ', text))"
            volatile = _volatile_detail(new_text, old_text, offset)
            if volatile:
                return MissCause.VOLATILE_VALUE, volatile
            new_value, old_value = new.value(path), old.value(path)
            if canonical_text(new_text) == canonical_text(old_text) or (
                    new_value is not None and _canonical_dump(new_value) == _canonical_dump(old_value)):
                return MissCause.JSON_KEY_ORDER, "equal as canonical JSON; only the key order differs"
        by_layer = {"system": MissCause.SYSTEM_CHANGED, "documents": MissCause.DOCUMENT_CHANGED,
                    "examples": MissCause.EXAMPLES_CHANGED}
        if layer in by_layer:
            return by_layer[layer], f"{path} differs"
        return MissCause.HISTORY_REWRITTEN, _history_detail(new, old, path, pool)

    @staticmethod
    def _make(cause: MissCause, expected: bool | None = None, hint: str | None = None, **fields: Any) -> Divergence:
        expected = cause in EXPECTED_CAUSES if expected is None else expected
        if hint is None:
            hint = "" if expected else HINTS.get(cause, "")
        return Divergence(cause.value, expected, hint=hint, **fields)


def _group(rendering: Rendering) -> tuple[Any, Any]:
    return rendering.model, rendering.cache_key


class PrefixGuard:
    """Runtime guard: remembers recent requests and classifies each new one against them.

    Example::

        guard = PrefixGuard("anthropic.messages")
        for body in requests:
            divergence = guard.check(body)
            if divergence is not None:           # only unexpected divergences
                log.warning(divergence.summary())
    """

    def __init__(self, api: str | None = None, *, max_requests: int = 256,
                 static_tail_threshold: int | None = None) -> None:
        """
        Args:
            api: the API of the bodies checked (``anthropic.messages`` /
                ``openai.chat``); None: given per call or inferred from each body's shape.
            max_requests: how many earlier requests are kept to compare against (oldest
                dropped). Each is kept in compact form (:meth:`Rendering.compact`:
                token ids as ``array('I')``, the rendered text recomputed when
                needed), about 5 bytes per prompt token: ~0.15 MB for a 30k-token
                request, so the default 256 keep ~40 MB at most at that size.
            static_tail_threshold: see :class:`Classifier`.
        """
        self.api = api
        self.classifier = Classifier(static_tail_threshold=static_tail_threshold)
        self.index = PrefixIndex(max_entries=max_requests)
        self.renderings: dict[int, Rendering] = {}
        self.count = 0
        self.last: Divergence | None = None

    def compare(self, body: Mapping[str, Any], api: str | None = None, *, layers: Mapping[str, str] | None = None,
                record: bool = True) -> Divergence:
        """Classify ``body`` against the remembered requests (every divergence, benign ones included).

        Args:
            body: the request body.
            api: its API; defaults to the guard's, else inferred (:func:`promptcache.apis.infer_api`).
            layers: layer hints for :func:`promptcache.decompose.decompose`.
            record: remember this request for later comparisons.

        Raises:
            ValueError: an api that cannot be inferred, or what
                :func:`promptcache.decompose.decompose` raises for a bad body.
        """
        rendering = decompose(body, api or self.api or infer_api(body), layers=layers)
        stored = rendering.compact()
        group = _group(rendering)
        best = self.index.best(stored.tokens, lambda i: _group(self.renderings[i]) == group)
        if best is None:
            best = self.index.best(stored.tokens)
        old = self.renderings[best].expand() if best is not None else None
        pool = [self.renderings[k] for k in sorted(self.renderings, reverse=True)[:_POOL]
                if _group(self.renderings[k]) == group]
        divergence = self.classifier.classify(rendering, old, best, pool)
        if divergence.layer == "history" and not divergence.expected:
            divergence = self._against_predecessor(rendering, divergence)
        if record:
            self._add(stored)
        self.last = divergence
        return divergence

    def remember(self, body: Mapping[str, Any], api: str | None = None, *,
                 layers: Mapping[str, str] | None = None) -> None:
        """Remember ``body`` for later comparisons without classifying it.

        For callers that compare first (``compare(..., record=False)``) and
        remember a request only once it really went out: the client wrappers
        remember a body after the provider accepted it, so a refused or failed
        request never becomes the reference a retry is compared with.

        Raises:
            ValueError: as :meth:`compare`.
        """
        self._add(decompose(body, api or self.api or infer_api(body), layers=layers).compact())

    def _add(self, stored: Rendering) -> None:
        self.renderings[self.count] = stored
        for dropped in self.index.add(self.count, stored.tokens):
            self.renderings.pop(dropped, None)
        self.count += 1

    def _against_predecessor(self, rendering: Rendering, divergence: Divergence) -> Divergence:
        """Re-classify against the same conversation's latest earlier request, when there is one.

        The longest-prefix request may belong to another conversation (it shares
        the system prompt, then differs in history). If an earlier request's
        conversation messages are a prefix of this one's (the same conversation,
        one or more turns back) and it parts from this request in an earlier
        layer, that earlier divergence is the real cause: e.g. this turn's
        system prompt differs in whitespace from the one the conversation was
        started with.
        """
        keys = rendering.message_keys
        for key in sorted(self.renderings, reverse=True):
            earlier = self.renderings[key]
            size = len(earlier.message_keys)
            if key == divergence.earlier_index or not 0 < size <= len(keys) or earlier.message_keys != keys[:size]:
                continue
            candidate = self.classifier.classify(rendering, earlier.expand(), key)
            if candidate.layer in ("tools", "system", "documents", "examples") or candidate.path == "model":
                return candidate
            return divergence
        return divergence

    def check(self, body: Mapping[str, Any], api: str | None = None, *,
              layers: Mapping[str, str] | None = None) -> Divergence | None:
        """Record ``body`` and return its divergence when it is unexpected, else None."""
        divergence = self.compare(body, api, layers=layers)
        return None if divergence.expected else divergence


def classify_requests(requests: Iterable[Any], *, static_tail_threshold: int | None = None,
                      on_error: Callable[[int, ValueError], None] | None = None) -> list[Divergence]:
    """Classify every request of a trace against the requests before it.

    Args:
        requests: :class:`~promptcache.trace.TraceRecord` objects or ``(api, body)`` pairs, in time order.
        on_error: called with ``(index, error)`` for a request whose body cannot be classified (an
            image without a source, a tool without a name: what :func:`promptcache.decompose.decompose`
            raises); that request then gets ``None`` and is not compared against. Without it the
            error is raised.

    Returns:
        One :class:`Divergence` (or ``None``, see ``on_error``) per request;
        ``earlier_index`` counts from 0 in the given order. A 20-request trace of
        7k-token bodies takes well under a second (each body is tokenised once;
        see ``bench/guard_speed.py``).

    Raises:
        ValueError: a body that cannot be classified, when ``on_error`` is None.
    """
    guard = PrefixGuard(max_requests=1 << 30, static_tail_threshold=static_tail_threshold)
    out: list[Any] = []
    compared: list[int] = []  # the given index of each request the guard remembers
    for index, request in enumerate(requests):
        api, body = (request.api, request.body) if hasattr(request, "body") else request
        try:
            divergence = guard.compare(body, api)
        except ValueError as exc:
            if on_error is None:
                raise
            on_error(index, exc)
            out.append(None)
            continue
        if divergence.earlier_index is not None:
            divergence = dataclasses.replace(divergence, earlier_index=compared[divergence.earlier_index])
        compared.append(index)
        out.append(divergence)
    return out


def compare_bodies(new: tuple[str, Mapping[str, Any]], earlier: Sequence[tuple[str, Mapping[str, Any]]],
                   *, static_tail_threshold: int | None = None) -> Divergence:
    """Classify one ``(api, body)`` against earlier ``(api, body)`` pairs (``promptcache diff A.json B.json``)."""
    guard = PrefixGuard(max_requests=max(1, len(earlier)), static_tail_threshold=static_tail_threshold)
    for api, body in earlier:
        guard.compare(body, api)
    return guard.compare(new[1], new[0], record=False)
