"""Engine configuration: pool size, block size, scheduling limits, device and dtype."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from local_backend.eviction import POLICIES

DEFAULT_KV_CACHE_MB = 1024
"""KV pool size when neither ``num_blocks`` nor ``kv_cache_mb`` is given (vLLM's CPU backend defaults to 4 GiB)."""

MAX_DEFAULT_BLOCKS = 65_536
"""Cap on the default pool (tiny test models would otherwise get millions of blocks)."""

SCHEDULING_POLICIES = ("fcfs", "lpm")


@dataclass(frozen=True)
class EngineConfig:
    """Everything :class:`~local_backend.engine.LocalEngine` needs besides the model.

    Attributes:
        block_size: tokens per KV block (vLLM's default 16).
        num_blocks: pool size in blocks; or give ``kv_cache_mb``; default
            :data:`DEFAULT_KV_CACHE_MB` MiB.
        kv_cache_mb: pool size in MiB (K and V of every layer).
        eviction: ``"lru"`` (default), ``"lfu"`` or ``"priority"``.
        enable_prefix_caching: automatic prefix caching on (default) or off.
        max_num_seqs: running requests at most (decode batch size).
        max_num_batched_tokens: token budget of one step (prefill is chunked to fit).
        max_model_len: context cap in tokens (default: the model's, bounded by the pool).
        scheduling: ``"fcfs"`` or ``"lpm"`` (admit the waiting request with the
            longest cached prefix first).
        prefix_aware_admission: hold back a waiting request whose next block is
            being computed by a running request until it is cached (so requests
            sent together with a shared prefix compute it once).
        verify_hits: compare a hit block's stored tokens with the request's.
        device: ``"cpu"``, ``"cuda"``, ``"mps"``; default: CUDA, then MPS, then CPU.
        dtype: ``"float32"``, ``"bfloat16"``, ``"float16"``; default fp32 on
            CPU, bf16 on CUDA, fp16 on MPS.
        num_threads: ``torch.set_num_threads`` (CPU); default: leave torch's choice.
        seed: seeds sampling of requests without their own seed (any integer,
            used mod 2**64).

    The counts (``block_size``, ``num_blocks``, ``max_num_seqs``,
    ``max_num_batched_tokens``, ``max_model_len``, ``num_threads``) must be
    integers (``bool`` and ``16.0`` are refused); ``kv_cache_mb`` may be any
    positive finite number.

    Raises:
        ValueError: on construction, for a value of the wrong type or out of range
            (the message names the option and what it takes).
    """

    block_size: int = 16
    num_blocks: int | None = None
    kv_cache_mb: float | None = None
    eviction: str = "lru"
    enable_prefix_caching: bool = True
    max_num_seqs: int = 32
    max_num_batched_tokens: int = 2048
    max_model_len: int | None = None
    scheduling: str = "fcfs"
    prefix_aware_admission: bool = True
    verify_hits: bool = False
    device: str | None = None
    dtype: str | None = None
    num_threads: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        for name in _COUNTS:
            value = getattr(self, name)
            if value is None and name in _OPTIONAL:
                continue
            if not _is_int(value) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
            object.__setattr__(self, name, int(value))  # numpy integers become ints
        mb = self.kv_cache_mb
        if mb is not None and (isinstance(mb, bool) or not isinstance(mb, numbers.Real) or not math.isfinite(mb)
                               or mb <= 0):
            raise ValueError(f"kv_cache_mb must be a positive, finite number of MiB, got {mb!r}")
        if not _is_int(self.seed):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        for name in _FLAGS:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.num_blocks is not None and self.kv_cache_mb is not None:
            raise ValueError("give num_blocks or kv_cache_mb, not both")
        for name, choices in (("eviction", POLICIES), ("scheduling", SCHEDULING_POLICIES)):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
        if self.eviction.lower() not in POLICIES:
            raise ValueError(f"unknown eviction policy {self.eviction!r}; choose one of {', '.join(POLICIES)}")
        if self.scheduling not in SCHEDULING_POLICIES:
            raise ValueError(f"unknown scheduling {self.scheduling!r}; choose one of {', '.join(SCHEDULING_POLICIES)}")

    def resolve_num_blocks(self, bytes_per_block: int) -> int:
        """Pool size in blocks, from ``num_blocks``, ``kv_cache_mb`` or the default budget."""
        if self.num_blocks is not None:
            return int(self.num_blocks)
        if self.kv_cache_mb is not None:
            blocks = int(self.kv_cache_mb * 2**20 // bytes_per_block)
            if blocks < 1:
                raise ValueError(
                    f"kv_cache_mb={self.kv_cache_mb} holds no block of {bytes_per_block} bytes; raise it"
                )
            return blocks
        return max(1, min(MAX_DEFAULT_BLOCKS, DEFAULT_KV_CACHE_MB * 2**20 // bytes_per_block))


_COUNTS = ("block_size", "num_blocks", "max_num_seqs", "max_num_batched_tokens", "max_model_len", "num_threads")
_OPTIONAL = frozenset({"num_blocks", "max_model_len", "num_threads"})
_FLAGS = ("enable_prefix_caching", "prefix_aware_admission", "verify_hits")


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
