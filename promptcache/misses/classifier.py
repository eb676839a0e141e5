"""The pairwise miss-cause rules: why one rendering parts from one earlier rendering.

:class:`Classifier` compares two :class:`~promptcache.misses.rendering.Rendering`
objects and names the first divergence (layer, block path, offsets, cause).
Which earlier request to compare with, sessions and the per-session rules
(chunked truncation) live in :mod:`promptcache.misses.guard`, whose docstring lists
every rule; this module is its pairwise half.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from promptcache.misses.rendering import Rendering
from promptcache.misses.causes import EXPECTED_CAUSES, HINTS, Divergence, MissCause, identical_after
from promptcache.misses.prefix_index import common_prefix
from promptcache.prompt.normalize import canonical_json_text, comparable_json, comparable_text
from promptcache.prompt.volatile import find_volatile, span_at

__all__ = ["Classifier"]

_SNIPPET_BEFORE, _SNIPPET_AFTER, _VOLATILE_WINDOW = 40, 60, 200
_PROMPT_CAUSES = frozenset({MissCause.SYSTEM_CHANGED, MissCause.DOCUMENT_CHANGED, MissCause.EXAMPLES_CHANGED,
                            MissCause.TOOLS_CHANGED})
"""Causes that, with less than the minimum cacheable prefix identical after the divergence and most of the
rest different, mean another prompt (in any session: one wrapped client sends several templates under its one default session)."""


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
    return canonical_json_text(comparable_json(value))


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
    message = path.split("]")[0] + "]" if path.startswith(("messages[", "input[")) else path
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

    def __init__(self, *, static_tail_threshold: int | None = None, as_of: Any = None) -> None:
        """``static_tail_threshold``: tokens of identical tail after a turn divergence that make it
        unexpected; None uses the model's minimum cacheable tokens (providers.toml, 1,024 if unknown) in force
        on ``as_of`` (a date or ``YYYY-MM-DD``; None: today)."""
        self.static_tail_threshold = static_tail_threshold
        self.as_of = as_of

    def _threshold(self, model: str | None) -> int:
        if self.static_tail_threshold is not None:
            return self.static_tail_threshold
        from promptcache.providers.profiles import RetiredModelWarning, UnknownModelWarning, model_profile

        try:
            with warnings.catch_warnings():  # a threshold lookup: whoever simulates the model warns about it
                warnings.simplefilter("ignore", UnknownModelWarning)
                warnings.simplefilter("ignore", RetiredModelWarning)
                return model_profile(None, model or "", as_of=self.as_of).min_cacheable_tokens
        except ValueError:
            return 1024

    def classify(self, new: Rendering, old: Rendering | None, earlier_index: int | None = None,
                 pool: Sequence[Rendering] = (), *, other_session: bool = False,
                 continues: bool = False) -> Divergence:
        """The first divergence of ``new`` from ``old`` (``old=None``: the first request).

        ``pool``: other recent requests, most recent first, searched to tell a
        slid history window from an edited one. ``other_session``: ``old`` is
        known to belong to another session than ``new`` (see "Sessions" in the
        module docstring); False when it is the same session or not known.
        ``continues``: ``new`` is known to continue ``old`` (a Responses request naming ``old``'s reply in
        ``previous_response_id``), so it is never "a different prompt".
        """
        total = len(new.tokens)
        if old is None:
            return Divergence(MissCause.FIRST_REQUEST.value, True, prompt_tokens=total)
        common = common_prefix(new.tokens, old.tokens)
        base = dict(earlier_index=earlier_index, prompt_tokens=total)
        if new.model != old.model:
            return self._other_model(new, old, common, base, other_session)
        if new.cache_key != old.cache_key:
            return self._make(MissCause.OTHER_CACHE_KEY, layer="params", path="prompt_cache_key", token_offset=0,
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
        static_after = identical_after(new.tokens, old.tokens, common)
        where = dict(layer=piece.layer, path=piece.path, earlier_path=old_piece.path, token_offset=common,
                     static_after_divergence=static_after, snippet=snippet, earlier_snippet=earlier_snippet,
                     diff_at=diff_at, **base)
        threshold = self._threshold(new.model)
        if piece.layer == "turn":
            if static_after >= threshold:
                return self._make(MissCause.NEW_TURN, expected=False, detail=(
                    f"the turn diverges, then {static_after:,} identical tokens follow (>= {threshold:,}, the "
                    f"minimum cacheable prefix): variable content comes before static content"), **where)
            return self._make(MissCause.NEW_TURN, hint="", detail="a new turn", **where)
        if piece.layer == "tools":
            cause, detail = _tools_cause(new, old)
        else:
            cause, detail = self._block_cause(new, old, piece.path, piece.layer, byte, pool)
        if cause in _PROMPT_CAUSES and not detail.startswith("reordered") and static_after < threshold \
                and 2 * static_after < total - common and not continues:  # most of the rest differs: another template
            return self._make(MissCause.FIRST_REQUEST, detail=f"a different prompt: shares {common:,} token{'s' * (common != 1)} with "
                              f"request {earlier_index}", **where)
        return self._make(cause, detail=detail, **where)

    def _other_model(self, new: Rendering, old: Rendering, common: int, base: dict[str, Any],
                     other_session: bool) -> Divergence:
        """``new`` has no earlier request of its own model; ``old`` (the best one) has another model.

        Another session: the first request for this model (a router and an
        answerer, one prompt sent to two models by two sessions). The same
        session (or not known): a model switch (``params_changed``), unless the
        two are different prompts (parting before the conversation with fewer
        identical tokens after it than the minimum cacheable prefix: a router
        call beside the answerer call), which is again a first request.
        """
        where = dict(layer="params", path="model", token_offset=0, **base)
        first = f"first request for model {new.model}"
        if other_session:
            return self._make(MissCause.FIRST_REQUEST, detail=first, **where)
        if common < min(new.messages_start_token, len(old.tokens)) and \
                identical_after(new.tokens, old.tokens, common) < self._threshold(new.model):
            return self._make(MissCause.FIRST_REQUEST, detail=f"{first}; request {base['earlier_index']} "
                              f"({old.model}) is a different prompt", **where)
        return self._make(MissCause.PARAMS_CHANGED, detail=f"model {old.model!r} -> {new.model!r}: a cache entry "
                          f"belongs to one model (the prompt is the same up to token {common:,})", **where)

    def _block_cause(self, new: Rendering, old: Rendering, path: str, layer: str, byte: int,
                     pool: Sequence[Rendering]) -> tuple[MissCause, str]:
        new_text, old_text = new.piece_text(path), old.piece_text(path)
        if new_text is not None and old_text is not None:
            piece = new.piece_at(byte)
            offset = len(new.data[piece.start:byte].decode("utf-8", "ignore")) if not piece.framing else len(new_text)
            if comparable_text(new_text) == comparable_text(old_text) and \
                    " ".join(new_text.split()) == " ".join(old_text.split()):
                return MissCause.WHITESPACE_ONLY, "equal after whitespace normalisation (re.sub(r'\\s+', ' ', text))"
            volatile = _volatile_detail(new_text, old_text, offset)
            if volatile:
                return MissCause.VOLATILE_VALUE, volatile
            new_value, old_value = new.value(path), old.value(path)
            if comparable_text(new_text) == comparable_text(old_text) or (
                    new_value is not None and _canonical_dump(new_value) == _canonical_dump(old_value)):
                return MissCause.JSON_KEY_ORDER, "equal as canonical JSON; only the key order differs"
        by_layer = {"system": MissCause.SYSTEM_CHANGED, "documents": MissCause.DOCUMENT_CHANGED,
                    "examples": MissCause.EXAMPLES_CHANGED}
        if layer in by_layer:
            return by_layer[layer], f"{path} differs"
        earlier = old.piece_at(min(byte, max(len(old.data) - 1, 0))) if old.pieces else None
        if earlier is not None and earlier.layer in by_layer and layer not in by_layer:
            detail = f"the earlier request had {earlier.path} here, this one {path}"
            if earlier.path == "instructions":  # the Responses API: previous_response_id does not carry them over
                detail += ("; previous_response_id does not carry instructions over: send the same instructions "
                           "on every request")
            return by_layer[earlier.layer], detail
        return MissCause.HISTORY_REWRITTEN, _history_detail(new, old, path, pool)

    @staticmethod
    def _make(cause: MissCause, expected: bool | None = None, hint: str | None = None, **fields: Any) -> Divergence:
        """The record; ``common_prefix_tokens`` is ``token_offset``: the tokens the earlier request's
        cache entry could serve (the rendered prefixes may share more, e.g. under another model)."""
        expected = cause in EXPECTED_CAUSES if expected is None else expected
        if hint is None:
            hint = "" if expected else HINTS.get(cause, "")
        return Divergence(cause.value, expected, hint=hint, common_prefix_tokens=fields["token_offset"], **fields)
