"""The KV cache manager: block tables, prefix lookup, slot allocation, caching and freeing.

The scheduler's only door to the block pool (vLLM v1's ``KVCacheManager``):

1. :meth:`get_computed_blocks` walks a waiting request's block hashes while
   they are cached and returns the hit blocks (at most ``num_tokens - 1``
   tokens: the last prompt token is always computed so there are logits to
   sample from);
2. :meth:`allocate_slots` takes references on those blocks and allocates new
   ones for the tokens to compute this step, or refuses when the pool is short;
3. :meth:`cache_blocks` hashes blocks that the step filled (prompt *and*
   output tokens: multi-turn chats hit the earlier answer), de-duplicating a
   block whose hash another block already holds (with ``verify_hits``, only
   when that block's tokens are the same: on a mismatch the request keeps its
   own block and registers nothing from there on);
4. :meth:`free` releases a request's blocks last-first.

A shared full block is referenced, never copied; a request only writes into
blocks it alone holds (its partial last block).
"""

from __future__ import annotations

from local_backend.block_pool import BlockPool, KVCacheBlock
from local_backend.eviction import make_policy
from local_backend.metrics import KVUsage, PrefixCacheStats
from local_backend.request import Request


class KVCacheManager:
    """Block tables of the running requests over one :class:`BlockPool`.

    Args:
        num_blocks: pool size in blocks.
        block_size: tokens per block.
        eviction: ``"lru"``, ``"lfu"`` or ``"priority"``.
        enable_caching: False turns automatic prefix caching off (no lookups,
            nothing cached; the no-reuse control of the benchmarks).
        verify_hits: compare a cached block's stored tokens with the request's
            before using it, on lookup and on de-duplication (guards against
            hash collisions; costs a tuple compare per block).
    """

    def __init__(
        self,
        num_blocks: int,
        block_size: int,
        eviction: str = "lru",
        enable_caching: bool = True,
        verify_hits: bool = False,
    ) -> None:
        if block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {block_size}")
        self.block_size = block_size
        self.enable_caching = enable_caching
        self.verify_hits = verify_hits
        self.pool = BlockPool(num_blocks, make_policy(eviction))
        self.req_to_blocks: dict[str, list[KVCacheBlock]] = {}
        self._requests: dict[str, Request] = {}
        self._num_cached_blocks: dict[str, int] = {}
        self._collided: set[str] = set()  # requests whose block hash collided (verify_hits): nothing more cached
        self.prefix_stats = PrefixCacheStats()

    @property
    def num_blocks(self) -> int:
        """Pool size in blocks."""
        return self.pool.num_blocks

    # --- lookup -----------------------------------------------------------------
    def get_computed_blocks(self, request: Request) -> tuple[list[KVCacheBlock], int]:
        """The cached blocks matching the request's leading full blocks, and their token count.

        No side effects: the references are taken by :meth:`allocate_slots`.
        """
        if not self.enable_caching:
            return [], 0
        bs = self.block_size
        max_blocks = (request.num_tokens - 1) // bs
        hits: list[KVCacheBlock] = []
        for i, block_hash in enumerate(request.block_hashes[:max_blocks]):
            block = self.pool.get_cached_block(block_hash)
            if block is None:
                break
            if self.verify_hits and block.token_ids != tuple(request.all_token_ids[i * bs : (i + 1) * bs]):
                break
            hits.append(block)
        return hits, len(hits) * bs

    def record_admission(self, request: Request, hit_tokens: int) -> None:
        """Count the lookup of a request being admitted (re-admissions after preemption apart)."""
        if self.enable_caching:
            self.prefix_stats.record(request.num_tokens, hit_tokens, preempted=request.num_preemptions > 0)

    # --- allocation -------------------------------------------------------------
    def allocate_slots(
        self, request: Request, num_new_tokens: int, new_computed_blocks: list[KVCacheBlock] | None = None
    ) -> bool:
        """Make room for ``num_new_tokens`` more tokens after ``request.num_computed_tokens``.

        ``new_computed_blocks`` are the prefix hits of a request being admitted
        (``request.num_computed_tokens`` is still 0 then); the caller sets
        ``num_computed_tokens`` to the hit tokens afterwards.

        Returns:
            False, with nothing changed, when the pool cannot supply the blocks.
        """
        hits = new_computed_blocks or []
        blocks = self.req_to_blocks.get(request.request_id, [])
        num_computed = request.num_computed_tokens + len(hits) * self.block_size
        num_needed = -(-(num_computed + num_new_tokens) // self.block_size) - len(blocks) - len(hits)
        evictable_hits = sum(1 for b in hits if b.ref_cnt == 0)
        if num_needed > self.pool.num_free_blocks - evictable_hits:
            return False
        if request.request_id not in self.req_to_blocks:
            self.req_to_blocks[request.request_id] = blocks
            self._requests[request.request_id] = request
            self._num_cached_blocks[request.request_id] = 0
        if hits:
            self.pool.touch(hits)
            for i, block in enumerate(hits, start=len(blocks)):
                block.priority = max(block.priority, request.block_priority(i))
            blocks.extend(hits)
            self._num_cached_blocks[request.request_id] = len(blocks)
        if num_needed > 0:
            blocks.extend(self.pool.allocate(num_needed))
        return True

    def cache_blocks(self, request: Request) -> None:
        """Hash and register the request's blocks that are now full of computed tokens.

        A block whose hash is already cached is replaced by the cached block
        (one copy kept). With ``verify_hits``, only if the cached block holds
        the same tokens: on a mismatch (a hash collision) the request keeps its
        own block, unregistered, and none of its later blocks are registered
        either (their hashes chain through the colliding one).
        """
        rid = request.request_id
        if not self.enable_caching or rid in self._collided:
            return
        blocks = self.req_to_blocks[rid]
        bs = self.block_size
        start = self._num_cached_blocks[rid]
        end = min(request.num_computed_tokens // bs, len(request.block_hashes))
        for i in range(start, end):
            block = blocks[i]
            block_hash = request.block_hashes[i]
            token_ids = tuple(request.all_token_ids[i * bs : (i + 1) * bs])
            if self.verify_hits:
                existing = self.pool.get_cached_block(block_hash)
                if existing is not None and existing is not block and existing.token_ids != token_ids:
                    self._collided.add(rid)
                    return
            cached = self.pool.cache_block(
                block,
                block_hash,
                request.block_hashes[i - 1] if i else None,
                token_ids,
                request.root_extra if i == 0 else b"",
                depth=i,
            )
            if cached is not block:  # same content computed twice: keep one copy
                self.pool.touch([cached])
                blocks[i] = cached
                self.pool.free([block])
            cached.priority = max(cached.priority, request.block_priority(i))
        self._num_cached_blocks[rid] = max(start, end)

    def free(self, request: Request) -> None:
        """Release the request's blocks, last block first (its cached blocks stay hittable)."""
        blocks = self.req_to_blocks.pop(request.request_id, None)
        self._requests.pop(request.request_id, None)
        self._num_cached_blocks.pop(request.request_id, None)
        self._collided.discard(request.request_id)
        if blocks:
            self.pool.free(reversed(blocks))

    def block_table(self, request: Request) -> list[int]:
        """The block ids holding the request's tokens, in order."""
        return [b.block_id for b in self.req_to_blocks.get(request.request_id, ())]

    def reset_prefix_cache(self) -> bool:
        """Forget every cached block; refused (False) while any request holds blocks."""
        if not self.pool.reset_prefix_cache():
            return False
        self.prefix_stats.resets += 1
        return True

    # --- stats ------------------------------------------------------------------
    def usage(self) -> KVUsage:
        """Pool counts and token accounting over the blocks running requests hold."""
        bs = self.block_size
        stored: dict[int, int] = {}
        referenced = 0
        for rid, blocks in self.req_to_blocks.items():
            computed = self._requests[rid].num_computed_tokens
            referenced += computed
            for i, block in enumerate(blocks):
                filled = bs if block.block_hash is not None else max(0, min(bs, computed - i * bs))
                stored[block.block_id] = max(stored.get(block.block_id, 0), filled)
        pool = self.pool
        return KVUsage(
            block_size=bs,
            blocks_total=pool.num_blocks,
            blocks_used=pool.num_used_blocks,
            blocks_cached_evictable=pool.num_evictable_blocks,
            blocks_empty=pool.num_empty_blocks,
            blocks_cached_total=len(pool.hash_to_block),
            evictions=pool.num_evictions,
            tokens_stored=sum(stored.values()),
            slots_allocated=len(stored) * bs,
            tokens_referenced=referenced,
        )
