"""Guards that refuse text which would break a stable prefix: volatile values and whitespace drift.

Both raise a :class:`~promptcache.errors.PrefixStabilityError` subclass whose
message names the layer, the value and the fix:

- :func:`check_volatile`: a value that changes per request (a timestamp, a
  clock time, a UUID, a request id; :mod:`promptcache.prompt.volatile` finds them) in
  a stable layer (tools, system, documents, examples) means a cache miss on
  every request (shared trace ``bad_timestamp_system``). Opt out per value
  with ``allow=[value]`` when the value is in fact fixed (a release date in a
  changelog).
- :class:`LayerRegistry`: one layer text built in two whitespace forms in one
  process (two code paths joining the same sections with ``"\\n"`` and
  ``"\\n\\n"``, lint case ``pc403_two_builders``) splits the cache in two; the
  registry remembers each stable layer by its whitespace-blind form and
  refuses a second byte form.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import re
import threading
from collections.abc import Iterable

from promptcache.errors import VolatileValueError, WhitespaceDriftError
from promptcache.prompt.volatile import KINDS, TIMESTAMP_KINDS, find_volatile

__all__ = ["DEFAULT_KINDS", "LayerRegistry", "check_volatile", "default_registry"]

DEFAULT_KINDS = {
    "tools": frozenset(KINDS),
    "system": frozenset(KINDS),
    "examples": frozenset(KINDS),
    "documents": frozenset(TIMESTAMP_KINDS | {"request_id", "jwt"}),
}
"""Volatile kinds refused per stable layer. Documents are reference text that
legitimately holds dates and example ids (a changelog, an API reference), so
only clock-level timestamps and labelled request ids / tokens are refused
there; pass ``kinds=`` to the builder call to choose otherwise."""

_FIX = {
    "system": "move it into the turn: .user(text, context={{'{key}': ...}}), where per-request facts belong",
    "examples": "use a fixed value in the example, or move the fact into the turn with .user(text, context=...)",
    "tools": "keep tool definitions fixed; pass per-request values in the turn",
    "documents": "drop it, or refresh the document deliberately (it is a new cache entry each time it changes)",
}


@functools.lru_cache(maxsize=2048)
def _spans(text: str, kinds: frozenset[str]) -> tuple:
    return tuple(find_volatile(text, kinds=kinds))


def _position(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def check_volatile(text: str, layer: str, path: str, *, kinds: Iterable[str] | None = None,
                   allow: Iterable[str] = ()) -> None:
    """Refuse a volatile-looking value in a stable layer's text (memoised per text).

    Args:
        text: the normalised text of the layer item.
        layer: ``tools``, ``system``, ``documents`` or ``examples``.
        path: where, for the message (``system``, ``documents['handbook']``, ``tools[2] 'search'``).
        kinds: the kinds refused (default :data:`DEFAULT_KINDS` of the layer).
        allow: exact values that are known to be fixed (the per-value opt-out).

    Raises:
        VolatileValueError: naming the layer, the value, its kind and position, and the fix.
    """
    wanted = frozenset(DEFAULT_KINDS[layer] if kinds is None else kinds)
    allowed = set(allow)
    for span in _spans(text, wanted):
        if span.text in allowed:
            continue
        prefix = text[text.rfind("\n", 0, span.start) + 1:span.start]
        key = "_".join(word.lower() for word in re.findall(r"[A-Za-z]+", prefix)[-2:]) or span.kind
        fix = _FIX[layer].format(key=key)
        raise VolatileValueError(
            layer, f"{span.kind} value {span.text!r} at {_position(text, span.start)} changes between requests, so "
            f"the cached prefix would never be reused", f"{fix}; if the value is fixed, allow it explicitly with "
            f"allow=[{span.text!r}]", path=path, value=span.text, kind=span.kind)


@functools.lru_cache(maxsize=1024)
def _fingerprints(text: str) -> tuple[str, str]:
    blind = hashlib.blake2b(" ".join(text.split()).encode("utf-8"), digest_size=16).hexdigest()
    exact = hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
    return blind, exact


def _first_difference(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


class LayerRegistry:
    """Remembers the stable layers built in this process and refuses whitespace variants of them.

    Keyed by ``(layer, path)`` and the text with all whitespace runs collapsed;
    bounded (least recently used entries are forgotten beyond ``max_entries``).
    Thread-safe.
    """

    def __init__(self, max_entries: int = 4096) -> None:
        self.max_entries = max_entries
        self._seen: collections.OrderedDict[tuple[str, str, str], tuple[str, str]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def check(self, layer: str, path: str, text: str) -> None:
        """Record ``text`` as the form of this layer, or raise when another whitespace form was seen.

        Raises:
            WhitespaceDriftError: naming the layer, the first differing character and the fix.
        """
        blind, exact = _fingerprints(text)
        key = (layer, path, blind)
        with self._lock:
            seen = self._seen.get(key)
            if seen is None:
                self._seen[key] = (exact, text)
                while len(self._seen) > self.max_entries:
                    self._seen.popitem(last=False)
                return
            self._seen.move_to_end(key)
        if seen[0] == exact:
            return
        earlier = seen[1]
        at = _first_difference(text, earlier)
        raise WhitespaceDriftError(
            layer, f"this text equals one built earlier in this process except for whitespace (at "
            f"{_position(text, at)}: {text[at:at + 12]!r} vs {earlier[at:at + 12]!r}); two byte forms of one "
            f"prompt are two cache entries", "build the layer in one place, or pass its parts as separate "
            "sections (.system(part1, part2)) so the builder joins them with the canonical separator", path=path)

    def clear(self) -> None:
        """Forget every layer seen."""
        with self._lock:
            self._seen.clear()


default_registry = LayerRegistry()
"""The process-wide registry :class:`~promptcache.prompt.builder.PromptBuilder` uses unless given another."""
