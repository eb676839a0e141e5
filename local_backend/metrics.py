"""Cache metrics: prefix-cache hit counters and KV pool usage (``engine.stats()``, ``/metrics``).

Definitions (design doc ``local-backend.md``, "Metrics"):

* **hit rate** = hit tokens / queried tokens, where a request admitted for the
  first time queries its whole prompt and hits the tokens served from cache.
  Re-admissions after a preemption are counted apart (``preempted_*``) so
  recompute hits do not flatter the rate (vLLM's ``PrefixCacheStats``).
* **internal fragmentation** = 1 - tokens stored / slots allocated, over the
  blocks in use: the unused tail of each request's last, partial block.
* **sharing factor** = tokens referenced by running requests / tokens stored
  (> 1 when requests share prefix blocks).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

RECENT_WINDOW = 1000
"""Admissions in the ``recent_hit_rate`` window."""


@dataclass
class PrefixCacheStats:
    """Cumulative prefix-cache counters, in tokens and requests."""

    queries: int = 0
    hits: int = 0
    requests: int = 0
    preempted_queries: int = 0
    preempted_hits: int = 0
    preempted_requests: int = 0
    resets: int = 0
    _window: deque = field(default_factory=lambda: deque(maxlen=RECENT_WINDOW), repr=False)

    def record(self, queried_tokens: int, hit_tokens: int, preempted: bool) -> None:
        """Count one admission: ``queried_tokens`` looked up, ``hit_tokens`` served from cache."""
        if preempted:
            self.preempted_requests += 1
            self.preempted_queries += queried_tokens
            self.preempted_hits += hit_tokens
            return
        self.requests += 1
        self.queries += queried_tokens
        self.hits += hit_tokens
        self._window.append((queried_tokens, hit_tokens))

    @property
    def hit_rate(self) -> float:
        """Hit tokens / queried tokens over every first admission (0.0 before any)."""
        return self.hits / self.queries if self.queries else 0.0

    @property
    def recent_hit_rate(self) -> float:
        """The hit rate over the last :data:`RECENT_WINDOW` first admissions."""
        queries = sum(q for q, _ in self._window)
        return sum(h for _, h in self._window) / queries if queries else 0.0

    def as_dict(self) -> dict[str, float | int]:
        """The counters and rates as plain JSON values (``engine.stats()["prefix_cache"]``)."""
        return {
            "queries": self.queries,
            "hits": self.hits,
            "requests": self.requests,
            "hit_rate": self.hit_rate,
            "recent_hit_rate": self.recent_hit_rate,
            "recent_window_requests": len(self._window),
            "preempted_requests": self.preempted_requests,
            "preempted_queries": self.preempted_queries,
            "preempted_hits": self.preempted_hits,
            "resets": self.resets,
        }


@dataclass(frozen=True)
class KVUsage:
    """A snapshot of the block pool (blocks and tokens; bytes from ``bytes_per_block``)."""

    block_size: int
    blocks_total: int
    blocks_used: int
    blocks_cached_evictable: int
    blocks_empty: int
    blocks_cached_total: int
    evictions: int
    tokens_stored: int
    slots_allocated: int
    tokens_referenced: int

    @property
    def internal_fragmentation(self) -> float:
        """1 - tokens stored / slots allocated over used blocks (0.0 when nothing is allocated)."""
        return 1.0 - self.tokens_stored / self.slots_allocated if self.slots_allocated else 0.0

    @property
    def sharing_factor(self) -> float:
        """Tokens referenced by running requests per token stored (1.0 = no sharing)."""
        return self.tokens_referenced / self.tokens_stored if self.tokens_stored else 1.0

    @property
    def usage(self) -> float:
        """Fraction of blocks in use."""
        return self.blocks_used / self.blocks_total

    def as_dict(self) -> dict[str, float | int]:
        """The counts, fractions and factors as plain JSON values (``engine.stats()["kv"]``)."""
        return {
            "block_size": self.block_size,
            "blocks_total": self.blocks_total,
            "blocks_used": self.blocks_used,
            "blocks_cached_evictable": self.blocks_cached_evictable,
            "blocks_empty": self.blocks_empty,
            "blocks_cached_total": self.blocks_cached_total,
            "usage": self.usage,
            "evictions": self.evictions,
            "tokens_stored": self.tokens_stored,
            "slots_allocated": self.slots_allocated,
            "internal_fragmentation": self.internal_fragmentation,
            "tokens_referenced": self.tokens_referenced,
            "sharing_factor": self.sharing_factor,
        }
