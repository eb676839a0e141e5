"""Eviction policies for cached blocks that no request references.

A block enters the policy when its ``ref_cnt`` drops to 0 while it still holds a
block hash (its KV stays reusable), leaves it when a request hits it again, and
is handed out by :meth:`EvictionPolicy.pop` when the pool runs out of empty
blocks. Three policies share one interface:

* :class:`LRUPolicy` (default): evict the block released longest ago. An
  intrusive doubly linked list threaded through the blocks, O(1) for every
  operation (vLLM v1's ``FreeKVCacheBlockQueue``).
* :class:`LFUPolicy`: evict the block used by the fewest requests, then the
  one released longest ago.
* :class:`PriorityPolicy`: evict the lowest ``priority`` first (a request can
  pin its system prompt by giving those blocks a higher priority), then LRU.

Invariant for every policy: a block is never evicted before its descendants,
because a descendant would become unreachable (an orphan: its chain hash can no
longer be matched). The pool frees a request's blocks last-first, every
request that uses a block also uses its ancestors (so counts, priorities and
release times of an ancestor are >= its descendants'), and ties break
deeper-first.
"""

from __future__ import annotations

import heapq
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from local_backend.block_pool import KVCacheBlock


class EvictionPolicy(ABC):
    """The order in which evictable cached blocks are reclaimed."""

    name: ClassVar[str]

    @abstractmethod
    def insert(self, block: KVCacheBlock) -> None:
        """``block`` became evictable (``ref_cnt == 0``, hash set)."""

    @abstractmethod
    def remove(self, block: KVCacheBlock) -> None:
        """``block`` was hit again (or reset): it is no longer evictable."""

    @abstractmethod
    def pop(self) -> KVCacheBlock:
        """Remove and return the next victim.

        Raises:
            IndexError: no block is evictable.
        """

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def __contains__(self, block: KVCacheBlock) -> bool: ...

    @abstractmethod
    def ordered(self) -> list[KVCacheBlock]:
        """Every evictable block, next victim first (for stats and tests; O(n log n))."""

    def clear(self) -> list[KVCacheBlock]:
        """Remove every block; return them in eviction order."""
        blocks = self.ordered()
        for block in blocks:
            self.remove(block)
        return blocks


class LRUPolicy(EvictionPolicy):
    """Least recently released first; O(1) intrusive list through ``block.prev_free`` / ``next_free``."""

    name = "lru"

    def __init__(self) -> None:
        self._head: KVCacheBlock | None = None  # next victim
        self._tail: KVCacheBlock | None = None  # most recently released
        self._len = 0

    def insert(self, block: KVCacheBlock) -> None:
        if block.in_policy:
            raise ValueError(f"block {block.block_id} is already evictable")
        block.prev_free, block.next_free = self._tail, None
        if self._tail is None:
            self._head = block
        else:
            self._tail.next_free = block
        self._tail = block
        block.in_policy = True
        self._len += 1

    def remove(self, block: KVCacheBlock) -> None:
        if not block.in_policy:
            raise ValueError(f"block {block.block_id} is not evictable")
        prev, nxt = block.prev_free, block.next_free
        if prev is None:
            self._head = nxt
        else:
            prev.next_free = nxt
        if nxt is None:
            self._tail = prev
        else:
            nxt.prev_free = prev
        block.prev_free = block.next_free = None
        block.in_policy = False
        self._len -= 1

    def pop(self) -> KVCacheBlock:
        if self._head is None:
            raise IndexError("no evictable block")
        block = self._head
        self.remove(block)
        return block

    def __len__(self) -> int:
        return self._len

    def __contains__(self, block: KVCacheBlock) -> bool:
        return block.in_policy

    def ordered(self) -> list[KVCacheBlock]:
        out, node = [], self._head
        while node is not None:
            out.append(node)
            node = node.next_free
        return out


class _HeapPolicy(EvictionPolicy):
    """A min-heap on :meth:`key` with lazy deletion; O(log n) insert and pop.

    A block's key is fixed while it is evictable (counts and priorities only
    change while a request holds it), so lazy deletion is exact.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[tuple[int, ...], int, KVCacheBlock]] = []
        self._live: dict[int, int] = {}  # block_id -> version of its live heap entry
        self._version = 0

    def key(self, block: KVCacheBlock) -> tuple[int, ...]:
        """The block's eviction order: the smallest key is evicted first (fixed while it is evictable)."""
        raise NotImplementedError

    def insert(self, block: KVCacheBlock) -> None:
        if block.in_policy:
            raise ValueError(f"block {block.block_id} is already evictable")
        self._version += 1
        self._live[block.block_id] = self._version
        heapq.heappush(self._heap, (self.key(block), self._version, block))
        block.in_policy = True

    def remove(self, block: KVCacheBlock) -> None:
        if not block.in_policy:
            raise ValueError(f"block {block.block_id} is not evictable")
        del self._live[block.block_id]
        block.in_policy = False
        if len(self._heap) > 2 * len(self._live) + 64:
            self._heap = [e for e in self._heap if self._live.get(e[2].block_id) == e[1]]
            heapq.heapify(self._heap)

    def pop(self) -> KVCacheBlock:
        while self._heap:
            _, version, block = heapq.heappop(self._heap)
            if self._live.get(block.block_id) == version:
                del self._live[block.block_id]
                block.in_policy = False
                return block
        raise IndexError("no evictable block")

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, block: KVCacheBlock) -> bool:
        return block.in_policy

    def ordered(self) -> list[KVCacheBlock]:
        live = [e for e in self._heap if self._live.get(e[2].block_id) == e[1]]
        return [e[2] for e in sorted(live, key=lambda e: (e[0], e[1]))]


class LFUPolicy(_HeapPolicy):
    """Fewest uses first (``hit_count``: requests that used the block), then released longest ago, deeper first."""

    name = "lfu"

    def key(self, block: KVCacheBlock) -> tuple[int, ...]:
        return (block.hit_count, block.last_access, -block.depth)


class PriorityPolicy(_HeapPolicy):
    """Lowest ``priority`` first, then released longest ago, deeper first (pin a system prompt with priority > 0)."""

    name = "priority"

    def key(self, block: KVCacheBlock) -> tuple[int, ...]:
        return (block.priority, block.last_access, -block.depth)


POLICIES: dict[str, type[EvictionPolicy]] = {p.name: p for p in (LRUPolicy, LFUPolicy, PriorityPolicy)}


def make_policy(name: str) -> EvictionPolicy:
    """A fresh policy by name (``"lru"``, ``"lfu"`` or ``"priority"``).

    Raises:
        ValueError: unknown name.
    """
    try:
        return POLICIES[name.lower()]()
    except KeyError:
        raise ValueError(f"unknown eviction policy {name!r}; choose one of {', '.join(POLICIES)}") from None
