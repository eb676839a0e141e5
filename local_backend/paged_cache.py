"""The transformers ``Cache`` adapter: the only place where the model meets the block pool.

For one forward pass over a padded batch of ``B`` rows and ``Q`` query
positions, :class:`PagedCache` is passed as the model's cache. Each attention
layer calls ``cache.update(key_states, value_states, layer_idx)`` with its new
K/V (``[B, kv_heads, Q, head_dim]``, RoPE applied); the adapter writes the
real (non-padding) rows into their pool slots and returns every row's whole
context gathered from the pool, ``[B, kv_heads, K, head_dim]`` where ``K`` is
the longest context in the batch. The caller passes an explicit boolean
attention mask ``[B, 1, Q, K]`` aligned to the end of each row's context
(SDPA's ``is_causal=True`` aligns to the start, which is wrong once a prefix
is cached), and explicit ``position_ids``.

Interface checked against transformers 5.x ``cache_utils.Cache`` /
``CacheLayerMixin`` (``update``, ``get_seq_length``, ``get_mask_sizes``,
``get_max_length``, ``lazy_initialization``).
"""

from __future__ import annotations

import torch
from transformers.cache_utils import Cache, CacheLayerMixin

from local_backend.kv_store import KVStore


class PagedLayer(CacheLayerMixin):
    """One layer's view of :class:`PagedCache`."""

    is_sliding = False
    is_compileable = False

    def __init__(self, cache: PagedCache, layer_idx: int) -> None:
        super().__init__()
        self._cache = cache
        self.layer_idx = layer_idx
        self.is_initialized = True

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        """Nothing to do: the pool is preallocated."""

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Write this layer's new K/V (``[B, kv_heads, Q, head_dim]``) into the pool.

        Returns:
            Each row's whole context K and V, ``[B, kv_heads, K, head_dim]``.
        """
        return self._cache.write_and_gather(self.layer_idx, key_states, value_states)

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        """``(K, 0)``: the mask spans every row's whole context, no offset (the caller passes the mask)."""
        return self._cache.kv_length, 0

    def get_seq_length(self) -> int:
        """Tokens of context before the new ones (of the longest row)."""
        return self._cache.kv_length - self._cache.query_length

    def get_max_length(self) -> int:
        return -1

    def reset(self) -> None:
        """The pool outlives the forward pass; blocks are freed by the KV cache manager."""


class PagedCache(Cache):
    """A batch's block-table view of the :class:`KVStore` for one forward pass.

    Args:
        store: the pool's K/V tensors.
        batch_size, query_length: the padded input is ``[B, Q]``.
        kv_length: ``K``, the longest context (cached + new tokens) in the batch.
        write_slots: ``[n]`` int64, the pool slot of each real new token, in
            row-major order of the real positions of the ``[B, Q]`` input.
        write_rows: ``[n]`` int64 indices into the flattened ``B * Q`` input
            selecting those real positions, or None when every position is real.
        gather_slots: ``[B * K]`` int64, the slots of each row's context,
            padded (with any valid slot) up to ``K``; the mask hides padding.
        fresh: True when the batch is one row with no cached context (the new
            K/V are the whole context and are returned without a gather).
    """

    def __init__(
        self,
        store: KVStore,
        batch_size: int,
        query_length: int,
        kv_length: int,
        write_slots: torch.Tensor,
        write_rows: torch.Tensor | None,
        gather_slots: torch.Tensor,
        fresh: bool = False,
    ) -> None:
        super().__init__(layers=[PagedLayer(self, i) for i in range(store.num_layers)])
        self.store = store
        self.num_rows = batch_size
        self.query_length = query_length
        self.kv_length = kv_length
        self.write_slots = write_slots
        self.write_rows = write_rows
        self.gather_slots = gather_slots
        self.fresh = fresh

    def write_and_gather(
        self, layer: int, key_states: torch.Tensor, value_states: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Write the new K/V of ``layer`` into the pool; return each row's full context K/V."""
        b, h, q, d = key_states.shape
        keys = key_states.transpose(1, 2).reshape(b * q, h, d)
        values = value_states.transpose(1, 2).reshape(b * q, h, d)
        if self.write_rows is not None:
            keys, values = keys.index_select(0, self.write_rows), values.index_select(0, self.write_rows)
        self.store.write(layer, self.write_slots, keys, values)
        if self.fresh:
            return key_states, value_states
        k_ctx, v_ctx = self.store.gather(layer, self.gather_slots)
        shape = (b, self.kv_length, h, d)
        return k_ctx.view(shape).transpose(1, 2), v_ctx.view(shape).transpose(1, 2)

    def get_seq_length(self, layer_idx: int = 0) -> int:
        """Tokens of context before the new ones (of the longest row)."""
        return self.kv_length - self.query_length

    def get_mask_sizes(self, query_length: int, layer_idx: int = 0) -> tuple[int, int]:
        return self.kv_length, 0
