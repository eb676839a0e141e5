"""The KV store: one K and one V tensor per layer, shaped ``[num_blocks * block_size, kv_heads, head_dim]``.

Token ``p`` of a request lives at slot ``block_table[p // block_size] *
block_size + p % block_size`` in every layer. New K/V are written with
``index_copy_`` over a slot list; a request's K/V are read back with
``index_select`` over its slot list (vLLM's paged layout without its CUDA
kernels, so it runs anywhere torch does).
"""

from __future__ import annotations

import torch


class KVStore:
    """Preallocated K/V tensors of the whole block pool, plus one null slot.

    Args:
        num_layers: decoder layers.
        num_blocks, block_size: pool geometry (``num_blocks * block_size`` slots).
        num_kv_heads, head_dim: per-token K/V shape.
        dtype, device: the model's.

    Each tensor has ``num_slots + 1`` rows: the last, :attr:`null_slot`, is
    never written and stays zero. The model runner gathers it for padding
    positions, which the attention mask hides: masked or not, a NaN or inf key
    or value there would turn the whole row's attention to NaN (a NaN times a
    zero attention weight is NaN), so padding never reads a real slot that a
    request which overflowed may have filled with NaN (vLLM reserves a null
    block for the same purpose).
    """

    def __init__(
        self,
        num_layers: int,
        num_blocks: int,
        block_size: int,
        num_kv_heads: int,
        head_dim: int,
        dtype: torch.dtype,
        device: torch.device | str,
    ) -> None:
        self.num_layers = num_layers
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.num_slots = num_blocks * block_size
        self.null_slot = self.num_slots
        shape = (self.num_slots + 1, num_kv_heads, head_dim)
        self.key_cache = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(num_layers)]
        self.value_cache = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(num_layers)]

    @staticmethod
    def bytes_per_block(num_layers: int, block_size: int, num_kv_heads: int, head_dim: int, dtype: torch.dtype) -> int:
        """Bytes of K and V of one block across all layers."""
        itemsize = torch.empty((), dtype=dtype).element_size()
        return 2 * num_layers * block_size * num_kv_heads * head_dim * itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of every K and V tensor (the null slot included)."""
        return sum(t.numel() * t.element_size() for t in (*self.key_cache, *self.value_cache))

    def write(self, layer: int, slots: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> None:
        """Store ``keys`` / ``values`` (``[n, kv_heads, head_dim]``) at ``slots`` (``[n]``, int64)."""
        self.key_cache[layer].index_copy_(0, slots, keys)
        self.value_cache[layer].index_copy_(0, slots, values)

    def gather(self, layer: int, slots: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """K and V at ``slots`` (``[m]``), each ``[m, kv_heads, head_dim]``."""
        return self.key_cache[layer].index_select(0, slots), self.value_cache[layer].index_select(0, slots)
