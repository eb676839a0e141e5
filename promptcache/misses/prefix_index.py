"""Find, among earlier token sequences, the one sharing the longest prefix with a new one.

The miss classifier compares every request of a trace with every earlier one;
pairwise scans would be quadratic in the trace length. :class:`PrefixIndex`
keys each earlier request by the chained hashes of its full token blocks (as
a prefix cache keys its KV blocks: hash(parent hash, block tokens)), so the
best candidates are found by walking the new request's block chain, and only
the last partial block is compared token by token.
"""

from __future__ import annotations

import array
import collections
from collections.abc import Callable, Sequence

BLOCK_TOKENS = 64
"""Tokens per hashed block of the index (a lookup granularity, not a cache block size)."""


def _same_kind(a: Sequence[int], b: Sequence[int]) -> tuple[Sequence[int], Sequence[int]]:
    """Slices of a list and an ``array`` never compare equal: give both the array form when they differ."""
    if type(a) is type(b):
        return a, b
    return (a if isinstance(a, array.array) else array.array("I", a)), (
        b if isinstance(b, array.array) else array.array("I", b))


def common_prefix(a: Sequence[int], b: Sequence[int], start: int = 0) -> int:
    """Length of the common prefix of ``a`` and ``b`` (tokens), given that the first ``start`` are equal.

    ``a`` and ``b`` are lists, tuples or ``array('I')`` of token ids (mixed kinds are compared as arrays).
    """
    a, b = _same_kind(a, b)
    limit = min(len(a), len(b))
    i = min(start, limit)
    while i + 256 <= limit and a[i:i + 256] == b[i:i + 256]:
        i += 256
    while i < limit and a[i] == b[i]:
        i += 1
    return i


def common_suffix(a: Sequence[int], b: Sequence[int], limit: int | None = None) -> int:
    """Length of the common suffix of ``a`` and ``b`` (tokens), at most ``limit``."""
    a, b = _same_kind(a, b)
    bound = min(len(a), len(b)) if limit is None else max(0, min(limit, len(a), len(b)))
    la, lb = len(a), len(b)
    i = 0
    while i + 256 <= bound and a[la - i - 256:la - i] == b[lb - i - 256:lb - i]:
        i += 256
    while i < bound and a[la - i - 1] == b[lb - i - 1]:
        i += 1
    return i


class PrefixIndex:
    """Earlier token sequences by block-chain hash; bounded (oldest dropped first)."""

    def __init__(self, *, max_entries: int = 1024, scan_fallback: int = 64, max_candidates: int = 16) -> None:
        """
        Args:
            max_entries: sequences kept.
            scan_fallback: when no full block is shared, how many of the most
                recent accepted sequences are compared directly.
            max_candidates: most recent sequences compared at the deepest shared block.
        """
        self.max_entries, self.scan_fallback, self.max_candidates = max_entries, scan_fallback, max_candidates
        self._owners: dict[int, list[int]] = {}
        self._hashes: dict[int, list[int]] = {}
        self._tokens: dict[int, Sequence[int]] = {}
        self._order: collections.deque[int] = collections.deque()

    def __len__(self) -> int:
        return len(self._order)

    @staticmethod
    def _chain(tokens: Sequence[int]):
        parent = 0
        for k in range(len(tokens) // BLOCK_TOKENS):
            parent = hash((parent, tuple(tokens[k * BLOCK_TOKENS:(k + 1) * BLOCK_TOKENS])))
            yield parent

    def add(self, key: int, tokens: Sequence[int]) -> list[int]:
        """Index ``tokens`` under ``key`` (keys must increase); returns the keys dropped to stay bounded."""
        hashes = list(self._chain(tokens))
        for h in hashes:
            self._owners.setdefault(h, []).append(key)
        self._hashes[key], self._tokens[key] = hashes, tokens
        self._order.append(key)
        dropped = []
        while len(self._order) > self.max_entries:
            old = self._order.popleft()
            for h in self._hashes.pop(old):
                owners = self._owners[h]
                owners.remove(old)
                if not owners:
                    del self._owners[h]
            del self._tokens[old]
            dropped.append(old)
        return dropped

    def best(self, tokens: Sequence[int], accept: Callable[[int], bool] | None = None) -> int | None:
        """The key of the accepted sequence sharing the longest prefix with ``tokens`` (ties: the latest).

        Returns None when no indexed sequence is accepted.
        """
        accept = accept or (lambda key: True)
        depth, candidates = 0, []
        for h in self._chain(tokens):
            owners = [key for key in self._owners.get(h, ()) if accept(key)]
            if not owners:
                break
            depth += 1
            candidates = owners
        if depth == 0:
            candidates = [key for key in reversed(self._order) if accept(key)][: self.scan_fallback]
        else:
            candidates = candidates[-self.max_candidates:]
        best_key, best_len = None, -1
        for key in candidates:
            length = common_prefix(tokens, self._tokens[key], depth * BLOCK_TOKENS)
            if length > best_len or (length == best_len and best_key is not None and key > best_key):
                best_key, best_len = key, length
        return best_key
