"""The block pool: every KV block, its reference count and hash, and the prefix-cache map.

A block holds the K/V of ``block_size`` consecutive tokens of one sequence
(in every layer, see :mod:`local_backend.kv_store`). Blocks are in one of three
states:

* **used**: ``ref_cnt > 0``; some running request's block table holds it;
* **cached-evictable**: ``ref_cnt == 0`` but ``block_hash`` is set: its KV is
  still valid and a later request with the same prefix can hit it; it sits in
  the :class:`~local_backend.eviction.EvictionPolicy`;
* **empty**: ``ref_cnt == 0`` and no hash.

New blocks come from the empty queue first, then by evicting the policy's next
victim (vLLM v1's ``BlockPool``). The pool never computes hashes: the
:class:`~local_backend.kv_cache_manager.KVCacheManager` passes them in.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from local_backend.eviction import EvictionPolicy
from local_backend.hashing import BlockHash


@dataclass(eq=False, slots=True)
class KVCacheBlock:
    """Metadata of one KV block (the K/V tensors live in the KV store at ``block_id * block_size``).

    ``depth`` is the block's index in its token sequence (0 = first block);
    ``last_access`` a pool step counter (not wall time); ``hit_count`` the
    number of requests that used the block; ``priority`` the highest eviction
    priority any request gave it. ``parent_hash``, ``token_ids`` and
    ``extra_keys`` are the inputs of ``block_hash`` (kept to verify hits).
    """

    block_id: int
    ref_cnt: int = 0
    block_hash: BlockHash | None = None
    parent_hash: BlockHash | None = None
    token_ids: tuple[int, ...] = ()
    extra_keys: bytes = b""
    depth: int = 0
    last_access: int = 0
    hit_count: int = 0
    priority: int = 0
    in_policy: bool = False
    prev_free: KVCacheBlock | None = None
    next_free: KVCacheBlock | None = None

    def clear_hash(self) -> None:
        """Forget the cached content (on eviction or reset)."""
        self.block_hash = self.parent_hash = None
        self.token_ids = ()
        self.extra_keys = b""
        self.depth = self.hit_count = self.priority = 0


class BlockPool:
    """``num_blocks`` blocks, the ``block_hash -> block`` map and the eviction policy.

    Args:
        num_blocks: pool size in blocks (>= 1).
        policy: where cached blocks with ``ref_cnt == 0`` wait for reuse.

    The pool keeps a step counter, :attr:`clock`, advanced by the engine once
    per step; ``last_access`` stamps come from it.
    """

    def __init__(self, num_blocks: int, policy: EvictionPolicy) -> None:
        if num_blocks < 1:
            raise ValueError(f"the pool needs at least one block, got num_blocks={num_blocks}")
        self.num_blocks = num_blocks
        self.blocks = [KVCacheBlock(i) for i in range(num_blocks)]
        self.policy = policy
        self.hash_to_block: dict[BlockHash, KVCacheBlock] = {}
        self._empty: deque[KVCacheBlock] = deque(self.blocks)
        self.clock = 0
        self.num_evictions = 0

    # --- counts ---------------------------------------------------------------
    @property
    def num_free_blocks(self) -> int:
        """Blocks a request could be given now: empty plus cached-evictable."""
        return len(self._empty) + len(self.policy)

    @property
    def num_empty_blocks(self) -> int:
        """Blocks with no reference and no hash."""
        return len(self._empty)

    @property
    def num_evictable_blocks(self) -> int:
        """Cached blocks with no reference (hittable until evicted)."""
        return len(self.policy)

    @property
    def num_used_blocks(self) -> int:
        """Blocks some running request holds (``ref_cnt > 0``)."""
        return self.num_blocks - self.num_free_blocks

    def empty_blocks(self) -> list[KVCacheBlock]:
        """The empty blocks, next to be handed out first."""
        return list(self._empty)

    # --- prefix cache ---------------------------------------------------------
    def get_cached_block(self, block_hash: BlockHash) -> KVCacheBlock | None:
        """The cached block with this hash, or None."""
        return self.hash_to_block.get(block_hash)

    def touch(self, blocks: Iterable[KVCacheBlock]) -> None:
        """Take a reference on cached blocks a request hit (removing them from the policy if they were evictable)."""
        for block in blocks:
            if block.ref_cnt == 0:
                self.policy.remove(block)
            block.ref_cnt += 1
            block.hit_count += 1
            block.last_access = self.clock

    def cache_block(
        self,
        block: KVCacheBlock,
        block_hash: BlockHash,
        parent_hash: BlockHash | None,
        token_ids: tuple[int, ...],
        extra_keys: bytes,
        depth: int,
    ) -> KVCacheBlock:
        """Register a block that just became full.

        Returns:
            ``block`` itself, or the block already cached under ``block_hash``
            (then the caller de-duplicates: it swaps that block in and frees its own).
        """
        existing = self.hash_to_block.get(block_hash)
        if existing is not None:
            return existing
        block.block_hash, block.parent_hash = block_hash, parent_hash
        block.token_ids, block.extra_keys, block.depth = token_ids, extra_keys, depth
        self.hash_to_block[block_hash] = block
        return block

    # --- allocation -----------------------------------------------------------
    def allocate(self, num_blocks: int) -> list[KVCacheBlock]:
        """Hand out ``num_blocks`` blocks with ``ref_cnt == 1``: empty ones first, then evicted ones.

        Raises:
            MemoryError: fewer than ``num_blocks`` blocks are free (callers check
                :attr:`num_free_blocks` first).
        """
        if num_blocks > self.num_free_blocks:
            raise MemoryError(f"asked for {num_blocks} KV blocks, only {self.num_free_blocks} free")
        out = []
        for _ in range(num_blocks):
            if self._empty:
                block = self._empty.popleft()
            else:
                block = self.policy.pop()
                del self.hash_to_block[block.block_hash]
                block.clear_hash()
                self.num_evictions += 1
            block.ref_cnt, block.hit_count, block.last_access = 1, 1, self.clock
            out.append(block)
        return out

    def free(self, blocks: Iterable[KVCacheBlock]) -> None:
        """Drop one reference on each block, in the order given.

        Callers pass a request's blocks last-first, so that under every policy a
        block becomes evictable no later than its ancestors.

        Raises:
            ValueError: a block had no reference left (a double free).
        """
        for block in blocks:
            if block.ref_cnt <= 0:
                raise ValueError(f"double free of KV block {block.block_id}")
            block.ref_cnt -= 1
            block.last_access = self.clock
            if block.ref_cnt == 0:
                if block.block_hash is None:
                    self._empty.append(block)
                else:
                    self.policy.insert(block)

    def reset_prefix_cache(self) -> bool:
        """Forget every cached block (they become empty).

        Returns:
            False, and changes nothing, while any block is in use (a running
            request's KV would lose its hash entries); True otherwise.
        """
        if self.num_used_blocks:
            return False
        for block in self.policy.clear():
            block.clear_hash()
            self._empty.append(block)
        self.hash_to_block.clear()
        return True
